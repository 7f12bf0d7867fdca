"""Reductions along one axis or the whole array, with keepdims, and their VJPs.

Generated from one table: each row of ``REDUCTIONS`` is one reduction (sum,
mean, prod, max, min, norm) naming its NumPy forward, its Numba forward and VJP
kernels and its NumPy VJP rule (from ``reduction_kernels``).  ``_install``
makes every row into one public function per *form*: a Python function (plain
NumPy) plus its Numba ``overload``; the module binds each to the name
generated code calls (``sum_vjp_axis = SUM.vjp_axis``), and the rules refer to
them by reference (``SUM.vjp_axis``).  For a row ``r`` (``g`` is the cotangent
of the forward's result):

====================================  ========================================
``r_axis(x, axis)``                   ``np.r(x, axis=axis)``
``r_axis_keepdims(x, axis)``          ``np.r(x, axis=axis, keepdims=True)``
``r_all_keepdims(x)``                 ``np.r(x, keepdims=True)`` (not norm)
``norm_all(x)``                       ``np.linalg.norm(x)``, any ndim
``r_vjp_axis(g, x, axis)``            VJP of ``r_axis``
``r_vjp_axis_keepdims(g, x, axis)``   VJP of ``r_axis_keepdims``
``r_vjp_all(g, x)``                   VJP of the whole-array reduction: ``g``
                                      a scalar or any size-1 array, so it is
                                      also ``r_vjp_all_keepdims`` (not norm)
``expand_reduced(g, x, axis)``        the same function as ``sum_vjp_axis``
====================================  ========================================

Without keepdims the whole-array forward is NumPy's own (``np.sum(x)``...),
which Numba compiles natively.  ``axis`` may be negative; an axis reduction of
a 1-D array gives a scalar, as in NumPy.  Forward results have NumPy's result
dtype on both paths: the Numba forms ask NumPy (``result_dtype``) at typing
time and run the kernel on the input converted to it (the sum of a bool array
counts in int64, the mean or norm of an int array is float64, max and min keep
the dtype).  VJP results are new arrays of ``x``'s dtype; a cotangent of the
wrong shape raises ValueError.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from . import reduction_kernels as rk
from .axes import (
    as_3d,
    check_array,
    converted,
    normalize_axis,
    shape_ones,
    shape_with,
    shape_without,
)
from .reduction_kernels import as_2d, py_expand, py_vjp, scalar_of

# --------------------------------------------------------------------------
# Typing-time builders of the Numba implementations, one per kind of form.


def result_dtype(forward, dtype):
    """The dtype NumPy's ``forward`` gives for an input of dtype ``dtype``
    (a NumPy dtype or a Numba type), asked of NumPy on a one-element sample.

    >>> result_dtype(np.sum, np.dtype(bool)), result_dtype(np.mean, types.int32)
    (dtype('int64'), dtype('float64'))
    >>> result_dtype(np.max, types.int32), result_dtype(np.sum, np.dtype(np.float32))
    (dtype('int32'), dtype('float32'))
    """
    if isinstance(dtype, types.Type):
        dtype = as_dtype(dtype)
    return np.asarray(forward(np.ones((1, 1), dtype), axis=0)).dtype


def _forward_axis_impl(forward, kernel, keepdims, x):
    check_array(x, "x")
    scalar = result_dtype(forward, x.dtype).type  # the kernel computes in NumPy's dtype
    if keepdims:
        def impl(x, axis):
            ax = normalize_axis(axis, x.ndim)
            x3 = converted(as_3d(x, ax), scalar)
            return kernel(x3).reshape(shape_with(x.shape, ax, 1))
    elif x.ndim == 1:
        def impl(x, axis):
            normalize_axis(axis, 1)
            return kernel(converted(as_3d(x, 0), scalar))[0, 0]
    else:
        def impl(x, axis):
            ax = normalize_axis(axis, x.ndim)
            x3 = converted(as_3d(x, ax), scalar)
            return kernel(x3).reshape(shape_without(x.shape, ax))
    return impl


def _forward_all_impl(forward, kernel, keepdims, x):
    check_array(x, "x")
    scalar = result_dtype(forward, x.dtype).type
    if keepdims:
        def impl(x):
            x3 = converted(np.ascontiguousarray(x).reshape((1, x.size, 1)), scalar)
            return kernel(x3).reshape(shape_ones(x.shape))
    else:
        def impl(x):
            x3 = converted(np.ascontiguousarray(x).reshape((1, x.size, 1)), scalar)
            return kernel(x3)[0, 0]
    return impl


def _vjp_axis_impl(kernel, keepdims, g, x):
    check_array(x, "x")
    want = x.ndim if keepdims else x.ndim - 1
    if isinstance(g, types.Array) and g.ndim != want:
        raise TypingError(f"array_runtime: cotangent must have ndim {want}, got {g}")
    if not isinstance(g, types.Array) and want != 0:
        raise TypingError(f"array_runtime: cotangent must be an array, got {g}")
    check_shape = isinstance(g, types.Array) and want > 0

    def impl(g, x, axis):
        ax = normalize_axis(axis, x.ndim)
        if check_shape:
            expected = shape_with(x.shape, ax, 1) if keepdims else shape_without(x.shape, ax)
            if g.shape != expected:
                raise ValueError("cotangent shape does not match the reduction's result")
        x3 = as_3d(x, ax)
        g2 = as_2d(g, x3.shape[0], x3.shape[2])
        return kernel(g2, x3).reshape(x.shape)

    return impl


def _vjp_all_impl(kernel, g, x):
    check_array(x, "x")

    def impl(g, x):
        x3 = np.ascontiguousarray(x).reshape((1, x.size, 1))
        g2 = np.full((1, 1), scalar_of(g))
        return kernel(g2, x3).reshape(x.shape)

    return impl


# --------------------------------------------------------------------------
# The table.


def _norm(x, axis=None, **keepdims):
    """``np.linalg.norm`` (2-norm) along ``axis``, or of all of ``x`` for any ndim;
    integers and bools are converted to float64 first, as NumPy does."""
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.inexact):
        x = x.astype(np.float64)
    return np.sqrt(np.sum(x * x, axis=axis, **keepdims))


@dataclass(frozen=True)
class Reduction:
    """One reduction; ``_install`` makes its public functions from these fields."""

    name: str         # the public names' prefix: sum -> sum_axis, sum_vjp_all, ...
    numpy: str        # the NumPy call it computes, for the docstrings
    forward: Any      # NumPy forward: forward(x, axis=..., keepdims=...)
    kernel: Any       # Numba forward kernel on (outer, n, inner)
    vjp_kernel: Any   # Numba VJP kernel
    vjp_rule: Any     # NumPy VJP rule, rounding like vjp_kernel
    whole: str        # whole-array forward form: "all_keepdims", or "all" (norm)
    says: str         # appended to the forward's docstring
    vjp_says: str     # what the VJP computes, for its docstring
    examples: str     # doctests; each goes to the docstring of the function it calls


REDUCTIONS = (
    Reduction(
        "sum", "np.sum", np.sum, rk.k_sum, rk.v_sum, rk.py_vjp_sum, whole="all_keepdims",
        says="", vjp_says="``g`` repeated along the reduced axes",
        examples="""
        >>> sum_axis(np.ones((2, 3)), -1)
        array([3., 3.])
        >>> sum_axis_keepdims(np.ones((2, 3)), 0)
        array([[2., 2., 2.]])
        >>> sum_all_keepdims(np.ones((2, 3)))
        array([[6.]])
        >>> sum_vjp_axis(np.array([1.0, 2.0]), np.zeros((2, 3)), 1)
        array([[1., 1., 1.], [2., 2., 2.]])
        >>> sum_vjp_axis_keepdims(np.array([[1.0], [2.0]]), np.zeros((2, 2)), 1)
        array([[1., 1.], [2., 2.]])
        >>> sum_vjp_all(2.0, np.zeros(3))
        array([2., 2., 2.])
        """),
    Reduction(
        "mean", "np.mean", np.mean, rk.k_mean, rk.v_mean, rk.py_vjp_mean, whole="all_keepdims",
        says=" (NaN where the axis is empty)",
        vjp_says="``g / n`` repeated along the reduced axes (``n`` elements reduced)",
        examples="""
        >>> mean_axis(np.array([[1.0, 3.0]]), 1)
        array([2.])
        >>> mean_axis_keepdims(np.array([[1.0, 3.0]]), 1)
        array([[2.]])
        >>> mean_all_keepdims(np.array([1.0, 3.0]))
        array([2.])
        >>> mean_vjp_axis(np.array([4.0]), np.zeros((1, 2)), 1)
        array([[2., 2.]])
        >>> mean_vjp_axis_keepdims(np.array([[4.0]]), np.zeros((1, 2)), 1)
        array([[2., 2.]])
        >>> mean_vjp_all(4.0, np.zeros(2))
        array([2., 2.])
        """),
    Reduction(
        "prod", "np.prod", np.prod, rk.k_prod, rk.v_prod, rk.py_vjp_prod, whole="all_keepdims",
        says="",
        vjp_says="``g`` times the product of the *other* elements, computed with prefix and"
                 " suffix products (never ``prod / x``), so it is exact where ``x`` has zeros",
        examples="""
        >>> prod_axis(np.array([[2.0, 3.0]]), 1)
        array([6.])
        >>> prod_axis_keepdims(np.array([[2.0, 3.0]]), 1)
        array([[6.]])
        >>> prod_all_keepdims(np.array([[2.0, 3.0]]))
        array([[6.]])
        >>> prod_vjp_axis(np.array([1.0]), np.array([[0.0, 3.0, 2.0]]), 1)
        array([[6., 0., 0.]])
        >>> prod_vjp_axis_keepdims(np.array([[1.0]]), np.array([[2.0, 3.0]]), 1)
        array([[3., 2.]])
        >>> prod_vjp_all(1.0, np.array([0.0, 0.0, 2.0]))
        array([0., 0., 0.])
        """),
    Reduction(
        "max", "np.max", np.max, rk.k_max, rk.v_max, rk.py_vjp_max, whole="all_keepdims",
        says=" (NaN propagates; an empty axis or array raises ValueError)",
        vjp_says="``g`` goes to the positions equal to the max; ties split ``g`` equally"
                 " (each of k maxima gets ``g / k``); where the max is NaN, ``g`` goes to"
                 " the NaN positions",
        examples="""
        >>> max_axis(np.array([[1.0, 5.0], [4.0, 2.0]]), 0)
        array([4., 5.])
        >>> max_axis_keepdims(np.array([[1.0, 5.0], [4.0, 2.0]]), 1)
        array([[5.], [4.]])
        >>> max_all_keepdims(np.array([[2.0, 3.0]]))
        array([[3.]])
        >>> max_vjp_axis(np.array([6.0]), np.array([[5.0, 1.0, 5.0]]), 1)
        array([[3., 0., 3.]])
        >>> max_vjp_axis_keepdims(np.array([[1.0]]), np.array([[5.0, 1.0]]), 1)
        array([[1., 0.]])
        >>> max_vjp_all(1.0, np.array([2.0, 2.0, 1.0]))
        array([0.5, 0.5, 0. ])
        """),
    Reduction(
        "min", "np.min", np.min, rk.k_min, rk.v_min, rk.py_vjp_min, whole="all_keepdims",
        says=" (NaN propagates; an empty axis or array raises ValueError)",
        vjp_says="``g`` goes to the positions equal to the min; ties split ``g`` equally;"
                 " where the min is NaN, ``g`` goes to the NaN positions",
        examples="""
        >>> min_axis(np.array([[1.0, 5.0], [4.0, 2.0]]), 0)
        array([1., 2.])
        >>> min_axis_keepdims(np.array([[1.0, 5.0], [4.0, 2.0]]), 1)
        array([[1.], [2.]])
        >>> min_all_keepdims(np.array([[2.0, 3.0]]))
        array([[2.]])
        >>> min_vjp_axis(np.array([1.0]), np.array([[5.0, 1.0]]), 1)
        array([[0., 1.]])
        >>> min_vjp_axis_keepdims(np.array([[1.0]]), np.array([[5.0, 1.0]]), 1)
        array([[0., 1.]])
        >>> min_vjp_all(1.0, np.array([1.0, 2.0]))
        array([1., 0.])
        """),
    Reduction(
        "norm", "np.linalg.norm", _norm, rk.k_norm, rk.v_norm, rk.py_vjp_norm, whole="all",
        says=": sqrt of the sum of squares",
        vjp_says="``x * g / norm``, 0 where the norm is 0",
        examples="""
        >>> norm_axis(np.array([[3.0, 4.0]]), 1)
        array([5.])
        >>> norm_axis_keepdims(np.array([[3.0, 4.0]]), 1)
        array([[5.]])
        >>> float(norm_all(np.full((2, 2, 2), 0.5)))
        1.4142135623730951
        >>> norm_vjp_axis(np.array([1.0]), np.array([[3.0, 4.0]]), 1)
        array([[0.6, 0.8]])
        >>> norm_vjp_axis_keepdims(np.array([[1.0]]), np.array([[3.0, 4.0]]), 1)
        array([[0.6, 0.8]])
        >>> norm_vjp_all(1.0, np.array([3.0, 4.0]))
        array([0.6, 0.8])
        """),
)

# Each form: its docstring's first line; {np} is Reduction.numpy, {says} and
# {vjp} its texts. ``_make`` builds the functions for a form.
_FORMS = {
    "axis": "``{np}(x, axis=axis)``{says}.",
    "axis_keepdims": "``{np}(x, axis=axis, keepdims=True)``{says}.",
    "all_keepdims": "``{np}(x, keepdims=True)``: shape ``(1,) * x.ndim``{says}.",
    "all": "``{np}(x)`` for any ndim{says}.",
    "vjp_axis": "VJP of ``{np}(x, axis=axis)``: {vjp}.",
    "vjp_axis_keepdims": "VJP of ``{np}(x, axis=axis, keepdims=True)``: {vjp}.",
    "vjp_all": "VJP of ``{np}(x)``: {vjp}.\n\n``g`` is a scalar or any size-1 array{alias}.",
}


def _examples(row):
    """``{public name: doctest text}`` from ``row.examples``: each ``>>>`` line and
    the output lines after it go to the function of this row that it calls."""
    found = {}
    name = None
    for line in row.examples.strip().splitlines():
        line = line.strip()
        if line.startswith(">>> "):
            name = re.search(rf"\b({row.name}_\w+)\(", line).group(1)
        found[name] = found.get(name, "") + line + "\n"
    return found


def _make(row, form):
    """The public Python function of ``row`` in ``form`` and its Numba typing function.

    Each call makes new function objects (``overload`` keys on the Python
    function), whose closures hold this row's NumPy code and kernels.
    """
    forward, kernel, vjp_kernel, rule = row.forward, row.kernel, row.vjp_kernel, row.vjp_rule
    keepdims = form.endswith("_keepdims")
    if form.startswith("axis"):
        kw = {"keepdims": True} if keepdims else {}

        def public(x, axis):
            return forward(x, axis=axis, **kw)

        def typer(x, axis):
            return _forward_axis_impl(forward, kernel, keepdims, x)
    elif form.startswith("all"):
        def public(x):
            return forward(x, keepdims=True) if keepdims else forward(np.asarray(x))

        def typer(x):
            return _forward_all_impl(forward, kernel, keepdims, x)
    elif form.startswith("vjp_axis"):
        def public(g, x, axis):
            x = np.asarray(x)
            ax, gk = py_expand(g, x, axis, keepdims)
            return py_vjp(rule, gk, x, ax)

        def typer(g, x, axis):
            return _vjp_axis_impl(vjp_kernel, keepdims, g, x)
    else:  # vjp_all
        def public(g, x):
            x = np.asarray(x)
            return py_vjp(rule, scalar_of(g), x, None)

        def typer(g, x):
            return _vjp_all_impl(vjp_kernel, g, x)
    return public, typer


class Forms(NamedTuple):
    """The public functions of one reduction (``whole`` is ``r_all_keepdims``, or
    ``norm_all``); rules refer to them by reference (``SUM.vjp_axis``)."""

    axis: Any
    axis_keepdims: Any
    whole: Any
    vjp_axis: Any
    vjp_axis_keepdims: Any
    vjp_all: Any


def _install(row) -> Forms:
    """The public functions of ``row``, one per form, each with its name, docstring
    and Numba overload (the module binds each to that name below)."""
    alias = f"{row.name}_vjp_all_keepdims" if row.whole == "all_keepdims" else None
    examples = _examples(row)
    made = []
    for form in ("axis", "axis_keepdims", row.whole, "vjp_axis", "vjp_axis_keepdims", "vjp_all"):
        name = f"{row.name}_{form}"
        public, typer = _make(row, form)
        public.__name__ = public.__qualname__ = name
        text = _FORMS[form].format(
            np=row.numpy, says=row.says, vjp=row.vjp_says,
            alias=f" (so it also serves keepdims=True, as ``{alias}``)" if alias else "")
        doc = "\n\n".join(textwrap.fill(p, 79) for p in text.split("\n\n"))
        if name in examples:
            doc += "\n\n" + examples[name]
        public.__doc__ = doc
        overload(public, strict=False)(typer)
        made.append(public)
    return Forms(*made)


SUM, MEAN, PROD, MAX, MIN, NORM = (_install(row) for row in REDUCTIONS)

sum_axis = SUM.axis
sum_axis_keepdims = SUM.axis_keepdims
sum_all_keepdims = SUM.whole
sum_vjp_axis = SUM.vjp_axis
sum_vjp_axis_keepdims = SUM.vjp_axis_keepdims
sum_vjp_all = sum_vjp_all_keepdims = SUM.vjp_all

mean_axis = MEAN.axis
mean_axis_keepdims = MEAN.axis_keepdims
mean_all_keepdims = MEAN.whole
mean_vjp_axis = MEAN.vjp_axis
mean_vjp_axis_keepdims = MEAN.vjp_axis_keepdims
mean_vjp_all = mean_vjp_all_keepdims = MEAN.vjp_all

prod_axis = PROD.axis
prod_axis_keepdims = PROD.axis_keepdims
prod_all_keepdims = PROD.whole
prod_vjp_axis = PROD.vjp_axis
prod_vjp_axis_keepdims = PROD.vjp_axis_keepdims
prod_vjp_all = prod_vjp_all_keepdims = PROD.vjp_all

max_axis = MAX.axis
max_axis_keepdims = MAX.axis_keepdims
max_all_keepdims = MAX.whole
max_vjp_axis = MAX.vjp_axis
max_vjp_axis_keepdims = MAX.vjp_axis_keepdims
max_vjp_all = max_vjp_all_keepdims = MAX.vjp_all

min_axis = MIN.axis
min_axis_keepdims = MIN.axis_keepdims
min_all_keepdims = MIN.whole
min_vjp_axis = MIN.vjp_axis
min_vjp_axis_keepdims = MIN.vjp_axis_keepdims
min_vjp_all = min_vjp_all_keepdims = MIN.vjp_all

norm_axis = NORM.axis
norm_axis_keepdims = NORM.axis_keepdims
norm_all = NORM.whole
norm_vjp_axis = NORM.vjp_axis
norm_vjp_axis_keepdims = NORM.vjp_axis_keepdims
norm_vjp_all = NORM.vjp_all

#: ``expand_reduced(g, x, axis)``: cotangent ``g`` of ``np.sum(x, axis)`` broadcast
#: back to ``x.shape`` (the same function as ``sum_vjp_axis``).
expand_reduced = sum_vjp_axis

__all__ = [
    "sum_axis", "sum_axis_keepdims", "sum_all_keepdims", "sum_vjp_axis",
    "sum_vjp_axis_keepdims", "sum_vjp_all", "sum_vjp_all_keepdims",
    "mean_axis", "mean_axis_keepdims", "mean_all_keepdims", "mean_vjp_axis",
    "mean_vjp_axis_keepdims", "mean_vjp_all", "mean_vjp_all_keepdims",
    "prod_axis", "prod_axis_keepdims", "prod_all_keepdims", "prod_vjp_axis",
    "prod_vjp_axis_keepdims", "prod_vjp_all", "prod_vjp_all_keepdims",
    "max_axis", "max_axis_keepdims", "max_all_keepdims", "max_vjp_axis",
    "max_vjp_axis_keepdims", "max_vjp_all", "max_vjp_all_keepdims",
    "min_axis", "min_axis_keepdims", "min_all_keepdims", "min_vjp_axis",
    "min_vjp_axis_keepdims", "min_vjp_all", "min_vjp_all_keepdims",
    "norm_axis", "norm_axis_keepdims", "norm_all", "norm_vjp_axis", "norm_vjp_axis_keepdims",
    "norm_vjp_all", "expand_reduced",
]
