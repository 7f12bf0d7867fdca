"""Derivative rules of NumPy's reductions, norms, scans and sorting, as a table
(notation as in math_rules).

Reductions pick their forward and VJP from the constant ``axis`` and
``keepdims`` of the call: NumPy's own call where Numba compiles it, else the
runtime helpers of :mod:`s2s_ad.runtime.reductions`, referred to by object
(``reductions.SUM.vjp_axis``), so a misspelt helper fails at import.
"""

from __future__ import annotations

import gast
import numpy as np

from ..kinds import NUMERIC, ArrayKind
from ..runtime import moments, reductions
from ..runtime.reductions import Forms
from .linalg_rules import matrix_norm
from .registry import NOT_CONSTANT, primitive, rt_name
from .result_kinds import int_array_or_int, ints, like
from .result_kinds import ndim as _ndim
from .shape_rules import constant_axis


def _reduced(kinds: list, operands: list):
    """The result of reducing ``x`` along the constant ``axis`` (None: all of it)."""
    x, axis, keepdims = kinds[0], operands[1], operands[2]
    if not isinstance(x, ArrayKind) or x.ndim is None:
        return "float" if x in NUMERIC else x
    keep = isinstance(keepdims, gast.Constant) and keepdims.value
    if isinstance(axis, gast.Constant) and axis.value is None:
        return x if keep else "float"
    count = len(axis.value) if isinstance(axis, gast.Constant) and \
        isinstance(axis.value, tuple) else 1
    ndim = x.ndim if keep else x.ndim - count
    return ArrayKind(ndim) if ndim > 0 else "float"


# ---- reductions -------------------------------------------------------------------
def _reduction(name: str, whole: str, helpers: Forms):
    """Variants of a reduction by constant axis / keepdims: its runtime ``helpers``."""
    axis_form, axis_keepdims, all_keepdims, vjp_axis, vjp_axis_keepdims, vjp_all = (
        rt_name(helper) for helper in helpers)

    def variant(consts: dict, kinds: dict) -> dict:
        axis, keep = consts.get("axis"), consts.get("keepdims")
        if axis is NOT_CONSTANT or keep is NOT_CONSTANT:
            raise ValueError(f"np.{name}: axis and keepdims must be constants (an int, a "
                             "tuple of ints or None, and True or False)")
        if kinds.get("x") in NUMERIC and axis is None and not keep:  # of a number: itself
            return {"forward": "rt.number_as_float(x)", "adjoints": {"x": "g"}}
        if isinstance(axis, tuple):  # along the last axis of the axes moved back and merged
            merged = "rt.axes_last(x, axis)"
            if keep:
                return {"forward": f"rt.axes_kept({axis_keepdims}({merged}, -1), x, axis)",
                        "adjoints": {"x": f"rt.axes_back({vjp_axis_keepdims}("
                                          f"rt.last_kept(g, x, axis), {merged}, -1), x, axis)"}}
            return {"forward": f"{axis_form}({merged}, -1)",
                    "adjoints": {"x": f"rt.axes_back({vjp_axis}(g, {merged}, -1), x, axis)"}}
        if axis is None:
            forward = f"{all_keepdims}(x)" if keep else whole
            return {"forward": forward, "adjoints": {"x": f"{vjp_all}(g, x)"}}
        if keep:
            return {"forward": f"{axis_keepdims}(x, axis)",
                    "adjoints": {"x": f"{vjp_axis_keepdims}(g, x, axis)"}}
        return {"forward": f"{axis_form}(x, axis)", "adjoints": {"x": f"{vjp_axis}(g, x, axis)"}}

    return variant


for _fn, _whole, _helpers, _also in ((np.sum, "np.sum(x)", reductions.SUM, ()),
                                     (np.mean, "np.mean(x)", reductions.MEAN, ()),
                                     (np.prod, "np.prod(x)", reductions.PROD, ()),
                                     (np.max, "np.max(x)", reductions.MAX, (np.amax,)),
                                     (np.min, "np.min(x)", reductions.MIN, (np.amin,))):
    primitive(_fn, ("x", "axis", "keepdims"), {"x": "g"}, kind=_reduced,
              defaults={"axis": None, "keepdims": False},
              variant=_reduction(_fn.__name__, _whole, _helpers), methods=(_fn.__name__,),
              also=_also)


def _abs_reduction(name: str, helpers: Forms, axis, keep: bool) -> dict:
    """``np.<name>(np.abs(x))`` along ``axis``: its templates (the VJP is the reduction's
    times sign(x); max/min give ties equal shares, as JAX does)."""
    if axis is None:
        return {"forward": f"np.{name}(np.abs(x))",
                "adjoints": {"x": f"{rt_name(helpers.vjp_all)}(g, np.abs(x)) * np.sign(x)"}}
    forward, vjp = (helpers.axis_keepdims, helpers.vjp_axis_keepdims) if keep else \
        (helpers.axis, helpers.vjp_axis)
    return {"forward": f"{rt_name(forward)}(np.abs(x), axis)",
            "adjoints": {"x": f"{rt_name(vjp)}(g, np.abs(x), axis) * np.sign(x)"}}


def _p_norm(axis, keep: bool) -> dict:
    """``sum(|x| ** ord) ** (1 / ord)`` along ``axis`` (as NumPy computes it)."""
    if axis is None:
        return {"forward": "np.sum(np.abs(x) ** ord) ** (1.0 / ord)",
                "adjoints": {"x": "g * rt.norm_p_slope(x, z, ord)"}}
    if keep:
        return {"forward": "rt.sum_axis_keepdims(np.abs(x) ** ord, axis) ** (1.0 / ord)",
                "adjoints": {"x": "g * rt.norm_p_slope(x, z, ord)"}}
    return {"forward": "rt.sum_axis(np.abs(x) ** ord, axis) ** (1.0 / ord)",
            "adjoints": {"x": "rt.expand_reduced(g, x, axis) * "
                              "rt.norm_p_slope(x, rt.expand_reduced(z, x, axis), ord)"}}


_NORM_2 = _reduction("linalg.norm", "rt.norm_all(x)", reductions.NORM)  # ord None, 2, 'fro'


def _norm_variant(consts: dict, kinds: dict) -> dict:
    """Vector norms (1-D ``x``, or any ``x`` with an ``axis``): ord None, 2, 1, inf,
    -inf or a number p > 0; matrix norms (2-D ``x``, no axis): ord None, 'fro', 'nuc',
    2, -2, 1, -1, inf, -inf (linalg_rules.matrix_norm).
    Subgradients: sign(x) (0 at 0) for ord=1; for ord=inf the cotangent goes to the
    entries of largest |x|, split equally among ties, times their sign (-inf: smallest);
    0 where the norm is 0."""
    order, axis, keep = consts.get("ord"), consts.get("axis"), consts.get("keepdims")
    if NOT_CONSTANT in (order, axis, keep):
        raise ValueError("np.linalg.norm: ord, axis and keepdims must be constants")
    if axis is None and keep:
        raise ValueError("np.linalg.norm: keepdims needs an axis")
    ndim = _ndim(kinds.get("x"))
    if isinstance(axis, tuple) and len(axis) not in (1, 2):
        raise ValueError(f"np.linalg.norm: axis={axis!r}: NumPy takes one or two axes")
    if order is None:
        return _NORM_2(consts, kinds)
    if isinstance(axis, tuple):  # NumPy: two axes are a matrix norm
        if len(axis) == 2 and order == "fro":
            return _NORM_2(consts, kinds)
        raise ValueError(f"np.linalg.norm: ord={order!r} with axis={axis!r} is not supported "
                         "(a tuple of axes: ord None or 'fro')")
    if axis is None and ndim == 2:
        if order == "fro":
            return _NORM_2(consts, kinds)
        return matrix_norm(order)
    if axis is None and ndim != 1:
        raise ValueError(f"np.linalg.norm: ord={order!r} needs a 1-D or 2-D array, or an axis")
    if isinstance(order, str) or isinstance(order, bool) or not isinstance(order, int | float):
        raise ValueError(f"np.linalg.norm: ord={order!r} is not a vector norm")
    if order == 2:
        return _NORM_2(consts, kinds)
    if order == 1:
        return _abs_reduction("sum", reductions.SUM, axis, keep)
    if order == np.inf:
        return _abs_reduction("max", reductions.MAX, axis, keep)
    if order == -np.inf:
        return _abs_reduction("min", reductions.MIN, axis, keep)
    if not order > 0:
        raise ValueError(f"np.linalg.norm: ord={order!r} is not supported (a number > 0, "
                         "or inf or -inf)")
    return _p_norm(axis, keep)


primitive(np.linalg.norm, ("x", "ord", "axis", "keepdims"), {"x": "g"},
          defaults={"ord": None, "axis": None, "keepdims": False},
          kind=lambda k, o: _reduced([k[0]], [o[0], o[2], o[3]]), variant=_norm_variant)


# ---- scans and sorting ---------------------------------------------------------------------
def _cumsum_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a cumulative sum is the reversed cumulative sum of ``g``."""
    if constant_axis("cumsum", consts) is None:  # x flattened
        return {"adjoints": {"x": "rt.reshape_like(rt.reverse_cumsum(g, 0), x)"}}
    return {"adjoints": {"x": "rt.reverse_cumsum(g, axis)"}}


primitive(np.cumsum, ("x", "axis"), {"x": "g"}, defaults={"axis": None},
          kind=lambda k, o: like(k, o) if isinstance(o[1], gast.Constant) and
          o[1].value is not None else ArrayKind(1), variant=_cumsum_variant, methods=("cumsum",))


def _sort_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a sort sends ``g`` back through the sorting permutation."""
    axis = constant_axis("sort", consts)
    if axis is None:  # x flattened
        return {"forward": "np.sort(rt.reshape(x, (-1,)))",
                "adjoints": {"x": "rt.reshape_like(rt.sort_vjp(g, rt.reshape(x, (-1,)), 0), x)"},
                "tangent": {"x": "rt.sort_tangent(rt.reshape(g, (-1,)), rt.reshape(x, (-1,)), 0)"}}
    ndim = _ndim(kinds.get("x"))
    last = axis == -1 or (ndim is not None and axis == ndim - 1)
    forward = "np.sort(x)" if last else "rt.sort_axis(x, axis)"  # Numba sorts the last axis
    return {"forward": forward, "adjoints": {"x": "rt.sort_vjp(g, x, axis)"},
            "tangent": {"x": "rt.sort_tangent(g, x, axis)"}}


primitive(np.sort, ("x", "axis"), {"x": "g"}, defaults={"axis": -1},
          kind=lambda k, o: ArrayKind(1) if isinstance(o[1], gast.Constant) and
          o[1].value is None else like(k, o), variant=_sort_variant)


# ---- positions (not differentiable) --------------------------------------------------------
for _fn in (np.argmax, np.argmin):
    primitive(_fn, ("x",), kind=ints, methods=(_fn.__name__,), nargs=1)
primitive(np.argsort, ("x",), kind=int_array_or_int, nargs=1)


# ---- issue 23: variance, trace, cumulative products, differences ---------------------------
def reduced_kind(axis_at: int, keepdims_at: int):
    """The result kind of a reduction whose ``axis`` and ``keepdims`` are the operands at
    these positions (``np.var``, ``scipy.special.logsumexp``)."""
    return lambda k, o: _reduced([k[0]], [o[0], o[axis_at], o[keepdims_at]])


def reduced_axes(name: str, axis, x) -> tuple:
    """The constant ``axis`` (an int, a tuple or None: all) of a reduction of an array of
    kind ``x``, as a tuple of axes (``rt.axes_last`` reads it)."""
    if not isinstance(x, ArrayKind) or x.ndim is None:
        raise ValueError(f"{name}: the number of dimensions of x must be known")
    if axis is None:
        return tuple(range(x.ndim))
    if isinstance(axis, bool) or not isinstance(axis, int | tuple):
        raise ValueError(f"{name}: axis must be an int, a tuple of ints or None")
    return axis if isinstance(axis, tuple) else (axis,)


def _moment_variant(name: str, forms: tuple):
    """``np.var``/``np.std`` over any constant axis (an int, a tuple or None): along the
    last axis of the reduced axes moved back and merged (``rt.axes_last``); ``ddof``
    may be a run-time value.  The std of equal values (0) has the subgradient 0."""
    helper, vjp = (rt_name(form) for form in forms)

    def variant(consts: dict, kinds: dict) -> dict:
        axis, keep = consts.get("axis"), consts.get("keepdims")
        if axis is NOT_CONSTANT or keep is NOT_CONSTANT:
            raise ValueError(f"np.{name}: axis and keepdims must be constants (an int, a "
                             "tuple of ints or None, and True or False)")
        if consts.get("dtype") is not None or consts.get("out") is not None:
            raise ValueError(f"np.{name}: dtype= and out= are not supported: convert the "
                             "input with .astype(...) and use the returned value")
        if kinds.get("x") in NUMERIC:  # the variance of one number is 0
            return {"forward": "0.0 * x", "adjoints": {"x": "0.0 * g"}}
        axes = reduced_axes(f"np.{name}", axis, kinds.get("x"))
        merged = f"rt.axes_last(x, {axes!r})"
        back = f"rt.axes_back({vjp}(g, {merged}, ddof), x, {axes!r})"
        forward = f"{helper}({merged}, ddof)"
        if keep:
            forward = f"rt.axes_kept({forward}, x, {axes!r})"
        return {"forward": forward, "adjoints": {"x": back}}

    return variant


for _fn, _forms in ((np.var, (moments.var_last, moments.var_last_vjp)),
                   (np.std, (moments.std_last, moments.std_last_vjp))):
    primitive(_fn, ("x", "axis", "dtype", "out", "ddof", "keepdims"), {"x": "g"},
              defaults={"axis": None, "dtype": None, "out": None, "ddof": 0, "keepdims": False},
              kind=reduced_kind(1, 5), variant=_moment_variant(_fn.__name__, _forms),
              methods=(_fn.__name__,))


def _array_at_least(name: str, ndim: int):
    """A variant refusing ``x`` of fewer than ``ndim`` dimensions (as NumPy does)."""
    def variant(consts: dict, kinds: dict) -> dict:
        if _ndim(kinds.get("x")) is not None and _ndim(kinds.get("x")) < ndim:
            raise ValueError(f"np.{name}: x must have at least {ndim} dimension(s)")
        return {}
    return variant


def _traced(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    if ndim is None or ndim < 2:
        return "unknown"
    return ArrayKind(ndim - 2) if ndim > 2 else "float"


primitive(np.trace, ("x", "offset", "axis1", "axis2"),
          {"x": "rt.trace_vjp(g, x, offset, axis1, axis2)"},
          forward="rt.trace_axes(x, offset, axis1, axis2)",
          defaults={"offset": 0, "axis1": 0, "axis2": 1}, kind=_traced,
          variant=_array_at_least("trace", 2), methods=("trace",))


def _cumprod_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a cumulative product (exact at zeros: ``rt.cumprod_vjp``)."""
    if constant_axis("cumprod", consts) is None:  # x flattened, as NumPy
        return {"adjoints": {"x": "rt.reshape_like(rt.cumprod_vjp(g, rt.reshape(x, (-1,)), 0), "
                                  "x)"},
                "tangent": {"x": "rt.cumprod_tangent(rt.reshape(g, (-1,)), rt.reshape(x, (-1,)), "
                                 "0)"}}
    return {"forward": "rt.cumprod_axis(x, axis)", "adjoints": {"x": "rt.cumprod_vjp(g, x, axis)"},
            "tangent": {"x": "rt.cumprod_tangent(g, x, axis)"}}


primitive(np.cumprod, ("x", "axis"), {"x": "g"}, defaults={"axis": None},
          kind=lambda k, o: like(k, o) if isinstance(o[1], gast.Constant) and
          o[1].value is not None else ArrayKind(1), variant=_cumprod_variant,
          methods=("cumprod",))
primitive(np.diff, ("x", "n", "axis"), {"x": "rt.diff_vjp(g, x, n, axis)"},
          forward="rt.diff_axis(x, n, axis)", defaults={"n": 1, "axis": -1}, kind=like,
          variant=_array_at_least("diff", 1))
