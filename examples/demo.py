"""The main demo of s2s_ad: a gradient, the source that computes it, and a
zero-derivative warning.

Run: python examples/demo.py
"""

import math

import s2s_ad as ad


@ad.differentiable
def f(x, y):
    return math.sin(x) * y + x ** 2


@ad.differentiable
def damped_oscillator(k, c, steps):
    """Euler steps of x'' = -k x - c x'; returns the final energy."""
    x, v, dt = 1.0, 0.0, 0.01
    for _ in range(steps):
        a = -k * x - c * v
        if abs(a) > 100.0:
            a = math.copysign(100.0, a)
        x = x + dt * v
        v = v + dt * a
    return 0.5 * v * v + 0.5 * k * x * x


@ad.differentiable
def rounded_price(rate, quantity):
    units = round(quantity)          # round() has no derivative
    return math.exp(rate) * units


def main() -> None:
    print("f(1, 2)          =", f(1.0, 2.0))
    print("gradient f(1, 2) =", ad.gradient(f)(1.0, 2.0))
    print("by hand          =", (2 * 1.0 + math.cos(1.0) * 2.0, math.sin(1.0)))
    print()
    print("The pullback s2s_ad generated for f:")
    print(ad.source(f, stage="pullback"))
    print()
    value, grad = ad.value_and_gradient(damped_oscillator)(4.0, 0.3, 1000)
    print(f"damped oscillator: energy {value:.6f}, d/dk and d/dc = {grad}")
    print(ad.explain(damped_oscillator))
    print()
    print("A parameter that reaches the result only through round() gets a warning:")
    print("gradient =", ad.gradient(rounded_price)(0.1, 2.6))


if __name__ == "__main__":
    main()
