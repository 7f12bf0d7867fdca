"""Element-wise special functions and their slopes (issue 23): ``np.heaviside`` and
``np.sinc``'s slope, and ``scipy.special``'s ``gammaln``, ``digamma`` (with
``trigamma``, its slope), ``erf``, ``erfc``, ``expit``, ``logit`` and ``xlogy``.

Each takes a number or an array (any ndim; binary ones broadcast) and returns
the same kind.  Called from Python they run NumPy or SciPy itself; compiled,
Numba runs the scalar kernels here (numba-scipy 0.4.0 requires scipy <= 1.11;
this project runs 1.17), tested against SciPy (and mpmath where SciPy loses
digits) in tests/rules/test_surface_elementwise.py.
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import register_jitable

from .axes import numba_impl
from .moments import as_result, scipy_special

__all__ = ["digamma", "erf", "erfc", "expit", "gammaln", "heaviside", "logit", "sinc_slope",
           "trigamma", "xlogy", "xlogy_dx", "xlogy_dy"]


def _is_number(t) -> bool:
    return isinstance(t, types.Number)


# ---- sinc ------------------------------------------------------------------------------------
@register_jitable
def _sinc_slope_one(x):
    """d/dx sin(pi x) / (pi x); a series near 0, where the quotient cancels."""
    u = math.pi * x
    if abs(u) < 1e-2:
        u2 = u * u
        return math.pi * u * (-1.0 / 3.0 + u2 * (1.0 / 30.0 - u2 * (1.0 / 840.0 - u2 / 45360.0)))
    return (math.cos(u) - math.sin(u) / u) / x


def sinc_slope(x):
    """The derivative of ``np.sinc`` (0 at 0), element-wise.

    >>> float(sinc_slope(0.0)) == 0.0, round(float(sinc_slope(0.5)), 12)  # -4 / pi
    (True, -1.273239544735)
    """
    if np.ndim(x) == 0:
        return float(_sinc_slope_one(float(x)))
    flat = np.asarray(x, np.float64).ravel()
    return np.array([_sinc_slope_one(v) for v in flat]).reshape(np.shape(x))


@numba_impl(sinc_slope)
def _ol_sinc_slope(x):
    if _is_number(x):
        return lambda x: _sinc_slope_one(float(x))

    def impl(x):
        flat = np.ascontiguousarray(x).ravel()
        out = np.empty(flat.size, np.float64)
        for i in range(flat.size):
            out[i] = _sinc_slope_one(flat[i])
        return out.reshape(x.shape)

    return impl


# ---- heaviside -------------------------------------------------------------------------------
@register_jitable
def _step_one(x, h0):
    if x < 0:
        return 0.0
    if x > 0:
        return 1.0
    if x == 0:
        return float(h0)
    return math.nan


def heaviside(x, h0):
    """``np.heaviside(x, h0)`` (Numba lacks it): 0 below 0, 1 above, ``h0`` at 0,
    NaN at NaN; ``x`` and ``h0`` broadcast.

    >>> heaviside(np.array([-1.0, 0.0, 2.0]), 0.5)
    array([0. , 0.5, 1. ])
    """
    return np.heaviside(x, h0)


@numba_impl(heaviside)
def _ol_heaviside(x, h0):
    if _is_number(x) and _is_number(h0):
        return lambda x, h0: _step_one(x, h0)

    def impl(x, h0):
        xs, hs = np.broadcast_arrays(np.asarray(x), np.asarray(h0))
        out = np.empty(xs.shape, np.float64)
        flat = out.reshape(-1)
        i = 0
        for index in np.ndindex(xs.shape):
            flat[i] = _step_one(xs[index], hs[index])
            i += 1
        return out

    return impl


# ---- scipy.special ---------------------------------------------------------------------------
_DIGAMMA_TAIL = (1.0 / 12.0, 1.0 / 120.0, 1.0 / 252.0, 1.0 / 240.0, 1.0 / 132.0,
                 691.0 / 32760.0, 1.0 / 12.0)


@register_jitable
def _digamma_one(x):
    """psi(x): reflection below 0, recurrence up to 10, then the asymptotic series."""
    if math.isnan(x):
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return -math.inf if x == 0.0 else math.nan
    result = 0.0
    if x < 0.0:  # psi(x) = psi(1 - x) - pi / tan(pi x)
        result = -math.pi / math.tan(math.pi * (x - math.floor(x + 0.5)))  # exact reduction
        x = 1.0 - x
    while x < 10.0:
        result -= 1.0 / x
        x += 1.0
    inv2 = 1.0 / (x * x)
    tail = 0.0
    for k in range(6, -1, -1):
        tail = _DIGAMMA_TAIL[k] - inv2 * tail
    return result + math.log(x) - 0.5 / x - inv2 * tail


_TRIGAMMA_TAIL = (1.0 / 6.0, 1.0 / 30.0, 1.0 / 42.0, 1.0 / 30.0, 5.0 / 66.0, 691.0 / 2730.0,
                  7.0 / 6.0)


@register_jitable
def _trigamma_one(x):
    """psi'(x) (scipy's polygamma(1, x)): reflection below 0, recurrence up to 10, then
    the asymptotic series."""
    if math.isnan(x):
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    result = 0.0
    sign = 1.0
    if x < 0.0:  # psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
        s = math.sin(math.pi * (x - math.floor(x + 0.5)))
        result = math.pi * math.pi / (s * s)
        sign = -1.0
        x = 1.0 - x
    series = 0.0
    while x < 10.0:
        series += 1.0 / (x * x)
        x += 1.0
    inv2 = 1.0 / (x * x)
    tail = 0.0
    for k in range(6, -1, -1):
        tail = _TRIGAMMA_TAIL[k] - inv2 * tail
    series += 1.0 / x + 0.5 * inv2 + inv2 / x * tail
    return result + sign * series


@register_jitable
def _gammaln_one(x):
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


@register_jitable
def _expit_one(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@register_jitable
def _logit_one(x):
    if x == 0.0:
        return -math.inf
    if x == 1.0:
        return math.inf
    if x < 0.0 or x > 1.0:
        return math.nan
    return math.log(x / (1.0 - x))


@register_jitable
def _erf_one(x):
    return math.erf(x)


@register_jitable
def _erfc_one(x):
    return math.erfc(x)


def _unary_overload(public, kernel):
    """Register ``kernel`` (a jitable scalar function) element-wise as ``public``'s
    Numba version: a number gives a float, an array a float64 array of its shape."""
    def typer(x):
        if isinstance(x, types.Number):
            return lambda x: kernel(float(x))

        def impl(x):
            flat = np.ascontiguousarray(x).ravel()
            out = np.empty(flat.size, np.float64)
            for i in range(flat.size):
                out[i] = kernel(float(flat[i]))
            return out.reshape(x.shape)
        return impl
    numba_impl(public)(typer)


def gammaln(x):
    """``scipy.special.gammaln``: log |Gamma(x)| (inf at 0 and negative integers).

    >>> float(gammaln(5.0)) == math.log(24.0)
    True
    """
    return as_result(scipy_special().gammaln(x))


def digamma(x):
    """``scipy.special.digamma`` (psi): the derivative of ``gammaln``.

    >>> round(float(digamma(1.0)), 15)  # -Euler's constant
    -0.577215664901533
    """
    return as_result(scipy_special().digamma(x))


def trigamma(x):
    """``scipy.special.polygamma(1, x)``: the derivative of ``digamma``.

    >>> round(float(trigamma(1.0)), 14)  # pi^2 / 6
    1.64493406684823
    """
    return as_result(scipy_special().polygamma(1, x))


def erf(x):
    """``scipy.special.erf``.

    >>> float(erf(0.0))
    0.0
    """
    return as_result(scipy_special().erf(x))


def erfc(x):
    """``scipy.special.erfc``.

    >>> float(erfc(0.0))
    1.0
    """
    return as_result(scipy_special().erfc(x))


def expit(x):
    """``scipy.special.expit``: the logistic sigmoid (no overflow for large |x|).

    >>> float(expit(0.0)), float(expit(-800.0))
    (0.5, 0.0)
    """
    return as_result(scipy_special().expit(x))


def logit(x):
    """``scipy.special.logit``: log(x / (1 - x)) (+-inf at 1 and 0, NaN outside).

    >>> float(logit(0.5))
    0.0
    """
    return as_result(scipy_special().logit(x))


for _public, _kernel in ((gammaln, _gammaln_one), (digamma, _digamma_one),
                         (trigamma, _trigamma_one), (erf, _erf_one), (erfc, _erfc_one),
                         (expit, _expit_one), (logit, _logit_one)):
    _unary_overload(_public, _kernel)


# ---- xlogy: x log(y), 0 where x == 0 -----------------------------------------------------------
@register_jitable
def _xlogy_one(x, y):
    if x == 0.0 and not math.isnan(y):
        return 0.0
    if y == 0.0:
        return -math.inf * x if x > 0 else math.inf
    return x * math.log(y) if y > 0 else math.nan


@register_jitable
def _xlogy_dx_one(x, y):
    """d/dx x log(y) = log(y); 0 at x == y == 0 (not differentiable there: xlogy(t, 0) is
    0 at t = 0 and -inf for t > 0)."""
    if x == 0.0 and y == 0.0:
        return 0.0
    return math.log(y) if y > 0 else (-math.inf if y == 0 else math.nan)


@register_jitable
def _xlogy_dy_one(x, y):
    """d/dy x log(y) = x / y; 0 where x == 0 (xlogy(0, y) is 0 for every y)."""
    if x == 0.0:
        return 0.0
    if y == 0.0:
        return math.copysign(math.inf, x)
    return x / y


def _binary_overload(public, kernel):
    """Register ``kernel`` (a jitable scalar function of two numbers) element-wise with
    broadcasting as ``public``'s Numba version."""
    def typer(x, y):
        if isinstance(x, types.Number) and isinstance(y, types.Number):
            return lambda x, y: kernel(float(x), float(y))

        def impl(x, y):
            xs, ys = np.broadcast_arrays(np.asarray(x), np.asarray(y))
            out = np.empty(xs.shape, np.float64)
            flat = out.reshape(-1)
            i = 0
            for index in np.ndindex(xs.shape):
                flat[i] = kernel(float(xs[index]), float(ys[index]))
                i += 1
            return out
        return impl
    numba_impl(public)(typer)


def _py_binary(kernel, x, y):
    xs, ys = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(y, np.float64))
    out = np.array([kernel(a, b) for a, b in zip(xs.ravel(), ys.ravel(), strict=True)])
    return as_result(out.reshape(xs.shape))


def xlogy(x, y):
    """``scipy.special.xlogy``: x log(y), 0 where x == 0 (also at y == 0).

    >>> float(xlogy(0.0, 0.0)), float(xlogy(2.0, 1.0))
    (0.0, 0.0)
    """
    return as_result(scipy_special().xlogy(x, y))


def xlogy_dx(x, y):
    """The slope of :func:`xlogy` in ``x``: log(y), and 0 at x == y == 0.

    >>> float(xlogy_dx(0.0, 0.0)), float(xlogy_dx(3.0, 1.0))
    (0.0, 0.0)
    """
    return _py_binary(_xlogy_dx_one, x, y)


def xlogy_dy(x, y):
    """The slope of :func:`xlogy` in ``y``: x / y, and 0 where x == 0.

    >>> float(xlogy_dy(0.0, 0.0)), float(xlogy_dy(3.0, 2.0))
    (0.0, 1.5)
    """
    return _py_binary(_xlogy_dy_one, x, y)


for _public, _kernel in ((xlogy, _xlogy_one), (xlogy_dx, _xlogy_dx_one),
                         (xlogy_dy, _xlogy_dy_one)):
    _binary_overload(_public, _kernel)
