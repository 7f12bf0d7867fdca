"""Derivative rules of the ``math`` module and Python's operators, as a table.

Names in a template: the parameters, ``z`` the result, ``g`` its cotangent.
"""

from __future__ import annotations

import math

import gast

from ..kinds import NUMERIC, ArrayKind, broadcast
from .registry import NOT_CONSTANT, Rule, primitive, register_binop, register_unaryop
from .result_kinds import joined, power


# ---- operators (element-wise on arrays, with broadcasting) -------------------
def _true_division(kinds: list, operands: list):
    return broadcast([kinds[0], kinds[1], "float"])


def pow_variant(consts: dict, kinds: dict) -> dict:
    """The slopes of ``a ** b`` by what is known of ``b`` (for ``**``, ``pow``,
    ``math.pow`` and ``np.power``).

    ``b * a ** (b - 1)`` reads ``0.0 ** -1`` at ``a == b == 0`` although
    ``a ** 0`` is constant, so an exponent that may be 0 goes through
    ``rt.pow_slope`` (or, element-wise, never lowers a zero exponent); a
    constant exponent keeps the plain form.  On arrays the exponent's log is
    element-wise (``rt.log_or_zero`` is scalar).
    """
    exponent, on_arrays = consts.get("b"), any(isinstance(k, ArrayKind) for k in kinds.values())
    log = "g * z * np.log(np.where(a > 0, a, 1.0))" if on_arrays else "g * z * rt.log_or_zero(a)"
    if exponent is NOT_CONSTANT:
        if isinstance(kinds.get("b"), ArrayKind):
            return {"adjoints": {"a": "g * b * a ** np.where(b == 0, 1.0, b - 1.0)", "b": log}}
        return {"adjoints": {"a": "g * rt.pow_slope(a, b)", "b": log}}
    if isinstance(exponent, int | float) and not isinstance(exponent, bool) and exponent == 0:
        return {"adjoints": {"a": "0.0 * g", "b": log}}
    return {"adjoints": {"a": "g * b * a ** (b - 1.0)", "b": log}} if on_arrays else {}


register_binop(gast.Add, Rule("+", ("a", "b"), {"a": "g", "b": "g"}, kind=joined,
                              elementwise=True))
register_binop(gast.Sub, Rule("-", ("a", "b"), {"a": "g", "b": "-g"}, kind=joined,
                              elementwise=True))
register_binop(gast.Mult, Rule("*", ("a", "b"), {"a": "g * b", "b": "g * a"}, kind=joined,
                               elementwise=True))
register_binop(gast.Div, Rule("/", ("a", "b"), {"a": "g / b", "b": "-g * z / b"},
                              kind=_true_division, elementwise=True))
register_binop(gast.Pow, Rule("**", ("a", "b"), {"a": "g * b * a ** (b - 1)",
                                                 "b": "g * z * rt.log_or_zero(a)"}, kind=power,
                              elementwise=True, variant=pow_variant))
register_binop(gast.Mod, Rule("%", ("a", "b"), {"a": "g", "b": "-g * ((a - z) / b)"},
                              kind=joined, elementwise=True))
register_binop(gast.FloorDiv, Rule("//", ("a", "b"), {}, kind=joined))
for _bitwise in (gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift):
    register_binop(_bitwise, Rule("bitwise", ("a", "b"), {}, kind=joined))
register_unaryop(gast.Invert, Rule("~", ("a",), {}, kind=joined))
register_unaryop(gast.USub, Rule("-", ("a",), {"a": "-g"}, kind=joined, elementwise=True))
register_unaryop(gast.UAdd, Rule("+", ("a",), {"a": "g"}, kind=joined, elementwise=True))
register_unaryop(gast.Not, Rule("not", ("a",), {}, kind="bool"))

# ---- trigonometric -----------------------------------------------------------
primitive(math.sin, ("x",), {"x": "g * math.cos(x)"})
primitive(math.cos, ("x",), {"x": "-g * math.sin(x)"})
primitive(math.tan, ("x",), {"x": "g * (1.0 + z * z)"})
primitive(math.asin, ("x",), {"x": "g / math.sqrt(1.0 - x * x)"})
primitive(math.acos, ("x",), {"x": "-g / math.sqrt(1.0 - x * x)"})
primitive(math.atan, ("x",), {"x": "g / (1.0 + x * x)"})
primitive(math.atan2, ("y", "x"), {"y": "g * x / (x * x + y * y)",
                                   "x": "-g * y / (x * x + y * y)"})
primitive(math.hypot, ("x", "y"), {"x": "g * x / z", "y": "g * y / z"}, nargs=2)
primitive(math.degrees, ("x",), {"x": "g * (180.0 / math.pi)"})
primitive(math.radians, ("x",), {"x": "g * (math.pi / 180.0)"})

# ---- hyperbolic --------------------------------------------------------------
primitive(math.sinh, ("x",), {"x": "g * math.cosh(x)"})
primitive(math.cosh, ("x",), {"x": "g * math.sinh(x)"})
primitive(math.tanh, ("x",), {"x": "g * (1.0 - z * z)"})
primitive(math.asinh, ("x",), {"x": "g / math.sqrt(x * x + 1.0)"})
primitive(math.acosh, ("x",), {"x": "g / math.sqrt(x * x - 1.0)"})
primitive(math.atanh, ("x",), {"x": "g / (1.0 - x * x)"})

# ---- exponential and logarithmic ---------------------------------------------
primitive(math.exp, ("x",), {"x": "g * z"})
primitive(math.expm1, ("x",), {"x": "g * (z + 1.0)"})
primitive(math.exp2, ("x",), {"x": "g * z * math.log(2.0)"})
primitive(math.log, ("x",), {"x": "g / x"}, nargs=1)
primitive(math.log, ("x", "base"), {"x": "g / (x * math.log(base))",
                                    "base": "-g * z / (base * math.log(base))"},
          forward="math.log(x) / math.log(base)", nargs=2)
primitive(math.log1p, ("x",), {"x": "g / (1.0 + x)"})
primitive(math.log2, ("x",), {"x": "g / (x * math.log(2.0))"})
primitive(math.log10, ("x",), {"x": "g / (x * math.log(10.0))"})
primitive(math.sqrt, ("x",), {"x": "g * 0.5 / z"})
primitive(math.cbrt, ("x",), {"x": "g / (3.0 * z * z)"}, forward="rt.cbrt(x)")
primitive(math.pow, ("a", "b"), {"a": "g * b * a ** (b - 1.0)", "b": "g * z * rt.log_or_zero(a)"},
          variant=pow_variant)

# ---- special functions and the rest ------------------------------------------
primitive(math.erf, ("x",), {"x": "g * 1.1283791670955126 * math.exp(-x * x)"})
primitive(math.erfc, ("x",), {"x": "-g * 1.1283791670955126 * math.exp(-x * x)"})
primitive(math.fabs, ("x",), {"x": "g * rt.sign(x)"})
primitive(math.copysign, ("x", "y"), {"x": "g * rt.sign(x) * math.copysign(1.0, y)"})
primitive(math.fmod, ("x", "y"), {"x": "g", "y": "-g * ((x - z) / y)"},
          forward="rt.fmod(x, y)")


def _fsum_variant(consts: dict, kinds: dict) -> dict:
    """The exact sum's derivative is 1 for every term."""
    seq = kinds.get("seq")
    if isinstance(seq, tuple) and all(k in NUMERIC for k in seq):
        return {"adjoints": {"seq": "(" + "g, " * len(seq) + ")"}}
    if isinstance(seq, ArrayKind) and seq.ndim == 1:
        return {"adjoints": {"seq": "rt.sum_vjp_all(g, seq)"}}
    raise ValueError("math.fsum: only a tuple of numbers or a 1-D array is supported here")


primitive(math.fsum, ("seq",), {"seq": "g"}, forward="rt.fsum(seq)", variant=_fsum_variant)


# ---- non-differentiable: piecewise constant or not numbers -------------------
for _fn in (math.floor, math.ceil, math.trunc):
    primitive(_fn, ("x",), kind="int")
for _fn in (math.isnan, math.isinf, math.isfinite):
    primitive(_fn, ("x",), kind="bool")
