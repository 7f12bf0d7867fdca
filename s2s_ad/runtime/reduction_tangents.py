"""The tangents of the pullbacks of ``np.prod`` and ``np.linalg.norm`` in their input:
what forward mode over gradient code needs for second derivatives of these reductions
(``ad.hvp``, ``ad.hessian``; the rules are in ``rules/runtime_rules.py``).

A pullback ``r_vjp_*(g, x[, axis])`` (see ``reductions``) is linear in the cotangent
``g`` (its tangent in ``g`` is the pullback itself) but not in ``x``: its derivative in
``x`` along ``t``, ``g`` held still, is

- ``prod_vjp_tangent_*(g, x, t[, axis])``: ``g`` times the derivative of the product
  of the *other* elements, ``sum_{j != i} t_j prod_{k != i, j} x_k``, from prefix and
  suffix products and their tangents (never a division: exact where ``x`` has zeros);
- ``norm_vjp_tangent_*(g, x, t[, axis])``: ``(g / |x|) (t - x <x, t> / |x|^2)``, zero
  where the norm is zero (where the pullback is zero).

The forms are the pullbacks' own (``_axis``, ``_axis_keepdims``, ``_all``), with ``t``
of ``x``'s shape; each runs from Python (NumPy) and in Numba (a kernel on the
``(outer, n, inner)`` view of ``x``, as ``reduction_kernels``'s).

>>> prod_vjp_tangent_all(1.0, np.array([2.0, 3.0, 5.0]), np.array([1.0, 0.0, 0.0]))
array([0., 5., 3.])
>>> norm_vjp_tangent_all(1.0, np.array([3.0, 4.0]), np.array([1.0, 0.0]))
array([ 0.128, -0.096])
>>> prod_vjp_tangent_axis(np.array([1.0, 2.0]), np.array([[0.0, 3.0], [2.0, 0.0]]),
...                       np.ones((2, 2)), 1)
array([[1., 1.],
       [2., 2.]])
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .axes import as_3d, check_array, normalize_axis, shape_with, shape_without
from .reduction_kernels import as_2d, py_expand, scalar_of

__all__ = ["prod_vjp_tangent_axis", "prod_vjp_tangent_axis_keepdims", "prod_vjp_tangent_all",
           "norm_vjp_tangent_axis", "norm_vjp_tangent_axis_keepdims", "norm_vjp_tangent_all"]


# --------------------------------------------------------------------------
# Numba kernels: cotangent (outer, inner), x and t (outer, n, inner).


@register_jitable
def _kernel_prod(g2, x3, t3):
    """``g`` times the tangent of the product of the other elements."""
    outer, n, inner = x3.shape
    out = np.empty((outer, n, inner), x3.dtype)
    left = np.empty(n)
    left_tangent = np.empty(n)
    for o in range(outer):
        for i in range(inner):
            product, tangent = 1.0, 0.0
            for k in range(n):
                left[k], left_tangent[k] = product, tangent
                tangent = tangent * x3[o, k, i] + product * t3[o, k, i]
                product = product * x3[o, k, i]
            product, tangent = 1.0, 0.0
            for k in range(n - 1, -1, -1):
                out[o, k, i] = (left_tangent[k] * product + left[k] * tangent) * g2[o, i]
                tangent = tangent * x3[o, k, i] + product * t3[o, k, i]
                product = product * x3[o, k, i]
    return out


@register_jitable
def _kernel_norm(g2, x3, t3):
    """``(g / |x|) (t - x <x, t> / |x|^2)``, zero where the norm is zero."""
    outer, n, inner = x3.shape
    out = np.zeros((outer, n, inner), x3.dtype)
    for o in range(outer):
        for i in range(inner):
            squares, along = 0.0, 0.0
            for k in range(n):
                squares += x3[o, k, i] * x3[o, k, i]
                along += x3[o, k, i] * t3[o, k, i]
            if squares > 0:
                scale = g2[o, i] / np.sqrt(squares)
                slope = along / squares
                for k in range(n):
                    out[o, k, i] = (t3[o, k, i] - x3[o, k, i] * slope) * scale
    return out


# --------------------------------------------------------------------------
# NumPy rules: the tangent for a keepdims-shaped cotangent ``gk`` of the reduction
# along ``ax`` (None: all of ``x``).


def _rule_prod(gk, x, t, ax):
    xm = x.reshape(-1) if ax is None else np.moveaxis(x, ax, -1)
    tm = t.reshape(-1) if ax is None else np.moveaxis(t, ax, -1)
    left, left_tangent = np.ones(xm.shape), np.zeros(xm.shape)
    right, right_tangent = np.ones(xm.shape), np.zeros(xm.shape)
    n = xm.shape[-1]
    for k in range(1, n):
        left_tangent[..., k] = left_tangent[..., k - 1] * xm[..., k - 1] + \
            left[..., k - 1] * tm[..., k - 1]
        left[..., k] = left[..., k - 1] * xm[..., k - 1]
    for k in range(n - 2, -1, -1):
        right_tangent[..., k] = right_tangent[..., k + 1] * xm[..., k + 1] + \
            right[..., k + 1] * tm[..., k + 1]
        right[..., k] = right[..., k + 1] * xm[..., k + 1]
    other = left_tangent * right + left * right_tangent
    other = other.reshape(x.shape) if ax is None else np.moveaxis(other, -1, ax)
    return other * gk


def _rule_norm(gk, x, t, ax):
    squares = np.sum(x * x, axis=ax, keepdims=True)
    along = np.sum(x * t, axis=ax, keepdims=True)
    inside = squares > 0
    root = np.sqrt(squares)
    scale = np.divide(gk, root, out=np.zeros(np.broadcast_shapes(np.shape(gk), root.shape)),
                      where=inside)
    slope = np.divide(along, squares, out=np.zeros(squares.shape), where=inside)
    return (t - x * slope) * scale


# --------------------------------------------------------------------------
# The public forms and their Numba implementations.


def _arrays(x, t):
    x, t = np.asarray(x), np.asarray(t)
    if t.shape != x.shape:
        raise ValueError(f"tangent shape {t.shape} does not match the input's {x.shape}")
    return x, t


def _python(rule, gk, x, t, ax):
    if x.size == 0:
        return np.zeros(x.shape, x.dtype)
    return np.asarray(rule(gk, x, t, ax), dtype=x.dtype).reshape(x.shape)


def _check_types(x, t):
    check_array(x, "x")
    check_array(t, "t")
    if t.ndim != x.ndim:
        raise TypingError(f"array_runtime: tangent must have ndim {x.ndim}, got {t}")


def _axis_form(rule, kernel, keepdims: bool):
    def public(g, x, t, axis):
        x, t = _arrays(x, t)
        ax, gk = py_expand(g, x, axis, keepdims)
        return _python(rule, gk, x, t, ax)

    def typer(g, x, t, axis):
        _check_types(x, t)
        want = x.ndim if keepdims else x.ndim - 1
        if (g.ndim if isinstance(g, types.Array) else 0) != want:
            raise TypingError(f"array_runtime: cotangent must have ndim {want}, got {g}")
        check_shape = want > 0

        def impl(g, x, t, axis):
            ax = normalize_axis(axis, x.ndim)
            if t.shape != x.shape:
                raise ValueError("tangent shape does not match the input's")
            if check_shape:
                expected = (shape_with(x.shape, ax, 1) if keepdims
                            else shape_without(x.shape, ax))
                if g.shape != expected:
                    raise ValueError("cotangent shape does not match the reduction's result")
            x3 = as_3d(x, ax)
            g2 = as_2d(g, x3.shape[0], x3.shape[2])
            return kernel(g2, x3, as_3d(t, ax)).reshape(x.shape)

        return impl

    overload(public, strict=False)(typer)
    return public


def _all_form(rule, kernel):
    def public(g, x, t):
        x, t = _arrays(x, t)
        return _python(rule, scalar_of(g), x, t, None)

    def typer(g, x, t):
        _check_types(x, t)

        def impl(g, x, t):
            if t.shape != x.shape:
                raise ValueError("tangent shape does not match the input's")
            x3 = np.ascontiguousarray(x).reshape((1, x.size, 1))
            t3 = np.ascontiguousarray(t).reshape((1, t.size, 1))
            return kernel(np.full((1, 1), scalar_of(g)), x3, t3).reshape(x.shape)

        return impl

    overload(public, strict=False)(typer)
    return public


def _forms(row: str, rule, kernel) -> tuple:
    """The three public forms of one reduction's tangent, named and documented."""
    made = []
    for form, public in (("axis", _axis_form(rule, kernel, False)),
                         ("axis_keepdims", _axis_form(rule, kernel, True)),
                         ("all", _all_form(rule, kernel))):
        public.__name__ = public.__qualname__ = f"{row}_vjp_tangent_{form}"
        axis = "" if form == "all" else ", axis"
        public.__doc__ = (f"The derivative of ``{row}_vjp_{form}(g, x{axis})`` in ``x`` along "
                          "``t`` (``g`` held still).")
        made.append(public)
    return tuple(made)


PROD_TANGENTS = _forms("prod", _rule_prod, _kernel_prod)
NORM_TANGENTS = _forms("norm", _rule_norm, _kernel_norm)
prod_vjp_tangent_axis = PROD_TANGENTS[0]
prod_vjp_tangent_axis_keepdims = PROD_TANGENTS[1]
prod_vjp_tangent_all = PROD_TANGENTS[2]
norm_vjp_tangent_axis = NORM_TANGENTS[0]
norm_vjp_tangent_axis_keepdims = NORM_TANGENTS[1]
norm_vjp_tangent_all = NORM_TANGENTS[2]
