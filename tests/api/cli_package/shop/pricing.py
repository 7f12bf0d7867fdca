"""A module of a package: a relative import, and work at module level that
``s2s-ad check`` must not run (it runs definitions only)."""

import s2s_ad as ad

from .rates import RATE, square

print("module-level work ran")
raise SystemExit("module-level code ran")


@ad.differentiable
def price(x, discount):
    return square(x) * RATE


def rounded(a, b):
    return round(a) * b
