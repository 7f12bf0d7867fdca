"""Derivative rules of Python's builtins, as a table (see math_rules for notation)."""

from __future__ import annotations

import builtins

from ..kinds import ArrayKind
from .registry import Rule, register

register(builtins.abs, Rule("abs", ("x",), {"x": "g * rt.sign(x)"}, kind="join",
                            variant=lambda consts, kinds: {"adjoints": {"x": "g * np.sign(x)"}}
                            if isinstance(kinds["x"], ArrayKind) else {}))
register(builtins.float, Rule("float", ("x",), {"x": "g"}))
register(builtins.max, Rule("max", ("a", "b"), {"a": "g if a >= b else 0.0",
                                               "b": "0.0 if a >= b else g"}, kind="join"),
         nargs=2)
register(builtins.min, Rule("min", ("a", "b"), {"a": "g if a <= b else 0.0",
                                               "b": "0.0 if a <= b else g"}, kind="join"),
         nargs=2)
register(builtins.pow, Rule("pow", ("a", "b"), {"a": "g * b * a ** (b - 1)",
                                               "b": "g * z * rt.log_or_zero(a)"}, kind="pow"),
         nargs=2)

# ---- non-differentiable --------------------------------------------------------
register(builtins.int, Rule("int", ("x",), kind="int"))
register(builtins.round, Rule("round", ("x",), kind="int"), nargs=1)
register(builtins.round, Rule("round", ("x", "ndigits"), kind="float"), nargs=2)
register(builtins.bool, Rule("bool", ("x",), kind="bool"))
register(builtins.len, Rule("len", ("x",), kind="int"))
register(builtins.print, Rule("print", (), kind="none"))
