"""One tangent tape for the growing tapes of gradient code (forward over reverse).

Gradient code keeps the values of a ``while`` loop on tapes that grow as it runs
(``if position >= tape.shape[0]: tape = rt.grow(tape, position)``).  Forward mode
gives each such tape a tangent tape that grows beside it; under Numba every array
rebound inside a loop costs a reference-count increment and decrement per
iteration, so ten growing tapes cost a Newton loop more than its arithmetic
(``kepler``'s Hessian-vector product: 380 of its 620 µs).  The tangent tapes of
tapes that provably grow together are kept instead as the columns of one 2-D
tangent tape, grown at one place::

    t_tapes = np.zeros((8, 5))                    # at the first tape's allocation
    if ge:
        big_e_tape = rt.grow(big_e_tape, position_1)
        t_tapes = rt.grow(t_tapes, position_1)    # at the first tape's growth only
    ...
    t_tapes[position_1, 1] = t_sin_big_e          # t_sin_big_e_tape[position_1] = ...
    t_sin_big_e_tape_item = t_tapes[position_1, 1]

Tapes grow together when each is a float array allocated once at the top of the
function with the same constant length, grown by exactly one ``rt.grow`` at the
same position, and those growths stand in one block with nothing between them but
plain assignments (none to the position): then every tape, and the tangent tape
grown with the first, always has the same length.  Each tape must be used only
by item reads and writes at a number, its shape, and its growth; anything else
keeps it out of a group (its tangent tape is then made as before).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from s2s_ad import runtime
from s2s_ad.compiler.syntax.annotations import callee_of
from s2s_ad.compiler.syntax.builders import assign, call, const, load, tuple_of
from s2s_ad.kinds import ArrayKind


@dataclass
class TapeGroup:
    """Growing tapes whose tangents are the columns of one tangent tape ``name``."""

    name: str
    members: list[str]
    size: int
    position: str
    allocation: int = 0  # id of the first member's allocation statement
    growth: int = 0  # id of the first member's growth statement
    columns: dict[str, int] = field(default_factory=dict)


@dataclass
class _Tape:
    size: int
    allocation: gast.Assign
    growths: list[tuple[gast.Assign, list, int]] = field(default_factory=list)  # (s, block, at)


def _allocated(s: gast.stmt, varied: set[str]) -> tuple[str, int] | None:
    """``(name, length)`` of ``name = np.empty(<int>, dtype='float64')``, else None."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
            s.targets[0].id in varied and isinstance(s.value, gast.Call)):
        return None
    v = s.value
    if not (isinstance(v.func, gast.Attribute) and v.func.attr == "empty" and
            isinstance(v.func.value, gast.Name) and v.func.value.id == "np" and
            len(v.args) == 1 and isinstance(v.args[0], gast.Constant) and
            type(v.args[0].value) is int and len(v.keywords) == 1 and
            v.keywords[0].arg == "dtype" and isinstance(v.keywords[0].value, gast.Constant)
            and v.keywords[0].value.value == "float64"):
        return None
    return s.targets[0].id, v.args[0].value


def _growth(s: gast.stmt) -> tuple[str, str] | None:
    """``(tape, position)`` of ``tape = rt.grow(tape, position)``, else None."""
    if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
            isinstance(s.value, gast.Call) and callee_of(s.value) is runtime.grow):
        return None
    args = s.value.args
    if len(args) == 2 and all(isinstance(a, gast.Name) for a in args) and \
            args[0].id == s.targets[0].id:
        return args[0].id, args[1].id
    return None


def _scalar_index(node: gast.expr) -> bool:
    return isinstance(node, gast.Name) or (isinstance(node, gast.Constant) and
                                           type(node.value) is int)


def _uses_allowed(fdef: gast.FunctionDef, tapes: dict[str, _Tape], positions: dict) -> set:
    """The tapes used only as the module docstring says (the others are dropped)."""
    allowed: dict[str, int] = dict.fromkeys(tapes, 0)
    for s in gast.walk(fdef):
        if not isinstance(s, gast.Assign):
            continue
        target, value = s.targets[0], s.value
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and \
                target.value.id in tapes and isinstance(target.slice, gast.Name) and \
                target.slice.id == positions.get(target.value.id):
            allowed[target.value.id] += 1
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
                value.value.id in tapes and _scalar_index(value.slice):
            allowed[value.value.id] += 1
        if isinstance(value, gast.Call) and len(value.args) == 1 and \
                isinstance(value.args[0], gast.Name) and value.args[0].id in tapes and \
                isinstance(value.func, gast.Attribute) and value.func.attr == "shape" and \
                isinstance(value.func.value, gast.Name):  # np.shape(tape), as tape.shape(tape)
            allowed[value.args[0].id] += 1 + (value.func.value.id == value.args[0].id)
    for name, tape in tapes.items():
        allowed[name] += len(tape.growths)  # the tape read by its growth
    used: dict[str, int] = dict.fromkeys(tapes, 0)
    for n in gast.walk(fdef):
        if isinstance(n, gast.Name) and n.id in tapes and isinstance(n.ctx, gast.Load):
            used[n.id] += 1
    return {name for name in tapes if used[name] == allowed[name]}


def _between_plain(block: list, start: int, end: int, position: str) -> bool:
    """Whether the statements of ``block[start:end]`` are assignments of names other
    than ``position`` or ``if``s holding one growth each."""
    for s in block[start:end]:
        if isinstance(s, gast.If) and len(s.body) == 1 and not s.orelse and \
                _growth(s.body[0]) is not None:
            continue
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and
                s.targets[0].id != position):
            return False
    return True


def tape_groups(fdef: gast.FunctionDef, varied: set[str], fresh) -> dict[str, TapeGroup]:
    """Member tape -> its group, for the groups of two tapes or more in ``fdef``."""
    tapes: dict[str, _Tape] = {}
    for s in fdef.body:
        found = _allocated(s, varied)
        if found is not None:
            tapes[found[0]] = _Tape(found[1], s) if found[0] not in tapes else None
    tapes = {k: v for k, v in tapes.items() if v is not None}
    positions: dict[str, str] = {}
    for node in gast.walk(fdef):
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            for at, s in enumerate(body if isinstance(body, list) else []):
                grown = _growth(s.body[0]) if isinstance(s, gast.If) and \
                    len(s.body) == 1 and not s.orelse else None
                if grown is not None and grown[0] in tapes:
                    tapes[grown[0]].growths.append((s.body[0], body, at))
                    if positions.setdefault(grown[0], grown[1]) != grown[1]:
                        positions[grown[0]] = ""
    for s in gast.walk(fdef):  # any other assignment to a tape: not a candidate
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                s.targets[0].id in tapes and s is not tapes[s.targets[0].id].allocation and \
                all(s is not g for g, _, _ in tapes[s.targets[0].id].growths):
            positions[s.targets[0].id] = ""
    tapes = {k: v for k, v in tapes.items() if len(v.growths) == 1 and positions.get(k)}
    kept = _uses_allowed(fdef, tapes, positions)
    by_run: dict[tuple, list[str]] = {}
    for name in sorted(kept, key=lambda k: tapes[k].growths[0][2]):
        _, block, _ = tapes[name].growths[0]
        by_run.setdefault((id(block), positions[name], tapes[name].size), []).append(name)
    groups: dict[str, TapeGroup] = {}
    for (_, position, size), members in by_run.items():
        block = tapes[members[0]].growths[0][1]
        first, last = tapes[members[0]].growths[0][2], tapes[members[-1]].growths[0][2]
        if len(members) < 2 or not _between_plain(block, first, last + 1, position):
            continue
        members.sort(key=lambda k: fdef.body.index(tapes[k].allocation))
        group = TapeGroup(fresh("t_tapes"), members, size, position,
                          id(tapes[members[0]].allocation),
                          id(tapes[min(members, key=lambda k: tapes[k].growths[0][2])]
                             .growths[0][0]),
                          {m: j for j, m in enumerate(members)})
        groups.update(dict.fromkeys(members, group))
    return groups


def group_statements(group: TapeGroup, s: gast.Assign, line: int | None) -> list[gast.stmt]:
    """The tangent of a member's allocation or growth: the group's, at the first."""
    if id(s) == group.allocation:
        shape = tuple_of([const(group.size), const(len(group.members))])
        return [assign(group.name, call("np.zeros", shape), line)]
    if id(s) == group.growth:
        return [assign(group.name, call("rt.grow", load(group.name), load(group.position)),
                       line)]
    return []


def group_item(group: TapeGroup, member: str, index: gast.expr) -> gast.Tuple:
    """The index of ``member[index]``'s tangent in the group's tangent tape."""
    return tuple_of([index, const(group.columns[member])])


def group_kind() -> ArrayKind:
    return ArrayKind(2)
