"""Clean functions for `s2s-ad show` and `s2s-ad grad`."""

import math

import s2s_ad as ad

print("demo.py prints this while being imported")


@ad.differentiable
def poly(x, y):
    return math.sin(x) * y + x**2


@ad.differentiable
def power_sum(x, n=3):
    s = 0.0
    for i in range(n):
        s = s + x**i
    return s


@ad.differentiable
def formatted(x):
    text = "%f" % x  # noqa: UP031 (Numba cannot compile %-formatting)
    return x * len(text)
