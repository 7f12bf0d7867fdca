"""``np.concatenate``, ``np.hstack`` and ``np.vstack`` of a list that grows.

The items of a list may differ in length along the joining axis, as NumPy allows
(``np.concatenate([x[:1], x[:2]])``), so these join the items themselves rather
than ``np.array(items)`` (which needs one shape).  The Python versions are NumPy's
own calls; the Numba versions join a typed list item by item, checking the other
axes as NumPy does.  Their cotangent goes back to the items in pieces
(``list_add_pieces``, after ``list_extents`` of the items), or row by row
(``list_add_rows``) where each item takes one row of the result.

>>> parts = [np.arange(1.0), np.arange(2.0)]
>>> list_concatenate(parts, 0), list_extents(parts, 0)
(array([0., 0., 1.]), array([1, 2]))
>>> list_add_pieces([], np.array([1.0, 2.0, 3.0]), np.array([1, 2]), 0, np.zeros(0))
[array([1.]), array([2., 3.])]
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import register_jitable
from numba.np.numpy_support import as_dtype

from .axes import normalize_axis, numba_impl, shape_with, split_at
from .lists import list_add_at
from .shapes import slice_axis

__all__ = ["list_add_pieces", "list_concatenate", "list_extents", "list_hstack",
           "list_vstack"]


def list_concatenate(items, axis=0):
    """``np.concatenate(items, axis)`` of a list of arrays (lengths may differ on ``axis``)."""
    return np.concatenate(items, axis)


def list_hstack(items):
    """``np.hstack(items)`` of a list of numbers or arrays of one rank."""
    return np.hstack(items)


def list_vstack(items):
    """``np.vstack(items)`` of a list of numbers or arrays of one rank."""
    return np.vstack(items)


def list_extents(items, axis):
    """The length of each item along ``axis`` (where its piece of a join ends)."""
    return np.array([np.shape(item)[axis] for item in items], dtype=np.int64)


@register_jitable
def list_add_pieces(cotangent, g, extents, axis, zero):
    """``cotangent`` with each piece of ``g`` along ``axis`` (``extents[k]`` long) added
    into the cotangent of item ``k``: the pullback of joining the items."""
    start = 0
    for k in range(extents.shape[0]):
        stop = start + extents[k]
        if axis == 0:  # a block of rows: added from the view (list_add_at copies it)
            list_add_at(cotangent, k, g[start:stop], zero)
        else:
            list_add_at(cotangent, k, slice_axis(g, axis, start, stop), zero)
        start = stop
    return cotangent


# ---- Numba ------------------------------------------------------------------------------
@register_jitable
def _joined(items, axis):
    """The items (arrays of one rank) joined along normalised ``axis``."""
    if len(items) == 0:
        raise ValueError("need at least one array to concatenate")
    if axis == 0:
        out, equal = _equal_blocks(items)
        if equal:
            return out
    first = items[0]
    total = 0
    for k in range(len(items)):
        shape = items[k].shape
        for d in range(len(shape)):
            if d != axis and shape[d] != first.shape[d]:
                raise ValueError("all the input array dimensions except for the "
                                 "concatenation axis must match exactly")
        total += shape[axis]
    out = np.empty(shape_with(first.shape, axis, total), dtype=first.dtype)
    outer, _, inner = split_at(out.shape, axis)
    view = out.reshape((outer, total, inner))
    start = 0
    for k in range(len(items)):
        item = np.ascontiguousarray(items[k])
        length = item.shape[axis]
        view[:, start:start + length, :] = item.reshape((outer, length, inner))
        start += length
    return out


@register_jitable
def _equal_blocks(items):
    """The items joined along axis 0 in one pass if they all have the first one's shape
    (the usual list), and whether they do (``_joined`` measures them all if not)."""
    first = items[0]
    out = np.empty(shape_with(first.shape, 0, len(items) * first.shape[0]), dtype=first.dtype)
    length = first.shape[0]
    for k in range(len(items)):
        item = items[k]
        if item.shape != first.shape:
            return out, False
        out[k * length:(k + 1) * length] = item
    return out, True


@register_jitable
def _rows(items):
    """1-d arrays of one length as the rows of a 2-d array (vstack)."""
    if len(items) == 0:
        raise ValueError("need at least one array to concatenate")
    width = items[0].shape[0]
    out = np.empty((len(items), width), dtype=items[0].dtype)
    for k in range(len(items)):
        if items[k].shape[0] != width:
            raise ValueError("all the input array dimensions except for the "
                             "concatenation axis must match exactly")
        out[k, :] = items[k]
    return out


@register_jitable
def _numbers(items, dtype):
    """A list of numbers as a 1-d array (hstack; vstack makes it a column)."""
    if len(items) == 0:
        raise ValueError("need at least one array to concatenate")
    out = np.empty(len(items), dtype=dtype)
    for k in range(len(items)):
        out[k] = items[k]
    return out


def _item(items, name: str):
    item = getattr(items, "item_type", None)
    if not (isinstance(item, types.Number | types.Boolean) or
            (isinstance(item, types.Array) and item.ndim >= 1)):
        raise TypingError(f"{name} needs a list of numbers or arrays, got {items}")
    return item


@numba_impl(list_concatenate)
def _ol_list_concatenate(items, axis=0):
    item = _item(items, "list_concatenate")
    if not isinstance(item, types.Array):
        raise TypingError("zero-dimensional arrays cannot be concatenated")
    ndim = item.ndim
    return lambda items, axis=0: _joined(items, normalize_axis(axis, ndim))


@numba_impl(list_hstack)
def _ol_list_hstack(items):
    item = _item(items, "list_hstack")
    if isinstance(item, types.Array):
        axis = 0 if item.ndim == 1 else 1
        return lambda items: _joined(items, axis)
    dtype = as_dtype(item)
    return lambda items: _numbers(items, dtype)


@numba_impl(list_vstack)
def _ol_list_vstack(items):
    item = _item(items, "list_vstack")
    if isinstance(item, types.Array):
        if item.ndim >= 2:
            return lambda items: _joined(items, 0)
        return lambda items: _rows(items)
    dtype = as_dtype(item)
    return lambda items: _numbers(items, dtype).reshape((-1, 1))


@numba_impl(list_extents)
def _ol_list_extents(items, axis):
    def impl(items, axis):
        out = np.empty(len(items), dtype=np.int64)
        for k in range(len(items)):
            out[k] = items[k].shape[axis]
        return out

    return impl
