"""The registry of vector-Jacobian-product rules.

A rule is a template in the notation of the generated code.  For ``z = f(x, y)``
the adjoint of each argument is an expression in the argument names, ``z``
(the result) and ``g`` (the cotangent of ``z``); the reverse pass substitutes
the saved values and emits ``d_x += <expression>``.

>>> rule = Rule("math.sin", ("x",), {"x": "g * math.cos(x)"})
>>> rule.needs("x")
frozenset({'x'})
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import gast

from ..errors import NonDifferentiableError


@dataclass(frozen=True)
class Rule:
    """How to emit a primitive and its adjoints.

    ``kind`` is the kind of the result: ``"float"``, ``"int"``, ``"bool"``,
    ``"none"``, or ``"join"`` (the join of the argument kinds).  A rule with no
    adjoints is non-differentiable (``floor``, ``round``, comparisons): nothing
    flows back through it, and activity analysis knows it.
    """

    emit: str
    params: tuple[str, ...]
    adjoints: dict[str, str] = field(default_factory=dict)
    kind: Any = "float"
    forward: str | None = None  # how generated code computes the value, when not emit(...)
    defaults: dict[str, Any] = field(default_factory=dict)  # keyword parameters
    elementwise: bool = False  # broadcasting: cotangents are summed back to each shape
    variant: Callable | None = None  # (constants, kinds) -> {"forward", "adjoints"}

    def specialize(self, operands: list, kinds: list) -> Rule:
        """This rule with the templates for these operands (constant ``axis``, ndims)."""
        if self.variant is None:
            return self
        consts = {p: o.value if isinstance(o, gast.Constant) else NOT_CONSTANT
                  for p, o in zip(self.params, operands, strict=False)}
        parts = self.variant(consts, dict(zip(self.params, kinds, strict=False)))
        return replace(self, variant=None, forward=parts.get("forward", self.forward),
                       adjoints={**self.adjoints, **parts.get("adjoints", {})})

    @property
    def differentiable(self) -> bool:
        return bool(self.adjoints)

    def template(self, param: str) -> gast.expr:
        """The adjoint template of ``param`` as a gast expression."""
        return _parse_template(self.adjoints[param])

    def forward_template(self) -> gast.expr | None:
        """The template computing the value, if the rule has one."""
        return _parse_template(self.forward) if self.forward else None

    def needs(self, param: str) -> frozenset[str]:
        """Template names (arguments and ``z``) the adjoint of ``param`` reads."""
        tree = self.template(param)
        names = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
        return frozenset(names & (set(self.params) | {"z"}))


NOT_CONSTANT = object()  # an operand whose value is only known at run time

_templates: dict[str, gast.expr] = {}


def _parse_template(text: str) -> gast.expr:
    if text not in _templates:
        _templates[text] = gast.parse(text, mode="eval").body
    return _templates[text]


_RULES: dict[tuple[int, int | None], tuple[Any, Rule]] = {}
_BINOPS: dict[type, Rule] = {}
_UNARYOPS: dict[type, Rule] = {}


def register(obj: Any, rule: Rule, nargs: int | None = None) -> None:
    """Register ``rule`` for calls of ``obj`` (with ``nargs`` arguments, or any)."""
    _RULES[(id(obj), nargs)] = (obj, rule)


def register_binop(op: type, rule: Rule) -> None:
    _BINOPS[op] = rule


def register_unaryop(op: type, rule: Rule) -> None:
    _UNARYOPS[op] = rule


def lookup(obj: Any, nargs: int) -> Rule | None:
    """The rule for calling ``obj`` with ``nargs`` arguments, if any."""
    for key in ((id(obj), nargs), (id(obj), None)):
        entry = _RULES.get(key)
        if entry is not None and entry[0] is obj:
            return entry[1]
    return None


def arities(obj: Any) -> list[int]:
    """The argument counts ``obj`` has rules for, when each rule is for one count
    (empty when ``obj`` has none, or one for any count)."""
    counts = [nargs for (_, nargs), (other, _) in _RULES.items() if other is obj]
    return [] if None in counts else sorted(counts)


def operator_rule(op: gast.operator | gast.unaryop, where: Any = None) -> Rule:
    """The rule of a binary or unary operator (an error naming it if there is none)."""
    table = _UNARYOPS if isinstance(op, gast.unaryop) else _BINOPS
    rule = table.get(type(op))
    if rule is None:
        raise NonDifferentiableError(f"the operator {type(op).__name__} has no derivative "
                                     "rule", where)
    return rule


def all_rules() -> list[tuple[Any, int | None, Rule]]:
    """Every registered rule as (callee or operator class, nargs or None, rule)."""
    calls = [(obj, nargs, rule) for (_, nargs), (obj, rule) in _RULES.items()]
    ops = [(op, None, rule) for op, rule in {**_BINOPS, **_UNARYOPS}.items()]
    return calls + ops
