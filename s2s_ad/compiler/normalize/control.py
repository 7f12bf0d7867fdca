"""The anf stage (normalize), part: structured control flow.

``desugar_control`` rewrites ``return`` inside branches and loops, ``break``
and ``continue`` into boolean flags, so the tree it returns has:

* exactly one ``return``, the last statement of the function;
* no ``continue``; a ``break`` only as ``if <stop flag>: break``, the last
  statement of a loop body.

Every path through a loop body then runs to the end of the body, and the
reverse pass needs only branch decisions and trip counts to replay it.
Statements after one that may exit are wrapped in ``if not <flag>:``.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast

from s2s_ad.compiler.syntax.builders import (
    assign,
    break_stmt,
    const,
    if_stmt,
    load,
    pass_stmt,
    return_stmt,
    unary,
)
from s2s_ad.compiler.syntax.names import Namer


@dataclass
class _LoopFlags:
    skip: str | None  # set by continue / break / return: skip the rest of this iteration
    stop: str | None  # set by break / return: leave the loop after this iteration


def _walk_no_loops(stmts: list[gast.stmt]):
    """Statements nested in ``stmts`` through ifs, not through loops or defs."""
    for s in stmts:
        yield s
        if isinstance(s, gast.If):
            yield from _walk_no_loops(s.body)
            yield from _walk_no_loops(s.orelse)


def _contains(stmts: list[gast.stmt], kinds: tuple[type, ...], through_loops: bool) -> bool:
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, gast.If) and (_contains(s.body, kinds, through_loops)
                                       or _contains(s.orelse, kinds, through_loops)):
            return True
        if through_loops and isinstance(s, gast.For | gast.While) and _contains(
                s.body, kinds, through_loops):
            return True
    return False


def breaks_out(stmts: list[gast.stmt]) -> bool:
    """Whether a ``break`` in ``stmts`` (through branches, not inner loops) leaves the
    loop whose body they are (after desugaring, how ``break`` and ``return`` leave)."""
    return _contains(stmts, (gast.Break,), through_loops=False)


def _can_fall_off(stmts: list[gast.stmt]) -> bool:
    if not stmts:
        return True
    last = stmts[-1]
    if isinstance(last, gast.Return | gast.Raise):
        return False
    if isinstance(last, gast.If):
        return _can_fall_off(last.body) or _can_fall_off(last.orelse)
    return True


def _set(name: str, value: bool | None, like: gast.AST) -> gast.Assign:
    return gast.copy_location(assign(name, const(value)), like)


def _if(test: gast.expr, body: list[gast.stmt], like: gast.AST) -> gast.If:
    return gast.copy_location(if_stmt(test, body, []), like)


def _not(name: str) -> gast.UnaryOp:
    return unary(gast.Not(), load(name))


class _Desugar:
    def __init__(self, namer: Namer, flagged_return: bool):
        self.namer = namer
        self.returned = namer.fresh("returned") if flagged_return else None
        self.retval = namer.fresh("retval") if flagged_return else None

    def block(self, stmts: list[gast.stmt], loop: _LoopFlags | None) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for idx, s in enumerate(stmts):
            exits = self._may_exit(s, loop)  # before stmt() rewrites the returns inside
            out.extend(self.stmt(s, loop))
            if exits:
                rest = self.block(stmts[idx + 1:], loop)
                if rest:
                    flag = loop.skip if loop is not None else self.returned
                    out.append(_if(_not(flag), rest, stmts[idx + 1]))
                return out
        return out

    def _may_exit(self, s: gast.stmt, loop: _LoopFlags | None) -> bool:
        if loop is not None and loop.skip is not None:
            if _contains([s], (gast.Break, gast.Continue), through_loops=False):
                return True
            return self.returned is not None and _contains([s], (gast.Return,), True)
        return self.returned is not None and _contains([s], (gast.Return,), True)

    def stmt(self, s: gast.stmt, loop: _LoopFlags | None) -> list[gast.stmt]:
        if isinstance(s, gast.Return) and self.returned is not None:
            value = s.value if s.value is not None else const(None)
            keep = gast.copy_location(assign(self.retval, value), s)
            return [keep, _set(self.returned, True, s)] + self._leave(loop, s)
        if isinstance(s, gast.Break):
            return self._leave(loop, s)
        if isinstance(s, gast.Continue):
            return [_set(loop.skip, True, s)]
        if isinstance(s, gast.If):
            s.body = self.block(s.body, loop) or [pass_stmt()]
            s.orelse = self.block(s.orelse, loop)
            return [s]
        if isinstance(s, gast.For | gast.While):
            return self.loop(s, loop)
        return [s]

    def _leave(self, loop: _LoopFlags | None, like: gast.AST) -> list[gast.stmt]:
        if loop is None:
            return []
        return [_set(loop.skip, True, like), _set(loop.stop, True, like)]

    def loop(self, s: gast.For | gast.While, outer: _LoopFlags | None) -> list[gast.stmt]:
        has_break = _contains(s.body, (gast.Break,), through_loops=False)
        has_continue = _contains(s.body, (gast.Continue,), through_loops=False)
        has_return = self.returned is not None and _contains(s.body, (gast.Return,), True)
        if not (has_break or has_continue or has_return):
            s.body = self.block(s.body, None)
            return [s]
        stop = self.namer.fresh("stop") if (has_break or has_return) else None
        flags = _LoopFlags(skip=self.namer.fresh("skip"), stop=stop)
        body = [_set(flags.skip, False, s)] + self.block(s.body, flags)
        if stop is not None:
            body.append(_if(load(stop), [gast.copy_location(break_stmt(), s)], s))
        s.body = body
        out: list[gast.stmt] = [_set(stop, False, s)] if stop is not None else []
        out.append(s)
        if has_return and outer is not None:
            out.append(_if(load(self.returned), self._leave(outer, s), s))
        return out


def desugar_control(fdef: gast.FunctionDef, namer: Namer) -> str | None:
    """Rewrite ``fdef.body`` in place into the single-exit form described above;
    return the name of the flag set by early returns (None without any)."""
    body = fdef.body
    if _can_fall_off(body):
        body.append(gast.copy_location(return_stmt(None), body[-1] if body else fdef))
    early = _contains(body[:-1], (gast.Return,), True) or (
        isinstance(body[-1], gast.If) and _contains([body[-1]], (gast.Return,), True))
    d = _Desugar(namer, flagged_return=early)
    new_body = d.block(body, None)
    if d.returned is not None:
        last = body[-1]
        new_body = ([_set(d.returned, False, fdef)] + new_body
                    + [gast.copy_location(return_stmt(load(d.retval)), last)])
    fdef.body = new_body
    return d.returned
