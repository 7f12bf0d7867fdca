"""Lists that grow by ``append``, and their cotangents.

A list's cotangent is a list of its items' cotangents that may be shorter
than the list: items past its end have none yet (zero).  The pullback pops
the cotangent of each appended item back off (``list_pop``), adds into the
cotangent of an item read (``list_add_at``) or of every item converted to an
array (``list_add_rows``).  Generated code appends with the list's own
``append`` (Numba types a ``List()`` from the appends in its own function).

>>> d = list_add_at(cotangent_list(0.0), 2, 1.5, 0.0)
>>> d
[0.0, 0.0, 1.5]
>>> list_pop(d, 2, 0.0), list_pop(d, 5, 0.0), d
(1.5, 0.0, [0.0, 0.0])
>>> list_array([1.0, 2.0]), list_position([1.0, 2.0, 3.0], -1)
(array([1., 2.]), 2)
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.typed import List

from s2s_ad.runtime.shapes import reshape
from s2s_ad.runtime.tapes import accumulate

__all__ = ["appended", "cotangent_list", "new_list", "list_add_at", "list_add_rows", "list_array",
           "list_pop", "list_position", "merge_leading"]


def appended(items, value):
    """``items.append(value)``, returning ``items`` (the list as a value)."""
    items.append(value)
    return items


def list_array(items, ndim=1):
    """``np.array(items)`` for a list of numbers or of arrays of one shape; an empty list
    of arrays gives an empty array of ``ndim`` dimensions (its items' and one more), as
    in Numba, where the list's type has them.

    >>> list_array([], 2).shape
    (0, 0)
    """
    out = np.array(items)
    return np.zeros((0,) * ndim) if len(items) == 0 else out


def cotangent_list(like):
    """A new, empty cotangent list for items like ``like`` (a number or an array)."""
    return []


@register_jitable
def list_position(items, i):
    """The position ``items[i]`` reads (``i`` may count from the end)."""
    return i + len(items) if i < 0 else i


@register_jitable
def list_pop(cotangent, n, zero):
    """The cotangent of the item appended at position ``n``, taken off ``cotangent``
    (``zero`` if it has none)."""
    if len(cotangent) > n:
        return cotangent.pop()
    return zero


@register_jitable
def list_add_at(cotangent, position, g, zero):
    """``cotangent`` with ``g`` added into its item ``position`` (grown with ``zero``)."""
    while len(cotangent) <= position:
        cotangent.append(zero)
    cotangent[position] = _plus(cotangent[position], g)
    return cotangent


@register_jitable
def list_add_rows(cotangent, g, zero):
    """``cotangent`` with each row of ``g`` (the cotangent of ``np.array(items)``)
    added into the cotangent of its item."""
    for k in range(g.shape[0]):
        list_add_at(cotangent, k, g[k], zero)
    return cotangent


def _plus(current, g):
    if isinstance(current, np.ndarray):
        return accumulate(current, np.asarray(g))
    return current + g


@overload(_plus)
def _plus_numba(current, g):
    if isinstance(current, types.Array):
        return lambda current, g: accumulate(current, g)
    return lambda current, g: current + g


@overload(cotangent_list)
def _cotangent_list_numba(like):
    if isinstance(like, types.Array):
        item = types.Array(types.float64, like.ndim, "C")
        return lambda like: List.empty_list(item)
    return lambda like: List.empty_list(types.float64)


@overload(list_array)
def _list_array_numba(items, ndim=1):
    item = items.item_type
    if isinstance(item, types.Array):
        empty_shape = (0,) * (item.ndim + 1)  # no item to take a shape from
        item_dtype = as_dtype(item.dtype)

        def stacked(items, ndim=1):
            if len(items) == 0:
                return np.empty(empty_shape, dtype=item_dtype)
            first = items[0]
            out = np.empty((len(items),) + first.shape, dtype=first.dtype)
            for k in range(len(items)):
                out[k] = items[k]
            return out
        return stacked

    dtype = as_dtype(item)

    def flat(items, ndim=1):
        out = np.empty(len(items), dtype=dtype)
        for k in range(len(items)):
            out[k] = items[k]
        return out
    return flat


@register_jitable
def merge_leading(a):
    """``a`` with its first two axes merged: ``np.concatenate(items)`` of a list
    whose ``np.array`` is ``a``."""
    return reshape(a, (a.shape[0] * a.shape[1],) + a.shape[2:])


def new_list():
    """A new, empty list (generated code calls ``List()``)."""
    return []
