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


@dataclass
class ZeroDerivative:
    """A differentiated parameter whose derivative is always zero, and where."""

    parameter: str
    kind: str  # "unused" or "non-differentiable"
    lineno: int
    col: int  # 1-based
    message: str


def _all_names(op: gast.expr) -> list[str]:
    return [a.id for a in classify(op).operands if isinstance(a, gast.Name)] + [
        n.id for n in gast.walk(op) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        and not classify(op).operands]


def _statements(stmts: list[gast.stmt]):
    for s in stmts:
        yield s
        if isinstance(s, gast.For | gast.While | gast.If):
            yield from _statements(s.body)
            yield from _statements(getattr(s, "orelse", []))


def _depends(fdef: gast.FunctionDef, start: set[str], differentiable_only: bool) -> set[str]:
    """Variables whose value depends on ``start`` (through any or differentiable ops)."""
    reached = set(start)
    changed = True
    while changed:
        changed = False
        for target, op in _assignments(fdef.body):
            names = _diff_names(op) if differentiable_only else _all_names(op)
            if target not in reached and any(n in reached for n in names):
                reached.add(target)
                changed = True
    return reached


def zero_derivatives(fdef: gast.FunctionDef, wrt: list[str], kinds: dict[str, Kind],
                     name: str) -> list[ZeroDerivative]:
    """Differentiated parameters of ``fdef`` whose derivative is always zero.

    Two cases: the parameter never reaches the result ("unused"), or reaches it
    only through non-differentiable operations such as ``round`` or a
    comparison ("non-differentiable", located at the first such operation).
    Dependence through a branch condition or loop bound alone is control, not
    data, and counts as neither.
    """
    result = fdef.body[-1].value
    found: list[ZeroDerivative] = []
    params = {a.id: a for a in fdef.args.args}
    for p in wrt:
        if not carries_derivative(kinds.get(p)):
            continue
        smooth = _depends(fdef, {p}, differentiable_only=True)
        if isinstance(result, gast.Name) and result.id in smooth:
            continue
        anything = _depends(fdef, {p}, differentiable_only=False)
        where = params[p]
        if isinstance(result, gast.Name) and result.id in anything:
            stmt = _first_cut(fdef, smooth)
            if stmt is not None:
                where = stmt.value if hasattr(stmt.value, "lineno") else stmt
            what = _describe(stmt.value if stmt is not None else None)
            msg = (f"the result of {name} depends on parameter '{p}' only through "
                   f"{what}; its derivative is always zero. Wrap the value in "
                   "ad.without_derivative(...) if that is intended")
            kind = "non-differentiable"
        else:
            msg = (f"parameter '{p}' does not affect the result of {name}; its derivative "
                   "is always zero. Pass it with ad.without_derivative(...) or leave it out "
                   "of wrt if that is intended")
            kind = "unused"
        found.append(ZeroDerivative(p, kind, where.lineno, where.col_offset + 1, msg))
    return found


def _first_cut(fdef: gast.FunctionDef, smooth: set[str]) -> gast.Assign | None:
    """The first statement that reads a smooth value but passes no derivative on."""
    for s in _statements(fdef.body):
        if not isinstance(s, gast.Assign):
            continue
        diff = set(_diff_names(s.value))
        if any(n in smooth and n not in diff for n in _all_names(s.value)):
            return s
    return None


def _describe(op: gast.AST | None) -> str:
    if isinstance(op, gast.Call):
        callee = classify(op).callee
        return f"the non-differentiable operation '{getattr(callee, '__name__', 'call')}'"
    if isinstance(op, gast.Compare):
        return "a comparison"
    if isinstance(op, gast.BinOp):
        return f"the non-differentiable operator {type(op.op).__name__}"
    return "non-differentiable operations"
