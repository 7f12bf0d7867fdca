"""Axis and shape arithmetic shared by the reductions and the shape helpers.

Private building blocks, each usable from Python and from Numba: normalising a
possibly negative axis, viewing an array as ``(outer, n, inner)`` around an
axis, converting an array to a dtype only when it differs, and editing shape
tuples (plain tuple code in Python, fixed-length tuples in Numba, where a
tuple's length is part of its type).
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple


def numba_impl(py_fn):
    """Register the decorated typing function as ``py_fn``'s Numba version.

    The typing function receives Numba types and returns the implementation
    (``numba.extending.overload``, the mechanism behind ``register_jitable``).
    """

    def register(typer):
        overload(py_fn, strict=False)(typer)
        return typer

    return register


def check_array(x, name):
    """At typing time: refuse a non-array ``x`` with a readable TypingError."""
    if not isinstance(x, types.Array):
        raise TypingError(f"array_runtime: {name} must be an array, got {x}")


@register_jitable
def normalize_axis(axis, ndim):
    """``axis`` in ``range(ndim)``; negative counts from the end."""
    if axis < -ndim or axis >= ndim:
        raise ValueError("axis is out of bounds for array of this dimension")
    if axis < 0:
        return axis + ndim
    return axis


@register_jitable
def split_at(shape, axis):
    """(outer, n, inner): sizes before, along and after ``axis``."""
    outer = 1
    for d in range(axis):
        outer *= shape[d]
    inner = 1
    for d in range(axis + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[axis], inner


@register_jitable
def as_3d(x, axis):
    """``x`` as a C-contiguous (outer, n, inner) array around normalised ``axis``."""
    outer, n, inner = split_at(x.shape, axis)
    return np.ascontiguousarray(x).reshape((outer, n, inner))


def converted(x, scalar):
    """``x`` as an array of ``scalar``'s dtype: ``x`` itself if it has it already.

    >>> converted(np.array([True, False]), np.int64)
    array([1, 0])
    """
    return x if x.dtype == scalar else x.astype(scalar)


@overload(converted, strict=False)
def _ol_converted(x, scalar):
    if x.dtype == scalar.dtype:
        return lambda x, scalar: x
    return lambda x, scalar: x.astype(scalar)


def shape_without(shape, axis):
    """``shape`` with entry ``axis`` (normalised) removed."""
    return tuple(shape[:axis]) + tuple(shape[axis + 1:])


@overload(shape_without, strict=False)
def _ol_shape_without(shape, axis):
    n = len(shape) - 1

    def impl(shape, axis):
        out = np.empty(n, np.intp)
        j = 0
        for d in range(n + 1):
            if d != axis:
                out[j] = shape[d]
                j += 1
        return to_fixed_tuple(out, n)

    return impl


def shape_with(shape, axis, value):
    """``shape`` with entry ``axis`` (normalised) replaced by ``value``."""
    return tuple(shape[:axis]) + (value,) + tuple(shape[axis + 1:])


@overload(shape_with, strict=False)
def _ol_shape_with(shape, axis, value):
    n = len(shape)

    def impl(shape, axis, value):
        out = np.empty(n, np.intp)
        for d in range(n):
            out[d] = shape[d]
        out[axis] = value
        return to_fixed_tuple(out, n)

    return impl


def shape_ones(shape):
    """A tuple of ones as long as ``shape``."""
    return (1,) * len(shape)


@overload(shape_ones, strict=False)
def _ol_shape_ones(shape):
    n = len(shape)

    def impl(shape):
        return to_fixed_tuple(np.ones(n, np.intp), n)

    return impl
