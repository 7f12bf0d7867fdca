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
from .math_rules import pow_variant
from .registry import NOT_CONSTANT, Rule, register, register_binop


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


def _constructed(kinds: list, operands: list):
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
    register(_fn, Rule(f"np.{_fn.__name__}", ("x",), {"x": _template}, kind=_broadcast,
                       elementwise=True))

_BINARY = {
    np.add: ("g", "g"), np.subtract: ("g", "-g"), np.multiply: ("g * b", "g * a"),
    np.divide: ("g / b", "-g * z / b"), np.maximum: ("g * (a >= b)", "g * (a < b)"),
    np.minimum: ("g * (a <= b)", "g * (a > b)"),
    np.arctan2: ("g * b / (a * a + b * b)", "-g * a / (a * a + b * b)"),
    np.hypot: ("g * a / z", "g * b / z"),
    np.power: ("g * b * a ** (b - 1.0)", "g * z * np.log(np.where(a > 0, a, 1.0))"),
}
for _fn, (_da, _db) in _BINARY.items():
    register(_fn, Rule(f"np.{_fn.__name__}", ("a", "b"), {"a": _da, "b": _db},
                       kind=_broadcast, elementwise=True,
                       variant=pow_variant if _fn is np.power else None))
register(np.where, Rule("np.where", ("c", "a", "b"),
                        {"a": "np.where(c, g, 0.0)", "b": "np.where(c, 0.0, g)"},
                        kind=lambda k, o: _broadcast(k[1:], o[1:]), elementwise=True), nargs=3)
register(np.clip, Rule("np.clip", ("x", "lo", "hi"),
                       {"x": "g * ((x >= lo) & (x <= hi))", "lo": "g * (x < lo)",
                        "hi": "g * (x > hi)"}, kind=_same, elementwise=True))



# ---- reductions -------------------------------------------------------------------
def _reduction(name: str, whole: str):
    """Variants of a reduction by constant axis / keepdims, with their VJP helpers."""

    def variant(consts: dict, kinds: dict) -> dict:
        axis, keep = consts.get("axis"), consts.get("keepdims")
        if axis is NOT_CONSTANT or keep is NOT_CONSTANT:
            raise ValueError(f"np.{name}: axis and keepdims must be constants")
        if isinstance(axis, tuple):
            raise ValueError(f"np.{name}: a tuple of axes is not supported yet")
        if axis is None:
            forward = f"rt.{name}_all_keepdims(x)" if keep else whole
            return {"forward": forward, "adjoints": {"x": f"rt.{name}_vjp_all(g, x)"}}
        suffix = "_keepdims" if keep else ""
        return {"forward": f"rt.{name}_axis{suffix}(x, axis)",
                "adjoints": {"x": f"rt.{name}_vjp_axis{suffix}(g, x, axis)"}}

    return variant


for _fn, _name, _whole in ((np.sum, "sum", "np.sum(x)"), (np.mean, "mean", "np.mean(x)"),
                           (np.prod, "prod", "np.prod(x)"), (np.max, "max", "np.max(x)"),
                           (np.min, "min", "np.min(x)"), (np.amax, "max", "np.max(x)"),
                           (np.amin, "min", "np.min(x)")):
    register(_fn, Rule(f"np.{_name}", ("x", "axis", "keepdims"), {"x": "g"}, kind=_reduced,
                       defaults={"axis": None, "keepdims": False},
                       variant=_reduction(_name, _whole)))
def _norm_variant(consts: dict, kinds: dict) -> dict:
    if consts.get("ord") is not None:
        raise ValueError("np.linalg.norm: only the 2-norm (ord=None) is supported")
    if consts.get("axis") is None and consts.get("keepdims"):
        raise ValueError("np.linalg.norm: keepdims needs an axis")
    return _reduction("norm", "rt.norm_all(x)")(consts, kinds)


register(np.linalg.norm, Rule("np.linalg.norm", ("x", "ord", "axis", "keepdims"), {"x": "g"},
                              defaults={"ord": None, "axis": None, "keepdims": False},
                              kind=lambda k, o: _reduced([k[0]], [o[0], o[2], o[3]]),
                              variant=_norm_variant))


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


for _fn in (np.dot, np.matmul):
    register(_fn, Rule(f"np.{_fn.__name__}", ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul,
                       variant=_product_variant))
register_binop(gast.MatMult, Rule("@", ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul,
                                  variant=_product_variant))
register(np.outer, Rule("np.outer", ("a", "b"), {"a": "np.dot(g, b)", "b": "np.dot(a, g)"},
                        kind=_outer))


# ---- shapes ----------------------------------------------------------------------------
register(np.reshape, Rule("np.reshape", ("x", "shape"), {"x": "rt.reshape_like(g, x)"},
                          forward="rt.reshape(x, shape)", kind=_reshaped))
register(np.transpose, Rule("np.transpose", ("x",), {"x": "np.transpose(g)"}, kind=_same),
         nargs=1)
register(np.copy, Rule("np.copy", ("x",), {"x": "g"}, kind=_same))
register(runtime.write_back, Rule("rt.write_back", ("dst", "src"), kind="none"))
register(np.ravel, Rule("np.ravel", ("x",), {"x": "rt.reshape_like(g, x)"},
                        forward="rt.reshape(x, (-1,))", kind=lambda k, o: ArrayKind(1)))


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


register(np.concatenate, Rule("np.concatenate", ("seq", "axis"), {"seq": "g"},
                              defaults={"axis": 0}, kind=_joined, variant=_concatenate_variant))
register(np.stack, Rule("np.stack", ("seq", "axis"), {"seq": "g"}, defaults={"axis": 0},
                        kind=_stacked,
                        variant=lambda c, k: {"adjoints": {"seq": _pieces(
                            k, "rt.index_axis(g, axis, {i})")}}))


# ---- linear algebra --------------------------------------------------------------------
def _solve_variant(consts: dict, kinds: dict) -> dict:
    if _ndim(kinds["b"]) == 1:
        da = "-np.outer(np.linalg.solve(A.T, g), z)"
    else:
        da = "-np.dot(np.linalg.solve(A.T, g), z.T)"
    return {"adjoints": {"A": da, "b": "np.linalg.solve(A.T, g)"}}


register(np.linalg.solve, Rule("np.linalg.solve", ("A", "b"), {"A": "g", "b": "g"},
                               kind=lambda k, o: k[1], variant=_solve_variant))
register(np.linalg.inv, Rule("np.linalg.inv", ("A",), {"A": "-np.dot(np.dot(z.T, g), z.T)"},
                             kind=_same))
register(np.linalg.det, Rule("np.linalg.det", ("A",), {"A": "g * z * np.linalg.inv(A).T"},
                             kind=lambda k, o: "float"))

# ---- non-differentiable and constructors ------------------------------------------------
for _fn in (np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round):
    register(_fn, Rule(f"np.{_fn.__name__}", ("x",), kind=_same))
for _fn in (np.isnan, np.isinf, np.isfinite):
    register(_fn, Rule(f"np.{_fn.__name__}", ("x",), kind=_int_array_or_int))
for _fn in (np.argmax, np.argmin):
    register(_fn, Rule(f"np.{_fn.__name__}", ("x",), kind=_ints), nargs=1)
register(np.argsort, Rule("np.argsort", ("x",), kind=_int_array_or_int), nargs=1)
for _fn in (np.zeros, np.ones, np.empty):
    register(_fn, Rule(f"np.{_fn.__name__}", ("shape",), kind=_constructed), nargs=1)
for _fn in (np.zeros_like, np.ones_like, np.empty_like):
    register(_fn, Rule(f"np.{_fn.__name__}", ("x",), kind=_like), nargs=1)
register(np.shape, Rule("np.shape", ("x",), kind=_shape))
register(np.size, Rule("np.size", ("x",), kind=_ints), nargs=1)
register(np.ndim, Rule("np.ndim", ("x",), kind=_ints))
register(np.arange, Rule("np.arange", ("n",), kind=lambda k, o: ArrayKind(1, False)), nargs=1)
register(runtime.astype_int, Rule("rt.astype_int", ("x",), kind=_int_array_or_int))
register(runtime.astype_float, Rule("rt.astype_float", ("x",), {"x": "g"},
                                    kind=lambda k, o: ArrayKind(_ndim(k[0]))))
register(np.eye, Rule("np.eye", ("n",), kind=lambda k, o: ArrayKind(2)), nargs=1)
register(np.identity, Rule("np.identity", ("n",), kind=lambda k, o: ArrayKind(2)), nargs=1)
register(np.full, Rule("np.full", ("shape", "value"), kind=_constructed), nargs=2)
register(np.linspace, Rule("np.linspace", ("start", "stop", "num"),
                           kind=lambda k, o: ArrayKind(1)), nargs=3)
