"""``math`` as compiled generated code sees it: Python's domain errors kept.

Numba's ``math.log(-1.0)`` is ``nan`` where CPython raises ``ValueError: math
domain error``.  Generated modules loaded for Numba get :data:`checked_math`
as their ``math``: the module ``math`` itself, except that the functions with
a restricted domain first check it, as CPython does (a NaN argument passes,
as in CPython).  The check is one comparison per call.

>>> import numba
>>> @numba.njit
... def f(x):
...     return math.sqrt(x)
>>> f.py_func.__globals__["math"] = checked_math
>>> f(-1.0)
Traceback (most recent call last):
...
ValueError: math domain error

What still differs from CPython in compiled code: ``math.exp`` and ``**``
overflow to ``inf`` (CPython raises ``OverflowError``), and a negative float
to a fractional power is ``nan`` (CPython gives a complex number).
"""

from __future__ import annotations

import math
import types

from numba.extending import register_jitable

__all__: list[str] = []


@register_jitable
def _domain_error():
    raise ValueError("math domain error")


@register_jitable
def log(x, base=None):
    if x <= 0:
        _domain_error()
    if base is None:
        return math.log(x)
    if base <= 0:
        _domain_error()
    return math.log(x) / math.log(base)


@register_jitable
def log2(x):
    if x <= 0:
        _domain_error()
    return math.log2(x)


@register_jitable
def log10(x):
    if x <= 0:
        _domain_error()
    return math.log10(x)


@register_jitable
def log1p(x):
    if x <= -1:
        _domain_error()
    return math.log1p(x)


@register_jitable
def sqrt(x):
    if x < 0:
        _domain_error()
    return math.sqrt(x)


@register_jitable
def acos(x):
    if x > 1 or x < -1:
        _domain_error()
    return math.acos(x)


@register_jitable
def asin(x):
    if x > 1 or x < -1:
        _domain_error()
    return math.asin(x)


@register_jitable
def acosh(x):
    if x < 1:
        _domain_error()
    return math.acosh(x)


@register_jitable
def atanh(x):
    if x >= 1 or x <= -1:
        _domain_error()
    return math.atanh(x)


CHECKED = {"log": log, "log2": log2, "log10": log10, "log1p": log1p, "sqrt": sqrt,
           "acos": acos, "asin": asin, "acosh": acosh, "atanh": atanh}

checked_math = types.ModuleType("math", "math, with CPython's domain errors (s2s_ad)")
checked_math.__dict__.update({k: v for k, v in vars(math).items() if not k.startswith("__")})
checked_math.__dict__.update(CHECKED)
