"""Rearrangements Numba lacks (or lacks a keyword of), and the VJPs of selections.

A *selection* is a function each of whose result entries is one entry of its
input or a zero (``tril``, ``diag``, ``diagonal``, ``pad``...).  Its VJP adds
each entry of the cotangent back where it came from: applied to
``positions(x)`` (the 1-based flat position of every entry of ``x``), the
selection itself says where each result entry came from (0: from nowhere),
and ``gather_vjp`` adds ``g`` there.  One mechanism, right for every such
function the rules spell this way.

The others, each with the NumPy semantics of the call it stands for:
``repeat_axis`` (``np.repeat`` along an axis, an int or per-entry counts) and
its VJP ``repeat_vjp_axis``; ``roll_axis`` (``np.roll`` along one axis);
``pad_axis`` (``np.pad`` of one axis, a mode given by its code in ``PAD_MODES``)
and its VJP ``pad_vjp_axis``; ``diagonal_last`` (``np.diagonal`` over the last
two axes, a copy); ``section`` (a piece of ``np.split`` and its kin: the
compiler writes ``a, b = np.split(x, 2)`` as one call per piece) and its VJP
``section_vjp`` (in ``pieces``); ``gradient_axis`` (``np.gradient`` along one axis,
``edge_order=1``) and its VJP ``gradient_vjp_axis``; ``matmul`` (``np.matmul``
with NumPy's batch broadcasting, 1-D operands too); ``partition_vjp`` (the VJP of
``np.partition``, for whatever order its result has).

>>> where = np.tril(positions(np.zeros((2, 2))))
>>> gather_vjp(np.ones((2, 2)), np.zeros((2, 2)), where)
array([[1., 0.], [1., 1.]])
>>> pad_axis(np.array([1.0, 2.0, 3.0]), 0, 2, 1, PAD_MODES["reflect"])
array([3., 2., 1., 2., 3., 2.])
"""

from __future__ import annotations

import numpy as np
from numba.extending import register_jitable

from .axes import as_3d, check_array, normalize_axis, numba_impl, shape_with

__all__ = ["diagonal_last", "gather_vjp", "gradient_axis", "gradient_vjp_axis",
           "matmul", "pad_axis", "pad_vjp_axis", "partition_vjp", "positions", "repeat_axis",
           "repeat_vjp_axis", "roll_axis"]

#: ``np.pad``'s modes that are selections, by the code ``pad_axis`` takes.
PAD_MODES = {"constant": 0, "edge": 1, "reflect": 2, "symmetric": 3, "wrap": 4}


# ---- selections ------------------------------------------------------------------------
def positions(x):
    """The 1-based flat position of each entry of ``x`` (int64, shaped like ``x``).

    >>> positions(np.zeros((2, 2)))
    array([[1, 2], [3, 4]])
    """
    x = np.asarray(x)
    return np.arange(1, x.size + 1, dtype=np.int64).reshape(x.shape)


@numba_impl(positions)
def _ol_positions(x):
    check_array(x, "x")
    return lambda x: np.arange(1, x.size + 1).reshape(x.shape)


def gather_vjp(g, x, where):
    """Zeros shaped like ``x``, plus each ``g`` entry at the 1-based flat position
    ``where`` gives for it (0: none); repeated positions add up.

    >>> gather_vjp(np.array([1.0, 2.0, 3.0]), np.zeros(2), np.array([2, 0, 2]))
    array([0., 4.])
    """
    where = np.asarray(where)
    g = np.broadcast_to(np.asarray(g, dtype=float), where.shape).ravel()
    where = where.ravel()
    out = np.zeros(np.size(x))
    taken = where > 0
    np.add.at(out, where[taken] - 1, g[taken])
    return out.reshape(np.shape(x))


@numba_impl(gather_vjp)
def _ol_gather_vjp(g, x, where):
    check_array(where, "where")
    check_array(x, "x")

    def impl(g, x, where):
        flat_g = np.ascontiguousarray(np.broadcast_to(g, where.shape)).reshape(where.size)
        flat_w = np.ascontiguousarray(where).reshape(where.size)
        out = np.zeros(x.size)
        for k in range(where.size):
            if flat_w[k] > 0:
                out[flat_w[k] - 1] += flat_g[k]
        return out.reshape(x.shape)

    return impl


# ---- repeat ------------------------------------------------------------------------------
@register_jitable
def _counts(repeats, n):
    counts = np.empty(n, np.int64)
    flat = np.asarray(repeats).ravel()
    if flat.size != 1 and flat.size != n:
        raise ValueError("repeats must be an int or have one count per entry along axis")
    for i in range(n):
        counts[i] = flat[0] if flat.size == 1 else flat[i]
        if counts[i] < 0:
            raise ValueError("repeats may not contain negative values")
    return counts


def repeat_axis(x, repeats, axis):
    """``np.repeat(x, repeats, axis)`` (an int axis; repeats an int or one count each).

    >>> repeat_axis(np.array([[1.0, 2.0]]), np.array([2, 1]), 1)
    array([[1., 1., 2.]])
    """
    return np.repeat(x, repeats, axis)


@numba_impl(repeat_axis)
def _ol_repeat_axis(x, repeats, axis):
    check_array(x, "x")

    def impl(x, repeats, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        counts = _counts(repeats, x3.shape[1])
        out = np.empty((x3.shape[0], counts.sum(), x3.shape[2]), x.dtype)
        j = 0
        for i in range(x3.shape[1]):
            for _ in range(counts[i]):
                out[:, j, :] = x3[:, i, :]
                j += 1
        return out.reshape(shape_with(x.shape, ax, out.shape[1]))

    return impl


def repeat_vjp_axis(g, x, repeats, axis):
    """The VJP of ``repeat_axis``: each entry's copies in ``g`` summed.

    >>> repeat_vjp_axis(np.array([1.0, 2.0, 4.0]), np.zeros(2), 2 - np.arange(2), 0)
    array([3., 4.])
    """
    g = np.asarray(g)
    ax = normalize_axis(axis, np.ndim(x))
    counts = np.broadcast_to(np.asarray(repeats), (np.shape(x)[ax],))
    source = np.repeat(np.arange(np.shape(x)[ax]), counts)
    out = np.zeros(np.shape(x), dtype=np.result_type(g.dtype, float))
    moved = np.moveaxis(out, ax, 0)
    np.add.at(moved, source, np.moveaxis(g, ax, 0))
    return out


@numba_impl(repeat_vjp_axis)
def _ol_repeat_vjp_axis(g, x, repeats, axis):
    check_array(g, "g")

    def impl(g, x, repeats, axis):
        ax = normalize_axis(axis, x.ndim)
        g3 = as_3d(g, ax)
        n = x.shape[ax]
        counts = _counts(repeats, n)
        out = np.zeros((g3.shape[0], n, g3.shape[2]))
        j = 0
        for i in range(n):
            for _ in range(counts[i]):
                out[:, i, :] += g3[:, j, :]
                j += 1
        return out.reshape(x.shape)

    return impl


# ---- roll --------------------------------------------------------------------------------
def roll_axis(x, shift, axis):
    """``np.roll(x, shift, axis)`` for one int axis.

    >>> roll_axis(np.arange(3.0), -1, 0)
    array([1., 2., 0.])
    """
    return np.roll(x, shift, axis)


@numba_impl(roll_axis)
def _ol_roll_axis(x, shift, axis):
    check_array(x, "x")

    def impl(x, shift, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        n = x3.shape[1]
        out = np.empty_like(x3)
        if n:
            s = shift % n
            out[:, s:, :] = x3[:, :n - s, :]
            out[:, :s, :] = x3[:, n - s:, :]
        return out.reshape(x.shape)

    return impl


# ---- pad ---------------------------------------------------------------------------------
@register_jitable
def _pad_source(n, before, after, mode):
    """For each index along the padded axis, the index of ``x`` it copies (-1: zero)."""
    if before < 0 or after < 0:
        raise ValueError("pad widths must be non-negative")
    if n == 0 and (before or after) and mode != 0:
        raise ValueError("can't extend an empty axis with a mode other than constant")
    source = np.empty(before + n + after, np.int64)
    for j in range(source.size):
        t = j - before
        if 0 <= t < n:
            source[j] = t
        elif mode == 0:
            source[j] = -1
        elif mode == 1:
            source[j] = 0 if t < 0 else n - 1
        elif mode == 2:
            period = 2 * (n - 1)
            m = t % period if period else 0
            source[j] = period - m if m >= n else m
        elif mode == 3:
            m = t % (2 * n)
            source[j] = 2 * n - 1 - m if m >= n else m
        else:
            source[j] = t % n
    return source


def pad_axis(x, axis, before, after, mode):
    """``np.pad`` of axis ``axis`` only, by ``before`` and ``after`` entries, in the mode
    of code ``mode`` (``PAD_MODES``; constant pads zeros)."""
    x = np.asarray(x)
    ax = normalize_axis(axis, x.ndim)
    source = _pad_source(x.shape[ax], before, after, mode)
    out = np.take(x, np.maximum(source, 0), axis=ax)
    out[(slice(None),) * ax + (source < 0,)] = 0
    return out


@numba_impl(pad_axis)
def _ol_pad_axis(x, axis, before, after, mode):
    check_array(x, "x")

    def impl(x, axis, before, after, mode):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        source = _pad_source(x3.shape[1], before, after, mode)
        out = np.zeros((x3.shape[0], source.size, x3.shape[2]), x.dtype)
        for j in range(source.size):
            if source[j] >= 0:
                out[:, j, :] = x3[:, source[j], :]
        return out.reshape(shape_with(x.shape, ax, source.size))

    return impl


def pad_vjp_axis(g, axis, before, after, mode):
    """The VJP of ``pad_axis``: each entry of ``g`` added to the entry it copies."""
    g = np.asarray(g)
    ax = normalize_axis(axis, g.ndim)
    n = g.shape[ax] - before - after
    source = _pad_source(n, before, after, mode)
    out = np.zeros(shape_with(g.shape, ax, n), dtype=np.result_type(g.dtype, float))
    np.add.at(np.moveaxis(out, ax, 0), source[source >= 0],
              np.moveaxis(g, ax, 0)[source >= 0])
    return out


@numba_impl(pad_vjp_axis)
def _ol_pad_vjp_axis(g, axis, before, after, mode):
    check_array(g, "g")

    def impl(g, axis, before, after, mode):
        ax = normalize_axis(axis, g.ndim)
        g3 = as_3d(g, ax)
        n = g3.shape[1] - before - after
        source = _pad_source(n, before, after, mode)
        out = np.zeros((g3.shape[0], n, g3.shape[2]))
        for j in range(source.size):
            if source[j] >= 0:
                out[:, source[j], :] += g3[:, j, :]
        return out.reshape(shape_with(g.shape, ax, n))

    return impl


# ---- diagonal ----------------------------------------------------------------------------
def diagonal_last(x, offset):
    """A copy of ``np.diagonal(x, offset, -2, -1)`` (the diagonal over the last two axes,
    as the new last axis).

    >>> diagonal_last(np.arange(6.0).reshape(2, 3), 1)
    array([1., 5.])
    """
    return np.diagonal(x, offset, -2, -1).copy()


@numba_impl(diagonal_last)
def _ol_diagonal_last(x, offset):
    check_array(x, "x")
    if x.ndim < 2:
        return None

    def impl(x, offset):
        n, m = x.shape[-2], x.shape[-1]
        x3 = np.ascontiguousarray(x).reshape((-1, n, m))
        size = max(0, min(n, m - offset)) if offset >= 0 else max(0, min(n + offset, m))
        row, col = max(0, -offset), max(0, offset)
        out = np.empty((x3.shape[0], size), x.dtype)
        for i in range(size):
            out[:, i] = x3[:, row + i, col + i]
        return out.reshape(x.shape[:-2] + (size,))

    return impl


# ---- matmul ------------------------------------------------------------------------------
def matmul(a, b):
    """``np.matmul(a, b)``: batched over leading axes (broadcast), 1-D operands promoted
    and their axis removed from the result, as NumPy does.

    >>> matmul(np.ones((2, 1, 2, 3)), np.ones((4, 3, 1))).shape
    (2, 4, 2, 1)
    """
    return np.matmul(a, b)


@register_jitable
def _batched(a, b):
    """``np.matmul`` of arrays of two or more dimensions each (same rank)."""
    lead = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if b.shape[-2] != k:
        raise ValueError("matmul: mismatch in the contracted dimension")
    a3 = np.ascontiguousarray(np.broadcast_to(a, lead + (m, k))).reshape((-1, m, k))
    b3 = np.ascontiguousarray(np.broadcast_to(b, lead + (k, n))).reshape((-1, k, n))
    out = np.empty((a3.shape[0], m, n), a.dtype)  # Numba multiplies operands of one dtype
    for i in range(a3.shape[0]):
        out[i] = np.dot(a3[i], b3[i])
    return out.reshape(lead + (m, n))


@numba_impl(matmul)
def _ol_matmul(a, b):
    check_array(a, "a")
    check_array(b, "b")
    if a.ndim == 1 and b.ndim == 1:
        return lambda a, b: np.dot(a, b)
    if a.ndim == 1:
        return lambda a, b: _batched(np.ascontiguousarray(a).reshape((1, a.size)), b)[..., 0, :]
    if b.ndim == 1:
        return lambda a, b: _batched(a, np.ascontiguousarray(b).reshape((b.size, 1)))[..., 0]
    return lambda a, b: _batched(a, b)


# ---- np.gradient ---------------------------------------------------------------------------
def gradient_axis(f, h, axis):
    """``np.gradient(f, h, axis=axis)`` with ``edge_order=1``: central differences
    inside, one-sided at the two ends (an axis of at least 2 entries).

    >>> gradient_axis(np.array([1.0, 2.0, 4.0, 7.0]), 0.5, 0)
    array([2., 3., 5., 6.])
    """
    return np.gradient(f, h, axis=axis)


@numba_impl(gradient_axis)
def _ol_gradient_axis(f, h, axis):
    check_array(f, "f")

    def impl(f, h, axis):
        ax = normalize_axis(axis, f.ndim)
        f3 = as_3d(f, ax)
        n = f3.shape[1]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        out = np.empty(f3.shape)
        out[:, 0, :] = (f3[:, 1, :] - f3[:, 0, :]) / h
        out[:, n - 1, :] = (f3[:, n - 1, :] - f3[:, n - 2, :]) / h
        out[:, 1:n - 1, :] = (f3[:, 2:, :] - f3[:, :n - 2, :]) / (2.0 * h)
        return out.reshape(f.shape)

    return impl


def gradient_vjp_axis(g, h, axis):
    """The VJP of ``gradient_axis`` for ``f`` (the transposed stencil)."""
    g = np.asarray(g, dtype=float)
    ax = normalize_axis(axis, g.ndim)
    g3 = np.moveaxis(g, ax, 0)
    out = np.zeros(g3.shape)
    out[0] -= g3[0] / h
    out[1] += g3[0] / h
    out[-1] += g3[-1] / h
    out[-2] -= g3[-1] / h
    out[2:] += g3[1:-1] / (2.0 * h)
    out[:-2] -= g3[1:-1] / (2.0 * h)
    return np.moveaxis(out, 0, ax)


@numba_impl(gradient_vjp_axis)
def _ol_gradient_vjp_axis(g, h, axis):
    check_array(g, "g")

    def impl(g, h, axis):
        ax = normalize_axis(axis, g.ndim)
        g3 = as_3d(g, ax)
        n = g3.shape[1]
        out = np.zeros(g3.shape)
        out[:, 0, :] -= g3[:, 0, :] / h
        out[:, 1, :] += g3[:, 0, :] / h
        out[:, n - 1, :] += g3[:, n - 1, :] / h
        out[:, n - 2, :] -= g3[:, n - 1, :] / h
        out[:, 2:, :] += g3[:, 1:n - 1, :] / (2.0 * h)
        out[:, :n - 2, :] -= g3[:, 1:n - 1, :] / (2.0 * h)
        return out.reshape(g.shape)

    return impl


# ---- np.partition ----------------------------------------------------------------------------
def partition_vjp(g, x, z, axis):
    """The VJP of ``z = np.partition(x, kth, axis)``: along each lane, the r-th smallest
    entry of ``z`` is the r-th smallest of ``x`` (ties in order: stable sorts), so its
    cotangent goes there, whatever order the partition left the entries in.

    >>> partition_vjp(np.array([1.0, 2.0, 3.0]), np.array([5.0, 4.0, 6.0]),
    ...               np.array([4.0, 5.0, 6.0]), 0)
    array([2., 1., 3.])
    """
    x, z = np.asarray(x), np.asarray(z)
    ax = normalize_axis(axis, x.ndim)
    source = np.argsort(x, axis=ax, kind="stable")
    placed = np.argsort(z, axis=ax, kind="stable")
    out = np.zeros(x.shape)
    np.put_along_axis(out, source, np.take_along_axis(np.asarray(g, dtype=float), placed, ax),
                      ax)
    return out


@numba_impl(partition_vjp)
def _ol_partition_vjp(g, x, z, axis):
    check_array(x, "x")

    def impl(g, x, z, axis):
        ax = normalize_axis(axis, x.ndim)
        x3, z3, g3 = as_3d(x, ax), as_3d(z, ax), as_3d(g, ax)
        out = np.zeros(x3.shape)
        for o in range(x3.shape[0]):
            for i in range(x3.shape[2]):
                source = np.argsort(x3[o, :, i], kind="mergesort")
                placed = np.argsort(z3[o, :, i], kind="mergesort")
                for r in range(source.size):
                    out[o, source[r], i] += g3[o, placed[r], i]
        return out.reshape(x.shape)

    return impl
