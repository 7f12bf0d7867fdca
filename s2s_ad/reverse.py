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

import copy
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .activity import Activity
from .errors import NonDifferentiableError
from .ir import get_anno, set_anno
from .kinds import ArrayKind, Kind, carries_derivative, kind_of_value
from .normalize import NormalFunction
from .reverse_calls import CalleeLink, CallsMixin
from .reverse_items import ItemsMixin
from .reverse_saving import SavingMixin
from .rules.classify import Primitive, classify
from .trees import (
    add,
    assign,
    aug,
    call,
    comment,
    const,
    function_def,
    load,
    store,
    subscript_of,
    substitute,
    tuple_of,
    zero,
)

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
class _Prealloc:
    """Tapes of ``range`` loops nested in a top-level ``range`` loop, with bounds that
    do not change inside it, are preallocated before that outermost loop."""

    assigned: set[str]  # names assigned anywhere inside the outermost loop
    trips: list[str]  # trip counts of the enclosing preallocated loops
    before: list[gast.stmt]  # statements to run before the outermost loop


@dataclass
class _Ctx:
    loop: _Loop | None = None
    conditional: bool = False
    prealloc: _Prealloc | None = None

    @property
    def top(self) -> bool:
        return self.loop is None and not self.conditional


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


def _product(names: list[str]) -> gast.expr:
    expr: gast.expr = load(names[0])
    for name in names[1:]:
        expr = gast.BinOp(left=expr, op=gast.Mult(), right=load(name))
    return expr


class _Reverser(SavingMixin, CallsMixin, ItemsMixin):
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
        self.written: list[str] = []  # arrays with item writes: restored by the pullback
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


    # -- adjoint accumulation -------------------------------------------------------
    def accumulate(self, name: str, kind: Kind, value: gast.expr) -> list[gast.stmt]:
        """``d_name += value`` (element-wise for tuples)."""
        target = self.adj(name)
        if isinstance(kind, tuple):
            elts = [add(k, subscript_of(load(target), i), subscript_of(value, i))
                    for i, k in enumerate(kind)]
            return [assign(target, tuple_of(elts), self.line)]
        if isinstance(kind, ArrayKind):
            return [assign(target, add(kind, load(target), value), self.line)]
        return [aug(target, gast.Add(), value, self.line)]

    def accumulate_at(self, name: str, kind: tuple, index: int,
                      value: gast.expr) -> list[gast.stmt]:
        """``d_name[index] += value`` for a tuple cotangent."""
        target = self.adj(name)
        elts = [subscript_of(load(target), i) for i in range(len(kind))]
        elts[index] = add(kind[index], elts[index], value)
        return [assign(target, tuple_of(elts), self.line)]

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


    # -- assignments -------------------------------------------------------------------
    def assign(self, s: gast.Assign, ctx: _Ctx) -> tuple[list, list]:
        if isinstance(s.targets[0], gast.Subscript):
            return self.write_item(s, ctx)
        target = s.targets[0].id
        if get_anno(s, "in_place") and isinstance(self.kinds.get(target), ArrayKind):
            self.check_in_place(target, s)
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


    def _grad_source(self, target: str, prim: Primitive) -> tuple[list, gast.expr]:
        """Statements that take the cotangent of ``target`` and the expression for it."""
        if any(isinstance(a, gast.Name) and a.id == target for a in prim.operands):
            incoming = self.namer.fresh(f"{self.adj(target)}_in")
            kind = self.kinds.get(target)
            return [assign(incoming, load(self.adj(target)), self.line),
                    assign(self.adj(target), zero(kind), self.line)], load(incoming)
        return [], load(self.adj(target))

    def _reset(self, target: str, prim: Primitive) -> list[gast.stmt]:
        if target in self.stable or any(isinstance(a, gast.Name) and a.id == target
                                        for a in prim.operands):
            return []
        return [assign(self.adj(target), zero(self.kinds.get(target)), self.line)]


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
                value = substitute(rule.template(param), names)
                value = self.broadcast_back(rule, target, atom, param, value, value_of)
                contributions += self.accumulate(atom.id, self.kind(atom), value)
            elif prim.what == "copy":
                contributions += self.accumulate(atom.id, self.kind(atom), g)
            elif prim.what == "tuple":
                contributions += self.accumulate(atom.id, self.kind(atom), subscript_of(g, pos))
            elif prim.what == "index":
                contributions += self.accumulate_at(atom.id, self.kind(atom),
                                                    s.value.slice.value, g)
        fwd = before + [self.primal_stmt(s)] + after
        contributions = self.guard(target, g, contributions)
        rev = [self._header()] + pops + head + contributions + self._reset(target, prim)
        return fwd, rev


    def _header(self) -> gast.Expr:
        node = comment(f"adjoint of line {self.line}")
        set_anno(node, "line", self.line)
        return node


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
        plan = self.preallocation(s, ctx, info)
        inner = _Ctx(loop=info, conditional=ctx.conditional, prealloc=plan)
        info.position = self.namer.fresh("position")
        body_f, body_r = self.block(s.body, inner)
        self.line = line
        if not body_r:
            node = copy.copy(s)
            node.body = body_f
            return [node], []
        pre: list[gast.stmt] = []
        head: list[gast.stmt] = [aug(info.counter, gast.Add(), const(1), line)]
        if plan is not None and ctx.top:
            pre += [assign(info.trip, call("len", s.iter), line)] + plan.before
        if info.tapes:
            self.residual(info.position, "int")
            self.fwd_init.append(assign(info.position, const(-1)))
            head.append(aug(info.position, gast.Add(), const(1), line))
            allocations = plan.before if plan is not None and not ctx.top else pre
            capacity = _product(plan.trips) if plan is not None else None
            for tape, dtype in info.tapes:
                if plan is not None:
                    self.tapes[tape] = "preallocated"
                    allocations.append(assign(tape, call(
                        "np.empty", capacity, gast.parse(dtype, mode="eval").body), line))
                else:
                    self.tapes[tape] = "growable"
                    self.fwd_init.append(assign(tape, call(
                        "np.empty", const(8), gast.parse(dtype, mode="eval").body)))
                    full = gast.Compare(left=load(info.position), ops=[gast.GtE()],
                                        comparators=[gast.parse(f"{tape}.shape[0]",
                                                                mode="eval").body])
                    head.append(gast.If(test=full, body=[assign(tape, call(
                        "rt.grow", load(tape), load(info.position)), line)], orelse=[]))
        self.kinds[info.counter] = "int"
        node = copy.copy(s)
        node.body = head + body_f
        set_anno(node, "line", line)
        pre.append(assign(info.counter, const(0), line))
        if ctx.top:
            self.stable.add(info.counter)
        f, p, count = self.save(load(info.counter), ctx)
        tail = [aug(info.position, gast.Sub(), const(1), line)] if info.tapes else []
        rev_loop = gast.For(target=store("_"), iter=call("range", count), body=body_r + tail,
                            orelse=[], type_comment=None)
        set_anno(rev_loop, "line", line)
        return pre + [node] + f, p + [rev_loop]

    def preallocation(self, s: gast.For | gast.While, ctx: _Ctx,
                      info: _Loop) -> _Prealloc | None:
        """The preallocation plan of loop ``s``: top-level ``range`` loops, and ``range``
        loops inside them whose bounds the outermost loop never changes."""
        if not isinstance(s, gast.For):
            return None
        if ctx.top:
            info.trip = self.namer.fresh("trip_count")
            assigned = {s.target.id} | {
                n.id for b in s.body for n in gast.walk(b)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
            return _Prealloc(assigned=assigned, trips=[info.trip], before=[])
        outer = ctx.prealloc
        if outer is None or any(isinstance(a, gast.Name) and a.id in outer.assigned
                                for a in s.iter.args):
            return None
        info.trip = self.namer.fresh("trip_count")
        outer.before.append(assign(info.trip, call("len", s.iter), get_anno(s, "line")))
        return _Prealloc(assigned=outer.assigned, trips=outer.trips + [info.trip],
                         before=outer.before)

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
        inits = [comment("cotangents start at zero")] + [
            assign(self.adj(v), zero(self.kinds.get(v))) for v in list(self.adjoints)]
        if seed:
            seed = [comment("the cotangent of the result seeds the pullback")] + seed
        grads = tuple_of([self.gradient_of(p) for p in self.wrt])
        residual_tuple = tuple_of([load(r) for r in self.residuals])
        name = fdef.name
        value_name = self.namer.fresh("value")
        forward = function_def(f"{name}_forward", norm.params, self.fwd_init + fwd_body + [
            gast.Return(value=tuple_of([result, residual_tuple]))])
        residuals_arg = self.namer.fresh("residuals")
        unpack = [gast.Assign(targets=[gast.Tuple(elts=[store(r) for r in self.residuals],
                                                  ctx=gast.Store())],
                              value=load(residuals_arg), type_comment=None)] \
            if self.residuals else []
        reverse_part = self.cursors + inits + seed + rev_body
        snapshot, put_back = self.keep_written()
        pullback = function_def(f"{name}_pullback", [residuals_arg, seed_name],
                                unpack + snapshot + reverse_part + put_back +
                                [gast.Return(value=grads)])
        fused = function_def(f"{name}_value_and_grad", norm.params, self.fwd_init + fwd_body + [
            assign(value_name, result), assign(seed_name, const(1.0))] + reverse_part + [
            gast.Return(value=tuple_of([load(value_name), grads]))])
        primal = function_def(name, norm.params, primal_body)
        return Generated(primal=primal, forward=forward, pullback=pullback, fused=fused,
                         links=list(self.links.values()), externals=self.externals,
                         residuals=self.residuals,
                         residual_kinds=self.residual_kinds, tapes=self.tapes)

    def keep_written(self) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """The pullback restores overwritten items in place; it snapshots each written
        array first and puts it back at the end, so it can run again."""
        snapshot, put_back = [], []
        for name in self.written:
            final = self.namer.fresh(f"{name}_final")
            snapshot.append(assign(final, call("np.copy", load(name))))
            everything = gast.Slice(lower=None, upper=None, step=None)
            put_back.append(gast.Assign(targets=[gast.Subscript(value=load(name), slice=everything,
                                                                ctx=gast.Store())],
                                        value=load(final), type_comment=None))
        return snapshot, put_back

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
            self.fwd_init.insert(0, assign(initial, load(param)))
            self.residual(initial, kind)
        return call("rt.materialize", load(self.adj(param)) if param in self.adjoints
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
