"""Derivative rules of Python's builtins, as a table (see math_rules for notation)."""

from __future__ import annotations

import builtins

from ..kinds import ArrayKind, join_all
from .math_rules import pow_variant
from .registry import primitive
from .result_kinds import joined, power

# abs of an array: NumPy's (Numba has no builtin abs of arrays); its Jacobian is diagonal
primitive(builtins.abs, ("x",), {"x": "g * rt.sign(x)"}, kind=joined,
          variant=lambda consts, kinds: {"forward": "np.abs(x)",
                                         "adjoints": {"x": "g * np.sign(x)"},
                                         "tangent": {"x": "g * np.sign(x)"}}
          if isinstance(kinds["x"], ArrayKind) else {})
primitive(builtins.float, ("x",), {"x": "g"})
primitive(builtins.max, ("a", "b"), {"a": "g if a >= b else 0.0", "b": "0.0 if a >= b else g"},
          kind=joined, nargs=2)
primitive(builtins.min, ("a", "b"), {"a": "g if a <= b else 0.0", "b": "0.0 if a <= b else g"},
          kind=joined, nargs=2)


def _builtin_pow_variant(consts: dict, kinds: dict) -> dict:
    """``pow(a, b)`` of ints that may be negative is a float (Python's ``pow(2, -1)`` is
    0.5; Numba's int64 power gives 0): computed by ``rt.int_pow``."""
    parts = pow_variant(consts, kinds)
    exponent = consts.get("b")
    natural = isinstance(exponent, int) and not isinstance(exponent, bool) and exponent >= 0
    if all(kinds.get(p) in ("int", "bool") for p in ("a", "b")) and not natural:
        parts = {**parts, "forward": "rt.int_pow(a, b)"}
    return parts


primitive(builtins.pow, ("a", "b"), {"a": "g * b * a ** (b - 1)", "b": "g * z * rt.log_or_zero(a)"},
          kind=power, variant=_builtin_pow_variant, nargs=2)

# ---- non-differentiable --------------------------------------------------------
primitive(builtins.int, ("x",), kind="int")
primitive(builtins.round, ("x",), kind="int", nargs=1)
primitive(builtins.round, ("x", "ndigits"), kind="float", nargs=2)
primitive(builtins.bool, ("x",), kind="bool")
primitive(builtins.len, ("x",), kind="int")
primitive(builtins.print, (), kind="none")


# ---- builtins over the items of a tuple (or the rows of an array) ------------
def _items(kinds: list, operands: list):
    seq = kinds[0]
    if seq == ():
        return "int"  # sum(()) is 0 (max and min of nothing raise, as in Python)
    if isinstance(seq, tuple):
        return join_all(list(seq)) or "unknown"
    if isinstance(seq, ArrayKind) and seq.ndim:
        return ArrayKind(seq.ndim - 1) if seq.ndim > 1 else "float"
    return "unknown"


def _sum_variant(consts: dict, kinds: dict) -> dict:
    """Numba's ``sum`` adds numbers only: a tuple of arrays is added item by item,
    the rows of an array by ``np.sum(t, axis=0)``."""
    seq = kinds.get("t")
    if seq == ():
        return {"forward": "0"}
    if isinstance(seq, tuple) and any(isinstance(k, ArrayKind) for k in seq):
        return {"forward": "rt.sum_items(t)"}
    if isinstance(seq, ArrayKind) and seq.ndim is not None and seq.ndim >= 2:
        return {"forward": "np.sum(t, axis=0)"}
    return {}


primitive(builtins.sum, ("t",), {"t": "rt.fill_like(t, g)"}, kind=_items, variant=_sum_variant,
          nargs=1)
primitive(builtins.max, ("t",), {"t": "rt.at_max(t, g)"}, kind=_items, nargs=1)
primitive(builtins.min, ("t",), {"t": "rt.at_min(t, g)"}, kind=_items, nargs=1)
