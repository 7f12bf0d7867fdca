"""Element-wise special functions and their slopes, reductions over a tuple of axes,
variance, trace, cumulative products and differences: what Numba 0.68 lacks of the
NumPy/SciPy surface of issue 23 (both paths, NumPy's semantics).

Element-wise helpers take a number or an array (any ndim) and return the same
kind; each has a plain NumPy body (Python) and a Numba implementation per
argument type (a number, an array).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .axes import as_3d, check_array, normalize_axis, numba_impl, shape_with

__all__ = ["axes_back", "axes_kept", "axes_last", "cumprod_axis", "cumprod_vjp", "diff_axis",
           "diff_vjp", "digamma", "erf", "erfc", "expit", "gammaln", "heaviside", "last_kept",
           "logit", "logsumexp_last", "logsumexp_last_vjp", "sinc_slope", "softmax_last",
           "softmax_last_vjp", "std_last", "std_last_vjp", "trace_axes", "trace_vjp",
           "trigamma", "var_last", "var_last_vjp", "xlogy", "xlogy_dx", "xlogy_dy"]


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


# ---- a tuple of axes: moved to the back ------------------------------------------------------
@register_jitable
def _perm_to_back(nd, axes):
    """The permutation putting ``axes`` (any sign, in their order) after the other axes
    (kept in order); a repeated axis raises ValueError as NumPy."""
    chosen = np.full(nd, -1, np.intp)
    for k in range(len(axes)):
        ax = normalize_axis(axes[k], nd)
        if chosen[ax] >= 0:
            raise ValueError("duplicate value in 'axis'")
        chosen[ax] = k
    perm = np.empty(nd, np.intp)
    j = 0
    for d in range(nd):
        if chosen[d] < 0:
            perm[j] = d
            j += 1
    for k in range(len(axes)):
        perm[j + k] = normalize_axis(axes[k], nd)
    return perm


def _py_perm(nd, axes):
    return [int(p) for p in _perm_to_back(nd, tuple(axes))]


def axes_last(x, axes):
    """``x`` with ``axes`` (a tuple) moved to the back and merged into one: shape
    (kept axes..., product of the reduced sizes), a new C-contiguous array.  A
    reduction over the tuple is the reduction along the last axis of this.

    >>> axes_last(np.arange(24.0).reshape(2, 3, 4), (0, -1)).shape
    (3, 8)
    """
    x = np.asarray(x)
    perm = _py_perm(x.ndim, axes)
    kept = [x.shape[p] for p in perm[:x.ndim - len(axes)]]
    size = int(np.prod([x.shape[p] for p in perm[x.ndim - len(axes):]]))
    return np.ascontiguousarray(np.transpose(x, perm)).reshape((*kept, size))


@numba_impl(axes_last)
def _ol_axes_last(x, axes):
    check_array(x, "x")
    nd, k = x.ndim, len(axes)
    out_nd = nd - k + 1

    def impl(x, axes):
        perm = _perm_to_back(nd, axes)
        moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(perm, nd)))
        shape = np.empty(out_nd, np.intp)
        size = 1
        for i in range(nd):
            if i < nd - k:
                shape[i] = x.shape[perm[i]]
            else:
                size *= x.shape[perm[i]]
        shape[nd - k] = size
        return moved.reshape(to_fixed_tuple(shape, out_nd))

    return impl


def axes_back(g2, x, axes):
    """The inverse of :func:`axes_last`: ``g2`` (shaped like ``axes_last(x, axes)``) as
    a new array shaped like ``x``, in ``g2``'s dtype.

    >>> x = np.arange(24.0).reshape(2, 3, 4)
    >>> bool(np.array_equal(axes_back(axes_last(x, (2, 0)), x, (2, 0)), x))
    True
    """
    x = np.asarray(x)
    perm = _py_perm(x.ndim, axes)
    moved = np.asarray(g2).reshape([x.shape[p] for p in perm])
    return np.ascontiguousarray(np.transpose(moved, np.argsort(perm)))


@numba_impl(axes_back)
def _ol_axes_back(g2, x, axes):
    check_array(x, "x")
    check_array(g2, "g2")
    nd = x.ndim

    def impl(g2, x, axes):
        perm = _perm_to_back(nd, axes)
        shape = np.empty(nd, np.intp)
        inverse = np.empty(nd, np.intp)
        for i in range(nd):
            shape[i] = x.shape[perm[i]]
            inverse[perm[i]] = i
        moved = np.ascontiguousarray(g2).reshape(to_fixed_tuple(shape, nd))
        return np.ascontiguousarray(np.transpose(moved, to_fixed_tuple(inverse, nd)))

    return impl


def axes_kept(z, x, axes):
    """``z`` (a reduction of ``x`` over ``axes``) reshaped as with ``keepdims=True``:
    ``x``'s shape with 1 at each of ``axes``.

    >>> axes_kept(np.ones(3), np.ones((2, 3, 4)), (0, 2)).shape
    (1, 3, 1)
    """
    x = np.asarray(x)
    perm = _py_perm(x.ndim, axes)
    shape = list(x.shape)
    for p in perm[x.ndim - len(axes):]:
        shape[p] = 1
    return np.asarray(z).reshape(shape).copy()


@numba_impl(axes_kept)
def _ol_axes_kept(z, x, axes):
    check_array(x, "x")
    nd, k = x.ndim, len(axes)
    number = not isinstance(z, types.Array)

    def impl(z, x, axes):
        perm = _perm_to_back(nd, axes)
        shape = np.empty(nd, np.intp)
        for i in range(nd):
            shape[i] = x.shape[i]
        for i in range(nd - k, nd):
            shape[perm[i]] = 1
        flat = np.full(1, z) if number else np.ascontiguousarray(z).copy()
        return flat.reshape(to_fixed_tuple(shape, nd))

    return impl


def last_kept(g, x, axes):
    """A cotangent ``g`` of a ``keepdims=True`` reduction over ``axes`` reshaped to the
    shape of that reduction along the last axis of ``axes_last(x, axes)``: (kept
    axes..., 1).

    >>> last_kept(np.ones((1, 3, 1)), np.ones((2, 3, 4)), (0, 2)).shape
    (3, 1)
    """
    x = np.asarray(x)
    perm = _py_perm(x.ndim, axes)
    return np.asarray(g).reshape([x.shape[p] for p in perm[:x.ndim - len(axes)]] + [1]).copy()


@numba_impl(last_kept)
def _ol_last_kept(g, x, axes):
    check_array(g, "g")
    check_array(x, "x")
    nd, k = x.ndim, len(axes)
    out_nd = nd - k + 1

    def impl(g, x, axes):
        perm = _perm_to_back(nd, axes)
        shape = np.ones(out_nd, np.intp)
        for i in range(nd - k):
            shape[i] = x.shape[perm[i]]
        return np.ascontiguousarray(g).copy().reshape(to_fixed_tuple(shape, out_nd))

    return impl


# ---- variance and standard deviation along the last axis -------------------------------------
def _float_kind(dtype):
    """NumPy's result dtype of np.var of an array of ``dtype`` (a Numba type)."""
    return np.float32 if dtype == types.float32 else np.float64


@register_jitable
def _rows(shape):
    """The number of rows of an array of ``shape`` seen as (rows, shape[-1])."""
    m = 1
    for d in range(len(shape) - 1):
        m *= shape[d]
    return m


@register_jitable
def _quotient(total, count):
    """``total / max(count, 0)`` with NumPy's inf/NaN at a zero count (Numba's scalar
    division would raise)."""
    if count > 0:
        return total / count
    if total > 0:
        return math.inf
    return math.nan


@register_jitable
def _row_moments(a, i, ddof):
    """(mean, sum of squared deviations / (n - ddof)) of row ``i`` of 2-D ``a``."""
    n = a.shape[1]
    total = 0.0
    for j in range(n):
        total += a[i, j]
    mean = _quotient(total, n)
    squares = 0.0
    for j in range(n):
        squares += (a[i, j] - mean) ** 2
    return mean, _quotient(squares, n - ddof)


def _py_last(fn, x2, ddof):
    out = fn(np.asarray(x2), axis=-1, ddof=ddof)
    return out[()] if np.ndim(out) == 0 else out


def var_last(x2, ddof):
    """``np.var(x2, axis=-1, ddof=ddof)`` (a number for a 1-D ``x2``), NumPy's dtype.

    >>> float(var_last(np.array([1.0, 2.0, 4.0]), 1))
    2.333333333333333
    """
    return _py_last(np.var, x2, ddof)


def std_last(x2, ddof):
    """``np.std(x2, axis=-1, ddof=ddof)`` (a number for a 1-D ``x2``), NumPy's dtype.

    >>> float(std_last(np.array([1.0, 3.0]), 0))
    1.0
    """
    return _py_last(np.std, x2, ddof)


@register_jitable
def _moment_rows(x2, ddof, root):
    """The variance (``root``: std) of each row of ``x2`` seen as (rows, shape[-1])."""
    m = _rows(x2.shape)
    a = np.ascontiguousarray(x2).reshape((m, x2.shape[-1]))
    out = np.empty(m, np.float64)
    for i in range(m):
        _, var = _row_moments(a, i, ddof)
        out[i] = math.sqrt(var) if root else var
    return out


def _moment_impl(x2, root):
    check_array(x2, "x2")
    kind = _float_kind(x2.dtype)
    if x2.ndim == 1:
        return lambda x2, ddof: _moment_rows(x2, ddof, root).astype(kind)[0]
    return lambda x2, ddof: _moment_rows(x2, ddof, root).astype(kind).reshape(x2.shape[:-1])


numba_impl(var_last)(lambda x2, ddof: _moment_impl(x2, False))
numba_impl(std_last)(lambda x2, ddof: _moment_impl(x2, True))


def _py_moment_vjp(g, x2, ddof, root):
    x2 = np.asarray(x2, np.float64)
    n = x2.shape[-1]
    g = np.reshape(np.asarray(g, np.float64), x2.shape[:-1] + (1,))
    deviation = x2 - np.mean(x2, axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        count = max(n - ddof, 0)
        if not root:
            return g * 2.0 * deviation / count
        std = np.sqrt(np.sum(deviation ** 2, axis=-1, keepdims=True) / count)
        return np.where(std == 0, 0.0, g * deviation / (count * np.where(std == 0, 1.0, std)))


def var_last_vjp(g, x2, ddof):
    """The VJP of :func:`var_last`: ``g * 2 (x - mean) / (n - ddof)``; ``g`` has one
    entry per row (any shape of that size), the result is float64 shaped like ``x2``.

    >>> var_last_vjp(1.0, np.array([1.0, 2.0, 6.0]), 0)
    array([-1.33333333, -0.66666667,  2.        ])
    """
    return _py_moment_vjp(g, x2, ddof, False)


def std_last_vjp(g, x2, ddof):
    """The VJP of :func:`std_last`: ``g (x - mean) / ((n - ddof) std)``, and 0 for a
    row of equal values (std 0: the subgradient 0, as the 2-norm's at 0).

    >>> std_last_vjp(np.array([1.0, 1.0]), np.array([[1.0, 3.0], [2.0, 2.0]]), 0)
    array([[-0.5,  0.5],
           [ 0. ,  0. ]])
    """
    return _py_moment_vjp(g, x2, ddof, True)


def _moment_vjp_impl(g, x2, root):
    check_array(x2, "x2")
    number = not isinstance(g, types.Array)

    def impl(g, x2, ddof):
        m = _rows(x2.shape)
        n = x2.shape[-1]
        a = np.ascontiguousarray(x2).reshape((m, n))
        gs = np.full(1, g) if number else np.ascontiguousarray(g).reshape(m)
        out = np.empty((m, n), np.float64)
        count = max(n - ddof, 0)
        for i in range(m):
            mean, var = _row_moments(a, i, ddof)
            if count == 0:
                scale = math.nan
            elif root:
                std = math.sqrt(var)
                scale = 0.0 if std == 0 else gs[i] / (count * std)
            else:
                scale = 2.0 * gs[i] / count
            for j in range(n):
                out[i, j] = scale * (a[i, j] - mean)
        return out.reshape(x2.shape)

    return impl


numba_impl(var_last_vjp)(lambda g, x2, ddof: _moment_vjp_impl(g, x2, False))
numba_impl(std_last_vjp)(lambda g, x2, ddof: _moment_vjp_impl(g, x2, True))


# ---- trace -----------------------------------------------------------------------------------
def _diagonal_span(n1, n2, offset):
    """(first row, count) of the diagonal ``offset`` of an n1 x n2 matrix."""
    first = max(0, -offset)
    return first, max(0, min(n1, n2 - offset) - first)


_diagonal_span_jit = register_jitable(_diagonal_span)


def trace_axes(x, offset, axis1, axis2):
    """``np.trace(x, offset, axis1, axis2)`` (any ndim >= 2; a number for 2-D).

    >>> float(trace_axes(np.arange(9.0).reshape(3, 3), 1, 0, 1))
    6.0
    """
    out = np.trace(x, offset, axis1, axis2)
    return out[()] if np.ndim(out) == 0 else out


def trace_vjp(g, x, offset, axis1, axis2):
    """The VJP of :func:`trace_axes`: ``g`` on the diagonal, zero elsewhere (float64,
    shaped like ``x``).

    >>> trace_vjp(2.0, np.ones((2, 3)), 1, 0, 1)
    array([[0., 2., 0.],
           [0., 0., 2.]])
    """
    x = np.asarray(x)
    out = np.zeros(x.shape)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    first, count = _diagonal_span(view.shape[-2], view.shape[-1], offset)
    rows = np.arange(first, first + count)
    view[..., rows, rows + offset] = np.asarray(g, np.float64)[..., None]
    return out


@register_jitable
def _diagonal_sums(moved, offset):
    """The sums of diagonal ``offset`` over the last two axes of ``moved``, one per
    leading index (flattened)."""
    n1, n2 = moved.shape[-2], moved.shape[-1]
    m = _rows(moved.shape[:-1])
    a = moved.reshape((m, n1, n2))
    first, count = _diagonal_span_jit(n1, n2, offset)
    out = np.zeros(m, a.dtype)
    for i in range(m):
        for k in range(first, first + count):
            out[i] += a[i, k, k + offset]
    return out


@numba_impl(trace_axes)
def _ol_trace_axes(x, offset, axis1, axis2):
    check_array(x, "x")
    nd = x.ndim

    if nd == 2:
        def impl2(x, offset, axis1, axis2):
            perm = _perm_to_back(nd, (axis1, axis2))
            moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(perm, nd)))
            return _diagonal_sums(moved, offset)[0]
        return impl2

    def impl(x, offset, axis1, axis2):
        perm = _perm_to_back(nd, (axis1, axis2))
        moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(perm, nd)))
        return _diagonal_sums(moved, offset).reshape(moved.shape[:-2])

    return impl


@numba_impl(trace_vjp)
def _ol_trace_vjp(g, x, offset, axis1, axis2):
    check_array(x, "x")
    nd = x.ndim
    number = not isinstance(g, types.Array)

    def impl(g, x, offset, axis1, axis2):
        perm = _perm_to_back(nd, (axis1, axis2))
        shape = np.empty(nd, np.intp)
        inverse = np.empty(nd, np.intp)
        for i in range(nd):
            shape[i] = x.shape[perm[i]]
            inverse[perm[i]] = i
        n1, n2 = shape[nd - 2], shape[nd - 1]
        m = 1
        for i in range(nd - 2):
            m *= shape[i]
        gs = np.full(1, g) if number else np.ascontiguousarray(g).reshape(m)
        a = np.zeros((m, n1, n2), np.float64)
        first, count = _diagonal_span_jit(n1, n2, offset)
        for i in range(m):
            for k in range(first, first + count):
                a[i, k, k + offset] = gs[i]
        moved = a.reshape(to_fixed_tuple(shape, nd))
        return np.ascontiguousarray(np.transpose(moved, to_fixed_tuple(inverse, nd)))

    return impl


# ---- cumulative products and differences -----------------------------------------------------
def cumprod_axis(x, axis):
    """``np.cumprod(x, axis=axis)`` for an int ``axis`` (Numba flattens only).

    >>> cumprod_axis(np.array([[1.0, 2.0], [3.0, 4.0]]), 0)
    array([[1., 2.],
           [3., 8.]])
    """
    return np.cumprod(x, axis=axis)


@numba_impl(cumprod_axis)
def _ol_cumprod_axis(x, axis):
    check_array(x, "x")

    def impl(x, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        outer, n, inner = x3.shape
        out = np.empty((outer, n, inner), x.dtype)
        for o in range(outer):
            for i in range(inner):
                if n == 0:
                    continue
                acc = x3[o, 0, i]
                out[o, 0, i] = acc
                for k in range(1, n):
                    acc = acc * x3[o, k, i]
                    out[o, k, i] = acc
        return out.reshape(x.shape)

    return impl


@register_jitable
def _cumprod_vjp_line(x, g, out):
    """One line: ``out[i] = prod(x[:i]) * s[i]`` with ``s[i] = g[i] + x[i+1] s[i+1]``
    (no division: exact where x has zeros)."""
    n = x.shape[0]
    suffix = 0.0
    for i in range(n - 1, -1, -1):
        suffix = g[i] + (x[i + 1] * suffix if i + 1 < n else 0.0)
        out[i] = suffix
    prefix = 1.0
    for i in range(n):
        out[i] *= prefix
        prefix *= x[i]


def cumprod_vjp(g, x, axis):
    """The VJP of ``np.cumprod(x, axis=axis)``, float64 shaped like ``x``: entry i
    gets ``prod(x[:i]) * sum_{k >= i} g[k] prod(x[i+1:k+1])`` along the axis, computed
    by a suffix recurrence without dividing by ``x`` (right where ``x`` has zeros).

    >>> cumprod_vjp(np.ones(3), np.array([2.0, 0.0, 5.0]), 0)  # 1, 2 + 2 * 5, 2 * 0
    array([ 1., 12.,  0.])
    """
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    g = np.moveaxis(np.asarray(g, np.float64), axis, -1)
    out = np.empty(x.shape)
    for index in np.ndindex(x.shape[:-1]):
        _cumprod_vjp_line(x[index], g[index], out[index])
    return np.moveaxis(out, -1, axis).copy()


@numba_impl(cumprod_vjp)
def _ol_cumprod_vjp(g, x, axis):
    check_array(g, "g")
    check_array(x, "x")

    def impl(g, x, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax).astype(np.float64)
        g3 = as_3d(g, ax).astype(np.float64)
        outer, n, inner = x3.shape
        out = np.empty((outer, n, inner), np.float64)
        line = np.empty(n, np.float64)
        for o in range(outer):
            for i in range(inner):
                _cumprod_vjp_line(x3[o, :, i], g3[o, :, i], line)
                out[o, :, i] = line
        return out.reshape(x.shape)

    return impl


def diff_axis(x, n, axis):
    """``np.diff(x, n, axis)`` (Numba: the last axis only), a new array.

    >>> diff_axis(np.array([[1.0, 4.0], [2.0, 8.0]]), 1, 0)
    array([[1., 4.]])
    """
    return np.array(np.diff(x, n, axis))


@register_jitable
def _diff_once(x3):
    outer, n, inner = x3.shape
    out = np.empty((outer, max(n - 1, 0), inner), x3.dtype)
    for o in range(outer):
        for k in range(n - 1):
            for i in range(inner):
                out[o, k, i] = x3[o, k + 1, i] - x3[o, k, i]
    return out


@register_jitable
def _diff_vjp_once(g3):
    outer, n, inner = g3.shape
    out = np.zeros((outer, n + 1, inner), np.float64)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k + 1, i] += g3[o, k, i]
                out[o, k, i] -= g3[o, k, i]
    return out


@numba_impl(diff_axis)
def _ol_diff_axis(x, n, axis):
    check_array(x, "x")
    nd = x.ndim

    def impl(x, n, axis):
        if n < 0:
            raise ValueError("order must be non-negative but got a negative n")
        ax = normalize_axis(axis, nd)
        x3 = as_3d(x, ax).copy()
        for _ in range(n):
            x3 = _diff_once(x3)
        return x3.reshape(shape_with(x.shape, ax, x3.shape[1]))

    return impl


def diff_vjp(g, x, n, axis):
    """The VJP of ``np.diff(x, n, axis)``: the adjoint difference applied ``n`` times
    (float64, shaped like ``x``).

    >>> diff_vjp(np.array([1.0, 10.0]), np.zeros(3), 1, 0)
    array([-1., -9., 10.])
    """
    g = np.asarray(g, np.float64)
    for _ in range(n):
        padded = np.zeros(g.shape[:axis % g.ndim] + (1,) + g.shape[axis % g.ndim + 1:])
        g = np.concatenate((padded, g), axis) - np.concatenate((g, padded), axis)
    return g.reshape(np.shape(x))


@numba_impl(diff_vjp)
def _ol_diff_vjp(g, x, n, axis):
    check_array(g, "g")
    check_array(x, "x")
    nd = x.ndim

    def impl(g, x, n, axis):
        ax = normalize_axis(axis, nd)
        g3 = as_3d(g, ax).astype(np.float64)
        for _ in range(n):
            g3 = _diff_vjp_once(g3)
        return g3.reshape(x.shape)

    return impl


# ---- scipy.special ---------------------------------------------------------------------------
# Called from Python these run SciPy itself; compiled, Numba runs the scalar kernels below
# (numba-scipy 0.4.0 requires scipy <= 1.11, this project runs 1.17): tests check them
# against SciPy over a range (tests/rules/test_surface_elementwise.py).
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


def _sps():
    import scipy.special  # imported where used: the runtime loads without SciPy's modules

    return scipy.special


def _as_result(value):
    return value[()] if np.ndim(value) == 0 else value


def gammaln(x):
    """``scipy.special.gammaln``: log |Gamma(x)| (inf at 0 and negative integers).

    >>> float(gammaln(5.0)) == math.log(24.0)
    True
    """
    return _as_result(_sps().gammaln(x))


def digamma(x):
    """``scipy.special.digamma`` (psi): the derivative of ``gammaln``.

    >>> round(float(digamma(1.0)), 15)  # -Euler's constant
    -0.577215664901533
    """
    return _as_result(_sps().digamma(x))


def trigamma(x):
    """``scipy.special.polygamma(1, x)``: the derivative of ``digamma``.

    >>> round(float(trigamma(1.0)), 14)  # pi^2 / 6
    1.64493406684823
    """
    return _as_result(_sps().polygamma(1, x))


def erf(x):
    """``scipy.special.erf``.

    >>> float(erf(0.0))
    0.0
    """
    return _as_result(_sps().erf(x))


def erfc(x):
    """``scipy.special.erfc``.

    >>> float(erfc(0.0))
    1.0
    """
    return _as_result(_sps().erfc(x))


def expit(x):
    """``scipy.special.expit``: the logistic sigmoid (no overflow for large |x|).

    >>> float(expit(0.0)), float(expit(-800.0))
    (0.5, 0.0)
    """
    return _as_result(_sps().expit(x))


def logit(x):
    """``scipy.special.logit``: log(x / (1 - x)) (+-inf at 1 and 0, NaN outside).

    >>> float(logit(0.5))
    0.0
    """
    return _as_result(_sps().logit(x))


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
    return _as_result(out.reshape(xs.shape))


def xlogy(x, y):
    """``scipy.special.xlogy``: x log(y), 0 where x == 0 (also at y == 0).

    >>> float(xlogy(0.0, 0.0)), float(xlogy(2.0, 1.0))
    (0.0, 0.0)
    """
    return _as_result(_sps().xlogy(x, y))


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


# ---- logsumexp and softmax along the last axis -------------------------------------------------
@register_jitable
def _row_logsumexp(a, i):
    n = a.shape[1]
    top = -math.inf
    for j in range(n):
        top = max(top, a[i, j])
    if math.isinf(top) or math.isnan(top):
        return top
    total = 0.0
    for j in range(n):
        total += math.exp(a[i, j] - top)
    return top + math.log(total)


def logsumexp_last(x2):
    """``scipy.special.logsumexp(x2, axis=-1)`` (a number for a 1-D ``x2``).

    >>> round(float(logsumexp_last(np.array([0.0, np.log(3.0)]))), 12)  # log(1 + 3)
    1.38629436112
    """
    return _as_result(_sps().logsumexp(np.asarray(x2, np.float64), axis=-1))


@numba_impl(logsumexp_last)
def _ol_logsumexp_last(x2):
    check_array(x2, "x2")
    one_row = x2.ndim == 1

    def rows(x2):
        m = _rows(x2.shape)
        a = np.ascontiguousarray(x2).reshape((m, x2.shape[-1])).astype(np.float64)
        out = np.empty(m, np.float64)
        for i in range(m):
            out[i] = _row_logsumexp(a, i)
        return out

    jit_rows = register_jitable(rows)
    if one_row:
        return lambda x2: jit_rows(x2)[0]
    return lambda x2: jit_rows(x2).reshape(x2.shape[:-1])


def softmax_last(x2):
    """``scipy.special.softmax(x2, axis=-1)``, float64.

    >>> softmax_last(np.array([0.0, np.log(3.0)]))
    array([0.25, 0.75])
    """
    return _sps().softmax(np.asarray(x2, np.float64), axis=-1)


@register_jitable
def _softmax_rows(x2):
    m = _rows(x2.shape)
    n = x2.shape[-1]
    a = np.ascontiguousarray(x2).reshape((m, n)).astype(np.float64)
    out = np.empty((m, n), np.float64)
    for i in range(m):
        top = -math.inf
        for j in range(n):
            top = max(top, a[i, j])
        total = 0.0
        for j in range(n):
            out[i, j] = math.exp(a[i, j] - top)
            total += out[i, j]
        for j in range(n):
            out[i, j] /= total
    return out


@numba_impl(softmax_last)
def _ol_softmax_last(x2):
    check_array(x2, "x2")
    return lambda x2: _softmax_rows(x2).reshape(x2.shape)


def logsumexp_last_vjp(g, x2):
    """The VJP of :func:`logsumexp_last`: ``g`` times the softmax of each row (``g`` has
    one entry per row, any shape of that size).

    >>> logsumexp_last_vjp(2.0, np.array([0.0, np.log(3.0)]))
    array([0.5, 1.5])
    """
    x2 = np.asarray(x2, np.float64)
    g = np.reshape(np.asarray(g, np.float64), x2.shape[:-1] + (1,))
    return g * softmax_last(x2)


@numba_impl(logsumexp_last_vjp)
def _ol_logsumexp_last_vjp(g, x2):
    check_array(x2, "x2")
    number = not isinstance(g, types.Array)

    def impl(g, x2):
        y = _softmax_rows(x2)
        gs = np.full(1, g) if number else np.ascontiguousarray(g).reshape(y.shape[0])
        for i in range(y.shape[0]):
            y[i, :] *= gs[i]
        return y.reshape(x2.shape)

    return impl


def softmax_last_vjp(g, x2):
    """The VJP of :func:`softmax_last`: ``y * (g - sum(g * y))`` along the last axis.

    >>> softmax_last_vjp(np.array([1.0, 0.0]), np.array([0.0, 0.0]))
    array([ 0.25, -0.25])
    """
    y = softmax_last(x2)
    g = np.asarray(g, np.float64)
    return y * (g - np.sum(g * y, axis=-1, keepdims=True))


@numba_impl(softmax_last_vjp)
def _ol_softmax_last_vjp(g, x2):
    check_array(g, "g")
    check_array(x2, "x2")

    def impl(g, x2):
        y = _softmax_rows(x2)
        m, n = y.shape
        gs = np.ascontiguousarray(g).reshape((m, n))
        out = np.empty((m, n), np.float64)
        for i in range(m):
            dot = 0.0
            for j in range(n):
                dot += gs[i, j] * y[i, j]
            for j in range(n):
                out[i, j] = y[i, j] * (gs[i, j] - dot)
        return out.reshape(x2.shape)

    return impl
