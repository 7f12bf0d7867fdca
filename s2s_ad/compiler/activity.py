"""The activity stage: which variables carry derivatives.

A variable is *varied* when it depends on a differentiated parameter through
differentiable operations, *useful* when the result depends on it through
differentiable operations, and *active* when both.  Annotations only: the tree
is not changed.  The reverse pass emits adjoint code for active variables only.

The analysis is flow-insensitive (one fact per variable name), so it may call a
variable active that a flow-sensitive analysis would not; that costs some
adjoint code, never a wrong derivative.

>>> from s2s_ad.compiler.transforms import transform
>>> def f(x, n):
...     k = n * 2
...     return x * k
>>> a = transform(f, ["float", "int"], [0]).activity
>>> sorted(a.varied), sorted(a.useful), a.active("k")
(['result', 'x'], ['k', 'n', 'result', 'x'], False)
>>> import s2s_ad as ad
>>> print(ad.source(f, 2.0, 3, stage="activity").split("def")[0].strip())
# varied: result, x
# useful: k, n, result, x
# active: result, x
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from s2s_ad.compiler.primitives import classify
from s2s_ad.compiler.syntax.annotations import callee_of
from s2s_ad.compiler.syntax.builders import assignment, loaded_names, store, tuple_of
from s2s_ad.kinds import Kind, carries_derivative
from s2s_ad.rules.runtime_rules import CHANGES_FIRST, IN_PLACE


@dataclass
class Activity:
    """The result of :func:`analyze_activity`."""

    varied: set[str]
    useful: set[str]

    def active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def item_write(s: gast.Assign) -> tuple[str, gast.expr]:
    """``x[i] = v`` as an assignment to ``x`` of something made of ``x`` and ``v``."""
    target = s.targets[0]
    return target.value.id, tuple_of([target.value, s.value])


def _assignments(stmts: list[gast.stmt]):
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript):
            yield item_write(s)
        elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) \
                and callee_of(s.value) in (*IN_PLACE, *CHANGES_FIRST) \
                and isinstance(s.value.args[0], gast.Name):
            yield s.value.args[0].id, s.value  # changes its first operand
        elif isinstance(s, gast.Assign):
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


def _all_names(op: gast.expr, through_cuts: bool = True) -> list[str]:
    """Names ``op`` reads; with ``through_cuts=False``, none for ``without_derivative``."""
    prim = classify(op)
    if prim.cuts and not through_cuts:
        return []
    if prim.operands:
        return [a.id for a in prim.operands if isinstance(a, gast.Name)]
    return loaded_names(op)


_MODES = ("smooth", "uncut", "all")
Deps = dict[str, dict[str, frozenset]]  # variable -> mode -> parameters it depends on


class _Flow:
    """Flow-sensitive dependence of every variable on the parameters.

    One abstract state per program point: for each variable, the parameters it
    depends on through differentiable operations (``smooth``), through anything
    but ``without_derivative`` (``uncut``), and through anything (``all``).
    Branches join, loops iterate to a fixpoint (zero trips included), so a
    parameter overwritten before it is read depends on nothing.
    """

    def __init__(self, params: list[str]):
        self.conditions: list[tuple[gast.AST, frozenset]] = []
        self.cuts: dict[str, gast.AST] = {}
        self.defined_by: dict[str, gast.AST] = {}  # variable -> expression last assigned
        self.start: Deps = {p: {m: frozenset({p}) for m in _MODES} for p in params}

    def read(self, state: Deps, name: str, mode: str) -> frozenset:
        return state.get(name, {}).get(mode, frozenset())

    def assign(self, state: Deps, s: gast.Assign) -> None:
        if isinstance(s.targets[0], gast.Subscript):
            name, op = item_write(s)
            s = assignment([store(name)], op)
        op = s.value
        smooth_names = set(_diff_names(op))
        new = {
            "smooth": frozenset().union(*[self.read(state, n, "smooth") for n in smooth_names]),
            "uncut": frozenset().union(*[self.read(state, n, "uncut")
                                        for n in _all_names(op, through_cuts=False)]),
            "all": frozenset().union(*[self.read(state, n, "all") for n in _all_names(op)]),
        }
        for n in _all_names(op, through_cuts=False):
            for p in self.read(state, n, "smooth") - new["smooth"]:
                self.cuts.setdefault(p, op if hasattr(op, "lineno") else s)
        state[s.targets[0].id] = new
        if hasattr(op, "lineno"):
            self.defined_by[s.targets[0].id] = op
        elif isinstance(op, gast.Name) and op.id in self.defined_by:
            self.defined_by[s.targets[0].id] = self.defined_by[op.id]

    def condition(self, state: Deps, atoms: list[gast.expr], where: gast.AST) -> None:
        deps = frozenset().union(*[self.read(state, a.id, "all") for a in atoms
                                   if isinstance(a, gast.Name)])
        if deps:
            names = [a.id for a in atoms if isinstance(a, gast.Name)]
            where = next((self.defined_by[n] for n in names if n in self.defined_by), where)
            self.conditions.append((where, deps))

    def block(self, state: Deps, stmts: list[gast.stmt]) -> Deps:
        for s in stmts:
            if isinstance(s, gast.Assign):
                self.assign(state, s)
            elif isinstance(s, gast.If):
                self.condition(state, [s.test], s)
                state = _join(self.block(dict(state), s.body), self.block(dict(state), s.orelse))
            elif isinstance(s, gast.For | gast.While):
                bounds = s.iter.args if isinstance(s, gast.For) else [s.test]
                self.condition(state, list(bounds), s)
                state = self.loop(state, s)
        return state

    def loop(self, state: Deps, s: gast.For | gast.While) -> Deps:
        if isinstance(s, gast.For):
            state = dict(state)
            state[s.target.id] = {m: frozenset() for m in _MODES}
        for _ in range(100):
            after = _join(state, self.block(dict(state), s.body))
            if after == state:
                break
            state = after
        return state


def _join(a: Deps, b: Deps) -> Deps:
    out = dict(a)
    for name, modes in b.items():
        if name in out:
            out[name] = {m: out[name][m] | modes[m] for m in _MODES}
        else:
            out[name] = modes
    return out


def zero_derivatives(fdef: gast.FunctionDef, wrt: list[str], kinds: dict[str, Kind],
                     name: str) -> list[ZeroDerivative]:
    """Differentiated parameters of ``fdef`` whose derivative is always zero.

    Three cases: the parameter reaches the result only through
    non-differentiable operations such as ``round`` ("non-differentiable",
    located at the first such operation), only through the conditions of
    branches or loop bounds ("control", located at the condition), or not at
    all ("unused", located at the parameter).  An explicit
    ``without_derivative`` on the way is intended and never warned about.
    """
    flow = _Flow(list(fdef.args.args and [a.id for a in fdef.args.args]))
    final = flow.block(dict(flow.start), fdef.body[:-1])
    result = fdef.body[-1].value
    reach = {m: flow.read(final, result.id, m) if isinstance(result, gast.Name) else
             frozenset() for m in _MODES}
    params = {a.id: a for a in fdef.args.args}
    found: list[ZeroDerivative] = []
    for p in wrt:
        if not carries_derivative(kinds.get(p)) or p in reach["smooth"]:
            continue
        if p in reach["all"] and p not in reach["uncut"]:
            continue  # without_derivative cut it on purpose
        found.append(_finding(p, name, reach, flow, params[p]))
    return found


def _finding(p: str, name: str, reach: dict, flow: _Flow, param: gast.AST) -> ZeroDerivative:
    if p in reach["uncut"]:
        where = flow.cuts.get(p, param)
        msg = (f"the result of {name} depends on parameter '{p}' only through "
               f"{_describe(where)}; its derivative is always zero. Wrap the value in "
               "ad.without_derivative(...) if that is intended")
        return ZeroDerivative(p, "non-differentiable", where.lineno, where.col_offset + 1, msg)
    for where, deps in flow.conditions:
        if p in deps:
            msg = (f"the result of {name} depends on parameter '{p}' only through the "
                   f"condition on line {where.lineno} (control flow, not a value); its "
                   "derivative is always zero. Wrap the condition's value in "
                   "ad.without_derivative(...) if that is intended")
            return ZeroDerivative(p, "control", where.lineno, where.col_offset + 1, msg)
    msg = (f"parameter '{p}' does not affect the result of {name}; its derivative is always "
           "zero. If that is intended, leave it out of wrt (ad.differentiable(f, wrt=...)) "
           "or mark where it is used with ad.without_derivative(...)")
    return ZeroDerivative(p, "unused", param.lineno, param.col_offset + 1, msg)


def _describe(op: gast.AST | None) -> str:
    if isinstance(op, gast.Call):
        callee = classify(op).callee
        return f"the non-differentiable operation '{getattr(callee, '__name__', 'call')}'"
    if isinstance(op, gast.Compare):
        return "a comparison"
    if isinstance(op, gast.BinOp):
        return f"the non-differentiable operator {type(op.op).__name__}"
    return "non-differentiable operations"
