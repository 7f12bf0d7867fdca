"""Scalar helpers and dtype conversions; each runs in Python and inside Numba.

Derivative pieces (``sign``, ``log_or_zero``), math functions Numba lacks
(``cbrt``, ``fmod``, ``fsum``), the conversions ``astype`` calls are rewritten to, and
``run_hook`` for ``with_derivative`` hooks (Python only), and ``without_derivative``, the
marker as generated code keeps it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import literal_unroll
from numba.core import types
from numba.extending import overload, register_jitable

__all__ = [
    "zero_d_item",
    "as_float64",
    "astype_float",
    "astype_int",
    "cbrt",
    "fmod",
    "pow_curvature",
    "fsum",
    "int_pow",
    "number_as_float",
    "number_as_int",
    "range_length",
    "no_transpose",
    "log_or_zero",
    "pow_slope",
    "run_hook",
    "sign",
    "without_derivative",
]


@register_jitable
def sign(x):
    """-1.0, 0.0 or 1.0: the derivative of ``abs`` (0 at 0, as NumPy's sign)."""
    if x > 0:
        return 1.0
    if x < 0:
        return -1.0
    return 0.0 * x


@register_jitable
def log_or_zero(a):
    """``log(a)`` for the exponent's derivative of ``a ** b``: 0 where a == 0.

    At ``a == 0`` the term it multiplies (``a ** b``) is zero for ``b > 0``; for
    negative ``a`` the power is not differentiable in ``b`` and this is NaN.
    """
    if a > 0:
        return math.log(a)
    if a == 0:
        return 0.0
    return math.nan


@register_jitable
def pow_slope(a, b):
    """``b * a ** (b - 1)``, the derivative of ``a ** b`` in ``a``, for a scalar
    exponent that may be 0: then ``a ** b`` is constant and the slope is 0, also
    at ``a == 0`` (where the formula would read ``0.0 ** -1``).

    >>> pow_slope(3.0, 2), pow_slope(0.0, 0), pow_slope(0.0, 1.0)
    (6.0, 0.0, 1.0)
    """
    if b == 0:
        return 0.0 * a
    return b * a ** (b - 1.0)


@register_jitable
def pow_curvature(a, b):
    """``b * (b - 1) * a ** (b - 2)``, the derivative of ``pow_slope(a, b)`` in ``a``
    (second derivatives): 0 where the slope is constant (``b`` 0 or 1), also at
    ``a == 0`` (where the formula would read ``0.0 ** -2``).

    >>> pow_curvature(3.0, 2), pow_curvature(0.0, 0), pow_curvature(0.0, 1.0)
    (2.0, 0.0, 0.0)
    """
    if b == 0 or b == 1:
        return 0.0 * a
    return b * (b - 1.0) * a ** (b - 2.0)


def int_pow(a, b):
    """``a ** b`` of ints whose result is typed a float (the exponent may be negative):
    Python's value, ``2 ** -1 == 0.5``, where Numba's int64 power gives 0.

    >>> int_pow(2, -1), int_pow(3, 2)
    (0.5, 9)
    """
    return a ** b


@overload(int_pow, strict=False)
def _ol_int_pow(a, b):
    return lambda a, b: float(a) ** b


def number_as_float(x):
    """A bool or int as a float (Numba's ``float`` refuses bools): a list item of a list
    whose items join to floats; also the entry of a 0-d array.

    >>> number_as_float(True), number_as_float(3)
    (1.0, 3.0)
    """
    return float(x)


@overload(number_as_float, strict=False)
def _ol_number_as_float(x):
    if isinstance(x, types.Boolean):
        return lambda x: 1.0 if x else 0.0
    if isinstance(x, types.Array):  # a 0-d array: its entry (a number's kind)
        return lambda x: float(x[()])
    return lambda x: float(x)


def zero_d_item(x):
    """``x[()]``: the entry of a 0-d array, or a number itself (``np.array(2.0)`` of a
    number is the number in generated code, where NumPy makes a 0-d array).

    >>> float(zero_d_item(np.array(2.5))), zero_d_item(1.5)
    (2.5, 1.5)
    """
    return x[()] if isinstance(x, np.ndarray) else x


@overload(zero_d_item, strict=False)
def _ol_zero_d_item(x):
    if isinstance(x, types.Array):
        return lambda x: x[()]
    return lambda x: x


@register_jitable
def range_length(start, stop, step):
    """``len(range(start, stop, step))``: a loop's trip count, as the gradient code
    computes it (forward mode reads that code again).

    >>> range_length(0, 10, 3)
    4
    """
    return len(range(start, stop, step))


@register_jitable
def no_transpose():
    """The pullback of a helper of gradient code whose transpose is not written: a
    gradient of a gradient of arrays by reverse mode (forward over reverse works)."""
    raise NotImplementedError("reverse mode through generated gradient code of arrays is "
                              "not supported yet: use ad.hvp or ad.hessian")


def number_as_int(x):
    """A bool as an int (Numba's ``int`` refuses bools).

    >>> number_as_int(True)
    1
    """
    return int(x)


@overload(number_as_int, strict=False)
def _ol_number_as_int(x):
    if isinstance(x, types.Boolean):
        return lambda x: 1 if x else 0
    return lambda x: int(x)


@register_jitable
def cbrt(x):
    """The real cube root (``math.cbrt``, which Numba lacks)."""
    return math.copysign(abs(x) ** (1.0 / 3.0), x)


@register_jitable
def fmod(x, y):
    """C's fmod (``math.fmod``, which Numba lacks): the result has the sign of x."""
    return np.fmod(x, y) + 0.0


@register_jitable
def without_derivative(value):
    """``value``: the user's ``ad.without_derivative`` as generated code writes it, so
    forward mode over gradient code (second derivatives) keeps the value a constant.

    >>> without_derivative(2.5)
    2.5
    """
    return value


def run_hook(hook, cotangent):
    """Run a ``with_derivative`` hook: its result replaces the cotangent unless None.

    Python only: a hook is a Python function, so code with hooks is not compiled.
    """
    replaced = hook(cotangent)
    return cotangent if replaced is None else replaced


@register_jitable
def astype_int(x):
    """``x.astype(int)``: no derivative flows through it."""
    return x.astype(np.int64)


@register_jitable
def astype_float(x):
    """``x.astype(float)``: a float64 copy; the cotangent passes through."""
    return x.astype(np.float64)


def as_float64(a):
    """``a`` as float64 (no copy when it already is): cotangents are float64, and
    Numba's dot/matmul need both operands of one dtype."""
    return np.asarray(a, dtype=np.float64)


@overload(as_float64)
def _as_float64_numba(a):
    if isinstance(a, types.Array) and a.dtype == types.float64:
        return lambda a: a
    return lambda a: a.astype(np.float64)


def fsum(values):
    """``math.fsum(values)``: the correctly rounded sum of a tuple or 1-D array.

    Numba lacks it; its version keeps Shewchuk's exact partial sums and rounds
    them as CPython does. With an infinity or NaN among the values it returns
    their plain sum (CPython raises on ``inf + -inf``, this gives NaN); an
    overflow of the partial sums gives inf or NaN (CPython raises OverflowError).

    >>> fsum((0.1,) * 10), sum((0.1,) * 10)
    (1.0, 0.9999999999999999)
    """
    return math.fsum(values)


@register_jitable
def _fsum_array(values):
    partials = np.empty(values.size + 1)
    count = 0
    special = 0.0
    finite = True
    for value in values:
        x = float(value)
        if not math.isfinite(x):
            special += x
            finite = False
            continue
        i = 0
        for j in range(count):
            y = partials[j]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        count = i
        if x != 0.0:
            partials[i] = x
            count = i + 1
    if not finite:
        return special
    # the sum of the partials, rounded half-even as CPython's math.fsum does
    hi = 0.0
    if count > 0:
        n = count - 1
        hi = partials[n]
        lo = 0.0
        while n > 0:
            x = hi
            n -= 1
            y = partials[n]
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or
                      (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            if y == x - hi:
                hi = x
    return hi


@overload(fsum)
def _fsum_numba(values):
    if isinstance(values, types.Array) and values.ndim == 1:
        return _fsum_array
    if isinstance(values, types.BaseTuple):
        count = len(values)

        def impl(values):
            buffer = np.empty(count)
            k = 0
            for value in literal_unroll(values):
                buffer[k] = value
                k += 1
            return _fsum_array(buffer)

        return impl
    return None
