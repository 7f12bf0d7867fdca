"""SPEC §3: stopping derivatives and editing them with hooks.

Run: python examples/derivative_surgery.py
"""

import math

import s2s_ad as ad


@ad.differentiable
def g(x, y):
    return math.sin(math.sin(math.sin(x))) + ad.without_derivative(math.cos(math.cos(math.cos(y))))


print(ad.gradient(g)(2.0, 3.0))


def body(x):
    a = ad.with_derivative(math.sin(x), lambda d: print(f"d+/dsin = {d}"))

    def rewrite(dx):
        print(f"dlog/dx = {dx}, but rewritten to 0.5")
        return 0.5

    b = math.log(ad.with_derivative(x, rewrite))
    return a + b


print(ad.gradient(body)(30.0))
