"""Cotangents of gathers: ``d_x[index] += g`` where ``index`` is an integer array
(repeated entries add up, as ``np.add.at`` does) or a boolean mask.

>>> d = np.zeros(3)
>>> scatter_add(d, np.array([0, 0, 2]), np.array([1.0, 1.0, 1.0]))
>>> d
array([2., 0., 1.])
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable


def scatter_add(d, index, g):
    """``d[index] += g`` in place, adding once per occurrence of a repeated index."""
    np.add.at(d, index, g)


@overload(scatter_add)
def _scatter_add_numba(d, index, g):
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


__all__ = ["scatter_add", "write_back"]


@register_jitable
def write_back(dst, src):
    """``dst[...] = src``: a function that writes into an argument array works on a
    copy, written back into the caller's array before it returns."""
    dst[...] = src
