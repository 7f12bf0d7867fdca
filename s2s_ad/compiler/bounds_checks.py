"""The bounds stage: before each item read or write of an array whose integer index
(an int, or an array of ints) :mod:`s2s_ad.compiler.index_ranges` cannot prove in
range, a call ``rt.check_index(x_shape, axis, index, "file:line:col", "function")``
that raises NumPy's ``IndexError`` at the user's line when it is out of range.  It
reads the array's shape (``x_shape = np.shape(x)``, hoisted out of the loops that do
not bind ``x``), never the array itself, so no analysis of the later stages counts it
as a read of the array's values (which would tape values, or refuse a parallel loop
that writes the array).

Numba checks no bounds: without these, an index out of range reads garbage and a
write lands outside the array, where Python raises.  Every role that runs the
function's statements (the primal, the forward, the fused value-and-gradient,
forward mode and second derivatives over the gradient code) runs the checks.  The
pullback needs none: it indexes with the forward's indices (taped or recomputed),
into the same arrays or into cotangents of their shapes.  s2s_ad's own gradient
code (read again for second derivatives) already carries the checks of the
forward it came from, and gets none more.

Before and after (``x[i]`` is in range; ``x[k]`` may not be, and is the same in every
iteration: checked in the loop only when not found in range before it):

>>> import numpy as np
>>> import s2s_ad as ad
>>> def f(x, k):
...     total = 0.0
...     for i in range(x.shape[0]):
...         total += x[i] * x[k]
...     return total
>>> print(ad.source(f, np.ones(3), 1, stage="anf"))
def f(x, k):
    # line 2: total = 0.0
    total = 0.0
    # line 3: for i in range(x.shape[0]):
    x_shape = x.shape(x)
    x_shape_0 = x_shape[0]
    for i in range(x_shape_0):
        # line 4: total += x[i] * x[k]
        x_item = x[i]
        x_item_1 = x[k]
        mul = x_item * x_item_1
        total = total + mul
    # line 5: return total
    return total
>>> print(ad.source(f, np.ones(3), 1, stage="bounds"))  # doctest: +ELLIPSIS
def f(x, k):
    # line 2: total = 0.0
    x_shape_1 = np.shape(x)
    total = 0.0
    # line 3: for i in range(x.shape[0]):
    x_shape = x.shape(x)
    x_shape_0 = x_shape[0]
    i_in_bounds = rt.index_in_bounds(x_shape_1, 0, k)
    for i in range(x_shape_0):
        # line 4: total += x[i] * x[k]
        x_item = x[i]
        rt.check_index_unless(i_in_bounds, x_shape_1, 0, k, '<doctest ...>:4:25', 'f')
        x_item_1 = x[k]
        mul = x_item * x_item_1
        total = total + mul
    # line 5: return total
    return total
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace

import gast
import numpy as np

from s2s_ad import runtime
from s2s_ad.compiler.index_ranges import IndexRanges, bound_names, integer_parts
from s2s_ad.compiler.loop_indices import (
    Fact,
    Invariant,
    Loop,
    Step,
    flag_value,
    key_of,
    outermost,
    range_args,
    value_key,
    value_of,
)
from s2s_ad.compiler.syntax.annotations import callee_of, line_of, set_callee, set_line
from s2s_ad.compiler.syntax.builders import assign, binop, call, const, expr_stmt, load
from s2s_ad.errors import Location
from s2s_ad.kinds import ArrayKind, Kind

_BLOCKS = ("body", "orelse", "finalbody")


def planned_checks(normal, kinds: dict[str, Kind]) -> dict[int, list[gast.stmt]]:
    """The statements (checks, and the shapes they read) each statement of
    ``normal.node`` (a NormalFunction's tree) needs before it, by the statement's id;
    none for s2s_ad's gradient code.  New shape names go into ``kinds`` and
    ``normal``'s names."""
    if normal.parsed.generated:
        return {}
    planner = _Planner(normal, IndexRanges(normal.node, kinds), kinds)
    always = set(normal.params) | set(normal.hidden) | set(normal.externals)
    planner.fixed = always - bound_names(normal.node.body)
    planner.block(normal.node.body, _Here(defined=frozenset(always)))
    planner.join_flags()
    return planner.planned


def insert_checks(fdef: gast.FunctionDef, planned: dict[int, list[gast.stmt]]) -> None:
    """Insert the ``planned`` statements into ``fdef`` (in place)."""

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out = []
        for s in stmts:
            if not isinstance(s, gast.FunctionDef):
                for field in _BLOCKS:
                    part = getattr(s, field, None)
                    if isinstance(part, list) and part and isinstance(part[0], gast.stmt):
                        setattr(s, field, block(part))
            out.extend(planned.get(id(s), ()))
            out.append(s)
        return out

    fdef.body = block(fdef.body)


@dataclass(frozen=True)
class _Here:
    """What holds at a point of the function: the checks ``made`` (keys ``(array,
    axis, index)``), the enclosing ``loops``, the names surely ``defined``, and the
    ``shapes`` read into names (``(array, name)``), none of them bound again since."""

    made: frozenset = frozenset()
    loops: tuple[Loop, ...] = ()
    defined: frozenset[str] = frozenset()
    shapes: tuple[tuple[str, str], ...] = ()
    values: tuple[tuple[str, Fact], ...] = ()  # ints invariant in, or stepping with, loops

    def without(self, bound: set[str]) -> _Here:
        """After a statement that binds ``bound``."""
        return replace(self, made=frozenset(k for k in self.made if not _names_of(k) & bound),
                       shapes=tuple(p for p in self.shapes if not set(p) & bound),
                       values=tuple(e for e in self.values if e[0] not in bound))


class _Planner:
    """Plans the checks, in the order the statements run.  A check already made for the
    same array, axis and index (neither bound again since, on every path here) is not
    made again (``x[k] += v`` reads and writes ``x[k]``: one check).  A check reads
    the array's shape, not the array (so no analysis takes it for a read of the
    values): a name already holding ``np.shape(x)``, or ``x_shape = np.shape(x)``
    first thing for an argument never bound again, before the outermost enclosing
    loop that does not bind ``x`` (where ``x`` is surely bound), else just before the
    check."""

    def __init__(self, normal, ranges: IndexRanges, kinds: dict[str, Kind]):
        self.normal, self.ranges, self.kinds = normal, ranges, kinds
        self.function = user_function_name(normal.parsed)
        self.planned: dict[int, list[gast.stmt]] = {}
        self.hoisted: dict[tuple[int, str], str] = {}  # (loop, array) -> shape name
        self.fixed: set[str] = set()  # arguments never bound again: shapes read first
        self.flags: dict[tuple, str] = {}  # (loop, array, axis, kind, offset) -> flag name
        self.hoisted_values: dict[tuple, str] = {}  # (loop, value) -> name computed before it
        self.loop_parts: dict[int, tuple[gast.stmt, list[str]]] = {}  # loop -> its flags
        self.joined: dict[int, str] = {}  # loop -> the flag its checks test

    def block(self, stmts: list[gast.stmt], here: _Here) -> None:
        for s in stmts:
            if isinstance(s, gast.FunctionDef):
                continue
            here = self.checks(s, here).without(bound_names([s]))
            inside = here
            if isinstance(s, gast.For | gast.While):
                inside = replace(here, loops=here.loops + (Loop(s, frozenset(bound_names([s])),
                                                                 here.defined),))
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                inside = replace(inside, defined=here.defined | {s.target.id})
                if range_args(s) is not None and s.target.id not in bound_names(s.body):
                    inside = replace(inside, values=inside.values + (
                        (s.target.id, Step(len(here.loops), const(0))),))
            for field in _BLOCKS:
                part = getattr(s, field, None)
                if isinstance(part, list) and part and isinstance(part[0], gast.stmt):
                    self.block(part, inside)
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                here = _bound_by(s, here, self.kinds)

    def checks(self, s: gast.stmt, here: _Here) -> _Here:
        """Plan the checks of the indices ``s`` itself uses (a compound statement's
        test or range, not its body) not made before."""
        own = [getattr(s, f) for f in ("test", "iter") if hasattr(s, f)] \
            if isinstance(s, gast.If | gast.While | gast.For) else [s]
        for node in (n for part in own for n in _evaluated(part)):
            if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
                    and isinstance(self.kinds.get(node.value.id), ArrayKind)):
                continue
            for axis, index in integer_parts(node, self.kinds):
                key = (node.value.id, axis, self.index_key(index, here))
                if key not in here.made and not self.ranges.in_range(node, axis):
                    flagged = self.loop_flag(node.value.id, axis, index, here)
                    shape, here = flagged[1:] if flagged else \
                        self.shape_of(node.value.id, s, here)
                    self.planned.setdefault(id(s), []).append(
                        self.check(node, shape, axis, index, s, flagged and flagged[0]))
                    here = replace(here, made=here.made | {key})
        return here

    def index_key(self, index: gast.expr, here: _Here) -> tuple:
        """The index as a key: its value in a loop when known (``h_add_1`` and
        ``h_add_1_1``, both ``h + 1``, are one index there), else the atom."""
        return value_key(index, dict(here.values), here.loops, self.kinds) or _atom_key(index)

    def loop_flag(self, array: str, axis: int, index: gast.expr, here: _Here):
        """For an index the same in every iteration of an enclosing loop, or ``i + c``
        of an enclosing ``for i in range(...)`` loop (``c`` the same in every
        iteration), with ``array`` bound before that loop and not in it: ``(flag,
        shape, here)``, where ``flag``, computed before the loop
        (``rt.index_in_bounds``, ``rt.range_in_bounds`` of the loop's whole range),
        says the index is in range in every iteration (then the check in the loop is
        skipped, and Numba's loop stays free of it); else None."""
        if self.kinds[array].ndim is None or not here.loops:
            return None
        fact = value_of(index, dict(here.values), here.loops, self.kinds)
        reach = self._climb(array, here)
        if isinstance(fact, Step) and reach <= fact.loop:
            level = fact.loop
        elif isinstance(fact, Invariant) and max(reach, fact.loop) < len(here.loops):
            level = max(reach, fact.loop)
        else:
            return None
        loop = here.loops[level].node
        shape, here = self.shape_of(array, loop, here, hoisted_only=True)
        what = fact.offset if isinstance(fact, Step) else fact.expr
        key = (id(loop), array, axis, type(fact), key_of(what))
        if key not in self.flags:
            self.flags[key] = self.flag(fact, loop, array, axis, shape)
            self.loop_parts.setdefault(id(loop), (loop, []))[1].append(self.flags[key])
        if id(loop) not in self.joined:
            target = loop.target.id if isinstance(loop, gast.For) else "loop"
            self.joined[id(loop)] = self.new_name(f"{target}_in_bounds", "bool")
        return self.joined[id(loop)], shape, here

    def join_flags(self) -> None:
        """Before each loop, its flags joined into the one its checks test: ``flag =
        a & b & ...`` (one flag, not one for each array and index, lives through the
        loop), or the one flag itself."""
        for key, (loop, parts) in self.loop_parts.items():
            joined = self.joined[key]
            if len(parts) == 1:
                first = next(s for s in self.planned[key] if isinstance(s, gast.Assign)
                             and s.targets[0].id == parts[0])
                first.targets[0].id = joined
                self.forget(parts[0])
                continue
            value = load(parts[0])
            for part in parts[1:]:
                value = binop(value, gast.BitAnd(), load(part))
            self.before(loop, assign(joined, value))

    def forget(self, name: str) -> None:
        """Take back the local ``name`` (never used)."""
        del self.kinds[name]
        self.normal.locals.discard(name)
        self.normal.temps.discard(name)

    def flag(self, fact: Fact, loop: gast.stmt, array: str, axis: int, shape: gast.expr
             ) -> str:
        """``flag = rt.range_in_bounds(shape, axis, start, stop, step, offset)`` (a
        :class:`Step` of ``loop``) or ``flag = rt.index_in_bounds(shape, axis, index)``
        (an :class:`Invariant`), before ``loop``, with the offset or index computed
        there first."""
        def emit(stem: str, value: gast.expr) -> str:
            key = (id(loop), key_of(value))
            if key not in self.hoisted_values:
                self.hoisted_values[key] = self.new_name(stem, "int")
                self.before(loop, assign(self.hoisted_values[key], value))
            return self.hoisted_values[key]

        stem, value = flag_value(fact, loop, array, axis, copy.copy(shape), emit)
        name = self.new_name(stem, "bool")
        self.before(loop, assign(name, value))
        return name

    def new_name(self, stem: str, kind: Kind) -> str:
        """A new local of s2s_ad's, of ``kind``."""
        name = self.normal.namer.fresh(stem)
        self.kinds[name] = kind
        self.normal.locals.add(name)
        self.normal.temps.add(name)
        return name

    def before(self, place: gast.stmt, statement: gast.stmt) -> None:
        """Plan ``statement`` before ``place`` (after those planned there already)."""
        set_line(statement, line_of(place))
        self.planned.setdefault(id(place), []).append(gast.copy_location(statement, place))

    def _climb(self, array: str, here: _Here) -> int:
        """The outermost enclosing loop before which ``array``'s shape can be read
        (``len(here.loops)``: none, only where it is read)."""
        return 0 if array in self.fixed else outermost(array, here.loops)

    def shape_of(self, array: str, s: gast.stmt, here: _Here, hoisted_only: bool = False
                 ) -> tuple[gast.expr, _Here]:
        """The shape of ``array`` as the check at ``s`` reads it (``hoisted_only``: read
        before the loop ``s``, never a name bound in it)."""
        ndim = self.kinds[array].ndim
        if ndim is None:
            return load(array), here  # a shape of unknown length: the array itself
        known = dict(here.shapes).get(array)
        if known is not None and not hoisted_only:
            return load(known), here
        reached = self._climb(array, here)
        place = here.loops[reached].node if reached < len(here.loops) else s
        if array in self.fixed:
            place = self.normal.node.body[0]
        name = self.hoisted.get((id(place), array))
        if name is None:
            name = self.new_name(f"{array}_shape", ("int",) * ndim)
            value = call("np.shape", load(array))
            set_callee(value, np.shape)
            read = gast.copy_location(assign(name, value, line_of(place)), place)
            self.planned.setdefault(id(place), []).append(read)
            if place is s and not hoisted_only:
                here = replace(here, shapes=here.shapes + ((array, name),))
            else:
                self.hoisted[(id(place), array)] = name
        return load(name), here

    def check(self, node: gast.Subscript, shape: gast.expr, axis: int, index: gast.expr,
              s: gast.stmt, flag: str | None) -> gast.stmt:
        """``rt.check_index(shape, axis, index, "file:line:col", "function")``, or
        ``rt.check_index_unless(flag, shape, ...)``."""
        parsed = self.normal.parsed
        where = node if getattr(node, "lineno", None) is not None else s
        location = Location(parsed.filename,
                            getattr(where, "lineno", None) or line_of(s, parsed.node.lineno),
                            (getattr(where, "col_offset", None) or 0) + 1)
        arguments = (shape, const(axis), copy.copy(index), const(str(location)),
                     const(self.function))
        if flag:
            value = call("rt.check_index_unless", load(flag), *arguments)
            set_callee(value, runtime.check_index_unless)
        else:
            value = call("rt.check_index", *arguments)
            set_callee(value, runtime.check_index)
        statement = gast.copy_location(expr_stmt(value), s)
        set_line(statement, line_of(s))
        return statement


def _evaluated(node: gast.AST):
    """The nodes of ``node`` that run: not a call's callee (a method call's receiver,
    ``x[k].astype`` of ``rt.astype_int(x_item)``, is an operand already)."""
    yield node
    for field, value in gast.iter_fields(node):
        if isinstance(node, gast.Call) and field == "func":
            continue
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, gast.AST):
                yield from _evaluated(child)


def user_function_name(parsed) -> str:
    """The name the user gave the function ``parsed`` is written in: its qualified name
    (``Model.loss``, ``outer.inner``, ``<lambda>``), for the parts s2s_ad makes of a
    function (a local function lifted out, a custom derivative split in two) the
    user's function they come from."""
    key = parsed.key
    while isinstance(key, tuple):
        key = key[0]
    qualname = getattr(key, "co_qualname", None)
    return qualname.replace("<locals>.", "") if qualname else parsed.name


def _bound_by(s: gast.Assign, here: _Here, kinds: dict[str, Kind]) -> _Here:
    """After ``name = value`` (bound again already taken out of ``here``): ``name`` is
    defined, holds a shape when ``value`` is ``np.shape(array)``, and an int the same
    in every iteration of an enclosing loop, or stepping with its range, when
    :func:`~s2s_ad.compiler.loop_indices.value_of` finds so."""
    name, value = s.targets[0].id, s.value
    here = replace(here, defined=here.defined | {name})
    if isinstance(value, gast.Call) and callee_of(value) is np.shape and value.args \
            and isinstance(value.args[0], gast.Name):
        here = replace(here, shapes=here.shapes + ((value.args[0].id, name),))
    if kinds.get(name) == "int":
        fact = value_of(value, dict(here.values), here.loops, kinds)
        if fact is not None and fact.loop < len(here.loops):
            here = replace(here, values=here.values + ((name, fact),))
    return here


def _atom_key(index: gast.expr) -> tuple:
    """An index atom as a key: a name, or a constant."""
    return ("name", index.id) if isinstance(index, gast.Name) else ("constant", index.value)


def _names_of(key: tuple) -> set[str]:
    """The names a check's key reads (bound again, the check is stale)."""
    array, _, (what, value, *value_names) = key
    if what == "value":  # (names bound in the loop it holds in: the key stays in it)
        return {array, *value_names[-1]}
    return {array, value} if what == "name" else {array}
