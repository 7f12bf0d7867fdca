"""Stage 5 (reverse), part: saving values for the pullback.

Top-level values become residual variables, values in loops and branches are
pushed on tapes: arrays indexed by the loop position (preallocated or doubled),
typed lists read back to front for everything else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import gast

from .ir import set_anno
from .lattice import NUMERIC, Kind
from .trees import (
    assign,
    aug,
    call,
    const,
    load,
    subscript_of,
    tuple_of,
)

if TYPE_CHECKING:
    from .reverse import CalleeLink, _Ctx, _Loop

_DTYPES = {"int": "np.int64", "bool": "np.bool_"}


class SavingMixin:
    """Methods of the reverse pass (see :mod:`s2s_ad.reverse`)."""

    def residual(self, name: str, kind: Kind = "unknown") -> None:
        if name not in self.residuals:
            self.residuals.append(name)
            self.residual_kinds.append(kind)

    # -- saving values for the pullback -------------------------------------------
    def save(self, atom: gast.expr, ctx: _Ctx) -> tuple[list[gast.stmt], list[gast.stmt],
                                                         gast.expr]:
        """(forward statements, pullback statements, pullback expression) for a value."""
        if not isinstance(atom, gast.Name):
            return [], [], atom
        name, kind = atom.id, self.kind(atom)
        if name in self.stable:
            self.residual(name, kind)
            return [], [], load(name)
        numeric = kind in NUMERIC
        if ctx.top or (ctx.loop is None and numeric):
            copy_name = self.namer.fresh(f"{name}_saved")
            self.residual(copy_name, kind)
            if not ctx.top:
                self.fwd_init.append(assign(copy_name, self._zero_value(kind)))
            return [assign(copy_name, load(name), self.line)], [], load(copy_name)
        if numeric:
            return self._push_array(name, kind, ctx.loop)
        return self._push_list(name)

    def _zero_value(self, kind: Kind) -> gast.expr:
        return const({"int": 0, "bool": False}.get(kind, 0.0))

    def _push_array(self, name: str, kind: Kind, loop: _Loop):
        tape = self.namer.fresh(f"{name}_tape")
        dtype = _DTYPES.get(kind, self.float_dtype)
        loop.tapes.append((tape, dtype))
        self.residual(tape)
        slot = subscript_of(load(tape), load(loop.position))
        write = gast.Assign(targets=[gast.Subscript(value=load(tape), slice=load(loop.position),
                                                    ctx=gast.Store())],
                            value=load(name), type_comment=None)
        set_anno(write, "line", self.line)
        return [write], [], slot

    def _push_list(self, name: str):
        """Push on a typed list; the pullback reads it back to front with a cursor,
        leaving it intact so the pullback can run again."""
        tape = self.namer.fresh(f"{name}_stack")
        cursor = self.namer.fresh(f"{tape}_top")
        self.tapes[tape] = "list"
        self.residual(tape)
        self.fwd_init.append(assign(tape, call("List")))
        self.cursors.append(assign(cursor, call("len", load(tape))))
        read = self.namer.fresh(f"{name}_read")
        push = gast.Expr(value=call(f"{tape}.append", load(name)))
        set_anno(push, "line", self.line)
        pop = [aug(cursor, gast.Sub(), const(1), self.line),
               assign(read, subscript_of(load(tape), load(cursor)), self.line)]
        return [push], pop, load(read)

    def save_residuals(self, res: str, link: CalleeLink, ctx: _Ctx):
        """Save a callee's residual tuple; element by element when all are numbers,
        so loops keep them in (preallocated) arrays rather than lists of tuples."""
        kinds = link.transform.generated.residual_kinds
        if ctx.top or not kinds or not all(k in NUMERIC for k in kinds):
            return self.save(load(res), ctx)
        fwd: list[gast.stmt] = []
        pops: list[gast.stmt] = []
        reads: list[gast.expr] = []
        for i, kind in enumerate(kinds):
            part = self.namer.fresh(f"{res}_{i}")
            self.kinds[part] = kind
            fwd.append(assign(part, subscript_of(load(res), i), self.line))
            f, p, e = self.save(load(part), ctx)
            fwd += f
            pops[:0] = p
            reads.append(e)
        return fwd, pops, tuple_of(reads)
