"""Derivative rules of NumPy's element-wise functions, as a table (notation as in
math_rules).

Element-wise rules broadcast: the reverse pass sums each cotangent back to its
operand's shape.  A new unary function is one row of ``_UNARY``: its adjoint in
``x``, ``z`` (the result) and ``g`` (its cotangent).

Conventions where NumPy's function is not differentiable everywhere:

- ``np.mod``/``np.remainder``/``np.fmod`` (as ``%``): slope 1 in ``a`` and
  ``-floor(a / b)`` (``fmod``: ``-trunc(a / b)``) in ``b``, read from the result as
  ``-(a - z) / b``; at a jump, the slope of the piece the result lies on.
- ``np.fmax``/``np.fmin``: the cotangent goes to the operand the result is: to ``a``
  on ties (as ``np.maximum``) and where ``b`` is NaN, to ``b`` where only ``a`` is NaN.
- ``np.copysign(a, b)``: ``sign(a) * copysign(1, b)`` in ``a`` (0 at ``a == 0``);
  ``b`` only chooses a sign: constant.
- ``np.sinc``: its derivative is 0 at 0 (a series near 0, see ``rt.sinc_slope``).
- ``np.nan_to_num``: slope 1 where ``x`` is finite; a NaN/inf entry takes the
  cotangent to the ``nan``/``posinf``/``neginf`` value that replaced it.
- ``np.heaviside``, ``np.imag``, ``np.angle``: piecewise constant, or constant for
  a real input (``imag`` is 0 and ``angle`` is 0 or pi): no derivative (zero).
- ``np.real``, ``np.conj``/``np.conjugate``, ``np.real_if_close`` of a real input
  are the identity (``real`` and ``real_if_close`` return ``x`` itself, as NumPy).
  A complex input is refused where its kind is read.
"""

from __future__ import annotations

import numpy as np

from .. import runtime
from ..kinds import ArrayKind
from .math_rules import pow_variant
from .registry import primitive
from .result_kinds import float_array_or_float, floats, int_array_or_int, joined, same
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
    np.deg2rad: "g * (np.pi / 180.0)", np.radians: "g * (np.pi / 180.0)",
    np.rad2deg: "g * (180.0 / np.pi)", np.degrees: "g * (180.0 / np.pi)",
    np.sinc: "g * rt.sinc_slope(x)", np.conjugate: "g",  # np.conj is np.conjugate
}
for _fn, _template in _UNARY.items():
    primitive(_fn, ("x",), {"x": _template}, kind=floats, elementwise=True)
primitive(np.real, ("x",), {"x": "g"}, kind=same, elementwise=True, view=True)
primitive(np.real_if_close, ("x", "tol"), {"x": "g"}, forward="np.real(x)", kind=same,
          defaults={"tol": 100}, elementwise=True, view=True)
primitive(np.nan_to_num, ("x", "copy", "nan", "posinf", "neginf"),
          {"x": "g * np.isfinite(x)", "nan": "g * np.isnan(x)", "posinf": "g * (x == np.inf)",
           "neginf": "g * (x == -np.inf)"},
          forward="np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)", kind=same,
          defaults={"copy": True, "nan": 0.0, "posinf": None, "neginf": None},
          elementwise=True)

_BINARY = {
    np.add: ("g", "g"), np.subtract: ("g", "-g"), np.multiply: ("g * b", "g * a"),
    np.divide: ("g / b", "-g * z / b"), np.maximum: ("g * (a >= b)", "g * (a < b)"),
    np.minimum: ("g * (a <= b)", "g * (a > b)"),
    np.arctan2: ("g * b / (a * a + b * b)", "-g * a / (a * a + b * b)"),
    np.hypot: ("g * a / z", "g * b / z"),
    np.power: ("g * b * a ** (b - 1.0)", "g * z * np.log(np.where(a > 0, a, 1.0))"),
    np.float_power: ("g * b * a ** (b - 1.0)", "g * z * np.log(np.where(a > 0, a, 1.0))"),
    np.logaddexp: ("g * np.exp(a - z)", "g * np.exp(b - z)"),
    np.logaddexp2: ("g * np.exp2(a - z)", "g * np.exp2(b - z)"),
}
for _fn, (_da, _db) in _BINARY.items():
    primitive(_fn, ("a", "b"), {"a": _da, "b": _db}, kind=floats, elementwise=True,
              variant=pow_variant if _fn in (np.power, np.float_power) else None)
_TO_A = "((a >= b) | np.isnan(b))"  # fmax: the result is a (ties and a NaN b too)
_TO_A_MIN = "((a <= b) | np.isnan(b))"
_FROM_A = {  # joined kinds, as the operators (np.remainder is np.mod)
    np.mod: ("g", "-g * ((a - z) / b)"), np.fmod: ("g", "-g * ((a - z) / b)"),
    np.fmax: (f"g * {_TO_A}", f"g * np.logical_not{_TO_A}"),
    np.fmin: (f"g * {_TO_A_MIN}", f"g * np.logical_not{_TO_A_MIN}"),
}
for _fn, (_da, _db) in _FROM_A.items():
    primitive(_fn, ("a", "b"), {"a": _da, "b": _db}, kind=joined, elementwise=True)
primitive(np.copysign, ("a", "b"), {"a": "g * np.sign(a) * np.copysign(1.0, b)"}, kind=floats,
          elementwise=True)
primitive(np.where, ("c", "a", "b"), {"a": "np.where(c, g, 0.0)", "b": "np.where(c, 0.0, g)"},
          kind=lambda k, o: floats(k[1:], o[1:]), elementwise=True, nargs=3)
primitive(np.clip, ("x", "lo", "hi"), {"x": "g * ((x >= lo) & (x <= hi))", "lo": "g * (x < lo)",
                                       "hi": "g * (x > hi)"},
          kind=same, elementwise=True, methods=("clip",),
          forward="np.minimum(np.maximum(x, lo), hi)")  # Numba's clip keeps x's shape

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
for _fn in (np.imag, np.angle):
    primitive(_fn, ("x",), kind=float_array_or_float)
primitive(np.heaviside, ("x", "h0"), kind=floats, forward="rt.heaviside(x, h0)")
for _fn in (np.isnan, np.isinf, np.isfinite):
    primitive(_fn, ("x",), kind=int_array_or_int)
