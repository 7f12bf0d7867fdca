"""Reshapes of any layout, the slices and indexes that undo concatenate/stack, and
arrays of a number (``np.atleast_2d(x)`` and the stacks of a number ``x``).

Numba reshapes C-contiguous arrays only; ``reshape`` and ``reshape_like``
accept any layout (a view when the input is contiguous, else a copy, as in
NumPy).  The VJP of ``np.concatenate`` gives each operand a slice of the
cotangent along the axis (``slice_axis``), that of ``np.stack`` an index along
it (``index_axis``); both return new C-contiguous arrays.  ``filled`` is
``np.full`` of a number that may be held in a 0-d array (an argument), which
Numba's ``np.full`` refuses.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import register_jitable

from .axes import as_3d, check_array, normalize_axis, numba_impl, shape_with, shape_without

__all__ = ["filled", "index_axis", "reshape", "reshape_like", "slice_axis"]


def reshape(x, shape):
    """``np.reshape(x, shape)`` for any layout (Numba's needs C-contiguous).

    A view when ``x`` is contiguous, else a copy, as in NumPy.

    >>> reshape(np.arange(6.0).reshape(2, 3).T, (6,))
    array([0., 3., 1., 4., 2., 5.])
    """
    return np.reshape(x, shape)


@numba_impl(reshape)
def _ol_reshape(x, shape):
    check_array(x, "x")
    return lambda x, shape: np.ascontiguousarray(x).reshape(shape)


def reshape_like(g, x):
    """``g`` reshaped to ``x.shape`` (the VJP of a reshape), any layout.

    >>> reshape_like(np.ones(4), np.zeros((2, 2))).shape
    (2, 2)
    """
    return np.reshape(g, np.shape(x))


@numba_impl(reshape_like)
def _ol_reshape_like(g, x):
    check_array(g, "g")
    check_array(x, "x")
    return lambda g, x: np.ascontiguousarray(g).reshape(x.shape)


@register_jitable
def _check_range(start, stop, n):
    if start < 0 or stop < start or stop > n:
        raise ValueError("slice_axis needs 0 <= start <= stop <= size along axis")


def slice_axis(x, axis, start, stop):
    """A copy of ``x[..., start:stop, ...]`` with the slice on ``axis``.

    The VJP piece of ``np.concatenate`` (each operand's cotangent is a slice).
    Requires ``0 <= start <= stop <= x.shape[axis]``.

    >>> slice_axis(np.arange(6.0).reshape(2, 3), -1, 1, 3)
    array([[1., 2.], [4., 5.]])
    """
    x = np.asarray(x)
    ax = normalize_axis(axis, x.ndim)
    _check_range(start, stop, x.shape[ax])
    return x[(slice(None),) * ax + (slice(start, stop),)].copy()


@numba_impl(slice_axis)
def _ol_slice_axis(x, axis, start, stop):
    check_array(x, "x")

    def impl(x, axis, start, stop):
        ax = normalize_axis(axis, x.ndim)
        _check_range(start, stop, x.shape[ax])
        part = as_3d(x, ax)[:, start:stop, :].copy()
        return part.reshape(shape_with(x.shape, ax, stop - start))

    return impl


def index_axis(x, axis, i):
    """A copy of ``x[..., i, ...]`` with the index on ``axis`` (negative ``i`` ok).

    The VJP piece of ``np.stack``. A 1-D ``x`` gives a scalar.

    >>> index_axis(np.arange(6.0).reshape(2, 3), 1, -1)
    array([2., 5.])
    """
    x = np.asarray(x)
    ax = normalize_axis(axis, x.ndim)
    n = x.shape[ax]
    if i < -n or i >= n:
        raise IndexError("index out of bounds along axis")
    out = x[(slice(None),) * ax + (i,)]
    return out.copy() if x.ndim > 1 else out


@numba_impl(index_axis)
def _ol_index_axis(x, axis, i):
    check_array(x, "x")
    one_d = x.ndim == 1

    def impl(x, axis, i):
        ax = normalize_axis(axis, x.ndim)
        n = x.shape[ax]
        if i < -n or i >= n:
            raise IndexError("index out of bounds along axis")
        k = i + n if i < 0 else i
        part = as_3d(x, ax)[:, k, :].copy()
        if one_d:
            return part[0, 0]
        return part.reshape(shape_without(x.shape, ax))

    return impl


def filled(shape, x):
    """``np.full(shape, x)`` for a number ``x``, also one held in a 0-d array (which
    computes like a number here, but which Numba's ``np.full`` refuses), or for an
    array ``x`` broadcast to ``shape``.

    >>> filled((1, 1), np.array(2.5)), filled((1,), 3).dtype
    (array([[2.5]]), dtype('int64'))
    """
    return np.full(shape, x)


@numba_impl(filled)
def _ol_filled(shape, x):
    if isinstance(x, types.Array) and x.ndim:
        return lambda shape, x: np.broadcast_to(x, shape).copy()
    if isinstance(x, types.Array):
        return lambda shape, x: np.full(shape, x[()])
    return lambda shape, x: np.full(shape, x)
