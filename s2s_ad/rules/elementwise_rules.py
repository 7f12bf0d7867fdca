"""Derivative rules of NumPy's element-wise functions, as a table (notation as in
math_rules).

Element-wise rules broadcast: the reverse pass sums each cotangent back to its
operand's shape.  A new unary function is one row of ``_UNARY``: its adjoint in
``x``, ``z`` (the result) and ``g`` (its cotangent).
"""

from __future__ import annotations

import numpy as np

from .. import runtime
from ..kinds import ArrayKind
from .math_rules import pow_variant
from .registry import primitive
from .result_kinds import float_array_or_float, floats, int_array_or_int, same
from .result_kinds import ndim as _ndim

# ---- differentiable: one row per function ---------------------------------------------------
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
    primitive(_fn, ("x",), {"x": _template}, kind=floats, elementwise=True)

_BINARY = {
    np.add: ("g", "g"), np.subtract: ("g", "-g"), np.multiply: ("g * b", "g * a"),
    np.divide: ("g / b", "-g * z / b"), np.maximum: ("g * (a >= b)", "g * (a < b)"),
    np.minimum: ("g * (a <= b)", "g * (a > b)"),
    np.arctan2: ("g * b / (a * a + b * b)", "-g * a / (a * a + b * b)"),
    np.hypot: ("g * a / z", "g * b / z"),
    np.power: ("g * b * a ** (b - 1.0)", "g * z * np.log(np.where(a > 0, a, 1.0))"),
}
for _fn, (_da, _db) in _BINARY.items():
    primitive(_fn, ("a", "b"), {"a": _da, "b": _db}, kind=floats, elementwise=True,
              variant=pow_variant if _fn is np.power else None)
primitive(np.where, ("c", "a", "b"), {"a": "np.where(c, g, 0.0)", "b": "np.where(c, 0.0, g)"},
          kind=lambda k, o: floats(k[1:], o[1:]), elementwise=True, nargs=3)
primitive(np.clip, ("x", "lo", "hi"), {"x": "g * ((x >= lo) & (x <= hi))", "lo": "g * (x < lo)",
                                       "hi": "g * (x > hi)"},
          kind=same, elementwise=True, methods=("clip",))

# ---- conversions ---------------------------------------------------------------------------
primitive(np.float64, ("x",), {"x": "g"}, kind=float_array_or_float,
          variant=lambda c, k: {"forward": "rt.astype_float(x)"}
          if isinstance(k["x"], ArrayKind) else {}, nargs=1)
# np.float32(v): the value rounded to float32 as NumPy does, then computed on in float64
# (as .astype(np.float32) is)
primitive(np.float32, ("x",), {"x": "g"}, forward="float(np.float32(x))",
          kind=float_array_or_float,
          variant=lambda c, k: {"forward": "rt.astype_float(x.astype(np.float32))"}
          if isinstance(k["x"], ArrayKind) else {}, nargs=1)

primitive(runtime.astype_int, ("x",), kind=int_array_or_int)
primitive(runtime.astype_float, ("x",), {"x": "g"}, kind=lambda k, o: ArrayKind(_ndim(k[0])))

# ---- non-differentiable --------------------------------------------------------------------
for _fn in (np.sign, np.floor, np.ceil, np.trunc, np.rint, np.round):
    primitive(_fn, ("x",), kind=same)
for _fn in (np.isnan, np.isinf, np.isfinite):
    primitive(_fn, ("x",), kind=int_array_or_int)
