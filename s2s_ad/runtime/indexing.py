"""Cotangents of gathers: ``d_x[index] += g`` where ``index`` is an integer, an
integer array (repeated entries add up, as ``np.add.at`` does) or a boolean mask;
of writes through such an index (``written_items``: the last write wins);
``np.take`` along an axis (``take_axis``: Numba's reads out of bounds unchecked and
fails on multi-dimensional indices) and the VJPs of ``np.take`` built on
``scatter_add`` (``take_vjp``, ``take_vjp_axis``).

>>> d = np.zeros(3)
>>> scatter_add(d, np.array([0, 0, 2]), np.array([1.0, 1.0, 1.0]))
>>> d
array([2., 0., 1.])
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .axes import as_3d, check_array, normalize_axis, numba_impl, split_at


def scatter_add(d, index, g):
    """``d[index] += g`` in place, adding once per occurrence of a repeated index."""
    np.add.at(d, index, g)


def written_items(d, index):
    """``d[index]`` for the cotangent of ``v`` in ``x[index] = v``: where ``index``
    repeats a position, the last write wins, so earlier entries get 0.

    >>> written_items(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 0]))
    array([0., 3., 1.])
    """
    part = np.array(d[index], dtype=np.float64)
    if index.dtype != np.bool_:
        _zero_overwritten(part, index, d.shape[0])
    return part


@register_jitable
def _zero_overwritten(part, index, rows):
    seen = np.zeros(rows, np.bool_)
    for k in range(index.shape[0] - 1, -1, -1):
        p = index[k] + rows if index[k] < 0 else index[k]
        if seen[p]:
            part[k] = 0.0
        seen[p] = True


@overload(written_items)
def _written_items_numba(d, index):
    if not isinstance(index, types.Array):
        return None
    if isinstance(index.dtype, types.Boolean):
        return lambda d, index: d[index].astype(np.float64)

    def rows(d, index):
        part = d[index].astype(np.float64)
        _zero_overwritten(part, index, d.shape[0])
        return part
    return rows


@overload(scatter_add)
def _scatter_add_numba(d, index, g):
    if isinstance(index, types.Integer):
        return _scatter_one
    if not isinstance(index, types.Array):
        return None
    if isinstance(index.dtype, types.Boolean):
        return _scatter_mask
    return _scatter_rows


def _scatter_rows(d, index, g):
    rows = d.shape[0]
    width = d.size // rows if rows else 0
    flat_d = d.reshape((rows, width))
    flat_index = index.ravel()
    flat_g = np.ascontiguousarray(np.broadcast_to(g, index.shape + d.shape[1:]))
    flat_g = flat_g.reshape((flat_index.size, width))
    for k in range(flat_index.size):
        row = flat_index[k]
        if row < 0:
            row += rows
        if row < 0 or row >= rows:
            raise IndexError("index out of bounds")
        for j in range(width):
            flat_d[row, j] += flat_g[k, j]


def _scatter_one(d, index, g):
    rows = d.shape[0]
    row = index + rows if index < 0 else index
    if row < 0 or row >= rows:
        raise IndexError("index out of bounds")
    d[row] += g


def _scatter_mask(d, index, g):
    rows = index.size
    width = d.size // rows if rows else 0
    flat_d = d.reshape((rows, width))
    mask = index.ravel()
    count = 0
    for k in range(rows):
        if mask[k]:
            count += 1
    flat_g = np.ascontiguousarray(np.broadcast_to(g, (count,) + d.shape[index.ndim:]))
    flat_g = flat_g.reshape((count, width))
    taken = 0
    for k in range(rows):
        if mask[k]:
            for j in range(width):
                flat_d[k, j] += flat_g[taken, j]
            taken += 1


def take_vjp(g, a, indices):
    """The VJP of ``np.take(a, indices)`` (no axis: ``a`` flattened): ``g`` added
    into a float64 array shaped like ``a`` at ``indices``, repeated ones adding up.

    >>> take_vjp(np.array([1.0, 2.0, 4.0]), np.zeros((2, 2)), np.array([3, 0, 3]))
    array([[2., 0.], [0., 5.]])
    """
    flat = np.zeros(np.size(a))
    scatter_add(flat, np.asarray(indices), g)
    return flat.reshape(np.shape(a))


@numba_impl(take_vjp)
def _ol_take_vjp(g, a, indices):
    check_array(a, "a")
    if isinstance(indices, types.Integer):
        def impl(g, a, indices):
            flat = np.zeros(a.size)
            scatter_add(flat, indices, g)
            return flat.reshape(a.shape)
        return impl

    def impl(g, a, indices):
        flat = np.zeros(a.size)
        scatter_add(flat, np.asarray(indices), g)
        return flat.reshape(a.shape)

    return impl


def take_axis(a, indices, axis):
    """``np.take(a, indices, axis=axis)`` for an int ``axis`` (indices: an int, a
    tuple or an int array of any shape; negative ones count from the end).

    >>> take_axis(np.arange(6.0).reshape(2, 3), np.array([[2, -1], [0, 0]]), 1).shape
    (2, 2, 2)
    """
    return np.take(a, indices, axis=axis)


@numba_impl(take_axis)
def _ol_take_axis(a, indices, axis):
    check_array(a, "a")
    if isinstance(indices, types.Array):
        picked = indices.ndim
    elif isinstance(indices, types.BaseTuple):
        picked = 1
    else:
        picked = 0
    ndim = a.ndim - 1 + picked
    if ndim == 0:
        return lambda a, indices, axis: _gather_axis(a, indices, axis, 0)[0][0, 0, 0]

    def impl(a, indices, axis):
        out3, shape = _gather_axis(a, indices, axis, ndim)
        return out3.reshape(to_fixed_tuple(shape, ndim))

    return impl


@register_jitable
def _gather_axis(a, indices, axis, ndim):
    """``np.take`` along ``axis`` as an (outer, picked, inner) array, and its shape."""
    ax = normalize_axis(axis, a.ndim)
    rows = np.asarray(indices)
    flat = rows.ravel()
    a3 = as_3d(a, ax)
    outer, n, inner = a3.shape
    out3 = np.empty((outer, flat.size, inner), a.dtype)
    for j in range(flat.size):
        row = flat[j] + n if flat[j] < 0 else flat[j]
        if row < 0 or row >= n:
            raise IndexError("index out of bounds")
        out3[:, j, :] = a3[:, row, :]
    shape = np.empty(ndim, np.intp)
    for d in range(ax):
        shape[d] = a.shape[d]
    for d in range(rows.ndim):
        shape[ax + d] = rows.shape[d]
    for d in range(ax + 1, a.ndim):
        shape[d - 1 + rows.ndim] = a.shape[d]
    return out3, shape


def take_vjp_axis(g, a, indices, axis):
    """The VJP of ``np.take(a, indices, axis=axis)``: slices of ``g`` added into a
    float64 array shaped like ``a`` at ``indices`` along ``axis`` (repeats add up).

    >>> take_vjp_axis(np.ones((2, 3)), np.zeros((2, 2)), np.array([1, 1, 0]), 1)
    array([[1., 2.], [1., 2.]])
    """
    a = np.asarray(a)
    ax = normalize_axis(axis, a.ndim)
    out = np.zeros(a.shape)
    np.add.at(out, (slice(None),) * ax + (np.asarray(indices),), g)
    return out


@numba_impl(take_vjp_axis)
def _ol_take_vjp_axis(g, a, indices, axis):
    check_array(a, "a")

    def impl(g, a, indices, axis):
        ax = normalize_axis(axis, a.ndim)
        rows = np.asarray(indices).ravel()
        outer, n, inner = split_at(a.shape, ax)
        out3 = np.zeros((outer, n, inner))
        g3 = np.ascontiguousarray(np.asarray(g)).reshape((outer, rows.size, inner))
        for j in range(rows.size):
            row = rows[j] + n if rows[j] < 0 else rows[j]
            if row < 0 or row >= n:
                raise IndexError("index out of bounds")
            for o in range(outer):
                for i in range(inner):
                    out3[o, row, i] += g3[o, j, i]
        return out3.reshape(a.shape)

    return impl


@register_jitable
def write_back(dst, src):
    """``dst[...] = src``: a function that writes into an argument array works on a
    copy, written back into the caller's array before it returns."""
    dst[...] = src


__all__ = ["scatter_add", "take_axis", "take_vjp", "take_vjp_axis", "write_back",
           "written_items"]
