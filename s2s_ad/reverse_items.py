"""Stage 5 (reverse), part: arrays.

Rule specialisation (constant axis, ndims), broadcasting back to operand
shapes, guards for empty (not yet set) array cotangents, and item reads and
writes: a write saves the overwritten value and the pullback restores it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import gast
import numpy as np

from .errors import NonDifferentiableError
from .ir import get_anno
from .lattice import ArrayKind, Kind, indexed
from .rules.classify import Primitive
from .rules.registry import Rule
from .trees import (
    assign,
    aug_item,
    call,
    const,
    load,
    substitute,
)

if TYPE_CHECKING:
    from .reverse import _Ctx


_VIEWS = (np.reshape, np.transpose, np.ravel)


def _definitions(stmts: list[gast.stmt]):
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s.targets[0].id, s.value
        for field in ("body", "orelse"):
            yield from _definitions(getattr(s, field, []) or [])


def _is_view(op: gast.expr, of: str | None = None) -> bool:
    """Whether ``op`` may return memory of an existing array (of ``of``, if given)."""
    if isinstance(op, gast.Name):
        base = op
    elif isinstance(op, gast.Subscript):
        base = op.value
    elif isinstance(op, gast.Call) and get_anno(op, "callee") in _VIEWS and op.args:
        base = op.args[0]
    else:
        return False
    return isinstance(base, gast.Name) and (of is None or base.id == of)


class ItemsMixin:
    """Methods of the reverse pass (see :mod:`s2s_ad.reverse`)."""

    def specialized(self, prim: Primitive, where: gast.AST) -> Rule:
        unknown = [k.arg for k in getattr(where, "keywords", []) if k.arg not in prim.rule.params]
        if unknown:
            raise NonDifferentiableError(
                f"{prim.rule.emit}: the keyword '{unknown[0]}' is not supported",
                self.norm.parsed.location(where), "leave it out, or compute it another way")
        try:
            return prim.rule.specialize(prim.operands, [self.kind(a) for a in prim.operands])
        except ValueError as exc:
            raise NonDifferentiableError(str(exc), self.norm.parsed.location(
                where if hasattr(where, "lineno") else self.norm.node)) from None

    def broadcast_back(self, rule: Rule, target: str, atom: gast.expr, param: str,
                       value: gast.expr, value_of) -> gast.expr:
        """An element-wise contribution summed back to its operand's shape."""
        if not (rule.elementwise and isinstance(self.kinds.get(target), ArrayKind)):
            return value
        if isinstance(self.kind(atom), ArrayKind):
            return call("ar.unbroadcast", value, value_of(param))
        return call("ar.unbroadcast_scalar", value)

    def guard(self, target: str, g: gast.expr, body: list[gast.stmt]) -> list[gast.stmt]:
        """Array cotangents: skip the contributions while ``g`` is still empty (zero)."""
        if not body or not isinstance(self.kinds.get(target), ArrayKind):
            return body
        test = gast.Compare(left=gast.Attribute(value=g, attr="size", ctx=gast.Load()),
                            ops=[gast.NotEq()], comparators=[const(0)])
        return [gast.If(test=test, body=body, orelse=[])]

    def index_reads(self, index: gast.expr, ctx: _Ctx, fwd: list, pops: list) -> gast.expr:
        """The index expression with its variable parts saved for the pullback."""
        index = copy.deepcopy(index)
        names = sorted({n.id for n in gast.walk(index) if isinstance(n, gast.Name)})
        reads = {}
        for name in names:
            f, p, e = self.save(load(name), ctx)
            fwd.extend(f)
            pops[:0] = p
            reads[name] = e
        return substitute(index, reads)

    def read_item(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        """``y = x[index]``: the pullback adds ``d_y`` into ``d_x[index]``."""
        base = prim.operands[0]
        fwd: list[gast.stmt] = []
        pops: list[gast.stmt] = []
        rev_body: list[gast.stmt] = []
        head, g = self._grad_source(target, prim)
        if self.active(base):
            f, p, base_value = self.save(base, ctx)
            fwd += f
            pops[:0] = p
            index = self.index_reads(s.value.slice, ctx, fwd, pops)
            d_x = self.adj(base.id)
            rev_body = [self.materialized(d_x, base_value), aug_item(d_x, index, g, self.line)]
        rev = [self._header()] + pops + head + self.guard(target, g, rev_body)
        return fwd + [s], rev + self._reset(target, prim)

    def write_item(self, s: gast.Assign, ctx: _Ctx) -> tuple[list, list]:
        """``x[index] = v``: save the overwritten value; the pullback restores it,
        moves ``d_x[index]`` into ``d_v`` and zeroes it."""
        target = s.targets[0]
        name = target.value.id
        self.check_writable(name, s)
        self.written.append(name) if name not in self.written else None
        self.residual(name, self.kinds.get(name))
        fwd: list[gast.stmt] = []
        pops: list[gast.stmt] = []
        index = self.index_reads(target.slice, ctx, fwd, pops)
        old = self.namer.fresh(f"{name}_overwritten")
        item_kind = self.item_kind(name, target.slice)
        self.kinds[old] = item_kind
        read = gast.Subscript(value=load(name), slice=copy.deepcopy(target.slice),
                              ctx=gast.Load())
        if isinstance(item_kind, ArrayKind):
            read = call("np.copy", read)
        fwd.append(assign(old, read, self.line))
        f, p, old_value = self.save(load(old), ctx)
        fwd += f
        pops[:0] = p
        restore = gast.Assign(targets=[gast.Subscript(value=load(name), slice=index,
                                                      ctx=gast.Store())],
                              value=old_value, type_comment=None)
        rev = [self._header()] + pops + [restore]
        if self.activity.active(name):
            rev += self.item_adjoint(name, index, s.value, ctx, fwd)
        return fwd + [s], rev

    def materialized(self, d_x: str, like: gast.expr) -> gast.stmt:
        """``d_x`` made a full array before item updates (a cheap test in loops)."""
        empty = gast.Compare(left=gast.Attribute(value=load(d_x), attr="size", ctx=gast.Load()),
                             ops=[gast.Eq()], comparators=[const(0)])
        return gast.If(test=empty, body=[assign(d_x, call("rt.materialize", load(d_x), like),
                                                self.line)], orelse=[])

    def check_writable(self, name: str, s: gast.Assign) -> None:
        """Refuse a write that could change memory another variable sees."""
        where = self.norm.parsed.location(s)
        definitions = [d for d in _definitions(self.norm.node.body) if d[0] == name]
        if name not in self.stable or len(definitions) != 1:
            raise NonDifferentiableError(
                f"writing into '{name}', which is assigned more than once, is not supported",
                where, f"allocate '{name}' once (e.g. {name} = np.zeros(n)) and write into it")
        if _is_view(definitions[0][1]):
            raise NonDifferentiableError(
                f"writing into '{name}', which may share memory with another array, is not "
                "supported", where, f"write into a copy: {name} = np.copy(...)")
        for other, op in _definitions(self.norm.node.body):
            if other != name and other not in self.norm.temps and _is_view(op, of=name) \
                    and isinstance(self.kinds.get(other), ArrayKind):
                raise NonDifferentiableError(
                    f"writing into '{name}' while '{other}' views or aliases it is not "
                    "supported", where, f"make '{other}' a copy: {other} = np.copy(...)")

    def check_in_place(self, name: str, s: gast.Assign) -> None:
        """``y += e`` on an array mutates it: fine unless someone else sees ``y``'s memory
        (the generated code rebinds ``y``, which is the same only without aliases)."""
        where = self.norm.parsed.location(s)
        if name in self.norm.params:
            raise NonDifferentiableError(
                f"an in-place operator on the argument array '{name}' would change the "
                "caller's array", where, f"rebind instead: {name} = {name} <op> ...")
        for other, op in _definitions(self.norm.node.body):
            shares = (other != name and other not in self.norm.temps
                      and _is_view(op, of=name)) or (other == name and _is_view(op))
            if shares and isinstance(self.kinds.get(other), ArrayKind):
                raise NonDifferentiableError(
                    f"an in-place operator on '{name}', which shares memory with another "
                    "array, is not supported", where,
                    f"rebind instead: {name} = {name} <op> ...")

    def item_kind(self, name: str, index: gast.expr) -> Kind:
        """The kind of ``name[index]`` (the kinds stage's indexing rule)."""
        return indexed(self.kinds[name], index, self.kind)

    def item_adjoint(self, name: str, index: gast.expr, value: gast.expr, ctx: _Ctx,
                     fwd: list) -> list[gast.stmt]:
        d_x = self.adj(name)
        f, p, x_value = self.save(load(name), ctx)
        fwd += f
        out = p + [self.materialized(d_x, x_value)]
        if self.active(value):
            part = gast.Subscript(value=load(d_x), slice=index, ctx=gast.Load())
            kind = self.kind(value)
            if isinstance(kind, ArrayKind):
                v_f, v_p, v_value = self.save(value, ctx)
                fwd += v_f
                out[:0] = v_p
                part = call("ar.unbroadcast", call("np.copy", part), v_value)
            elif isinstance(self.item_kind(name, index), ArrayKind):
                part = call("np.sum", part)
            out += self.accumulate(value.id, kind, part)
        zeroing = gast.Assign(targets=[gast.Subscript(value=load(d_x), slice=index,
                                                      ctx=gast.Store())],
                              value=const(0.0), type_comment=None)
        return out + [zeroing]

