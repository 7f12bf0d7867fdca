"""Bounds checks of integer indices: ``check_index``, which generated code calls
before an item read or write whose index the compiler cannot prove in range.

Numba reads and writes outside an array without a word (it checks no bounds, for
speed); Python raises NumPy's ``IndexError``.  A check makes both raise the same
``IndexError``, in NumPy's words, at the user's line.  An index is in range for an
axis of size ``n`` when ``-n <= index < n`` (negative indices count from the end);
an integer array of indices is in range when each of its entries is.

>>> check_index((3,), 0, -3, "model.py:4:12", "f")
>>> check_index((3,), 0, 3, "model.py:4:12", "f")
Traceback (most recent call last):
IndexError: model.py:4:12: index 3 is out of bounds for axis 0 with size 3 (in f)
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

__all__ = ["check_index", "check_index_unless", "index_in_bounds", "range_in_bounds"]


def check_index(shape, axis, index, location, function):
    """Raise ``IndexError`` unless the integer ``index`` (or each entry of an integer
    array of indices) is in range for ``shape[axis]`` (``shape``: an array's shape and
    ``axis`` from 0, or the array itself and ``axis`` from the end too);
    ``location`` (the user's ``file:line:col``) and ``function`` (its name) locate
    the indexing."""
    shape = np.shape(shape) if isinstance(shape, np.ndarray) else shape
    axis = axis + len(shape) if axis < 0 else axis
    size = shape[axis]
    if np.ndim(index) == 0:
        if not -size <= index < size:
            _out_of_bounds(index, axis, size, location, function)
        return
    outside = np.asarray(index)[(index < -size) | (index >= size)]
    if outside.size:
        _out_of_bounds(outside[0], axis, size, location, function)


def check_index_unless(known, shape, axis, index, location, function):
    """``check_index`` unless ``known`` (``range_in_bounds`` of the loop whose
    variable ``index`` is, computed before the loop: Numba then compiles the loop
    twice, without the check when every index is in range)."""
    if not known:
        check_index(shape, axis, index, location, function)


@register_jitable
def index_in_bounds(shape, axis, index):
    """Whether the integer ``index`` is in range for ``shape[axis]`` (an index the
    same in every iteration of a loop, checked once before it).

    >>> index_in_bounds((5,), 0, -5), index_in_bounds((5,), 0, 5)
    (True, False)
    """
    size = shape[axis]
    return index >= -size and index < size


@register_jitable
def range_in_bounds(shape, axis, start, stop, step, offset):
    """Whether every value of ``range(start, stop, step)`` plus ``offset`` is an index
    in range for ``shape[axis]`` (True for an empty range).

    >>> range_in_bounds((5,), 0, 1, 5, 1, -1), range_in_bounds((5,), 0, 0, 5, 1, 1)
    (True, False)
    """
    if step > 0 and start < stop:
        last = start + (stop - start - 1) // step * step
    elif step < 0 and start > stop:
        last = start + (stop - start + 1) // step * step
    else:
        return True
    size = shape[axis]
    return min(start, last) + offset >= -size and max(start, last) + offset < size


@register_jitable
def _out_of_bounds(index, axis, size, location, function):
    """Raise NumPy's IndexError, located at the user's indexing."""
    raise IndexError(location + ": index " + str(index) + " is out of bounds for axis "
                     + str(axis) + " with size " + str(size) + " (in " + function + ")")


@register_jitable
def _in_array(array, axis, index, location, function):
    """``check_index`` against an array (its shape of unknown length in the generated
    code, whose ``...`` index passes -1 for the last axis)."""
    check_index(array.shape, axis + array.ndim if axis < 0 else axis, index, location,
                function)


@overload(check_index_unless, inline="always")
def _check_index_unless_numba(known, shape, axis, index, location, function):
    def unless(known, shape, axis, index, location, function):
        if not known:
            check_index(shape, axis, index, location, function)
    return unless


@overload(check_index, inline="always")  # inlined: the range test costs two compares
def _check_index_numba(shape, axis, index, location, function):
    if isinstance(shape, types.Array):
        return lambda shape, axis, index, location, function: _in_array(
            shape, axis, index, location, function)
    if isinstance(index, types.Integer):
        def one(shape, axis, index, location, function):
            size = shape[axis]
            if index < -size or index >= size:
                _out_of_bounds(index, axis, size, location, function)
        return one
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer):
        def entries(shape, axis, index, location, function):
            size = shape[axis]
            for entry in index.flat:
                if entry < -size or entry >= size:
                    _out_of_bounds(entry, axis, size, location, function)
        return entries
    return None
