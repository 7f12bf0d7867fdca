"""Pieces of arrays Numba cannot cut as NumPy does: ``section`` (a piece of
``np.split`` and its kin: the compiler writes ``a, b = np.split(x, 2)`` as one
call per piece) and its VJP ``section_vjp``, and ``masked`` (``x[mask]`` for a
mask of two or more dimensions, which Numba refuses).

>>> section(np.arange(6.0), 3, 1, 0, True)
array([2., 3.])
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import register_jitable

from .axes import as_3d, check_array, normalize_axis, numba_impl, shape_with

__all__ = ["masked", "section", "section_vjp"]


# ---- split -------------------------------------------------------------------------------
@register_jitable
def _clamped(bound, n):
    """A slice bound as Python clamps it (negative counts from the end)."""
    if bound < 0:
        bound += n
    return min(max(bound, 0), n)


@register_jitable
def _int_bounds(n, sections, i, equal):
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    if equal and n % sections:
        raise ValueError("array split does not result in an equal division")
    each, extra = n // sections, n % sections
    start = i * each + min(i, extra)
    return start, start + each + (1 if i < extra else 0)


@register_jitable
def _index_bounds(n, sections, i):
    start = 0 if i == 0 else _clamped(sections[i - 1], n)
    stop = n if i == len(sections) else _clamped(sections[i], n)
    return start, max(start, stop)


def _bounds(n, sections, i, equal):
    if isinstance(sections, int | np.integer):
        return _int_bounds(n, int(sections), i, equal)
    return _index_bounds(n, tuple(sections), i)


def _split_axis(x, axis):
    return (1 if np.ndim(x) > 1 else 0) if axis is None else normalize_axis(axis, np.ndim(x))


def section(x, sections, i, axis, equal):
    """Piece ``i`` of ``np.array_split(x, sections, axis)`` (``np.split`` when
    ``equal``: an int ``sections`` must divide the axis), a copy; ``axis`` None is
    ``np.hsplit``'s (1, or 0 for a 1-D array).

    >>> section(np.arange(5.0), 2, 1, 0, False), section(np.arange(5.0), (1, 3), 2, 0, True)
    (array([3., 4.]), array([3., 4.]))
    """
    x = np.asarray(x)
    ax = _split_axis(x, axis)
    start, stop = _bounds(x.shape[ax], sections, i, equal)
    return x[(slice(None),) * ax + (slice(start, stop),)].copy()


def section_vjp(g, x, sections, i, axis, equal):
    """The VJP of ``section``: zeros shaped like ``x``, ``g`` on the piece."""
    x = np.asarray(x)
    ax = _split_axis(x, axis)
    start, stop = _bounds(x.shape[ax], sections, i, equal)
    out = np.zeros(x.shape)
    out[(slice(None),) * ax + (slice(start, stop),)] = g
    return out


def _numba_bounds(sections):
    if isinstance(sections, types.Integer):
        return lambda n, sections, i, equal: _int_bounds(n, sections, i, equal)
    return lambda n, sections, i, equal: _index_bounds(n, sections, i)


@numba_impl(section)
def _ol_section(x, sections, i, axis, equal):
    check_array(x, "x")
    bounds = register_jitable(_numba_bounds(sections))
    hsplit = axis is None or isinstance(axis, types.NoneType)
    one_d = x.ndim == 1

    def impl(x, sections, i, axis, equal):
        ax = (0 if one_d else 1) if hsplit else normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        start, stop = bounds(x3.shape[1], sections, i, equal)
        return x3[:, start:stop, :].copy().reshape(shape_with(x.shape, ax, stop - start))

    return impl


@numba_impl(section_vjp)
def _ol_section_vjp(g, x, sections, i, axis, equal):
    check_array(x, "x")
    bounds = register_jitable(_numba_bounds(sections))
    hsplit = axis is None or isinstance(axis, types.NoneType)
    one_d = x.ndim == 1

    def impl(g, x, sections, i, axis, equal):
        ax = (0 if one_d else 1) if hsplit else normalize_axis(axis, x.ndim)
        out = np.zeros(x.shape)
        out3 = as_3d(out, ax)
        start, stop = bounds(out3.shape[1], sections, i, equal)
        out3[:, start:stop, :] = as_3d(g, ax)
        return out

    return impl


# ---- boolean masks -----------------------------------------------------------------------
def masked(x, mask):
    """``x[mask]`` for a boolean ``mask`` of two or more dimensions (shaped like the
    leading axes of ``x``), which Numba reads only for a 1-d mask.

    >>> masked(np.arange(8.0).reshape(2, 2, 2), np.array([[True, False], [False, True]]))
    array([[0., 1.], [6., 7.]])
    """
    return x[mask]


@numba_impl(masked)
def _ol_masked(x, mask):
    check_array(x, "x")
    check_array(mask, "mask")
    k = mask.ndim

    def impl(x, mask):
        if x.shape[:k] != mask.shape:
            raise IndexError("boolean index did not match indexed array")
        rows = np.ascontiguousarray(x).reshape((mask.size, -1))
        picked = rows[np.ascontiguousarray(mask).reshape(mask.size)]
        return picked.reshape((picked.shape[0],) + x.shape[k:])

    return impl


