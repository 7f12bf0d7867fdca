"""Derivative rules of the ``math`` module and Python's operators, as a table.

Names in a template: the parameters, ``z`` the result, ``g`` its cotangent.
"""

from __future__ import annotations

import math

import gast

from ..kinds import NUMERIC, ArrayKind, broadcast
from .registry import NOT_CONSTANT, Rule, register, register_binop, register_unaryop


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


register_binop(gast.Add, Rule("+", ("a", "b"), {"a": "g", "b": "g"}, kind="join",
                              elementwise=True))
register_binop(gast.Sub, Rule("-", ("a", "b"), {"a": "g", "b": "-g"}, kind="join",
                              elementwise=True))
register_binop(gast.Mult, Rule("*", ("a", "b"), {"a": "g * b", "b": "g * a"}, kind="join",
                               elementwise=True))
register_binop(gast.Div, Rule("/", ("a", "b"), {"a": "g / b", "b": "-g * z / b"},
                              kind=_true_division, elementwise=True))
register_binop(gast.Pow, Rule("**", ("a", "b"), {"a": "g * b * a ** (b - 1)",
                                                 "b": "g * z * rt.log_or_zero(a)"}, kind="pow",
                              elementwise=True, variant=pow_variant))
register_binop(gast.Mod, Rule("%", ("a", "b"), {"a": "g", "b": "-g * ((a - z) / b)"},
                              kind="join", elementwise=True))
register_binop(gast.FloorDiv, Rule("//", ("a", "b"), {}, kind="join"))
for _bitwise in (gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift):
    register_binop(_bitwise, Rule("bitwise", ("a", "b"), {}, kind="join"))
register_unaryop(gast.Invert, Rule("~", ("a",), {}, kind="join"))
register_unaryop(gast.USub, Rule("-", ("a",), {"a": "-g"}, kind="join", elementwise=True))
register_unaryop(gast.UAdd, Rule("+", ("a",), {"a": "g"}, kind="join", elementwise=True))
register_unaryop(gast.Not, Rule("not", ("a",), {}, kind="bool"))

# ---- trigonometric -----------------------------------------------------------
register(math.sin, Rule("math.sin", ("x",), {"x": "g * math.cos(x)"}))
register(math.cos, Rule("math.cos", ("x",), {"x": "-g * math.sin(x)"}))
register(math.tan, Rule("math.tan", ("x",), {"x": "g * (1.0 + z * z)"}))
register(math.asin, Rule("math.asin", ("x",), {"x": "g / math.sqrt(1.0 - x * x)"}))
register(math.acos, Rule("math.acos", ("x",), {"x": "-g / math.sqrt(1.0 - x * x)"}))
register(math.atan, Rule("math.atan", ("x",), {"x": "g / (1.0 + x * x)"}))
register(math.atan2, Rule("math.atan2", ("y", "x"), {"y": "g * x / (x * x + y * y)",
                                                      "x": "-g * y / (x * x + y * y)"}))
register(math.hypot, Rule("math.hypot", ("x", "y"), {"x": "g * x / z", "y": "g * y / z"}),
         nargs=2)
register(math.degrees, Rule("math.degrees", ("x",), {"x": "g * (180.0 / math.pi)"}))
register(math.radians, Rule("math.radians", ("x",), {"x": "g * (math.pi / 180.0)"}))

# ---- hyperbolic --------------------------------------------------------------
register(math.sinh, Rule("math.sinh", ("x",), {"x": "g * math.cosh(x)"}))
register(math.cosh, Rule("math.cosh", ("x",), {"x": "g * math.sinh(x)"}))
register(math.tanh, Rule("math.tanh", ("x",), {"x": "g * (1.0 - z * z)"}))
register(math.asinh, Rule("math.asinh", ("x",), {"x": "g / math.sqrt(x * x + 1.0)"}))
register(math.acosh, Rule("math.acosh", ("x",), {"x": "g / math.sqrt(x * x - 1.0)"}))
register(math.atanh, Rule("math.atanh", ("x",), {"x": "g / (1.0 - x * x)"}))

# ---- exponential and logarithmic ---------------------------------------------
register(math.exp, Rule("math.exp", ("x",), {"x": "g * z"}))
register(math.expm1, Rule("math.expm1", ("x",), {"x": "g * (z + 1.0)"}))
register(math.exp2, Rule("math.exp2", ("x",), {"x": "g * z * math.log(2.0)"}))
register(math.log, Rule("math.log", ("x",), {"x": "g / x"}), nargs=1)
register(math.log, Rule("math.log", ("x", "base"),
                        {"x": "g / (x * math.log(base))",
                         "base": "-g * z / (base * math.log(base))"},
                        forward="math.log(x) / math.log(base)"), nargs=2)
register(math.log1p, Rule("math.log1p", ("x",), {"x": "g / (1.0 + x)"}))
register(math.log2, Rule("math.log2", ("x",), {"x": "g / (x * math.log(2.0))"}))
register(math.log10, Rule("math.log10", ("x",), {"x": "g / (x * math.log(10.0))"}))
register(math.sqrt, Rule("math.sqrt", ("x",), {"x": "g * 0.5 / z"}))
register(math.cbrt, Rule("math.cbrt", ("x",), {"x": "g / (3.0 * z * z)"},
                         forward="rt.cbrt(x)"))
register(math.pow, Rule("math.pow", ("a", "b"), {"a": "g * b * a ** (b - 1.0)",
                                                 "b": "g * z * rt.log_or_zero(a)"},
                        variant=pow_variant))

# ---- special functions and the rest ------------------------------------------
register(math.erf, Rule("math.erf", ("x",), {"x": "g * 1.1283791670955126 * math.exp(-x * x)"}))
register(math.erfc, Rule("math.erfc", ("x",),
                         {"x": "-g * 1.1283791670955126 * math.exp(-x * x)"}))
register(math.fabs, Rule("math.fabs", ("x",), {"x": "g * rt.sign(x)"}))
register(math.copysign, Rule("math.copysign", ("x", "y"),
                             {"x": "g * rt.sign(x) * math.copysign(1.0, y)"}))
register(math.fmod, Rule("math.fmod", ("x", "y"), {"x": "g", "y": "-g * ((x - z) / y)"},
                         forward="rt.fmod(x, y)"))


def _fsum_variant(consts: dict, kinds: dict) -> dict:
    """The exact sum's derivative is 1 for every term."""
    seq = kinds.get("seq")
    if isinstance(seq, tuple) and all(k in NUMERIC for k in seq):
        return {"adjoints": {"seq": "(" + "g, " * len(seq) + ")"}}
    if isinstance(seq, ArrayKind) and seq.ndim == 1:
        return {"adjoints": {"seq": "rt.sum_vjp_all(g, seq)"}}
    raise ValueError("math.fsum: only a tuple of numbers or a 1-D array is supported here")


register(math.fsum, Rule("math.fsum", ("seq",), {"seq": "g"}, forward="rt.fsum(seq)",
                         variant=_fsum_variant))


# ---- non-differentiable: piecewise constant or not numbers -------------------
for _fn in (math.floor, math.ceil, math.trunc):
    register(_fn, Rule(f"math.{_fn.__name__}", ("x",), kind="int"))
for _fn in (math.isnan, math.isinf, math.isfinite):
    register(_fn, Rule(f"math.{_fn.__name__}", ("x",), kind="bool"))
