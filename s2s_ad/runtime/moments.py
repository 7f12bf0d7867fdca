"""Reductions over a tuple of axes, variance and standard deviation, logsumexp and
softmax (issue 23): what Numba 0.68 lacks, both paths, NumPy's and SciPy's semantics.

A reduction over a tuple of axes is one along the last axis of
``axes_last(x, axes)`` (the axes moved back and merged); ``axes_back``,
``axes_kept`` and ``last_kept`` undo it for the result and the cotangent.  The
``*_last`` helpers reduce the last axis (a number for a 1-D input).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types
from numba.extending import register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .axes import check_array, normalize_axis, numba_impl

__all__ = ["axes_back", "axes_kept", "axes_last", "last_kept", "logsumexp_last",
           "logsumexp_last_vjp", "softmax_last", "softmax_last_vjp", "std_last", "std_last_vjp",
           "var_last", "var_last_vjp"]


def scipy_special():
    """scipy.special, imported where used: the runtime loads without it."""
    import scipy.special

    return scipy.special


def as_result(value):
    """A 0-d result as a NumPy number (as SciPy and NumPy return), else the array."""
    return value[()] if np.ndim(value) == 0 else value


# ---- a tuple of axes: moved to the back ------------------------------------------------------
@register_jitable
def perm_to_back(nd, axes):
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
    return [int(p) for p in perm_to_back(nd, tuple(axes))]


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
        perm = perm_to_back(nd, axes)
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
        perm = perm_to_back(nd, axes)
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
        perm = perm_to_back(nd, axes)
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
        perm = perm_to_back(nd, axes)
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
def rows_of(shape):
    """The number of rows of an array of ``shape`` seen as (rows, shape[-1])."""
    m = 1
    for d in range(len(shape) - 1):
        m *= shape[d]
    return m


@register_jitable
def quotient(total, count):
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
    mean = quotient(total, n)
    squares = 0.0
    for j in range(n):
        squares += (a[i, j] - mean) ** 2
    return mean, quotient(squares, n - ddof)


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
def _momentrows_of(x2, ddof, root):
    """The variance (``root``: std) of each row of ``x2`` seen as (rows, shape[-1])."""
    m = rows_of(x2.shape)
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
        return lambda x2, ddof: _momentrows_of(x2, ddof, root).astype(kind)[0]
    return lambda x2, ddof: _momentrows_of(x2, ddof, root).astype(kind).reshape(x2.shape[:-1])


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
        m = rows_of(x2.shape)
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
    return as_result(scipy_special().logsumexp(np.asarray(x2, np.float64), axis=-1))


@numba_impl(logsumexp_last)
def _ol_logsumexp_last(x2):
    check_array(x2, "x2")
    one_row = x2.ndim == 1

    def rows(x2):
        m = rows_of(x2.shape)
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
    return scipy_special().softmax(np.asarray(x2, np.float64), axis=-1)


@register_jitable
def _softmaxrows_of(x2):
    m = rows_of(x2.shape)
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
    return lambda x2: _softmaxrows_of(x2).reshape(x2.shape)


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
        y = _softmaxrows_of(x2)
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
        y = _softmaxrows_of(x2)
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
