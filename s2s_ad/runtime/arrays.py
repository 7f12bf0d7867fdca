"""NumPy helpers for generated array code; each runs in Python and inside Numba.

Every public function here is one object that works in both paths: called
from Python it runs its body (plain NumPy, NumPy's own semantics); called from
``numba.njit`` code, Numba compiles a loop implementation registered with
``numba.extending.overload`` (the mechanism behind ``register_jitable``),
specialised on the argument's ndim when typing. Both agree to rounding, and the
tests check it. Each variant (``axis`` None or an int, ``keepdims`` or not) is
its own function, so a call site is type-stable. ``axis`` may be negative.
Results and cotangents are new arrays (never views of an argument, except
``reshape``/``reshape_like``, which follow NumPy); VJP results have ``x``'s
dtype. An axis reduction of a 1-D array gives a scalar, as in NumPy.
Reductions over several axes chain single-axis ones (highest axis first).

What Numba 0.68 supports natively (nopython mode, float64 arrays; "helper"
names the function here that fills the gap):

=========================================  =======================================
NumPy call                                 Numba 0.68
=========================================  =======================================
sum/prod/max/min/mean(x), x.sum() ...      yes, any ndim incl. 0-d; max/min of an
                                           empty array raise ValueError (as NumPy)
sum(x, axis=k), x.sum(k)                   yes (int axis, negative too, runtime
                                           value; tuple of axes too)
sum(..., keepdims=True)                    no  -> sum_axis_keepdims, *_all_keepdims
mean/prod/max/min(x, axis=k)               no  -> mean_axis, prod_axis, max_axis, ...
dot 1-D/2-D (any layout), outer            yes; np.dot(scalar, a) no (use ``*``)
a @ b, 1-D and 2-D                         yes; np.matmul(a, b) no (use ``@``);
                                           batched (ndim > 2) no; mixed
                                           float32/float64 operands no (cast first)
reshape / x.reshape / np.reshape           yes, C-contiguous input only
                                           (non-contiguous: NotImplementedError)
                                           -> reshape, reshape_like
transpose, x.T, transpose(x, axes)         yes (axes as a literal tuple)
concatenate((a, b), axis=k)                yes with a tuple; a list no
stack((a, b), axis=k)                      yes (incl. negative axis)
  their VJPs: slice/index along an axis    -> slice_axis, index_axis
linalg.solve, inv, det, slogdet            yes (float32 too, non-contiguous too)
linalg.norm(x)                             1-D and 2-D (Frobenius) only; ord='fro'
                                           no; axis= no; ndim > 2 no
                                           -> norm_all, norm_axis, norm_*_vjp
where(c, a, b)                             yes (broadcasting, scalar operands);
                                           where(c) yes
maximum, minimum                           yes (broadcasting, 0-d)
clip(x, lo, hi), x.clip                    yes (scalar, array or None bounds)
exp, expm1, exp2, log, log1p, log2, log10  yes; logaddexp(2) yes
argmax/argmin (also axis=k), argsort       yes
sign, floor, ceil, np.round/around         yes; x.round() method no (use np.round)
astype(np.int64 / np.float32)              yes; astype(int) (builtin type) no
broadcasting (operators, ufuncs)           yes; its VJP (sum back to a shape) has
                                           no primitive -> unbroadcast,
                                           unbroadcast_scalar
broadcast_to, expand_dims, x[None], ravel  yes; squeeze no
=========================================  =======================================

Also note: in ``njit`` code a *scalar* float division by zero raises
ZeroDivisionError (Numba's default error model), where NumPy gives inf/nan;
array division follows NumPy. The helpers here guard their divisions.

Functions (``g`` is the cotangent of the helper's forward result):

- broadcasting: ``unbroadcast(c, like)``, ``unbroadcast_to_shape(c, shape)``,
  ``unbroadcast_scalar(c)``
- forward, one axis: ``{sum,mean,prod,max,min,norm}_axis(x, axis)`` and
  ``..._axis_keepdims(x, axis)``; whole array with keepdims:
  ``{sum,mean,prod,max,min}_all_keepdims(x)``; ``norm_all(x)`` (any ndim)
- VJPs: ``{sum,mean,prod,max,min,norm}_vjp_axis(g, x, axis)``,
  ``..._vjp_axis_keepdims(g, x, axis)``, ``..._vjp_all(g, x)`` (``g`` a
  scalar or any size-1 array, so it also serves ``keepdims=True``; aliases
  ``..._vjp_all_keepdims``); ``expand_reduced(g, x, axis)`` (= sum_vjp_axis)
- shapes: ``reshape(x, shape)``, ``reshape_like(g, x)``,
  ``slice_axis(x, axis, start, stop)``, ``index_axis(x, axis, i)``
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

__all__ = [
    "expand_reduced", "index_axis",
    "max_all_keepdims", "max_axis", "max_axis_keepdims", "max_vjp_all",
    "max_vjp_all_keepdims", "max_vjp_axis", "max_vjp_axis_keepdims",
    "mean_all_keepdims", "mean_axis", "mean_axis_keepdims", "mean_vjp_all",
    "mean_vjp_all_keepdims", "mean_vjp_axis", "mean_vjp_axis_keepdims",
    "min_all_keepdims", "min_axis", "min_axis_keepdims", "min_vjp_all",
    "min_vjp_all_keepdims", "min_vjp_axis", "min_vjp_axis_keepdims",
    "norm_all", "norm_axis", "norm_axis_keepdims", "norm_vjp_all",
    "norm_vjp_axis", "norm_vjp_axis_keepdims",
    "prod_all_keepdims", "prod_axis", "prod_axis_keepdims", "prod_vjp_all",
    "prod_vjp_all_keepdims", "prod_vjp_axis", "prod_vjp_axis_keepdims",
    "reshape", "reshape_like", "slice_axis",
    "sum_all_keepdims", "sum_axis", "sum_axis_keepdims", "sum_vjp_all",
    "sum_vjp_all_keepdims", "sum_vjp_axis", "sum_vjp_axis_keepdims",
    "unbroadcast", "unbroadcast_scalar", "unbroadcast_to_shape",
]

# Reduction codes (module constants are compile-time constants in Numba).
_SUM, _PROD, _MAX, _MIN, _MEAN, _NORM = 0, 1, 2, 3, 4, 5


def _numba_impl(py_fn):
    """Register the decorated typing function as ``py_fn``'s Numba version."""

    def register(typer):
        overload(py_fn, strict=False)(typer)
        return typer

    return register


# --------------------------------------------------------------------------
# Shape utilities: plain tuple code in Python, fixed-length tuples in Numba.


def _shape_without(shape, axis):
    """``shape`` with entry ``axis`` (normalised) removed."""
    return tuple(shape[:axis]) + tuple(shape[axis + 1:])


@overload(_shape_without, strict=False)
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


def _shape_with(shape, axis, value):
    """``shape`` with entry ``axis`` (normalised) replaced by ``value``."""
    return tuple(shape[:axis]) + (value,) + tuple(shape[axis + 1:])


@overload(_shape_with, strict=False)
def _ol_shape_with(shape, axis, value):
    n = len(shape)

    def impl(shape, axis, value):
        out = np.empty(n, np.intp)
        for d in range(n):
            out[d] = shape[d]
        out[axis] = value
        return to_fixed_tuple(out, n)

    return impl


def _shape_ones(shape):
    """A tuple of ones as long as ``shape``."""
    return (1,) * len(shape)


@overload(_shape_ones, strict=False)
def _ol_shape_ones(shape):
    n = len(shape)

    def impl(shape):
        return to_fixed_tuple(np.ones(n, np.intp), n)

    return impl


@register_jitable
def _axis(axis, ndim):
    """``axis`` in ``range(ndim)``; negative counts from the end."""
    if axis < -ndim or axis >= ndim:
        raise ValueError("axis is out of bounds for array of this dimension")
    if axis < 0:
        return axis + ndim
    return axis


@register_jitable
def _split(shape, axis):
    """(outer, n, inner): sizes before, along and after ``axis``."""
    outer = 1
    for d in range(axis):
        outer *= shape[d]
    inner = 1
    for d in range(axis + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[axis], inner


def _as_2d(g, outer, inner):
    """``g`` (array or scalar of ``outer * inner`` elements) as an (outer, inner) array."""
    return np.asarray(g).reshape(outer, inner)


@overload(_as_2d, strict=False)
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


def _scalar(g):
    """The single value of a scalar or a size-1 array."""
    a = np.asarray(g)
    if a.size != 1:
        raise ValueError("expected a scalar or a size-1 cotangent")
    return a.reshape(()).item()


@overload(_scalar, strict=False)
def _ol_scalar(g):
    if isinstance(g, types.Array):
        def impl(g):
            if g.size != 1:
                raise ValueError("expected a scalar or a size-1 cotangent")
            return np.sum(g)
        return impl
    if isinstance(g, (types.Float, types.Integer)):
        return lambda g: g
    return None


def _check_array(x, name):
    if not isinstance(x, types.Array):
        raise TypingError(f"array_runtime: {name} must be an array, got {x}")


# --------------------------------------------------------------------------
# Numba kernels on an (outer, n, inner) view.


@register_jitable
def _k_sum(x3):
    """Sum over the middle axis of a C-contiguous 3-D array; result (outer, inner)."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, i] += x3[o, k, i]
    return out


@register_jitable
def _k_mean(x3):
    """Mean over the middle axis (NaN where it is empty)."""
    n = x3.shape[1]
    out = _k_sum(x3)
    outer, inner = out.shape
    for o in range(outer):
        for i in range(inner):
            out[o, i] = out[o, i] / n if n > 0 else np.nan
    return out


@register_jitable
def _k_norm(x3):
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
def _k_prod(x3):
    """Product over the middle axis."""
    outer, n, inner = x3.shape
    out = np.ones((outer, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, i] *= x3[o, k, i]
    return out


@register_jitable
def _k_extreme(x3, is_max):
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
def _k_max(x3):
    return _k_extreme(x3, True)


@register_jitable
def _k_min(x3):
    return _k_extreme(x3, False)


@register_jitable
def _v_sum(g2, x3):
    """VJP of ``_k_sum``: ``g2`` (outer, inner) repeated along the middle axis."""
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = g2[o, i]
    return out


@register_jitable
def _v_mean(g2, x3):
    """VJP of ``_k_mean``: ``g2 / n`` repeated along the middle axis."""
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    for o in range(outer):
        for k in range(n):
            for i in range(inner):
                out[o, k, i] = g2[o, i] / n
    return out


@register_jitable
def _v_norm(g2, x3):
    """VJP of ``_k_norm``: ``x * g / norm``, zero where the norm is zero."""
    outer, n, inner = x3.shape
    y = _k_norm(x3)
    out = np.zeros((outer, n, inner), x3.dtype)
    for o in range(outer):
        for i in range(inner):
            if y[o, i] > 0:
                s = g2[o, i] / y[o, i]
                for k in range(n):
                    out[o, k, i] = x3[o, k, i] * s
    return out


@register_jitable
def _v_extreme(g2, x3, is_max):
    """VJP of max/min: ``g`` split equally among the positions equal to the extreme."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, n, inner), x3.dtype)
    if n == 0:
        return out
    y = _k_extreme(x3, is_max)
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
def _v_max(g2, x3):
    return _v_extreme(g2, x3, True)


@register_jitable
def _v_min(g2, x3):
    return _v_extreme(g2, x3, False)


@register_jitable
def _v_prod(g2, x3):
    """VJP of ``_k_prod``: ``g`` times the product of the other elements.

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


_KERNELS = {_SUM: _k_sum, _MEAN: _k_mean, _PROD: _k_prod, _MAX: _k_max,
            _MIN: _k_min, _NORM: _k_norm}
_VJP_KERNELS = {_SUM: _v_sum, _MEAN: _v_mean, _PROD: _v_prod, _MAX: _v_max,
                _MIN: _v_min, _NORM: _v_norm}


@register_jitable
def _as_3d(x, axis):
    """``x`` as a C-contiguous (outer, n, inner) array around normalised ``axis``."""
    outer, n, inner = _split(x.shape, axis)
    return np.ascontiguousarray(x).reshape((outer, n, inner))


# --------------------------------------------------------------------------
# Typing-time builders of Numba implementations.


def _forward_axis_impl(op, keepdims, x):
    _check_array(x, "x")
    kernel = _KERNELS[op]
    if keepdims:
        def impl(x, axis):
            ax = _axis(axis, x.ndim)
            return kernel(_as_3d(x, ax)).reshape(_shape_with(x.shape, ax, 1))
    elif x.ndim == 1:
        def impl(x, axis):
            _axis(axis, 1)
            return kernel(_as_3d(x, 0))[0, 0]
    else:
        def impl(x, axis):
            ax = _axis(axis, x.ndim)
            return kernel(_as_3d(x, ax)).reshape(_shape_without(x.shape, ax))
    return impl


def _forward_all_keepdims_impl(op, x):
    _check_array(x, "x")
    kernel = _KERNELS[op]

    def impl(x):
        x3 = np.ascontiguousarray(x).reshape((1, x.size, 1))
        return kernel(x3).reshape(_shape_ones(x.shape))

    return impl


def _vjp_axis_impl(op, keepdims, g, x):
    _check_array(x, "x")
    kernel = _VJP_KERNELS[op]
    want = x.ndim if keepdims else x.ndim - 1
    if isinstance(g, types.Array) and g.ndim != want:
        raise TypingError(f"array_runtime: cotangent must have ndim {want}, got {g}")
    if not isinstance(g, types.Array) and want != 0:
        raise TypingError(f"array_runtime: cotangent must be an array, got {g}")
    check_shape = isinstance(g, types.Array) and want > 0

    def impl(g, x, axis):
        ax = _axis(axis, x.ndim)
        if check_shape:
            expected = _shape_with(x.shape, ax, 1) if keepdims else _shape_without(x.shape, ax)
            if g.shape != expected:
                raise ValueError("cotangent shape does not match the reduction's result")
        x3 = _as_3d(x, ax)
        g2 = _as_2d(g, x3.shape[0], x3.shape[2])
        return kernel(g2, x3).reshape(x.shape)

    return impl


def _vjp_all_impl(op, g, x):
    _check_array(x, "x")
    kernel = _VJP_KERNELS[op]

    def impl(g, x):
        x3 = np.ascontiguousarray(x).reshape((1, x.size, 1))
        g2 = np.full((1, 1), _scalar(g))
        return kernel(g2, x3).reshape(x.shape)

    return impl


# --------------------------------------------------------------------------
# Python (NumPy) versions of the VJPs, written to round like the kernels.


def _py_expand(g, x, axis, keepdims):
    """``g`` shaped to broadcast against ``x`` (checks its shape)."""
    ax = _axis(axis, x.ndim)
    if keepdims:
        expected = _shape_with(x.shape, ax, 1)
    else:
        expected = _shape_without(x.shape, ax)
    g = np.asarray(g)
    if g.shape != expected:
        raise ValueError(
            f"cotangent shape {g.shape} does not match the reduction's result {expected}")
    return ax, (g if keepdims else np.expand_dims(g, ax))


def _py_vjp(op, gk, x, ax):
    """The VJP for ``gk`` with keepdims shape; ``ax`` None for the whole array."""
    out = np.zeros(x.shape, x.dtype)
    n = x.size if ax is None else x.shape[ax]
    if n == 0 or x.size == 0:
        return out
    if op == _SUM:
        out[...] = gk
    elif op == _MEAN:
        out[...] = gk / n
    elif op in (_MAX, _MIN):
        red = np.max if op == _MAX else np.min
        y = red(x, axis=ax, keepdims=True)
        mask = (x == y) | (np.isnan(x) & np.isnan(y))
        share = gk / np.sum(mask, axis=ax, keepdims=True)
        np.copyto(out, np.broadcast_to(share, x.shape), where=mask, casting="unsafe")
    elif op == _NORM:
        y = np.sqrt(np.sum(x * x, axis=ax, keepdims=True))
        s = np.divide(gk, y, out=np.zeros(np.broadcast_shapes(np.shape(gk), y.shape)),
                      where=y > 0)
        out[...] = x * s
    else:
        xm = x.reshape(-1) if ax is None else np.moveaxis(x, ax, -1)
        left = np.ones(xm.shape, x.dtype)
        right = np.ones(xm.shape, x.dtype)
        if n > 1:
            left[..., 1:] = np.cumprod(xm[..., :-1], axis=-1)
            right[..., :-1] = np.cumprod(xm[..., :0:-1], axis=-1)[..., ::-1]
        other = left * right
        other = other.reshape(x.shape) if ax is None else np.moveaxis(other, -1, ax)
        out[...] = other * gk
    return out


# --------------------------------------------------------------------------
# Broadcasting.


@register_jitable
def _unbroadcast_flat(cf, cs, ls):
    """Sum flat C-order ``cf`` of shape ``cs`` down to shape ``ls`` (int arrays)."""
    nc = cs.shape[0]
    nl = ls.shape[0]
    lead = nc - nl
    if lead < 0:
        raise ValueError("cannot unbroadcast to a shape with more dimensions")
    step = np.zeros(nc, np.intp)
    stride = 1
    for j in range(nl - 1, -1, -1):
        d = lead + j
        if ls[j] == cs[d]:
            step[d] = stride
        elif ls[j] != 1:
            raise ValueError("cotangent shape does not broadcast to the operand's shape")
        stride *= ls[j]
    out = np.zeros(stride, cf.dtype)
    if cf.shape[0] == 0:
        return out
    idx = np.zeros(nc, np.intp)
    pos = 0
    for f in range(cf.shape[0]):
        out[pos] += cf[f]
        d = nc - 1
        while d >= 0:
            idx[d] += 1
            pos += step[d]
            if idx[d] < cs[d]:
                break
            pos -= step[d] * cs[d]
            idx[d] = 0
            d -= 1
    return out


def unbroadcast_to_shape(c, shape):
    """Sum ``c`` down to ``shape``: the reverse of broadcasting to ``c.shape``.

    Leading extra dimensions are summed away; dimensions where ``shape`` has 1
    and ``c`` more are summed with keepdims. Always a new array of ``c``'s dtype.

    >>> unbroadcast_to_shape(np.ones((2, 3, 4)), (3, 1))
    array([[8.], [8.], [8.]])
    """
    c = np.asarray(c)
    shape = tuple(shape)
    lead = c.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot unbroadcast shape {c.shape} to {shape}")
    axes = list(range(lead))
    for j, s in enumerate(shape):
        if s == 1 and c.shape[lead + j] != 1:
            axes.append(lead + j)
        elif s != c.shape[lead + j]:
            raise ValueError(f"cannot unbroadcast shape {c.shape} to {shape}")
    if not axes:
        return c.copy()
    return np.sum(c, axis=tuple(axes), keepdims=True).reshape(shape)


@_numba_impl(unbroadcast_to_shape)
def _ol_unbroadcast_to_shape(c, shape):
    _check_array(c, "c")
    nl = len(shape)
    if nl > c.ndim:
        raise TypingError("array_runtime.unbroadcast: target has more dimensions")

    def impl(c, shape):
        cs = np.empty(c.ndim, np.intp)
        for d in range(c.ndim):
            cs[d] = c.shape[d]
        ls = np.empty(nl, np.intp)
        for d in range(nl):
            ls[d] = shape[d]
        flat = _unbroadcast_flat(np.ascontiguousarray(c).reshape(-1), cs, ls)
        return flat.reshape(shape)

    return impl


def unbroadcast(c, like):
    """Sum cotangent ``c`` down to the shape of array ``like``.

    See ``unbroadcast_to_shape``; ``like`` is only used for its shape.

    >>> unbroadcast(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
    """
    return unbroadcast_to_shape(c, np.shape(like))


@_numba_impl(unbroadcast)
def _ol_unbroadcast(c, like):
    _check_array(like, "like")
    return lambda c, like: unbroadcast_to_shape(c, like.shape)


@register_jitable
def unbroadcast_scalar(c):
    """The cotangent of a scalar operand broadcast to ``c``'s shape: ``c.sum()``.

    >>> float(unbroadcast_scalar(np.ones((2, 3))))
    6.0
    """
    return np.sum(c)


# --------------------------------------------------------------------------
# Forward reductions along one axis.


def sum_axis(x, axis):
    """``np.sum(x, axis=axis)``.

    >>> sum_axis(np.ones((2, 3)), -1)
    array([3., 3.])
    """
    return np.sum(x, axis=axis)


def sum_axis_keepdims(x, axis):
    """``np.sum(x, axis=axis, keepdims=True)``.

    >>> sum_axis_keepdims(np.ones((2, 3)), 0)
    array([[2., 2., 2.]])
    """
    return np.sum(x, axis=axis, keepdims=True)


def mean_axis(x, axis):
    """``np.mean(x, axis=axis)`` (NaN where the axis is empty).

    >>> mean_axis(np.array([[1.0, 3.0]]), 1)
    array([2.])
    """
    return np.mean(x, axis=axis)


def mean_axis_keepdims(x, axis):
    """``np.mean(x, axis=axis, keepdims=True)``.

    >>> mean_axis_keepdims(np.array([[1.0, 3.0]]), 1)
    array([[2.]])
    """
    return np.mean(x, axis=axis, keepdims=True)


def prod_axis(x, axis):
    """``np.prod(x, axis=axis)``.

    >>> prod_axis(np.array([[2.0, 3.0]]), 1)
    array([6.])
    """
    return np.prod(x, axis=axis)


def prod_axis_keepdims(x, axis):
    """``np.prod(x, axis=axis, keepdims=True)``.

    >>> prod_axis_keepdims(np.array([[2.0, 3.0]]), 1)
    array([[6.]])
    """
    return np.prod(x, axis=axis, keepdims=True)


def max_axis(x, axis):
    """``np.max(x, axis=axis)`` (NaN propagates; an empty axis raises ValueError).

    >>> max_axis(np.array([[1.0, 5.0], [4.0, 2.0]]), 0)
    array([4., 5.])
    """
    return np.max(x, axis=axis)


def max_axis_keepdims(x, axis):
    """``np.max(x, axis=axis, keepdims=True)``.

    >>> max_axis_keepdims(np.array([[1.0, 5.0], [4.0, 2.0]]), 1)
    array([[5.], [4.]])
    """
    return np.max(x, axis=axis, keepdims=True)


def min_axis(x, axis):
    """``np.min(x, axis=axis)`` (NaN propagates; an empty axis raises ValueError).

    >>> min_axis(np.array([[1.0, 5.0], [4.0, 2.0]]), 0)
    array([1., 2.])
    """
    return np.min(x, axis=axis)


def min_axis_keepdims(x, axis):
    """``np.min(x, axis=axis, keepdims=True)``.

    >>> min_axis_keepdims(np.array([[1.0, 5.0], [4.0, 2.0]]), 1)
    array([[1.], [2.]])
    """
    return np.min(x, axis=axis, keepdims=True)


def norm_axis(x, axis):
    """``np.linalg.norm(x, axis=axis)``: sqrt of the sum of squares along ``axis``.

    >>> norm_axis(np.array([[3.0, 4.0]]), 1)
    array([5.])
    """
    return np.sqrt(np.sum(x * x, axis=axis))


def norm_axis_keepdims(x, axis):
    """``np.linalg.norm(x, axis=axis, keepdims=True)``.

    >>> norm_axis_keepdims(np.array([[3.0, 4.0]]), 1)
    array([[5.]])
    """
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=True))


for _fn, _op, _keep in (
        (sum_axis, _SUM, False), (sum_axis_keepdims, _SUM, True),
        (mean_axis, _MEAN, False), (mean_axis_keepdims, _MEAN, True),
        (prod_axis, _PROD, False), (prod_axis_keepdims, _PROD, True),
        (max_axis, _MAX, False), (max_axis_keepdims, _MAX, True),
        (min_axis, _MIN, False), (min_axis_keepdims, _MIN, True),
        (norm_axis, _NORM, False), (norm_axis_keepdims, _NORM, True)):
    overload(_fn, strict=False)(
        lambda x, axis, _op=_op, _keep=_keep: _forward_axis_impl(_op, _keep, x))


# --------------------------------------------------------------------------
# Forward reductions of the whole array with keepdims (without keepdims Numba
# has np.sum(x) etc. natively), and the whole-array norm for any ndim.


def sum_all_keepdims(x):
    """``np.sum(x, keepdims=True)``: shape ``(1,) * x.ndim``.

    >>> sum_all_keepdims(np.ones((2, 3)))
    array([[6.]])
    """
    return np.sum(x, keepdims=True)


def mean_all_keepdims(x):
    """``np.mean(x, keepdims=True)``.

    >>> mean_all_keepdims(np.array([1.0, 3.0]))
    array([2.])
    """
    return np.mean(x, keepdims=True)


def prod_all_keepdims(x):
    """``np.prod(x, keepdims=True)``.

    >>> prod_all_keepdims(np.array([[2.0, 3.0]]))
    array([[6.]])
    """
    return np.prod(x, keepdims=True)


def max_all_keepdims(x):
    """``np.max(x, keepdims=True)`` (an empty ``x`` raises ValueError).

    >>> max_all_keepdims(np.array([[2.0, 3.0]]))
    array([[3.]])
    """
    return np.max(x, keepdims=True)


def min_all_keepdims(x):
    """``np.min(x, keepdims=True)`` (an empty ``x`` raises ValueError).

    >>> min_all_keepdims(np.array([[2.0, 3.0]]))
    array([[2.]])
    """
    return np.min(x, keepdims=True)


for _fn, _op in ((sum_all_keepdims, _SUM), (mean_all_keepdims, _MEAN),
                 (prod_all_keepdims, _PROD), (max_all_keepdims, _MAX),
                 (min_all_keepdims, _MIN)):
    overload(_fn, strict=False)(lambda x, _op=_op: _forward_all_keepdims_impl(_op, x))


def norm_all(x):
    """``np.linalg.norm(x)`` for any ndim: sqrt of the sum of all squares.

    >>> float(norm_all(np.full((2, 2, 2), 0.5)))
    1.4142135623730951
    """
    x = np.asarray(x)
    return np.sqrt(np.sum(x * x))


@_numba_impl(norm_all)
def _ol_norm_all(x):
    _check_array(x, "x")

    def impl(x):
        return _k_norm(np.ascontiguousarray(x).reshape((1, x.size, 1)))[0, 0]

    return impl


# --------------------------------------------------------------------------
# VJPs of the reductions.


def expand_reduced(g, x, axis):
    """Cotangent ``g`` of ``np.sum(x, axis)`` broadcast back to ``x.shape``.

    >>> expand_reduced(np.array([1.0, 2.0]), np.zeros((2, 3)), 1)
    array([[1., 1., 1.], [2., 2., 2.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_SUM, gk, x, ax)


sum_vjp_axis = expand_reduced


def sum_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.sum(x, axis, keepdims=True)``: ``g`` broadcast to ``x.shape``.

    >>> sum_vjp_axis_keepdims(np.array([[1.0], [2.0]]), np.zeros((2, 2)), 1)
    array([[1., 1.], [2., 2.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_SUM, gk, x, ax)


def sum_vjp_all(g, x):
    """VJP of ``np.sum(x)`` (or keepdims): ``x``-shaped array filled with ``g``.

    ``g`` is a scalar or any size-1 array (so this also serves keepdims=True).

    >>> sum_vjp_all(2.0, np.zeros(3))
    array([2., 2., 2.])
    """
    x = np.asarray(x)
    return _py_vjp(_SUM, _scalar(g), x, None)


def mean_vjp_axis(g, x, axis):
    """VJP of ``np.mean(x, axis)``: ``g / n`` broadcast along ``axis``.

    >>> mean_vjp_axis(np.array([4.0]), np.zeros((1, 2)), 1)
    array([[2., 2.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_MEAN, gk, x, ax)


def mean_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.mean(x, axis, keepdims=True)``.

    >>> mean_vjp_axis_keepdims(np.array([[4.0]]), np.zeros((1, 2)), 1)
    array([[2., 2.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_MEAN, gk, x, ax)


def mean_vjp_all(g, x):
    """VJP of ``np.mean(x)`` (or keepdims): ``g / x.size`` everywhere.

    >>> mean_vjp_all(4.0, np.zeros(2))
    array([2., 2.])
    """
    x = np.asarray(x)
    return _py_vjp(_MEAN, _scalar(g), x, None)


def prod_vjp_axis(g, x, axis):
    """VJP of ``np.prod(x, axis)``: ``g`` times the product of the *other* elements.

    Computed with prefix and suffix products (never ``prod / x``), so it is
    exact where ``x`` has zeros.

    >>> prod_vjp_axis(np.array([1.0]), np.array([[0.0, 3.0, 2.0]]), 1)
    array([[6., 0., 0.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_PROD, gk, x, ax)


def prod_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.prod(x, axis, keepdims=True)`` (see ``prod_vjp_axis``).

    >>> prod_vjp_axis_keepdims(np.array([[1.0]]), np.array([[2.0, 3.0]]), 1)
    array([[3., 2.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_PROD, gk, x, ax)


def prod_vjp_all(g, x):
    """VJP of ``np.prod(x)`` (or keepdims); exact with zeros in ``x``.

    >>> prod_vjp_all(1.0, np.array([0.0, 0.0, 2.0]))
    array([0., 0., 0.])
    """
    x = np.asarray(x)
    return _py_vjp(_PROD, _scalar(g), x, None)


def max_vjp_axis(g, x, axis):
    """VJP of ``np.max(x, axis)``: ``g`` goes to the positions equal to the max.

    Ties split ``g`` equally (each of k maxima gets ``g / k``). Where the max
    is NaN, ``g`` goes to the NaN positions.

    >>> max_vjp_axis(np.array([6.0]), np.array([[5.0, 1.0, 5.0]]), 1)
    array([[3., 0., 3.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_MAX, gk, x, ax)


def max_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.max(x, axis, keepdims=True)`` (ties split equally).

    >>> max_vjp_axis_keepdims(np.array([[1.0]]), np.array([[5.0, 1.0]]), 1)
    array([[1., 0.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_MAX, gk, x, ax)


def max_vjp_all(g, x):
    """VJP of ``np.max(x)`` (or keepdims); ties split ``g`` equally.

    >>> max_vjp_all(1.0, np.array([2.0, 2.0, 1.0]))
    array([0.5, 0.5, 0. ])
    """
    x = np.asarray(x)
    return _py_vjp(_MAX, _scalar(g), x, None)


def min_vjp_axis(g, x, axis):
    """VJP of ``np.min(x, axis)``: ``g`` to the minima, ties split equally.

    >>> min_vjp_axis(np.array([1.0]), np.array([[5.0, 1.0]]), 1)
    array([[0., 1.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_MIN, gk, x, ax)


def min_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.min(x, axis, keepdims=True)`` (ties split equally).

    >>> min_vjp_axis_keepdims(np.array([[1.0]]), np.array([[5.0, 1.0]]), 1)
    array([[0., 1.]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_MIN, gk, x, ax)


def min_vjp_all(g, x):
    """VJP of ``np.min(x)`` (or keepdims); ties split ``g`` equally.

    >>> min_vjp_all(1.0, np.array([1.0, 2.0]))
    array([1., 0.])
    """
    x = np.asarray(x)
    return _py_vjp(_MIN, _scalar(g), x, None)


def norm_vjp_axis(g, x, axis):
    """VJP of ``np.linalg.norm(x, axis=axis)``: ``x * g / norm``, 0 where norm is 0.

    >>> norm_vjp_axis(np.array([1.0]), np.array([[3.0, 4.0]]), 1)
    array([[0.6, 0.8]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, False)
    return _py_vjp(_NORM, gk, x, ax)


def norm_vjp_axis_keepdims(g, x, axis):
    """VJP of ``np.linalg.norm(x, axis=axis, keepdims=True)``.

    >>> norm_vjp_axis_keepdims(np.array([[1.0]]), np.array([[3.0, 4.0]]), 1)
    array([[0.6, 0.8]])
    """
    x = np.asarray(x)
    ax, gk = _py_expand(g, x, axis, True)
    return _py_vjp(_NORM, gk, x, ax)


def norm_vjp_all(g, x):
    """VJP of ``np.linalg.norm(x)`` (any ndim): ``x * g / norm``; zeros at ``x == 0``.

    >>> norm_vjp_all(1.0, np.array([3.0, 4.0]))
    array([0.6, 0.8])
    """
    x = np.asarray(x)
    return _py_vjp(_NORM, _scalar(g), x, None)


for _fn, _op, _keep in (
        (sum_vjp_axis, _SUM, False), (sum_vjp_axis_keepdims, _SUM, True),
        (mean_vjp_axis, _MEAN, False), (mean_vjp_axis_keepdims, _MEAN, True),
        (prod_vjp_axis, _PROD, False), (prod_vjp_axis_keepdims, _PROD, True),
        (max_vjp_axis, _MAX, False), (max_vjp_axis_keepdims, _MAX, True),
        (min_vjp_axis, _MIN, False), (min_vjp_axis_keepdims, _MIN, True),
        (norm_vjp_axis, _NORM, False), (norm_vjp_axis_keepdims, _NORM, True)):
    overload(_fn, strict=False)(
        lambda g, x, axis, _op=_op, _keep=_keep: _vjp_axis_impl(_op, _keep, g, x))

for _fn, _op in ((sum_vjp_all, _SUM), (mean_vjp_all, _MEAN), (prod_vjp_all, _PROD),
                 (max_vjp_all, _MAX), (min_vjp_all, _MIN), (norm_vjp_all, _NORM)):
    overload(_fn, strict=False)(lambda g, x, _op=_op: _vjp_all_impl(_op, g, x))

# With a scalar-or-size-1 cotangent the whole-array VJPs serve keepdims too.
sum_vjp_all_keepdims = sum_vjp_all
mean_vjp_all_keepdims = mean_vjp_all
prod_vjp_all_keepdims = prod_vjp_all
max_vjp_all_keepdims = max_vjp_all
min_vjp_all_keepdims = min_vjp_all


# --------------------------------------------------------------------------
# Shapes: reshape of any layout, and the pieces for concatenate/stack VJPs.


def reshape(x, shape):
    """``np.reshape(x, shape)`` for any layout (Numba's needs C-contiguous).

    A view when ``x`` is contiguous, else a copy, as in NumPy.

    >>> reshape(np.arange(6.0).reshape(2, 3).T, (6,))
    array([0., 3., 1., 4., 2., 5.])
    """
    return np.reshape(x, shape)


@_numba_impl(reshape)
def _ol_reshape(x, shape):
    _check_array(x, "x")
    return lambda x, shape: np.ascontiguousarray(x).reshape(shape)


def reshape_like(g, x):
    """``g`` reshaped to ``x.shape`` (the VJP of a reshape), any layout.

    >>> reshape_like(np.ones(4), np.zeros((2, 2))).shape
    (2, 2)
    """
    return np.reshape(g, np.shape(x))


@_numba_impl(reshape_like)
def _ol_reshape_like(g, x):
    _check_array(g, "g")
    _check_array(x, "x")
    return lambda g, x: np.ascontiguousarray(g).reshape(x.shape)


@register_jitable
def _check_range(start, stop, n):
    if start < 0 or stop < start or stop > n:
        raise ValueError("slice_axis needs 0 <= start <= stop <= size along axis")


def slice_axis(x, axis, start, stop):
    """A copy of ``x[..., start:stop, ...]`` with the slice on ``axis``.

    The VJP piece of ``np.concatenate`` (each operand's cotangent is a slice).
    Requires ``0 <= start <= stop <= x.shape[axis]``.

    >>> slice_axis(np.arange(6.0).reshape(2, 3), -1, 1, 3)
    array([[1., 2.], [4., 5.]])
    """
    x = np.asarray(x)
    ax = _axis(axis, x.ndim)
    _check_range(start, stop, x.shape[ax])
    return x[(slice(None),) * ax + (slice(start, stop),)].copy()


@_numba_impl(slice_axis)
def _ol_slice_axis(x, axis, start, stop):
    _check_array(x, "x")

    def impl(x, axis, start, stop):
        ax = _axis(axis, x.ndim)
        _check_range(start, stop, x.shape[ax])
        part = _as_3d(x, ax)[:, start:stop, :].copy()
        return part.reshape(_shape_with(x.shape, ax, stop - start))

    return impl


def index_axis(x, axis, i):
    """A copy of ``x[..., i, ...]`` with the index on ``axis`` (negative ``i`` ok).

    The VJP piece of ``np.stack``. A 1-D ``x`` gives a scalar.

    >>> index_axis(np.arange(6.0).reshape(2, 3), 1, -1)
    array([2., 5.])
    """
    x = np.asarray(x)
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    if i < -n or i >= n:
        raise IndexError("index out of bounds along axis")
    out = x[(slice(None),) * ax + (i,)]
    return out.copy() if x.ndim > 1 else out


@_numba_impl(index_axis)
def _ol_index_axis(x, axis, i):
    _check_array(x, "x")
    one_d = x.ndim == 1

    def impl(x, axis, i):
        ax = _axis(axis, x.ndim)
        n = x.shape[ax]
        if i < -n or i >= n:
            raise IndexError("index out of bounds along axis")
        k = i + n if i < 0 else i
        part = _as_3d(x, ax)[:, k, :].copy()
        if one_d:
            return part[0, 0]
        return part.reshape(_shape_without(x.shape, ax))

    return impl
