"""Stage 5, reverse: ANF -> primal, forward, pullback and fused value-and-gradient.

Guarantees about the four ``FunctionDef`` trees it returns:

* ``forward(params) -> (value, residuals)`` runs the original statements once,
  plus saves: a value the pullback needs is read by name when it is assigned
  once at the top level, copied to a residual variable when saved at the top
  level, and pushed onto a tape when saved inside a loop or branch;
* numeric tapes are NumPy arrays indexed by the loop's position counter,
  preallocated to the trip count for a top-level ``for ... in range`` loop and
  doubled on demand otherwise; other values go on typed lists used as stacks;
* branch decisions and per-entry loop trip counts are saved the same way, so
  ``pullback(residuals, d_value) -> d_params`` replays the control flow in
  reverse without re-running any original statement (no side effect repeats);
* only active variables (see :mod:`s2s_ad.activity`) get adjoint code;
* every generated statement keeps the ``line`` annotation of its source line.
"""

from __future__ import annotations

import builtins
import copy
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .activity import Activity
from .errors import NonDifferentiableError
from .ir import get_anno, set_anno
from .kinds import NUMERIC, ArrayKind, Kind, carries_derivative, kind_of_value
from .normalize import NormalFunction, const, load, store
from .rules.classify import Primitive, classify
from .rules.registry import Rule

_DTYPES = {"int": "np.int64", "bool": "np.bool_"}


@dataclass
class CalleeLink:
    """A call from generated code to another transformed function."""

    transform: Any
    primal: str
    forward: str
    pullback: str
    wrt_positions: list[int]


Linker = Callable[[Any, list, bool], Any]


@dataclass
class Generated:
    """The output of :func:`reverse`: four functions and what they need injected."""

    primal: gast.FunctionDef
    forward: gast.FunctionDef
    pullback: gast.FunctionDef
    fused: gast.FunctionDef
    links: list[CalleeLink]
    externals: dict[str, Any]
    residuals: list[str]
    residual_kinds: list[Kind]
    tapes: dict[str, str]  # tape name -> "preallocated" | "growable" | "list"


@dataclass
class _Loop:
    counter: str
    position: str | None = None
    trip: str | None = None  # name of the trip count when the tapes are preallocated
    tapes: list[tuple[str, str]] = field(default_factory=list)  # (tape, dtype)


@dataclass
class _Ctx:
    loop: _Loop | None = None
    conditional: bool = False

    @property
    def top(self) -> bool:
        return self.loop is None and not self.conditional


def _assign(target: str, value: gast.expr, line: int | None = None) -> gast.Assign:
    node = gast.Assign(targets=[store(target)], value=value, type_comment=None)
    set_anno(node, "line", line)
    return node


def _aug(target: str, op: gast.operator, value: gast.expr, line: int | None) -> gast.AugAssign:
    node = gast.AugAssign(target=store(target), op=op, value=value)
    set_anno(node, "line", line)
    return node


def _aug_item(name: str, index: gast.expr, value: gast.expr, line: int | None) -> gast.stmt:
    node = gast.AugAssign(target=gast.Subscript(value=load(name), slice=index,
                                                ctx=gast.Store()),
                          op=gast.Add(), value=value)
    set_anno(node, "line", line)
    return node


def _call(func: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=gast.parse(func, mode="eval").body, args=list(args), keywords=[])


def _index(value: gast.expr, i: int | gast.expr) -> gast.Subscript:
    idx = const(i) if isinstance(i, int) else i
    return gast.Subscript(value=value, slice=idx, ctx=gast.Load())


def _tuple(elts: list[gast.expr]) -> gast.Tuple:
    return gast.Tuple(elts=elts, ctx=gast.Load())


def _comment(text: str) -> gast.Expr:
    node = gast.Expr(value=gast.Constant(value=text, kind=None))
    set_anno(node, "comment", text)
    return node


def zero(kind: Kind) -> gast.expr:
    """A zero cotangent for a value of ``kind``.

    For an array it is an empty array of the same rank: "no cotangent yet".
    The first contribution replaces it (``rt.accumulate``), so the pullback
    never needs the shape of a value it has not saved.
    """
    if isinstance(kind, tuple):
        return _tuple([zero(k) for k in kind])
    if isinstance(kind, ArrayKind):
        if kind.ndim is None:
            raise NonDifferentiableError("an array whose number of dimensions changes cannot "
                                         "be differentiated", None,
                                         "keep each variable's array rank fixed")
        return _call("np.zeros", _tuple([const(0)] * kind.ndim))
    return const(0.0)


def _add(kind: Kind, current: gast.expr, value: gast.expr) -> gast.expr:
    if isinstance(kind, ArrayKind):
        return _call("rt.accumulate", current, value)
    return gast.BinOp(left=current, op=gast.Add(), right=value)


def _count_assignments(stmts: list[gast.stmt], top: bool, counts: Counter,
                       nested: set[str]) -> None:
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            name = s.targets[0].id
            counts[name] += 1
            if not top:
                nested.add(name)
        elif isinstance(s, gast.For):
            counts[s.target.id] += 1
            nested.add(s.target.id)
            _count_assignments(s.body, False, counts, nested)
        elif isinstance(s, gast.If | gast.While):
            _count_assignments(s.body, False, counts, nested)
            _count_assignments(getattr(s, "orelse", []), False, counts, nested)


class _Reverser:
    def __init__(self, norm: NormalFunction, kinds: dict[str, Kind], activity: Activity,
                 wrt: list[str], float_dtype: str, linker: Linker):
        self.norm = norm
        self.kinds = kinds
        self.activity = activity
        self.wrt = wrt
        self.float_dtype = float_dtype
        self.linker = linker
        self.namer = norm.namer
        counts: Counter = Counter()
        nested: set[str] = set()
        _count_assignments(norm.node.body, True, counts, nested)
        # read by name in the pullback: one definition (a parameter binding counts)
        params = set(norm.params)
        self.stable = {p for p in params if counts[p] == 0} | {
            n for n, c in counts.items() if c == 1 and n not in nested and n not in params}
        self.adjoints: dict[str, str] = {}
        self.residuals: list[str] = []
        self.residual_kinds: list[Kind] = []
        self.fwd_init: list[gast.stmt] = []
        self.cursors: list[gast.stmt] = []
        self.tapes: dict[str, str] = {}
        self.links: dict[int, CalleeLink] = {}
        self.externals: dict[str, Any] = dict(norm.externals)
        self.line: int | None = None

    # -- names -------------------------------------------------------------------
    def adj(self, name: str) -> str:
        if name not in self.adjoints:
            self.adjoints[name] = self.namer.fresh(f"d_{name}")
        return self.adjoints[name]

    def active(self, atom: gast.expr) -> bool:
        return isinstance(atom, gast.Name) and self.activity.active(atom.id)

    def kind(self, atom: gast.expr) -> Kind:
        if isinstance(atom, gast.Name):
            return self.kinds.get(atom.id, "unknown")
        return kind_of_value(atom.value)

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
                self.fwd_init.append(_assign(copy_name, self._zero_value(kind)))
            return [_assign(copy_name, load(name), self.line)], [], load(copy_name)
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
        slot = _index(load(tape), load(loop.position))
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
        self.fwd_init.append(_assign(tape, _call("List")))
        self.cursors.append(_assign(cursor, _call("len", load(tape))))
        read = self.namer.fresh(f"{name}_read")
        push = gast.Expr(value=_call(f"{tape}.append", load(name)))
        set_anno(push, "line", self.line)
        pop = [_aug(cursor, gast.Sub(), const(1), self.line),
               _assign(read, _index(load(tape), load(cursor)), self.line)]
        return [push], pop, load(read)

    # -- adjoint accumulation -------------------------------------------------------
    def accumulate(self, name: str, kind: Kind, value: gast.expr) -> list[gast.stmt]:
        """``d_name += value`` (element-wise for tuples)."""
        target = self.adj(name)
        if isinstance(kind, tuple):
            elts = [_add(k, _index(load(target), i), _index(value, i))
                    for i, k in enumerate(kind)]
            return [_assign(target, _tuple(elts), self.line)]
        if isinstance(kind, ArrayKind):
            return [_assign(target, _add(kind, load(target), value), self.line)]
        return [_aug(target, gast.Add(), value, self.line)]

    def accumulate_at(self, name: str, kind: tuple, index: int,
                      value: gast.expr) -> list[gast.stmt]:
        """``d_name[index] += value`` for a tuple cotangent."""
        target = self.adj(name)
        elts = [_index(load(target), i) for i in range(len(kind))]
        elts[index] = _add(kind[index], elts[index], value)
        return [_assign(target, _tuple(elts), self.line)]

    # -- blocks ----------------------------------------------------------------------
    def block(self, stmts: list[gast.stmt], ctx: _Ctx) -> tuple[list, list]:
        fwd: list[gast.stmt] = []
        rev: list[gast.stmt] = []
        for s in stmts:
            self.line = get_anno(s, "line", self.line)
            f, r = self.stmt(s, ctx)
            fwd.extend(f)
            rev[:0] = r
        return fwd, rev

    def stmt(self, s: gast.stmt, ctx: _Ctx) -> tuple[list, list]:
        if isinstance(s, gast.Assign):
            return self.assign(s, ctx)
        if isinstance(s, gast.If):
            return self.if_(s, ctx)
        if isinstance(s, gast.For | gast.While):
            return self.loop(s, ctx)
        if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
            return [self.primal_stmt(s)], []
        if isinstance(s, gast.FunctionDef):
            self.bind_globals(s)
        return [s], []

    def bind_globals(self, node: gast.AST) -> None:
        """Bind the module-level names that Python code kept as written reads."""
        namespace = self.norm.parsed.namespace
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and \
                    n.id not in self.norm.locals and n.id in namespace and \
                    n.id not in dir(builtins):
                self.externals.setdefault(n.id, namespace[n.id])

    def primal_stmt(self, s: gast.stmt) -> gast.stmt:
        """``s`` computing the original value with names the generated module has:
        rules by their canonical name, Python functions by their generated primal,
        anything else through an injected name."""
        value = s.value
        if isinstance(value, gast.Lambda):
            self.bind_globals(value)
        if not isinstance(value, gast.Call):
            return s
        new = copy.copy(s)
        new.value = self.primal_value(value)
        return new

    def primal_value(self, value: gast.Call) -> gast.expr:
        prim = classify(value)
        args = list(value.args)
        if prim.what in ("hook", "cut"):
            return prim.operands[0]
        if prim.what == "rule":
            template = self.specialized(prim, value).forward_template()
            if template is not None:
                return _substitute(template, dict(zip(prim.rule.params, prim.operands,
                                                      strict=False)))
            return gast.Call(func=gast.parse(prim.rule.emit, mode="eval").body, args=args,
                             keywords=value.keywords)
        if prim.what == "function" or (prim.what == "custom" and isinstance(
                prim.callee, types.FunctionType)):
            return gast.Call(func=load(self.link(prim, primal_only=True).primal), args=args,
                             keywords=[])
        name = self.external(prim.callee)
        return gast.Call(func=load(name), args=args, keywords=value.keywords)

    def external(self, obj: Any) -> str:
        """A name in the generated module bound to ``obj`` when it is loaded."""
        for name, known in self.externals.items():
            if known is obj:
                return name
        name = self.namer.fresh(getattr(obj, "__name__", "external"))
        self.externals[name] = obj
        return name

    def link(self, prim: Primitive, callee: Any = None, kinds: list | None = None,
             primal_only: bool = False) -> CalleeLink:
        kinds = kinds if kinds is not None else [self.kind(a) for a in prim.operands]
        transform = self.linker(callee if callee is not None else prim.callee, kinds,
                                primal_only)
        key = id(transform)
        if key not in self.links:
            base = transform.name
            self.links[key] = CalleeLink(
                transform=transform, primal=self.namer.fresh(base),
                forward=self.namer.fresh(f"{base}_forward"),
                pullback=self.namer.fresh(f"{base}_pullback"),
                wrt_positions=transform.wrt_positions)
        return self.links[key]

    # -- assignments -------------------------------------------------------------------
    def assign(self, s: gast.Assign, ctx: _Ctx) -> tuple[list, list]:
        if isinstance(s.targets[0], gast.Subscript):
            return self.write_item(s, ctx)
        target = s.targets[0].id
        prim = classify(s.value)
        if not self.activity.active(target):
            return [self.primal_stmt(s)], []
        if prim.what == "function":
            return self.call_function(s, target, prim, ctx)
        if prim.what == "custom":
            return self.call_custom(s, target, prim, ctx)
        if prim.what == "hook":
            return self.call_hook(s, target, prim, ctx)
        if prim.what == "unknown":
            raise self._unknown_call(s, prim)
        return self.apply_rule(s, target, prim, ctx)

    def _unknown_call(self, s: gast.stmt, prim: Primitive) -> NonDifferentiableError:
        callee = prim.callee
        name = getattr(callee, "__name__", repr(callee))
        loc = self.norm.parsed.location(s.value if hasattr(s.value, "lineno") else s)
        return NonDifferentiableError(
            f"'{name}' has no derivative rule and no Python source to differentiate", loc,
            f"register one with @ad.derivative(of={name}), or mark the value with "
            "ad.without_derivative(...)")

    def _grad_source(self, target: str, prim: Primitive) -> tuple[list, gast.expr]:
        """Statements that take the cotangent of ``target`` and the expression for it."""
        if any(isinstance(a, gast.Name) and a.id == target for a in prim.operands):
            incoming = self.namer.fresh(f"{self.adj(target)}_in")
            kind = self.kinds.get(target)
            return [_assign(incoming, load(self.adj(target)), self.line),
                    _assign(self.adj(target), zero(kind), self.line)], load(incoming)
        return [], load(self.adj(target))

    def _reset(self, target: str, prim: Primitive) -> list[gast.stmt]:
        if target in self.stable or any(isinstance(a, gast.Name) and a.id == target
                                        for a in prim.operands):
            return []
        return [_assign(self.adj(target), zero(self.kinds.get(target)), self.line)]

    def specialized(self, prim: Primitive, where: gast.AST) -> Rule:
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
            return _call("ar.unbroadcast", value, value_of(param))
        return _call("ar.unbroadcast_scalar", value)

    def apply_rule(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        if prim.what == "index" and isinstance(self.kind(prim.operands[0]), ArrayKind):
            return self.read_item(s, target, prim, ctx)
        if prim.what == "rule":
            prim = Primitive("rule", prim.operands, self.specialized(prim, s.value),
                             prim.callee)
        before: list[gast.stmt] = []
        after: list[gast.stmt] = []
        pops: list[gast.stmt] = []
        head, g = self._grad_source(target, prim)
        contributions: list[gast.stmt] = []
        saved: dict[tuple, gast.expr] = {}

        def value_of(tname: str) -> gast.expr:
            atom = load(target) if tname == "z" else prim.operands[
                prim.rule.params.index(tname)]
            key = (tname == "z", atom.id if isinstance(atom, gast.Name) else tname)
            if key not in saved:  # x * x saves x once
                f, p, e = self.save(atom, ctx)
                (after if tname == "z" else before).extend(f)
                pops[:0] = p
                saved[key] = e
            return saved[key]

        for pos, atom in prim.differentiable_operands():
            if not self.active(atom):
                continue
            if prim.what == "rule":
                rule, param = prim.rule, prim.rule.params[pos]
                names = {n: value_of(n) for n in rule.needs(param)}
                names["g"] = g
                value = _substitute(rule.template(param), names)
                value = self.broadcast_back(rule, target, atom, param, value, value_of)
                contributions += self.accumulate(atom.id, self.kind(atom), value)
            elif prim.what == "copy":
                contributions += self.accumulate(atom.id, self.kind(atom), g)
            elif prim.what == "tuple":
                contributions += self.accumulate(atom.id, self.kind(atom), _index(g, pos))
            elif prim.what == "index":
                contributions += self.accumulate_at(atom.id, self.kind(atom),
                                                    s.value.slice.value, g)
        fwd = before + [self.primal_stmt(s)] + after
        contributions = self.guard(target, g, contributions)
        rev = [self._header()] + pops + head + contributions + self._reset(target, prim)
        return fwd, rev

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
        return _substitute(index, reads)

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
            rev_body = [_assign(d_x, _call("rt.materialize", load(d_x), base_value), self.line),
                        _aug_item(d_x, index, g, self.line)]
        rev = [self._header()] + pops + head + self.guard(target, g, rev_body)
        return fwd + [s], rev + self._reset(target, prim)

    def write_item(self, s: gast.Assign, ctx: _Ctx) -> tuple[list, list]:
        """``x[index] = v``: save the overwritten value; the pullback restores it,
        moves ``d_x[index]`` into ``d_v`` and zeroes it."""
        target = s.targets[0]
        name = target.value.id
        fwd: list[gast.stmt] = []
        pops: list[gast.stmt] = []
        index = self.index_reads(target.slice, ctx, fwd, pops)
        old = self.namer.fresh(f"{name}_overwritten")
        item_kind = self.item_kind(target)
        self.kinds[old] = item_kind
        read = gast.Subscript(value=load(name), slice=copy.deepcopy(target.slice),
                              ctx=gast.Load())
        if isinstance(item_kind, ArrayKind):
            read = _call("np.copy", read)
        fwd.append(_assign(old, read, self.line))
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

    def item_kind(self, target: gast.Subscript) -> Kind:
        from .kinds import _Kinds  # the same indexing rule as the kinds stage
        return _Kinds(self.kinds, None).indexed(self.kinds[target.value.id], target.slice)

    def item_adjoint(self, name: str, index: gast.expr, value: gast.expr, ctx: _Ctx,
                     fwd: list) -> list[gast.stmt]:
        d_x = self.adj(name)
        f, p, x_value = self.save(load(name), ctx)
        fwd += f
        out = p + [_assign(d_x, _call("rt.materialize", load(d_x), x_value), self.line)]
        if self.active(value):
            part = gast.Subscript(value=load(d_x), slice=index, ctx=gast.Load())
            kind = self.kind(value)
            if isinstance(kind, ArrayKind):
                v_f, v_p, v_value = self.save(value, ctx)
                fwd += v_f
                out[:0] = v_p
                part = _call("ar.unbroadcast", _call("np.copy", part), v_value)
            elif isinstance(self.item_kind_of(name, index), ArrayKind):
                part = _call("np.sum", part)
            out += self.accumulate(value.id, kind, part)
        zeroing = gast.Assign(targets=[gast.Subscript(value=load(d_x), slice=index,
                                                      ctx=gast.Store())],
                              value=const(0.0), type_comment=None)
        return out + [zeroing]

    def item_kind_of(self, name: str, index: gast.expr) -> Kind:
        from .kinds import _Kinds
        return _Kinds(self.kinds, None).indexed(self.kinds[name], index)

    def _header(self) -> gast.Expr:
        node = _comment(f"adjoint of line {self.line}")
        set_anno(node, "line", self.line)
        return node

    def call_function(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        link = self.link(prim)
        res = self.namer.fresh(f"{link.primal}_residuals")
        self.kinds[res] = "unknown"
        call = gast.Call(func=load(link.forward), args=list(prim.operands), keywords=[])
        fwd_call = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(res)],
                                                   ctx=gast.Store())],
                               value=call, type_comment=None)
        set_anno(fwd_call, "line", self.line)
        f, p, res_expr = self.save_residuals(res, link, ctx)
        head, g = self._grad_source(target, prim)
        grads = self.namer.fresh(f"{link.primal}_grads")
        rev = [self._header()] + p + head + [
            _assign(grads, gast.Call(func=load(link.pullback), args=[res_expr, g], keywords=[]),
                    self.line)]
        for out_index, pos in enumerate(link.wrt_positions):
            atom = prim.operands[pos]
            if self.active(atom):
                rev += self.accumulate(atom.id, self.kind(atom), _index(load(grads), out_index))
        return [fwd_call] + f, rev + self._reset(target, prim)

    def call_hook(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        """``v = with_derivative(x, hook)``: the pullback runs the hook on ``d_v``."""
        x, hook = prim.operands
        f, p, hook_expr = self.save(hook, ctx)
        head, g = self._grad_source(target, prim)
        cotangent = g if head else load(self.adj(target))
        rev = [self._header()] + p + head + [
            _assign(cotangent.id, _call("rt.run_hook", hook_expr, cotangent), self.line)]
        if self.active(x):
            rev += self.accumulate(x.id, self.kind(x), cotangent)
        return f + [self.primal_stmt(s)], rev + self._reset(target, prim)

    def call_custom(self, s: gast.Assign, target: str, prim: Primitive, ctx: _Ctx):
        """A call of a function with a registered derivative (Swift's form)."""
        custom = prim.custom
        res = self.namer.fresh(f"{target}_pullback" if custom.split is None
                               else f"{target}_residuals")
        self.kinds[res] = "unknown"
        if custom.split is not None:
            fwd_part, pb_part = custom.split
            fwd_link = self.link(prim, fwd_part, primal_only=True)
            func = load(fwd_link.primal)
        else:
            func = load(self.external(custom.derivative))
        call = gast.Call(func=func, args=list(prim.operands), keywords=[])
        fwd_call = gast.Assign(targets=[gast.Tuple(elts=[store(target), store(res)],
                                                   ctx=gast.Store())],
                               value=call, type_comment=None)
        set_anno(fwd_call, "line", self.line)
        if custom.split is not None:
            res_kind = fwd_link.transform.result_kind
            if isinstance(res_kind, tuple):
                self.kinds[res] = res_kind[1]
            f, p, res_expr = self.save(load(res), ctx)
            pb_link = self.link(prim, pb_part, [self.kinds[res], self.kinds.get(target)],
                                primal_only=True)
            pullback_fn = load(pb_link.primal)
            args = [res_expr]
        else:
            f, p, res_expr = self.save(load(res), ctx)
            pullback_fn, args = res_expr, []
        head, g = self._grad_source(target, prim)
        grads = self.namer.fresh(f"{target}_cotangents")
        rev = [self._header()] + p + head + [
            _assign(grads, gast.Call(func=pullback_fn, args=args + [g], keywords=[]),
                    self.line)]
        positions = custom.positions(len(prim.operands))
        for k, pos in enumerate(positions):
            atom = prim.operands[pos]
            if self.active(atom):
                part = load(grads) if len(positions) == 1 else _index(load(grads), k)
                rev += self.accumulate(atom.id, self.kind(atom), part)
        return [fwd_call] + f, rev + self._reset(target, prim)

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
            fwd.append(_assign(part, _index(load(res), i), self.line))
            f, p, e = self.save(load(part), ctx)
            fwd += f
            pops[:0] = p
            reads.append(e)
        return fwd, pops, _tuple(reads)

    # -- control flow ---------------------------------------------------------------------
    def if_(self, s: gast.If, ctx: _Ctx) -> tuple[list, list]:
        inner = _Ctx(loop=ctx.loop, conditional=True)
        body_f, body_r = self.block(s.body, inner)
        else_f, else_r = self.block(s.orelse, inner)
        node = gast.If(test=s.test, body=body_f or [gast.Pass()], orelse=else_f)
        set_anno(node, "line", get_anno(s, "line"))
        if not body_r and not else_r:
            return [node], []
        self.line = get_anno(s, "line", self.line)
        f, p, cond = self.save(s.test, ctx)
        rev_if = gast.If(test=cond, body=body_r or [gast.Pass()], orelse=else_r)
        return [node] + f, p + [rev_if]

    def loop(self, s: gast.For | gast.While, ctx: _Ctx) -> tuple[list, list]:
        line = get_anno(s, "line", self.line)
        info = _Loop(counter=self.namer.fresh("n_iter"))
        prealloc = isinstance(s, gast.For) and ctx.top
        inner = _Ctx(loop=info, conditional=ctx.conditional)
        info.position = self.namer.fresh("position")
        body_f, body_r = self.block(s.body, inner)
        self.line = line
        if not body_r:
            node = copy.copy(s)
            node.body = body_f
            return [node], []
        pre: list[gast.stmt] = []
        head: list[gast.stmt] = [_aug(info.counter, gast.Add(), const(1), line)]
        if info.tapes:
            self.residual(info.position, "int")
            self.fwd_init.append(_assign(info.position, const(-1)))
            head.append(_aug(info.position, gast.Add(), const(1), line))
            if prealloc:
                info.trip = self.namer.fresh("trip_count")
                pre.append(_assign(info.trip, _call("len", s.iter), line))
            for tape, dtype in info.tapes:
                if prealloc:
                    self.tapes[tape] = "preallocated"
                    pre.append(_assign(tape, _call("np.empty", load(info.trip),
                                                   gast.parse(dtype, mode="eval").body), line))
                else:
                    self.tapes[tape] = "growable"
                    self.fwd_init.append(_assign(tape, _call(
                        "np.empty", const(8), gast.parse(dtype, mode="eval").body)))
                    head.append(_assign(tape, _call("rt.grow", load(tape),
                                                    load(info.position)), line))
        self.kinds[info.counter] = "int"
        node = copy.copy(s)
        node.body = head + body_f
        set_anno(node, "line", line)
        pre.append(_assign(info.counter, const(0), line))
        if ctx.top:
            self.stable.add(info.counter)
        f, p, count = self.save(load(info.counter), ctx)
        tail = [_aug(info.position, gast.Sub(), const(1), line)] if info.tapes else []
        rev_loop = gast.For(target=store("_"), iter=_call("range", count), body=body_r + tail,
                            orelse=[], type_comment=None)
        set_anno(rev_loop, "line", line)
        return pre + [node] + f, p + [rev_loop]

    # -- whole functions -------------------------------------------------------------------
    def run(self) -> Generated:
        norm = self.norm
        fdef = norm.node
        *body, ret = fdef.body
        result = ret.value
        fwd_body, rev_body = self.block(body, _Ctx())
        self.line = get_anno(ret, "line", self.line)
        primal_body = [self._primal(s) for s in body] + [ret]
        seed_name = self.namer.fresh("d_value")
        result_kind = self.kind(result)
        seed: list[gast.stmt] = []
        if self.active(result):
            seed = self.accumulate(result.id, result_kind, load(seed_name))
        inits = [_comment("cotangents start at zero")] + [
            _assign(self.adj(v), zero(self.kinds.get(v))) for v in list(self.adjoints)]
        if seed:
            seed = [_comment("the cotangent of the result seeds the pullback")] + seed
        grads = _tuple([self.gradient_of(p) for p in self.wrt])
        residual_tuple = _tuple([load(r) for r in self.residuals])
        name = fdef.name
        value_name = self.namer.fresh("value")
        forward = _def(f"{name}_forward", norm.params, self.fwd_init + fwd_body + [
            gast.Return(value=_tuple([result, residual_tuple]))])
        residuals_arg = self.namer.fresh("residuals")
        unpack = [gast.Assign(targets=[gast.Tuple(elts=[store(r) for r in self.residuals],
                                                  ctx=gast.Store())],
                              value=load(residuals_arg), type_comment=None)] \
            if self.residuals else []
        reverse_part = self.cursors + inits + seed + rev_body
        pullback = _def(f"{name}_pullback", [residuals_arg, seed_name],
                        unpack + reverse_part + [gast.Return(value=grads)])
        fused = _def(f"{name}_value_and_grad", norm.params, self.fwd_init + fwd_body + [
            _assign(value_name, result), _assign(seed_name, const(1.0))] + reverse_part + [
            gast.Return(value=_tuple([load(value_name), grads]))])
        primal = _def(name, norm.params, primal_body)
        return Generated(primal=primal, forward=forward, pullback=pullback, fused=fused,
                         links=list(self.links.values()), externals=self.externals,
                         residuals=self.residuals,
                         residual_kinds=self.residual_kinds, tapes=self.tapes)

    def gradient_of(self, param: str) -> gast.expr:
        """The pullback's output for a parameter (array cotangents as full arrays)."""
        kind = self.kinds.get(param, "float")
        if not isinstance(kind, ArrayKind):
            return load(self.adjoints[param]) if param in self.adjoints else zero(kind)
        if param in self.stable:
            self.residual(param, kind)
            initial = param
        else:
            initial = self.namer.fresh(f"{param}_initial")
            self.fwd_init.insert(0, _assign(initial, load(param)))
            self.residual(initial, kind)
        return _call("rt.materialize", load(self.adj(param)) if param in self.adjoints
                     else zero(kind), load(initial))

    def _primal(self, s: gast.stmt) -> gast.stmt:
        if isinstance(s, gast.Assign | gast.Expr):
            return self.primal_stmt(s)
        if isinstance(s, gast.If | gast.For | gast.While):
            node = copy.copy(s)
            node.body = [self._primal(b) for b in s.body]
            if hasattr(s, "orelse"):
                node.orelse = [self._primal(b) for b in s.orelse]
            return node
        return s


def _def(name: str, params: list[str], body: list[gast.stmt]) -> gast.FunctionDef:
    args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for p in params],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def _substitute(template: gast.expr, names: dict[str, gast.expr]) -> gast.expr:
    tree = copy.deepcopy(template)

    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node: gast.Name) -> gast.expr:
            if node.id in names:
                return copy.deepcopy(names[node.id])
            return node

        def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
            self.generic_visit(node)
            return _fold(node)

    return _Sub().visit(tree)


_FOLDABLE = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
             gast.Mult: lambda a, b: a * b}


def _fold(node: gast.BinOp) -> gast.expr:
    """Fold constant arithmetic in substituted templates (``x ** (2 - 1)`` -> ``x ** 1``)."""
    left, right = node.left, node.right
    both = isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
    if both and type(node.op) in _FOLDABLE and isinstance(left.value, int | float) \
            and isinstance(right.value, int | float) and not isinstance(left.value, bool):
        return const(_FOLDABLE[type(node.op)](left.value, right.value))
    if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1 \
            and not isinstance(right.value, bool):
        return left
    return node


def reverse(norm: NormalFunction, kinds: dict[str, Kind], activity: Activity,
            wrt: list[str], float_dtype: str, linker: Linker) -> Generated:
    """Build the primal, forward, pullback and fused functions of ``norm``.

    ``linker(callee, argument_kinds, primal_only)`` returns the transform of a
    called Python function (with ``name`` and ``wrt_positions``; differentiating
    nothing when ``primal_only``); the pipeline provides it.
    """
    for p in wrt:
        if not carries_derivative(kinds.get(p)):
            raise NonDifferentiableError(f"parameter '{p}' cannot be differentiated: its "
                                         f"value is of kind {kinds.get(p)!r}")
    return _Reverser(norm, dict(kinds), activity, wrt, float_dtype, linker).run()
