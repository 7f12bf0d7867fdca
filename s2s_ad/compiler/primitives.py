"""What an ANF operation is, for activity analysis and the reverse pass alike.

>>> import gast
>>> op = gast.parse("a * b", mode="eval").body
>>> classify(op).what, [n.id for n in classify(op).operands]
('rule', ['a', 'b'])
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import gast

from s2s_ad.compiler.ir import LocalFunction
from s2s_ad.compiler.syntax.annotations import get_anno
from s2s_ad.kernels.registry import run_kernel
from s2s_ad.markers import (
    CustomDerivative,
    RecomputedFunction,
    custom_derivative,
    with_derivative,
    without_derivative,
)
from s2s_ad.rules import Rule, lookup, operator_rule


@dataclass
class Primitive:
    """An ANF operation: ``what`` it is, its ``rule`` and its ``operands``.

    ``what`` is one of ``rule`` (a registered primitive), ``copy`` (an atom),
    ``tuple``, ``index`` (constant index into a tuple), ``function`` (a Python
    function differentiated through its source), ``custom`` (a call of a
    function with a registered ``@derivative``), ``hook`` (``with_derivative``),
    ``cut`` (``without_derivative``), ``kernel`` (``run_kernel``: its operands are the
    kernel's inputs, after the name), ``opaque`` (no derivative and none
    needed: constants, comparisons, strings) or ``unknown`` (a call with
    neither rule nor source).
    """

    what: str
    operands: list[gast.expr] = field(default_factory=list)
    rule: Rule | None = None
    callee: Any = None
    custom: CustomDerivative | None = None
    recompute: bool = False  # a function whose pullback recomputes its forward run

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        """(position, operand) pairs through which a derivative can flow."""
        if self.what == "rule":
            return [(i, a) for i, a in enumerate(self.operands)
                    if i < len(self.rule.params) and self.rule.params[i] in self.rule.adjoints]
        if self.what == "custom":
            positions = self.custom.positions(len(self.operands))
            return [(i, a) for i, a in enumerate(self.operands) if i in positions]
        if self.what == "hook":
            return [(0, self.operands[0])]
        if self.what in ("copy", "tuple", "index", "function", "unknown", "kernel"):
            return list(enumerate(self.operands))
        return []


LIBRARY_MODULES = ("numpy", "scipy", "numba", "math", "builtins")


def is_library(obj: Any) -> bool:
    """Whether ``obj`` belongs to a library (called as is, never differentiated through
    its source; differentiable only through a rule)."""
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in LIBRARY_MODULES


def _is_source_function(obj: Any) -> bool:
    """A function differentiated through its source: the user's, not a library's."""
    if isinstance(obj, LocalFunction):
        return True
    return isinstance(obj, types.FunctionType) and not is_library(obj)


def _bind(rule: Rule, call: gast.Call) -> list[gast.expr]:
    """Operands in the rule's parameter order: positional, keywords, then defaults."""
    operands = list(call.args)
    given = {k.arg: k.value for k in call.keywords}
    for param in rule.params[len(operands):]:
        if param in given:
            operands.append(given[param])
        elif param in rule.defaults:
            operands.append(gast.Constant(value=rule.defaults[param], kind=None))
        else:
            break
    return operands


def classify(op: gast.expr) -> Primitive:
    """Classify the right-hand side ``op`` of an ANF statement."""
    if isinstance(op, gast.Name):
        return Primitive("copy", [op])
    if isinstance(op, gast.Constant | gast.JoinedStr | gast.Compare):
        return Primitive("opaque")
    if isinstance(op, gast.BinOp):
        return Primitive("rule", [op.left, op.right], operator_rule(op.op))
    if isinstance(op, gast.UnaryOp):
        return Primitive("rule", [op.operand], operator_rule(op.op))
    if isinstance(op, gast.Tuple):
        return Primitive("tuple", list(op.elts))
    if isinstance(op, gast.Subscript):
        return Primitive("index", [op.value])
    if isinstance(op, gast.Call):
        callee = get_anno(op, "callee")
        if callee is run_kernel:
            return Primitive("kernel", list(op.args[1:]), None, callee)
        custom = custom_derivative(callee)
        if custom is not None:
            return Primitive("custom", list(op.args), None, callee, custom)
        if isinstance(callee, RecomputedFunction):
            return Primitive("function", list(op.args), None, callee.fn, recompute=True)
        if callee is with_derivative:
            return Primitive("hook", list(op.args), None, callee)
        if callee is without_derivative:
            return Primitive("cut", list(op.args), None, callee)
        rule = lookup(callee, len(op.args))
        if rule is not None:
            return Primitive("rule", _bind(rule, op), rule, callee)
        if _is_source_function(callee):
            return Primitive("function", list(op.args), None, callee)
        return Primitive("unknown", list(op.args), None, callee)
    return Primitive("opaque")
