"""The bounds stage: before each item read or write of an array whose integer index
(an int, or an array of ints) :mod:`s2s_ad.compiler.index_ranges` cannot prove in
range, a call ``rt.check_index(array, axis, index, "file:line:col", "function")``
that raises NumPy's ``IndexError`` at the user's line when it is out of range.

Numba checks no bounds: without these, an index out of range reads garbage and a
write lands outside the array, where Python raises.  Every role that runs the
function's statements (the primal, the forward, the fused value-and-gradient,
forward mode and second derivatives over the gradient code) runs the checks.  The
pullback needs none: it indexes with the forward's indices (taped or recomputed),
into the same arrays or into cotangents of their shapes.  s2s_ad's own gradient
code (read again for second derivatives) already carries the checks of the
forward it came from, and gets none more.

Before and after (``x[i]`` is in range; ``x[k]`` may not be):

>>> import gast
>>> from types import SimpleNamespace
>>> from s2s_ad.compiler.ir import ParsedFunction
>>> from s2s_ad.compiler.syntax.annotations import set_callee
>>> from s2s_ad.kinds import ArrayKind
>>> fdef = gast.parse('''
... def f(x, k):
...     n = len(x)
...     for i in range(n):
...         a = x[i]
...         b = x[k]
...     return b''').body[0]
>>> set_callee(fdef.body[0].value, len)
>>> set_callee(fdef.body[1].iter, range)
>>> parsed = ParsedFunction(name="f", node=fdef, filename="model.py", namespace={}, key=None)
>>> kinds = {"x": ArrayKind(1), "k": "int", "n": "int", "i": "int"}
>>> insert_checks(fdef, planned_checks(SimpleNamespace(parsed=parsed, node=fdef), kinds))
>>> print(gast.unparse(fdef).strip())
def f(x, k):
    n = len(x)
    for i in range(n):
        a = x[i]
        rt.check_index(x, 0, k, 'model.py:6:13', 'f')
        b = x[k]
    return b
"""

from __future__ import annotations

import copy

import gast

from s2s_ad import runtime
from s2s_ad.compiler.index_ranges import IndexRanges, bound_names, integer_parts
from s2s_ad.compiler.syntax.annotations import line_of, set_callee, set_line
from s2s_ad.compiler.syntax.builders import call, const, expr_stmt, load
from s2s_ad.errors import Location
from s2s_ad.kinds import ArrayKind, Kind

_BLOCKS = ("body", "orelse", "finalbody")


def planned_checks(normal, kinds: dict[str, Kind]) -> dict[int, list[gast.stmt]]:
    """The checks each statement of ``normal.node`` (a NormalFunction's tree) needs
    before it, by the statement's id (none for s2s_ad's gradient code)."""
    if normal.parsed.generated:
        return {}
    planner = _Planner(normal.parsed, IndexRanges(normal.node, kinds), kinds)
    planner.block(normal.node.body)
    return planner.planned


def insert_checks(fdef: gast.FunctionDef, planned: dict[int, list[gast.stmt]]) -> None:
    """Insert the ``planned`` checks into ``fdef`` (in place)."""

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


class _Planner:
    """Plans the checks, in the order the statements run: a check already made for the
    same array, axis and index (neither bound again since, on every path here) is
    not made again (``x[k] += v`` reads and writes ``x[k]``: one check)."""

    def __init__(self, parsed, ranges: IndexRanges, kinds: dict[str, Kind]):
        self.parsed, self.ranges, self.kinds = parsed, ranges, kinds
        self.planned: dict[int, list[gast.stmt]] = {}

    def block(self, stmts: list[gast.stmt], made: frozenset = frozenset()) -> None:
        """Plan ``stmts``, where the checks ``made`` (``(array, axis, index)`` keys) ran
        before."""
        for s in stmts:
            if isinstance(s, gast.FunctionDef):
                continue
            found, made = self.checks(s, made)
            if found:
                self.planned[id(s)] = found
            bound = bound_names([s])
            made = frozenset(key for key in made if not _names_of(key) & bound)
            for field in _BLOCKS:
                part = getattr(s, field, None)
                if isinstance(part, list) and part and isinstance(part[0], gast.stmt):
                    self.block(part, made)

    def checks(self, s: gast.stmt, made: frozenset) -> tuple[list[gast.stmt], frozenset]:
        """The checks of the indices ``s`` itself uses (a compound statement's test or
        range, not its body) not ``made`` before, and the checks made after them."""
        own = [getattr(s, f) for f in ("test", "iter") if hasattr(s, f)] \
            if isinstance(s, gast.If | gast.While | gast.For) else [s]
        found = []
        for node in (n for part in own for n in _evaluated(part)):
            if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
                    and isinstance(self.kinds.get(node.value.id), ArrayKind)):
                continue
            for axis, index in integer_parts(node, self.kinds):
                key = (node.value.id, axis, _atom_key(index))
                if key not in made and not self.ranges.in_range(node, axis):
                    found.append(self.check(node, axis, index, s))
                    made = made | {key}
        return found, made

    def check(self, node: gast.Subscript, axis: int, index: gast.expr,
              s: gast.stmt) -> gast.stmt:
        where = node if getattr(node, "lineno", None) is not None else s
        location = Location(self.parsed.filename,
                            getattr(where, "lineno", None) or line_of(s, self.parsed.node.lineno),
                            (getattr(where, "col_offset", None) or 0) + 1)
        value = call("rt.check_index", load(node.value.id), const(axis), copy.copy(index),
                     const(str(location)), const(user_function_name(self.parsed)))
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


def _atom_key(index: gast.expr) -> tuple:
    """An index atom as a key: a name, or a constant."""
    return ("name", index.id) if isinstance(index, gast.Name) else ("constant", index.value)


def _names_of(key: tuple) -> set[str]:
    """The names a check's key reads (bound again, the check is stale)."""
    array, _, (what, value) = key
    return {array, value} if what == "name" else {array}
