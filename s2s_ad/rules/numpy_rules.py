"""Derivative rules of NumPy, as a table (notation as in math_rules).

``rt`` in a template is :mod:`s2s_ad.runtime` (helpers that also compile
with Numba).  Element-wise rules broadcast: the reverse pass sums each
cotangent back to its operand's shape.  Reductions pick their helpers from the
constant ``axis`` and ``keepdims`` of the call.
"""

from __future__ import annotations

import gast
import numpy as np

from .. import runtime
from ..kinds import NUMERIC, ArrayKind, broadcast
from ..runtime import reductions
from ..runtime.reductions import Forms
from .math_rules import pow_variant
from .registry import NOT_CONSTANT, Rule, primitive, register_binop, rt_name
from .result_kinds import float_array_or_float


# ---- kinds of results -----------------------------------------------------------
def _broadcast(kinds: list, operands: list):
    return broadcast(list(kinds) + ["float"])


def _same(kinds: list, operands: list):
    return kinds[0]


def _ndim(kind) -> int | None:
    return kind.ndim if isinstance(kind, ArrayKind) else 0


def _reduced(kinds: list, operands: list):
    x, axis, keepdims = kinds[0], operands[1], operands[2]
    if not isinstance(x, ArrayKind) or x.ndim is None:
        return "float" if x in NUMERIC else x
    keep = isinstance(keepdims, gast.Constant) and keepdims.value
    if isinstance(axis, gast.Constant) and axis.value is None:
        return x if keep else "float"
    ndim = x.ndim if keep else x.ndim - 1
    return ArrayKind(ndim) if ndim > 0 else "float"


def _matmul(kinds: list, operands: list):
    ndim = {(1, 1): 0, (2, 1): 1, (1, 2): 1, (2, 2): 2}.get((_ndim(kinds[0]), _ndim(kinds[1])))
    if ndim is None:
        return "unknown"
    return ArrayKind(ndim) if ndim else "float"


def _outer(kinds: list, operands: list):
    return ArrayKind(2)


def _reshaped(kinds: list, operands: list):
    shape = kinds[1]
    if isinstance(shape, tuple):
        return ArrayKind(len(shape))
    return ArrayKind(1) if shape == "int" else ArrayKind(None)


def _joined(kinds: list, operands: list):
    parts = kinds[0] if isinstance(kinds[0], tuple) else ()
    ndim = _ndim(parts[0]) if parts else None
    return ArrayKind(ndim)


def _stacked(kinds: list, operands: list):
    parts = kinds[0] if isinstance(kinds[0], tuple) else ()
    ndim = _ndim(parts[0]) if parts else None
    return ArrayKind(None if ndim is None else ndim + 1)


def constructed(kinds: list, operands: list):
    shape = kinds[0]
    if isinstance(shape, tuple):
        return ArrayKind(len(shape))
    return ArrayKind(1) if shape in ("int", "bool") else ArrayKind(None)


def _like(kinds: list, operands: list):
    return kinds[0] if isinstance(kinds[0], ArrayKind) else ArrayKind(0)


def _ints(kinds: list, operands: list):
    return "int"


def _int_array_or_int(kinds: list, operands: list):
    return ArrayKind(_ndim(kinds[0]), floating=False) if isinstance(kinds[0], ArrayKind) \
        else "int"


def _shape(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    return ("int",) * ndim if ndim is not None else "unknown"


# ---- element-wise ---------------------------------------------------------------
_UNARY = {
    np.sin: "g * np.cos(x)", np.cos: "-g * np.sin(x)", np.tan: "g * (1.0 + z * z)",
    np.arcsin: "g / np.sqrt(1.0 - x * x)", np.arccos: "-g / np.sqrt(1.0 - x * x)",
    np.arctan: "g / (1.0 + x * x)", np.sinh: "g * np.cosh(x)", np.cosh: "g * np.sinh(x)",
    np.tanh: "g * (1.0 - z * z)", np.arcsinh: "g / np.sqrt(x * x + 1.0)",
    np.arccosh: "g / np.sqrt(x * x - 1.0)", np.arctanh: "g / (1.0 - x * x)",
    np.exp: "g * z", np.expm1: "g * (z + 1.0)", np.exp2: "g * z * np.log(2.0)",
    np.log: "g / x", np.log1p: "g / (1.0 + x)", np.log2: "g / (x * np.log(2.0))",
    np.log10: "g / (x * np.log(10.0))", np.sqrt: "g * 0.5 / z",
    np.cbrt: "g / (3.0 * z * z)", np.square: "2.0 * g * x", np.abs: "g * np.sign(x)",
    np.fabs: "g * np.sign(x)", np.negative: "-g", np.positive: "g",
    np.reciprocal: "-g * z * z",
}
for _fn, _template in _UNARY.items():
    primitive(_fn, ("x",), {"x": _template}, kind=_broadcast, elementwise=True)

_BINARY = {
    np.add: ("g", "g"), np.subtract: ("g", "-g"), np.multiply: ("g * b", "g * a"),
    np.divide: ("g / b", "-g * z / b"), np.maximum: ("g * (a >= b)", "g * (a < b)"),
    np.minimum: ("g * (a <= b)", "g * (a > b)"),
    np.arctan2: ("g * b / (a * a + b * b)", "-g * a / (a * a + b * b)"),
    np.hypot: ("g * a / z", "g * b / z"),
    np.power: ("g * b * a ** (b - 1.0)", "g * z * np.log(np.where(a > 0, a, 1.0))"),
}
for _fn, (_da, _db) in _BINARY.items():
    primitive(_fn, ("a", "b"), {"a": _da, "b": _db}, kind=_broadcast, elementwise=True,
              variant=pow_variant if _fn is np.power else None)
primitive(np.where, ("c", "a", "b"), {"a": "np.where(c, g, 0.0)", "b": "np.where(c, 0.0, g)"},
          kind=lambda k, o: _broadcast(k[1:], o[1:]), elementwise=True, nargs=3)
primitive(np.clip, ("x", "lo", "hi"), {"x": "g * ((x >= lo) & (x <= hi))", "lo": "g * (x < lo)",
                                       "hi": "g * (x > hi)"},
          kind=_same, elementwise=True, methods=("clip",))



# ---- reductions -------------------------------------------------------------------
def _reduction(name: str, whole: str, helpers: Forms):
    """Variants of a reduction by constant axis / keepdims: its runtime ``helpers``."""
    axis_form, axis_keepdims, all_keepdims, vjp_axis, vjp_axis_keepdims, vjp_all = (
        rt_name(helper) for helper in helpers)

    def variant(consts: dict, kinds: dict) -> dict:
        axis, keep = consts.get("axis"), consts.get("keepdims")
        if axis is NOT_CONSTANT or keep is NOT_CONSTANT:
            raise ValueError(f"np.{name}: axis and keepdims must be constants")
        if isinstance(axis, tuple):
            raise ValueError(f"np.{name}: a tuple of axes is not supported yet")
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
    -inf or a number p > 0; matrix norms (2-D ``x``, no axis): ord None or 'fro'.
    Subgradients: sign(x) (0 at 0) for ord=1; for ord=inf the cotangent goes to the
    entries of largest |x|, split equally among ties, times their sign (-inf: smallest);
    0 where the norm is 0."""
    order, axis, keep = consts.get("ord"), consts.get("axis"), consts.get("keepdims")
    if NOT_CONSTANT in (order, axis, keep):
        raise ValueError("np.linalg.norm: ord, axis and keepdims must be constants")
    if axis is None and keep:
        raise ValueError("np.linalg.norm: keepdims needs an axis")
    ndim = _ndim(kinds.get("x"))
    if order is None:
        return _NORM_2(consts, kinds)
    if isinstance(axis, tuple):
        raise ValueError("np.linalg.norm: a tuple of axes is not supported yet")
    if axis is None and ndim == 2:
        if order == "fro":
            return _NORM_2(consts, kinds)
        raise ValueError(f"np.linalg.norm: the matrix norm ord={order!r} is not supported "
                         "(only None and 'fro')")
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


# ---- products ------------------------------------------------------------------------
# rt.as_float64: cotangents are float64, and Numba's products need one dtype
_PRODUCTS = {(0, 0): ("a * b", "g * b", "g * a"), (1, 1): ("np.dot(a, b)", "g * b", "g * a"),
             (2, 1): ("np.dot(a, b)", "np.outer(g, b)", "np.dot(rt.as_float64(a).T, g)"),
             (1, 2): ("np.dot(a, b)", "np.dot(rt.as_float64(b), g)", "np.outer(a, g)"),
             (2, 2): ("np.dot(a, b)", "np.dot(g, rt.as_float64(b).T)",
                      "np.dot(rt.as_float64(a).T, g)")}


def _product_variant(consts: dict, kinds: dict) -> dict:
    key = (_ndim(kinds["a"]), _ndim(kinds["b"]))
    if key not in _PRODUCTS:
        raise ValueError(f"products of {key[0]}-D and {key[1]}-D arrays are not supported yet")
    forward, da, db = _PRODUCTS[key]
    return {"forward": forward, "adjoints": {"a": da, "b": db}}


primitive(np.dot, ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul, variant=_product_variant,
          methods=("dot",))
primitive(np.matmul, ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul, variant=_product_variant)
register_binop(gast.MatMult, Rule("@", ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul,
                                  variant=_product_variant))
primitive(np.outer, ("a", "b"), {"a": "np.dot(g, b)", "b": "np.dot(a, g)"}, kind=_outer)


# ---- shapes ----------------------------------------------------------------------------
primitive(np.reshape, ("x", "shape"), {"x": "rt.reshape_like(g, x)"},
          forward="rt.reshape(x, shape)", kind=_reshaped, methods=("reshape",), view=True)
primitive(np.transpose, ("x",), {"x": "np.transpose(g)"}, kind=_same, methods=("transpose",),
          view=True, nargs=1)
primitive(np.copy, ("x",), {"x": "g"}, kind=_same, methods=("copy",))
primitive(runtime.write_back, ("dst", "src"), kind="none")
primitive(np.ravel, ("x",), {"x": "rt.reshape_like(g, x)"}, forward="rt.reshape(x, (-1,))",
          kind=lambda k, o: ArrayKind(1), methods=("ravel", "flatten"), view=True)


def _pieces(kinds: dict, piece: str) -> str:
    parts = kinds.get("seq")
    if not isinstance(parts, tuple):
        raise ValueError("concatenate and stack need a tuple of arrays")
    return "(" + ", ".join(piece.format(i=i) for i in range(len(parts))) + ",)"


def _concatenate_variant(consts: dict, kinds: dict) -> dict:
    bounds = "rt.slice_axis(g, axis, {start}, {stop})"
    n = len(kinds["seq"])
    sizes = [f"seq[{i}].shape[axis]" for i in range(n)]
    pieces = []
    for i in range(n):
        start = " + ".join(sizes[:i]) or "0"
        stop = " + ".join(sizes[:i + 1])
        pieces.append(bounds.format(start=start, stop=stop))
    return {"adjoints": {"seq": "(" + ", ".join(pieces) + ",)"}}


primitive(np.concatenate, ("seq", "axis"), {"seq": "g"}, defaults={"axis": 0}, kind=_joined,
          variant=_concatenate_variant)
primitive(np.stack, ("seq", "axis"), {"seq": "g"}, defaults={"axis": 0}, kind=_stacked,
          variant=lambda c, k: {"adjoints": {"seq": _pieces(k, "rt.index_axis(g, axis, {i})")}})


# ---- scans, sorting, gathers, conversions ---------------------------------------------------
def _constant_axis(name: str, consts: dict):
    axis = consts.get("axis")
    if axis is NOT_CONSTANT or not (axis is None or isinstance(axis, int)) or \
            isinstance(axis, bool):
        raise ValueError(f"np.{name}: axis must be a constant int or None")
    return axis


def _cumsum_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a cumulative sum is the reversed cumulative sum of ``g``."""
    if _constant_axis("cumsum", consts) is None:  # x flattened
        return {"adjoints": {"x": "rt.reshape_like(rt.reverse_cumsum(g, 0), x)"}}
    return {"adjoints": {"x": "rt.reverse_cumsum(g, axis)"}}


primitive(np.cumsum, ("x", "axis"), {"x": "g"}, defaults={"axis": None},
          kind=lambda k, o: _like(k, o) if isinstance(o[1], gast.Constant) and
          o[1].value is not None else ArrayKind(1), variant=_cumsum_variant, methods=("cumsum",))


def _sort_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a sort sends ``g`` back through the sorting permutation."""
    axis = _constant_axis("sort", consts)
    if axis is None:  # x flattened
        return {"forward": "np.sort(rt.reshape(x, (-1,)))",
                "adjoints": {"x": "rt.reshape_like(rt.sort_vjp(g, rt.reshape(x, (-1,)), 0), x)"}}
    ndim = _ndim(kinds.get("x"))
    last = axis == -1 or (ndim is not None and axis == ndim - 1)
    forward = "np.sort(x)" if last else "rt.sort_axis(x, axis)"  # Numba sorts the last axis
    return {"forward": forward, "adjoints": {"x": "rt.sort_vjp(g, x, axis)"}}


primitive(np.sort, ("x", "axis"), {"x": "g"}, defaults={"axis": -1},
          kind=lambda k, o: ArrayKind(1) if isinstance(o[1], gast.Constant) and
          o[1].value is None else _like(k, o), variant=_sort_variant)


def _taken(kinds: list, operands: list):
    a, indices, axis = kinds[0], kinds[1], operands[2]
    floating = not isinstance(a, ArrayKind) or a.floating
    picked = len(_grid(indices) or ()) if isinstance(indices, tuple) else _ndim(indices)
    if isinstance(axis, gast.Constant) and axis.value is None:
        ndim = picked
    else:
        ndim = None if None in (picked, _ndim(a)) else _ndim(a) - 1 + picked
    if ndim == 0:
        return "float" if floating else "int"
    return ArrayKind(ndim, floating)


def _take_variant(consts: dict, kinds: dict) -> dict:
    """The VJP of a gather adds ``g`` back at the indices (repeats add up)."""
    indices = kinds.get("indices")
    if isinstance(indices, ArrayKind) and (indices.boolean or indices.floating):
        raise ValueError("np.take: the indices must be integers (for a mask, use a[mask])")
    if _constant_axis("take", consts) is None:
        return {"adjoints": {"a": "rt.take_vjp(g, a, indices)"}}
    return {"forward": "rt.take_axis(a, indices, axis)",
            "adjoints": {"a": "rt.take_vjp_axis(g, a, indices, axis)"}}


primitive(np.take, ("a", "indices", "axis"), {"a": "g"}, defaults={"axis": None}, kind=_taken,
          variant=_take_variant, methods=("take",))
primitive(np.float64, ("x",), {"x": "g"}, kind=float_array_or_float,
          variant=lambda c, k: {"forward": "rt.astype_float(x)"}
          if isinstance(k["x"], ArrayKind) else {}, nargs=1)
# np.float32(v): the value rounded to float32 as NumPy does, then computed on in float64
# (as .astype(np.float32) is)
primitive(np.float32, ("x",), {"x": "g"}, forward="float(np.float32(x))",
          kind=float_array_or_float,
          variant=lambda c, k: {"forward": "rt.astype_float(x.astype(np.float32))"}
          if isinstance(k["x"], ArrayKind) else {}, nargs=1)


def _grid(kind) -> tuple | None:
    """The shape of a tuple of numbers, or of (equally long) tuples of numbers...; or None."""
    if kind in NUMERIC:
        return ()
    if isinstance(kind, tuple) and kind:
        shapes = {_grid(k) for k in kind}
        if len(shapes) == 1 and None not in shapes:
            return (len(kind),) + shapes.pop()
    return None


def _leaves(kind) -> list:
    return [leaf for k in kind for leaf in _leaves(k)] if isinstance(kind, tuple) else [kind]


def _array_kind(kinds: list, operands: list):
    seq = kinds[0]
    if isinstance(seq, ArrayKind):
        return seq
    if seq == ():
        return ArrayKind(1)  # np.array(()) is an empty float64 array
    shape = _grid(seq)
    if shape:
        leaves = _leaves(seq)
        return ArrayKind(len(shape), "float" in leaves, all(k == "bool" for k in leaves))
    if isinstance(seq, tuple) and seq and all(isinstance(k, ArrayKind) for k in seq):
        ndims = {k.ndim for k in seq}
        ndim = ndims.pop() if len(ndims) == 1 else None
        return ArrayKind(None if ndim is None else ndim + 1, any(k.floating for k in seq))
    return "unknown"


def _entries(shape: tuple, index: tuple = ()) -> str:
    """``(g[0, 0], g[0, 1], ...)``: the cotangent of a nested tuple of numbers."""
    if len(index) == len(shape):
        return f"g[{', '.join(map(str, index))}]"
    inner = (_entries(shape, index + (i,)) for i in range(shape[len(index)]))
    return "(" + "".join(part + ", " for part in inner) + ")"


def _array_variant(consts: dict, kinds: dict) -> dict:
    """``np.array`` of a tuple of numbers (or of equally long tuples of numbers), of a
    tuple of equal-shape arrays (stacked along a new first axis), or of an array (a copy)."""
    seq = kinds.get("seq")
    if isinstance(seq, ArrayKind):
        return {"forward": "np.copy(seq)", "adjoints": {"seq": "g"}}
    if seq == ():
        return {"forward": "np.zeros(0)", "adjoints": {"seq": "()"}}
    shape = _grid(seq)
    if shape:
        return {"adjoints": {"seq": _entries(shape)}}
    if isinstance(seq, tuple) and seq and all(isinstance(k, ArrayKind) and k.ndim is not None
                                              for k in seq) and len({k.ndim for k in seq}) == 1:
        return {"forward": "np.stack(seq)",
                "adjoints": {"seq": _pieces(kinds, "rt.index_axis(g, 0, {i})")}}
    raise ValueError("np.array: only a tuple of numbers (or of equally long tuples of numbers),"
                     " a tuple of arrays of one shape, or an array is supported here")


primitive(np.array, ("seq",), {"seq": "g"}, kind=_array_kind, variant=_array_variant, nargs=1)


# ---- non-differentiable and constructors ------------------------------------------------
for _fn in (np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round):
    primitive(_fn, ("x",), kind=_same)
for _fn in (np.isnan, np.isinf, np.isfinite):
    primitive(_fn, ("x",), kind=_int_array_or_int)
for _fn in (np.argmax, np.argmin):
    primitive(_fn, ("x",), kind=_ints, methods=(_fn.__name__,), nargs=1)
primitive(np.argsort, ("x",), kind=_int_array_or_int, nargs=1)
for _fn in (np.zeros, np.ones, np.empty):
    primitive(_fn, ("shape",), kind=constructed, nargs=1)
for _fn in (np.zeros_like, np.ones_like, np.empty_like):
    primitive(_fn, ("x",), kind=_like, nargs=1)
primitive(np.shape, ("x",), kind=_shape)
primitive(np.size, ("x",), kind=_ints, nargs=1)
primitive(np.ndim, ("x",), kind=_ints)
primitive(np.arange, ("n",), kind=lambda k, o: ArrayKind(1, False), nargs=1)

primitive(runtime.astype_int, ("x",), kind=_int_array_or_int)
primitive(runtime.astype_float, ("x",), {"x": "g"}, kind=lambda k, o: ArrayKind(_ndim(k[0])))
primitive(np.eye, ("n",), kind=lambda k, o: ArrayKind(2), nargs=1)
primitive(np.identity, ("n",), kind=lambda k, o: ArrayKind(2), nargs=1)

