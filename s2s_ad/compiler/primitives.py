"""What an ANF operation is, for activity analysis and the reverse pass alike.

>>> import gast
>>> op = gast.parse("a * b", mode="eval").body
>>> type(classify(op)).__name__, [n.id for n in classify(op).operands]
('RuleOp', ['a', 'b'])
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gast

from s2s_ad import runtime
from s2s_ad.compiler.ir import LocalFunction
from s2s_ad.compiler.syntax.annotations import callee_of
from s2s_ad.compiler.syntax.builders import const
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
    """An ANF operation: its ``operands``, and for a call its ``callee`` (and ``rule``
    or ``custom`` derivative). Each kind of operation is a subclass; what the reverse
    pass and the analyses ask of every kind is a method or class attribute here."""

    operands: list[gast.expr] = field(default_factory=list)
    rule: Rule | None = None
    callee: Any = None
    custom: CustomDerivative | None = None
    differential: CustomDerivative | None = None  # a registered forward-mode derivative
    recompute: bool = False  # a function whose pullback recomputes its forward run

    shares_operands: ClassVar[bool] = False
    """A call of code other than a rule: its result may hold its operands' memory."""
    may_write: ClassVar[bool] = False
    """Runs Python code that may write into the arrays it can reach."""
    identity: ClassVar[bool] = False
    """Its value is its first operand (``with_derivative``, ``without_derivative``)."""
    cuts: ClassVar[bool] = False
    """No derivative flows through it, by the user's choice (``without_derivative``)."""

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        """(position, operand) pairs through which a derivative can flow."""
        return list(enumerate(self.operands))


class RuleOp(Primitive):
    """A registered primitive (an operator or a call with a rule)."""

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        return [(i, a) for i, a in enumerate(self.operands)
                if i < len(self.rule.params) and self.rule.params[i] in self.rule.adjoints]


class Copy(Primitive):
    """An atom: ``y = x``."""


class TupleDisplay(Primitive):
    """A tuple built from atoms: ``(a, b)``."""


class Index(Primitive):
    """An item of a tuple, list or array: ``t[i]`` (its one operand is ``t``)."""


class FunctionCall(Primitive):
    """A Python function differentiated through its source."""

    shares_operands = True
    may_write = True


class CustomCall(Primitive):
    """A call of a function with a registered ``@derivative``: ``custom`` its pullback
    form, ``differential`` its forward form (either may be None, not both)."""

    shares_operands = True
    may_write = True

    @property
    def registered(self) -> CustomDerivative:
        """The registration whose value the call computes (the pullback form's first)."""
        return self.custom if self.custom is not None else self.differential

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        """The operands either registration differentiates (a tangent flowing through
        the differential alone must still make the result vary)."""
        positions = {p for entry in (self.custom, self.differential) if entry is not None
                     for p in entry.positions(len(self.operands))}
        return [(i, a) for i, a in enumerate(self.operands) if i in positions]


class HookCall(Primitive):
    """``with_derivative(value, hook)``: the value, with its cotangent passed to ``hook``."""

    shares_operands = True
    may_write = True
    identity = True

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        return [(0, self.operands[0])]


class CutCall(Primitive):
    """``without_derivative(value)``: the value, as a constant.  Generated code keeps
    the marker as ``rt.without_derivative(value)``, read the same way, so forward mode
    over gradient code (second derivatives) keeps the value a constant too."""

    shares_operands = True
    may_write = True
    identity = True
    cuts = True

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        return []


class KernelCall(Primitive):
    """``run_kernel(kernel, *inputs)``: its operands are the kernel's inputs."""

    shares_operands = True


class Opaque(Primitive):
    """No derivative and none needed: constants, comparisons, strings."""

    def differentiable_operands(self) -> list[tuple[int, gast.expr]]:
        return []


class UnknownCall(Primitive):
    """A call with neither rule nor source."""

    shares_operands = True
    may_write = True


LIBRARY_MODULES = ("numpy", "scipy", "numba", "math", "builtins")
RUNTIME = "s2s_ad.runtime"  # the helpers generated code calls (forward mode reads it again)


def is_library(obj: Any) -> bool:
    """Whether ``obj`` belongs to a library (called as is, never differentiated through
    its source; differentiable only through a rule)."""
    module = getattr(obj, "__module__", None) or ""
    return module.split(".")[0] in LIBRARY_MODULES or module.startswith(RUNTIME)


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
            operands.append(const(rule.defaults[param]))
        else:
            break
    return operands


def classify(op: gast.expr) -> Primitive:
    """Classify the right-hand side ``op`` of an ANF statement."""
    if isinstance(op, gast.Name):
        return Copy([op])
    if isinstance(op, gast.Constant | gast.JoinedStr | gast.Compare):
        return Opaque()
    if isinstance(op, gast.BinOp):
        return RuleOp([op.left, op.right], operator_rule(op.op))
    if isinstance(op, gast.UnaryOp):
        return RuleOp([op.operand], operator_rule(op.op))
    if isinstance(op, gast.Tuple):
        return TupleDisplay(list(op.elts))
    if isinstance(op, gast.Subscript):
        return Index([op.value])
    if isinstance(op, gast.Call):
        callee = callee_of(op)
        if callee is run_kernel:
            return KernelCall(list(op.args[1:]), None, callee)
        custom, differential = custom_derivative(callee), custom_derivative(callee, "forward")
        if custom is not None or differential is not None:
            return CustomCall(list(op.args), None, callee, custom, differential)
        if isinstance(callee, RecomputedFunction):
            return FunctionCall(list(op.args), None, callee.fn, recompute=True)
        if callee is with_derivative:
            return HookCall(list(op.args), None, callee)
        if callee is without_derivative or callee is runtime.without_derivative:
            return CutCall(list(op.args), None, callee)
        rule = lookup(callee, len(op.args))
        if rule is not None:
            return RuleOp(_bind(rule, op), rule, callee)
        if _is_source_function(callee) or hasattr(callee, "__s2s_ad_callee__"):
            return FunctionCall(list(op.args), None, callee)  # (a gradient: its code)
        return UnknownCall(list(op.args), None, callee)
    return Opaque()
