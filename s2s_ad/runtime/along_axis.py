"""The trace (any offset, stacks of matrices), cumulative products along an axis and
n-th differences, with their VJPs (issue 23): Numba 0.68 has ``np.trace`` of a
matrix, ``np.cumprod`` flattened and ``np.diff`` along the last axis only.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .axes import as_3d, check_array, normalize_axis, numba_impl, shape_with
from .moments import perm_to_back, rows_of

__all__ = ["cumprod_axis", "cumprod_tangent", "cumprod_vjp", "diff_axis", "diff_vjp",
           "trace_axes", "trace_vjp"]


# ---- trace -----------------------------------------------------------------------------------
def _diagonal_span(n1, n2, offset):
    """(first row, count) of the diagonal ``offset`` of an n1 x n2 matrix."""
    first = max(0, -offset)
    return first, max(0, min(n1, n2 - offset) - first)


_diagonal_span_jit = register_jitable(_diagonal_span)


def trace_axes(x, offset, axis1, axis2):
    """``np.trace(x, offset, axis1, axis2)`` (any ndim >= 2; a number for 2-D).

    >>> float(trace_axes(np.arange(9.0).reshape(3, 3), 1, 0, 1))
    6.0
    """
    out = np.trace(x, offset, axis1, axis2)
    return out[()] if np.ndim(out) == 0 else out


def trace_vjp(g, x, offset, axis1, axis2):
    """The VJP of :func:`trace_axes`: ``g`` on the diagonal, zero elsewhere (float64,
    shaped like ``x``).

    >>> trace_vjp(2.0, np.ones((2, 3)), 1, 0, 1)
    array([[0., 2., 0.],
           [0., 0., 2.]])
    """
    x = np.asarray(x)
    out = np.zeros(x.shape)
    view = np.moveaxis(out, (axis1, axis2), (-2, -1))
    first, count = _diagonal_span(view.shape[-2], view.shape[-1], offset)
    rows = np.arange(first, first + count)
    view[..., rows, rows + offset] = np.asarray(g, np.float64)[..., None]
    return out


@register_jitable
def _diagonal_sums(moved, offset):
    """The sums of diagonal ``offset`` over the last two axes of ``moved``, one per
    leading index (flattened)."""
    n1, n2 = moved.shape[-2], moved.shape[-1]
    m = rows_of(moved.shape[:-1])
    a = moved.reshape((m, n1, n2))
    first, count = _diagonal_span_jit(n1, n2, offset)
    out = np.zeros(m, a.dtype)
    for i in range(m):
        for k in range(first, first + count):
            out[i] += a[i, k, k + offset]
    return out


@numba_impl(trace_axes)
def _ol_trace_axes(x, offset, axis1, axis2):
    check_array(x, "x")
    nd = x.ndim

    if nd == 2:
        def impl2(x, offset, axis1, axis2):
            perm = perm_to_back(nd, (axis1, axis2))
            moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(perm, nd)))
            return _diagonal_sums(moved, offset)[0]
        return impl2

    def impl(x, offset, axis1, axis2):
        perm = perm_to_back(nd, (axis1, axis2))
        moved = np.ascontiguousarray(np.transpose(x, to_fixed_tuple(perm, nd)))
        return _diagonal_sums(moved, offset).reshape(moved.shape[:-2])

    return impl


@numba_impl(trace_vjp)
def _ol_trace_vjp(g, x, offset, axis1, axis2):
    check_array(x, "x")
    nd = x.ndim
    number = not isinstance(g, types.Array)

    def impl(g, x, offset, axis1, axis2):
        perm = perm_to_back(nd, (axis1, axis2))
        shape = np.empty(nd, np.intp)
        inverse = np.empty(nd, np.intp)
        for i in range(nd):
            shape[i] = x.shape[perm[i]]
            inverse[perm[i]] = i
        n1, n2 = shape[nd - 2], shape[nd - 1]
        m = 1
        for i in range(nd - 2):
            m *= shape[i]
        gs = np.full(1, g) if number else np.ascontiguousarray(g).reshape(m)
        a = np.zeros((m, n1, n2), np.float64)
        first, count = _diagonal_span_jit(n1, n2, offset)
        for i in range(m):
            for k in range(first, first + count):
                a[i, k, k + offset] = gs[i]
        moved = a.reshape(to_fixed_tuple(shape, nd))
        return np.ascontiguousarray(np.transpose(moved, to_fixed_tuple(inverse, nd)))

    return impl


# ---- cumulative products and differences -----------------------------------------------------
def cumprod_axis(x, axis):
    """``np.cumprod(x, axis=axis)`` for an int ``axis`` (Numba flattens only).

    >>> cumprod_axis(np.array([[1.0, 2.0], [3.0, 4.0]]), 0)
    array([[1., 2.],
           [3., 8.]])
    """
    return np.cumprod(x, axis=axis)


@numba_impl(cumprod_axis)
def _ol_cumprod_axis(x, axis):
    check_array(x, "x")

    def impl(x, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax)
        outer, n, inner = x3.shape
        out = np.empty((outer, n, inner), x.dtype)
        for o in range(outer):
            for i in range(inner):
                if n == 0:
                    continue
                acc = x3[o, 0, i]
                out[o, 0, i] = acc
                for k in range(1, n):
                    acc = acc * x3[o, k, i]
                    out[o, k, i] = acc
        return out.reshape(x.shape)

    return impl


@register_jitable
def _cumprod_vjp_line(x, g, out):
    """One line: ``out[i] = prod(x[:i]) * s[i]`` with ``s[i] = g[i] + x[i+1] s[i+1]``
    (no division: exact where x has zeros)."""
    n = x.shape[0]
    suffix = 0.0
    for i in range(n - 1, -1, -1):
        suffix = g[i] + (x[i + 1] * suffix if i + 1 < n else 0.0)
        out[i] = suffix
    prefix = 1.0
    for i in range(n):
        out[i] *= prefix
        prefix *= x[i]


def _by_lines(line, a, x, axis):
    """``line(x_line, a_line, out_line)`` over every line of ``x`` and ``a`` along
    ``axis`` (float64, shaped like ``x``): the Python form of the cumulative products'
    helpers."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    a = np.moveaxis(np.asarray(a, np.float64), axis, -1)
    out = np.empty(x.shape)
    for index in np.ndindex(x.shape[:-1]):
        line(x[index], a[index], out[index])
    return np.moveaxis(out, -1, axis).copy()


def _lines_impl(line):
    """The Numba form of :func:`_by_lines` for one ``line`` kernel."""

    def impl(a, x, axis):
        ax = normalize_axis(axis, x.ndim)
        x3 = as_3d(x, ax).astype(np.float64)
        a3 = as_3d(a, ax).astype(np.float64)
        outer, n, inner = x3.shape
        out = np.empty((outer, n, inner), np.float64)
        row = np.empty(n, np.float64)
        for o in range(outer):
            for i in range(inner):
                line(x3[o, :, i], a3[o, :, i], row)
                out[o, :, i] = row
        return out.reshape(x.shape)

    return impl


def cumprod_vjp(g, x, axis):
    """The VJP of ``np.cumprod(x, axis=axis)``, float64 shaped like ``x``: entry i
    gets ``prod(x[:i]) * sum_{k >= i} g[k] prod(x[i+1:k+1])`` along the axis, computed
    by a suffix recurrence without dividing by ``x`` (right where ``x`` has zeros).

    >>> cumprod_vjp(np.ones(3), np.array([2.0, 0.0, 5.0]), 0)  # 1, 2 + 2 * 5, 2 * 0
    array([ 1., 12.,  0.])
    """
    return _by_lines(_cumprod_vjp_line, g, x, axis)


@register_jitable
def _cumprod_tangent_line(x, t, out):
    """One line: ``out[i]`` the tangent of ``prod(x[:i+1])``, by the product rule step
    by step (no division)."""
    product = 1.0
    tangent = 0.0
    for i in range(x.shape[0]):
        tangent = tangent * x[i] + product * t[i]
        product = product * x[i]
        out[i] = tangent


def cumprod_tangent(t, x, axis):
    """The tangent of ``np.cumprod(x, axis=axis)`` along ``t``, float64 shaped like
    ``x``: entry i is ``sum_{j <= i} t[j] prod(x[:i+1] without x[j])``.

    >>> cumprod_tangent(np.array([1.0, 0.0, 1.0]), np.array([2.0, 0.0, 5.0]), 0)
    array([1., 0., 0.])
    """
    return _by_lines(_cumprod_tangent_line, t, x, axis)


@numba_impl(cumprod_tangent)
def _ol_cumprod_tangent(t, x, axis):
    check_array(t, "t")
    check_array(x, "x")
    return _lines_impl(_cumprod_tangent_line)


@numba_impl(cumprod_vjp)
def _ol_cumprod_vjp(g, x, axis):
    check_array(g, "g")
    check_array(x, "x")
    return _lines_impl(_cumprod_vjp_line)


def diff_axis(x, n, axis):
    """``np.diff(x, n, axis)`` (Numba: the last axis only), a new array.

    >>> diff_axis(np.array([[1.0, 4.0], [2.0, 8.0]]), 1, 0)
    array([[1., 4.]])
    """
    return np.array(np.diff(x, n, axis))


@register_jitable
def _diff_once(x3):
    outer, n, inner = x3.shape
    out = np.empty((outer, max(n - 1, 0), inner), x3.dtype)
    for o in range(outer):
        for k in range(n - 1):
            for i in range(inner):
                out[o, k, i] = x3[o, k + 1, i] - x3[o, k, i]
    return out


@register_jitable
def _diff_vjp_once(g3):
    outer, n, inner = g3.shape
    out = np.zeros((outer, n + 1, inner), np.float64)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k + 1, i] += g3[o, k, i]
                out[o, k, i] -= g3[o, k, i]
    return out


@numba_impl(diff_axis)
def _ol_diff_axis(x, n, axis):
    check_array(x, "x")
    nd = x.ndim

    def impl(x, n, axis):
        if n < 0:
            raise ValueError("order must be non-negative but got a negative n")
        ax = normalize_axis(axis, nd)
        x3 = as_3d(x, ax).copy()
        for _ in range(n):
            x3 = _diff_once(x3)
        return x3.reshape(shape_with(x.shape, ax, x3.shape[1]))

    return impl


def diff_vjp(g, x, n, axis):
    """The VJP of ``np.diff(x, n, axis)``: the adjoint difference applied ``n`` times
    (float64, shaped like ``x``).

    >>> diff_vjp(np.array([1.0, 10.0]), np.zeros(3), 1, 0)
    array([-1., -9., 10.])
    """
    g = np.asarray(g, np.float64)
    for _ in range(n):
        padded = np.zeros(g.shape[:axis % g.ndim] + (1,) + g.shape[axis % g.ndim + 1:])
        g = np.concatenate((padded, g), axis) - np.concatenate((g, padded), axis)
    return g.reshape(np.shape(x))


@numba_impl(diff_vjp)
def _ol_diff_vjp(g, x, n, axis):
    check_array(g, "g")
    check_array(x, "x")
    nd = x.ndim

    def impl(g, x, n, axis):
        ax = normalize_axis(axis, nd)
        g3 = as_3d(g, ax).astype(np.float64)
        for _ in range(n):
            g3 = _diff_vjp_once(g3)
        return g3.reshape(x.shape)

    return impl
