"""The reverse stages, part: blocks, branches and loops.

Forward statements run in order; adjoint blocks are emitted in reverse.  Branch
decisions and per-entry trip counts are saved like any value, so the pullback
replays the control flow without re-running the original.  Loop tapes are
preallocated to the trip count for top-level ``range`` loops (and ``range``
loops nested in them whose bounds do not change), grown on demand otherwise.
"""

from __future__ import annotations

import copy

import gast

from s2s_ad.compiler.reverse import calls, parallel, recompute, saving, statements
from s2s_ad.compiler.reverse.context import Context, Loop, Prealloc, Where
from s2s_ad.compiler.syntax.annotations import line_of, set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    aug,
    binop,
    call,
    compare,
    const,
    for_stmt,
    if_stmt,
    load,
    pass_stmt,
    store,
    stored_names,
    written_arrays,
)


def _product(names: list[str]) -> gast.expr:
    expr: gast.expr = load(names[0])
    for name in names[1:]:
        expr = binop(expr, gast.Mult(), load(name))
    return expr


def block(cx: Context, stmts: list[gast.stmt], where: Where) -> tuple[list, list]:
    fwd: list[gast.stmt] = []
    rev: list[gast.stmt] = []
    for s in stmts:
        cx.line = line_of(s, cx.line)
        stored = stored_names(s)
        before = [cx.versions.get(n, 0) for n in stored]
        f, r = statement(cx, s, where)
        # names the statement binds hold new values now (unless its saves said so), and
        # so do arrays it writes into: a later read saves their new contents
        saving.rebound(cx, [n for n, v in zip(stored, before, strict=True)
                            if cx.versions.get(n, 0) == v] + written_arrays(s))
        fwd.extend(f)
        rev[:0] = r
    return fwd, rev


def statement(cx: Context, s: gast.stmt, where: Where) -> tuple[list, list]:
    if isinstance(s, gast.Assign):
        return statements.assign_stmt(cx, s, where)
    if isinstance(s, gast.If):
        return if_(cx, s, where)
    if parallel.runs_parallel(cx, s):
        return parallel.loop(cx, s, where, block)
    if isinstance(s, gast.For | gast.While):
        return loop(cx, s, where)
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
        return [calls.primal_stmt(cx, s)], []
    if isinstance(s, gast.FunctionDef):
        calls.bind_globals(cx, s)
    return [s], []


def if_(cx: Context, s: gast.If, where: Where) -> tuple[list, list]:
    body_f, body_r = block(cx, s.body, Where(loop=where.loop, conditional=True))
    else_f, else_r = block(cx, s.orelse, Where(loop=where.loop, conditional=True))
    node = if_stmt(s.test, body_f or [pass_stmt()], else_f)
    set_line(node, line_of(s))
    if not body_r and not else_r:
        return [node], []
    cx.line = line_of(s, cx.line)
    f, p, cond = saving.save(cx, s.test, where)
    rev_if = if_stmt(cond, body_r or [pass_stmt()], else_r)
    return [node] + f, p + [rev_if]


def loop(cx: Context, s: gast.For | gast.While, where: Where) -> tuple[list, list]:
    line = line_of(s, cx.line)
    info = Loop(counter=cx.namer.fresh("n_iter"), parent=where.loop, line=line)
    recompute.plan(cx, s, info)
    plan = preallocation(cx, s, where, info)
    inner = Where(loop=info, conditional=where.conditional, prealloc=plan)
    info.position = cx.namer.fresh("position")
    body_f, body_r = block(cx, s.body, inner)
    cx.line = line
    if not body_r and not info.tapes:
        node = copy.copy(s)
        node.body = body_f
        return [node], []
    pre: list[gast.stmt] = saving.per_trip_counts(info, line)
    head: list[gast.stmt] = [aug(info.counter, gast.Add(), const(1), line)]
    if plan is not None and where.top and (info.tapes or plan.before):
        pre += [assign(info.trip, call("len", s.iter), line)] + plan.before
    if info.tapes:
        cx.residual(info.position, "int")
        cx.fwd_init.append(assign(info.position, const(-1)))
        head.append(aug(info.position, gast.Add(), const(1), line))
        allocations = plan.before if plan is not None and not where.top else pre
        entry_room = None
        if plan is None and isinstance(s, gast.For) and recompute.range_loop(s):
            trip = cx.namer.fresh("trip_count")
            pre.append(assign(trip, call("len", copy.deepcopy(s.iter)), line))
            entry_room = binop(load(info.position), gast.Add(), load(trip))
        capacity = _product(plan.trips) if plan is not None else None
        for tape, dtype in info.tapes:
            if plan is not None:
                cx.tapes[tape] = "preallocated"
                allocations.append(assign(tape, call(
                    "np.empty", capacity, gast.parse(dtype, mode="eval").body), line))
            else:
                cx.tapes[tape] = "growable"
                cx.fwd_init.append(assign(tape, call(
                    "np.empty", const(8), gast.parse(dtype, mode="eval").body)))
                if entry_room is None:  # grown when full, checked on every iteration
                    head.append(_grown(tape, load(info.position), line))
                else:  # a range loop knows its trip count: room made once, on entry
                    pre.append(_grown(tape, copy.deepcopy(entry_room), line))
    cx.kinds[info.counter] = "int"
    node = copy.copy(s)
    node.body = head + body_f
    set_line(node, line)
    pre.append(assign(info.counter, const(0), line))
    if where.top:
        cx.stable.add(info.counter)
    f, p, count = saving.save(cx, load(info.counter), where)
    tail = [aug(info.position, gast.Sub(), const(1), line)] if info.tapes else []
    bounds: dict[str, gast.expr] = {}
    if recompute.needs_index(info):  # the k-th iteration's loop variable is recomputed
        bound_pops: list[gast.stmt] = []
        for key, atom in zip(("start", "step"), recompute.range_bounds(s), strict=True):
            bounds[key] = saving.keep(cx, atom, where, pre, bound_pops)
        p = p + bound_pops
        step = cx.namer.fresh("k")
        backwards = call("range", binop(count, gast.Sub(), const(1)), const(-1), const(-1))
    else:
        step = "_" if "_" not in cx.norm.locals else cx.namer.fresh("unused")
        backwards = call("range", count)
    if not body_r:  # values saved for nothing: their tapes are filled, never read
        return pre + [node] + f, []
    head_r = recompute.reverse_head(cx, info, step, bounds, calls.primal_stmt)
    rev_loop = for_stmt(store(step), backwards, head_r + body_r + tail)
    set_line(rev_loop, line)
    return pre + [node] + f, p + [rev_loop]


def _grown(tape: str, last: gast.expr, line: int | None) -> gast.If:
    """``tape`` grown if index ``last`` is past its end."""
    full = compare(last, [gast.GtE()], [gast.parse(f"{tape}.shape[0]", mode="eval").body])
    return if_stmt(full, [assign(tape, call("rt.grow", load(tape), copy.deepcopy(last)), line)],
                   [])


def preallocation(cx: Context, s: gast.For | gast.While, where: Where,
                  info: Loop) -> Prealloc | None:
    """The preallocation plan of loop ``s``: top-level ``range`` loops, and ``range``
    loops inside them whose bounds the outermost loop never changes."""
    if not isinstance(s, gast.For):
        return None
    if where.top:
        info.trip = cx.namer.fresh("trip_count")
        assigned = {s.target.id} | set(stored_names(s.body))
        return Prealloc(assigned=assigned, trips=[info.trip], before=[])
    outer = where.prealloc
    if outer is None or any(isinstance(a, gast.Name) and a.id in outer.assigned
                            for a in s.iter.args):
        return None
    info.trip = cx.namer.fresh("trip_count")
    outer.before.append(assign(info.trip, call("len", s.iter), line_of(s)))
    return Prealloc(assigned=outer.assigned, trips=outer.trips + [info.trip],
                     before=outer.before)
