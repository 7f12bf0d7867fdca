"""Stage 4, activity: which variables carry derivatives.

A variable is *varied* when it depends on a differentiated parameter through
differentiable operations, *useful* when the result depends on it through
differentiable operations, and *active* when both.  Annotations only: the tree
is not changed.  The reverse pass emits adjoint code for active variables only.

The analysis is flow-insensitive (one fact per variable name), so it may call a
variable active that a flow-sensitive analysis would not; that costs some
adjoint code, never a wrong derivative.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from .kinds import Kind, carries_derivative
from .rules.classify import classify


@dataclass
class Activity:
    """The result of :func:`analyze_activity`."""

    varied: set[str]
    useful: set[str]

    def active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def _assignments(stmts: list[gast.stmt]):
    for s in stmts:
        if isinstance(s, gast.Assign):
            yield s.targets[0].id, s.value
        elif isinstance(s, gast.For | gast.While | gast.If):
            yield from _assignments(s.body)
            yield from _assignments(getattr(s, "orelse", []))


def _diff_names(op: gast.expr) -> list[str]:
    return [a.id for _, a in classify(op).differentiable_operands() if isinstance(a, gast.Name)]


def analyze_activity(fdef: gast.FunctionDef, wrt: list[str],
                     kinds: dict[str, Kind]) -> Activity:
    """Varied and useful variables of the ANF function ``fdef`` for parameters ``wrt``."""
    assignments = [(t, _diff_names(op)) for t, op in _assignments(fdef.body)]
    varied = {p for p in wrt if carries_derivative(kinds.get(p))}
    changed = True
    while changed:
        changed = False
        for target, operands in assignments:
            if target not in varied and carries_derivative(kinds.get(target)) and any(
                    o in varied for o in operands):
                varied.add(target)
                changed = True
    result = fdef.body[-1].value
    useful = {result.id} if isinstance(result, gast.Name) else set()
    changed = True
    while changed:
        changed = False
        for target, operands in assignments:
            if target in useful:
                new = set(operands) - useful
                if new:
                    useful |= new
                    changed = True
    return Activity(varied=varied, useful=useful)
