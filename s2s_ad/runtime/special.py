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

from .axes import check_array, normalize_axis, numba_impl

__all__ = ["axes_back", "axes_kept", "axes_last", "heaviside", "last_kept", "sinc_slope"]


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
