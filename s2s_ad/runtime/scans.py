"""Order along an axis: the VJP of ``np.cumsum``, and sorting with its VJP.

Numba compiles ``np.cumsum(x, axis=k)`` and ``np.sort(x)`` (last axis) itself;
it lacks a reverse cumulative sum, ``np.sort(x, axis=k)`` and a scatter through
an argsort.  ``sort_vjp`` ranks with a stable sort in both paths, so ties go
the same way in Python and in Numba: the k-th smallest entry (first-come among
equals) receives ``g[k]``; ``sort_tangent`` (forward mode) gathers through the same
ranks, so the two modes agree at ties too.
"""

from __future__ import annotations

import numpy as np

from .axes import as_3d, check_array, normalize_axis, numba_impl

__all__ = ["reverse_cumsum", "sort_axis", "sort_tangent", "sort_vjp"]


def reverse_cumsum(g, axis):
    """``out[..., i, ...] = sum(g[..., i:, ...])`` along ``axis``: the VJP of
    ``np.cumsum(x, axis=axis)``.

    >>> reverse_cumsum(np.array([[1.0, 2.0, 3.0]]), -1)
    array([[6., 5., 3.]])
    """
    g = np.asarray(g, dtype=np.float64)
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis).copy()


@numba_impl(reverse_cumsum)
def _ol_reverse_cumsum(g, axis):
    check_array(g, "g")

    def impl(g, axis):
        ax = normalize_axis(axis, g.ndim)
        g3 = as_3d(g, ax)
        outer, n, inner = g3.shape
        out = np.empty((outer, n, inner), np.float64)
        for o in range(outer):
            for i in range(inner):
                acc = 0.0
                for k in range(n - 1, -1, -1):
                    acc += g3[o, k, i]
                    out[o, k, i] = acc
        return out.reshape(g.shape)

    return impl


def sort_axis(x, axis):
    """``np.sort(x, axis=axis)`` for an int ``axis`` (Numba sorts the last axis only).

    >>> sort_axis(np.array([[3.0, 1.0], [2.0, 4.0]]), 0)
    array([[2., 1.], [3., 4.]])
    """
    return np.sort(x, axis=axis)


@numba_impl(sort_axis)
def _ol_sort_axis(x, axis):
    check_array(x, "x")

    def impl(x, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        outer, n, inner = x3.shape
        out = np.empty((outer, n, inner), x.dtype)
        for o in range(outer):
            for i in range(inner):
                out[o, :, i] = np.sort(x3[o, :, i])
        return out.reshape(x.shape)

    return impl


def sort_vjp(g, x, axis):
    """The VJP of ``np.sort(x, axis=axis)``: ``g`` scattered back through the
    (stable) argsort of ``x`` along ``axis``, a float64 array shaped like ``x``.

    >>> sort_vjp(np.array([10.0, 20.0, 30.0]), np.array([2.0, 3.0, 1.0]), 0)
    array([20., 30., 10.])
    """
    x = np.asarray(x)
    order = np.argsort(x, axis=axis, kind="stable")
    out = np.zeros(x.shape)
    np.put_along_axis(out, order, np.asarray(g, dtype=np.float64), axis)
    return out


def _ranks_impl(gather: bool):
    """The Numba form of ``sort_vjp`` (scatter ``a`` through each line's stable
    ranks) or of ``sort_tangent`` (``gather`` through them)."""

    def impl(a, x, axis):
        if a.shape != x.shape:
            raise ValueError("sorting: the cotangent or tangent must have the shape of x")
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        a3 = as_3d(a, ax)
        outer, n, inner = x3.shape
        out = np.zeros((outer, n, inner), np.float64)
        for o in range(outer):
            for i in range(inner):
                order = np.argsort(x3[o, :, i], kind="mergesort")
                for k in range(n):
                    if gather:
                        out[o, k, i] = a3[o, order[k], i]
                    else:
                        out[o, order[k], i] = a3[o, k, i]
        return out.reshape(x.shape)

    return impl


@numba_impl(sort_vjp)
def _ol_sort_vjp(g, x, axis):
    check_array(g, "g")
    check_array(x, "x")
    return _ranks_impl(False)


def sort_tangent(t, x, axis):
    """The tangent of ``np.sort(x, axis=axis)`` along ``t``: ``t`` gathered through the
    (stable) argsort of ``x`` along ``axis``, a float64 array shaped like ``x``.

    >>> sort_tangent(np.array([10.0, 20.0, 30.0]), np.array([2.0, 3.0, 1.0]), 0)
    array([30., 10., 20.])
    """
    x = np.asarray(x)
    order = np.argsort(x, axis=axis, kind="stable")
    return np.take_along_axis(np.asarray(t, dtype=np.float64), order, axis)


@numba_impl(sort_tangent)
def _ol_sort_tangent(t, x, axis):
    check_array(t, "t")
    check_array(x, "x")
    return _ranks_impl(True)
