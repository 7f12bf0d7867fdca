"""The arithmetic of each reduction, once for Numba and once for NumPy.

Numba kernels work on a C-contiguous ``(outer, n, inner)`` view of the input
(see ``axes.as_3d``) and reduce its middle axis: a forward kernel ``k(x3)``
returns the ``(outer, inner)`` result; a VJP kernel ``v(g2, x3)`` takes the
cotangent as ``(outer, inner)`` and returns the ``(outer, n, inner)`` cotangent
of ``x3``.  The NumPy VJP rules fill ``out`` (zeros shaped like ``x``) from a
keepdims-shaped cotangent ``gk`` for the reduction along ``ax`` (None: all of
``x``) of ``n`` elements; they are written to round like the kernels.  The
last section brings a cotangent to either: ``as_2d``/``scalar_of`` for the
kernels, ``py_expand``/``py_vjp`` for the rules, checking its size or shape.

``reductions.REDUCTIONS`` pairs them up, one row per reduction.
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload, register_jitable

from .axes import normalize_axis, shape_with, shape_without

# --------------------------------------------------------------------------
# Numba kernels on an (outer, n, inner) view.


@register_jitable
def k_sum(x3):
    """Sum over the middle axis of a C-contiguous 3-D array; result (outer, inner)."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, i] += x3[o, k, i]
    return out


@register_jitable
def k_mean(x3):
    """Mean over the middle axis (NaN where it is empty)."""
    n = x3.shape[1]
    out = k_sum(x3)
    outer, inner = out.shape
    for o in range(outer):
        for i in range(inner):
            out[o, i] = out[o, i] / n if n > 0 else np.nan
    return out


@register_jitable
def k_norm(x3):
    """sqrt of the sum of squares over the middle axis."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, i] += x3[o, k, i] * x3[o, k, i]
    for o in range(outer):
        for i in range(inner):
            out[o, i] = np.sqrt(out[o, i])
    return out


@register_jitable
def k_prod(x3):
    """Product over the middle axis."""
    outer, n, inner = x3.shape
    out = np.ones((outer, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, i] *= x3[o, k, i]
    return out


@register_jitable
def k_extreme(x3, is_max):
    """Max (or min) over the middle axis; NaN propagates; empty axis raises."""
    outer, n, inner = x3.shape
    out = np.empty((outer, inner), x3.dtype)
    if n == 0:
        if outer * inner > 0:
            raise ValueError(
                "zero-size array to reduction operation which has no identity")
        return out
    for o in range(outer):
        for i in range(inner):
            out[o, i] = x3[o, 0, i]
    for o in range(outer):
        for k in range(1, n):
            for i in range(inner):
                v = x3[o, k, i]
                a = out[o, i]
                if v != v or (v > a if is_max else v < a):
                    out[o, i] = v
    return out


@register_jitable
def k_max(x3):
    return k_extreme(x3, True)


@register_jitable
def k_min(x3):
    return k_extreme(x3, False)


@register_jitable
def v_sum(g2, x3):
    """VJP of ``k_sum``: ``g2`` (outer, inner) repeated along the middle axis."""
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = g2[o, i]
    return out


@register_jitable
def v_mean(g2, x3):
    """VJP of ``k_mean``: ``g2 / n`` repeated along the middle axis."""
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = g2[o, i] / n
    return out


@register_jitable
def v_norm(g2, x3):
    """VJP of ``k_norm``: ``x * g / norm``, zero where the norm is zero."""
    outer, n, inner = x3.shape
    y = k_norm(x3)
    out = np.zeros((outer, n, inner), x3.dtype)
    for o in range(outer):
        for i in range(inner):
            if y[o, i] > 0:
                s = g2[o, i] / y[o, i]
                for k in range(n):
                    out[o, k, i] = x3[o, k, i] * s
    return out


@register_jitable
def v_extreme(g2, x3, is_max):
    """VJP of max/min: ``g`` split equally among the positions equal to the extreme."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, n, inner), x3.dtype)
    if n == 0:
        return out
    y = k_extreme(x3, is_max)
    for o in range(outer):
        for i in range(inner):
            m = y[o, i]
            is_nan = m != m
            count = 0
            for k in range(n):
                v = x3[o, k, i]
                if v == m or (is_nan and v != v):
                    count += 1
            share = g2[o, i] / count
            for k in range(n):
                v = x3[o, k, i]
                if v == m or (is_nan and v != v):
                    out[o, k, i] = share
    return out


@register_jitable
def v_max(g2, x3):
    return v_extreme(g2, x3, True)


@register_jitable
def v_min(g2, x3):
    return v_extreme(g2, x3, False)


@register_jitable
def v_prod(g2, x3):
    """VJP of ``k_prod``: ``g`` times the product of the other elements.

    Prefix times suffix products, so zeros in ``x`` are handled exactly.
    """
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    acc = np.ones(inner, x3.dtype)
    for o in range(outer):
        acc[:] = 1
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = acc[i]
                acc[i] *= x3[o, k, i]
        acc[:] = 1
        for k in range(n - 1, -1, -1):
            for i in range(inner):
                out[o, k, i] *= acc[i]
                acc[i] *= x3[o, k, i]
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = out[o, k, i] * g2[o, i]
    return out



# --------------------------------------------------------------------------
# NumPy VJP rules: fill ``out`` for a keepdims-shaped cotangent ``gk``.


def py_vjp_sum(out, gk, x, ax, n):
    """``g`` repeated along the reduced axis."""
    out[...] = gk


def py_vjp_mean(out, gk, x, ax, n):
    """``g / n`` repeated along the reduced axis."""
    out[...] = gk / n


def _py_vjp_extreme(red, out, gk, x, ax):
    """``g`` split equally among the positions equal to the extreme (or NaN)."""
    y = red(x, axis=ax, keepdims=True)
    mask = (x == y) | (np.isnan(x) & np.isnan(y))
    share = gk / np.sum(mask, axis=ax, keepdims=True)
    np.copyto(out, np.broadcast_to(share, x.shape), where=mask, casting="unsafe")


def py_vjp_max(out, gk, x, ax, n):
    _py_vjp_extreme(np.max, out, gk, x, ax)


def py_vjp_min(out, gk, x, ax, n):
    _py_vjp_extreme(np.min, out, gk, x, ax)


def py_vjp_norm(out, gk, x, ax, n):
    """``x * g / norm``, zero where the norm is zero."""
    y = np.sqrt(np.sum(x * x, axis=ax, keepdims=True))
    s = np.divide(gk, y, out=np.zeros(np.broadcast_shapes(np.shape(gk), y.shape)),
                  where=y > 0)
    out[...] = x * s


def py_vjp_prod(out, gk, x, ax, n):
    """``g`` times the product of the other elements (prefix times suffix products)."""
    xm = x.reshape(-1) if ax is None else np.moveaxis(x, ax, -1)
    left = np.ones(xm.shape, x.dtype)
    right = np.ones(xm.shape, x.dtype)
    if n > 1:
        left[..., 1:] = np.cumprod(xm[..., :-1], axis=-1)
        right[..., :-1] = np.cumprod(xm[..., :0:-1], axis=-1)[..., ::-1]
    other = left * right
    other = other.reshape(x.shape) if ax is None else np.moveaxis(other, -1, ax)
    out[...] = other * gk


# --------------------------------------------------------------------------
# Cotangents: as an (outer, inner) array or one scalar for the kernels, and
# with keepdims shape for the NumPy rules.


def as_2d(g, outer, inner):
    """``g`` (array or scalar of ``outer * inner`` elements) as an (outer, inner) array."""
    return np.asarray(g).reshape(outer, inner)


@overload(as_2d, strict=False)
def _ol_as_2d(g, outer, inner):
    if isinstance(g, types.Array):
        def impl(g, outer, inner):
            if g.size != outer * inner:
                raise ValueError("cotangent has the wrong size for this reduction")
            return np.ascontiguousarray(g).reshape((outer, inner))
        return impl
    if isinstance(g, (types.Float, types.Integer)):
        def impl(g, outer, inner):
            if outer * inner != 1:
                raise ValueError("cotangent has the wrong size for this reduction")
            return np.full((1, 1), g)
        return impl
    return None


def scalar_of(g):
    """The single value of a scalar or a size-1 array."""
    a = np.asarray(g)
    if a.size != 1:
        raise ValueError("expected a scalar or a size-1 cotangent")
    return a.reshape(()).item()


@overload(scalar_of, strict=False)
def _ol_scalar_of(g):
    if isinstance(g, types.Array):
        def impl(g):
            if g.size != 1:
                raise ValueError("expected a scalar or a size-1 cotangent")
            return np.sum(g)
        return impl
    if isinstance(g, (types.Float, types.Integer)):
        return lambda g: g
    return None


def py_expand(g, x, axis, keepdims):
    """``g`` shaped to broadcast against ``x`` (checks its shape)."""
    ax = normalize_axis(axis, x.ndim)
    if keepdims:
        expected = shape_with(x.shape, ax, 1)
    else:
        expected = shape_without(x.shape, ax)
    g = np.asarray(g)
    if g.shape != expected:
        raise ValueError(
            f"cotangent shape {g.shape} does not match the reduction's result {expected}")
    return ax, (g if keepdims else np.expand_dims(g, ax))


def py_vjp(rule, gk, x, ax):
    """The VJP for ``gk`` with keepdims shape; ``ax`` None for the whole array."""
    out = np.zeros(x.shape, x.dtype)
    n = x.size if ax is None else x.shape[ax]
    if n == 0 or x.size == 0:
        return out
    rule(out, gk, x, ax, n)
    return out
