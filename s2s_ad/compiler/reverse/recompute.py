"""The reverse stages, part: loop values recomputed in the pullback instead of taped.

Inside a loop, a value the pullback needs is normally pushed on a tape (one
store per iteration in the forward sweep, one load in the reverse).  Cheap
values that the pullback can compute again from what it already has are not
taped: the reverse iteration recomputes them first, from

* the loop variable of a ``for ... in range(...)`` loop, as ``start + k * step``
  for the k-th iteration (k counts down in the reverse loop);
* names read by name in the pullback (bound once at the top level: parameters,
  globals) and constants;
* items of arrays that nothing writes (no item write, in-place operator or call
  of a Python function can reach them);
* other such values of the same iteration, or of an enclosing loop's iteration.

The function's top level is handled as a loop of one iteration (``Context.top``):
a cheap number bound once there from numbers is not a residual; the pullback
computes it again, first thing, from its operands.  A helper called in a loop then
hands its caller its parameters (read as the caller's arguments, often without a
tape) instead of products of them, each taped on every iteration.

A candidate is bound once in the loop body, by a statement at its top level (so
the forward sweep computes it on every iteration), and is not read earlier in
the body (its value does not come from the previous iteration); a loop
variable qualifies when the body never rebinds it.  Only arithmetic,
comparisons, item reads and a few cheap builtins are recomputed: a
transcendental function's value is still taped.  Recomputing
repeats no side effect and raises nothing the forward sweep did not raise (same
operations on the same values).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import gast

from s2s_ad.compiler.primitives import classify
from s2s_ad.compiler.reverse.aliasing import sharing
from s2s_ad.compiler.reverse.context import Context, Loop
from s2s_ad.compiler.syntax.annotations import callee_of, is_in_place, line_of, set_line
from s2s_ad.compiler.syntax.builders import assign, binop, comment, const, load, module, substitute
from s2s_ad.kinds import NUMERIC, ArrayKind

CHEAP_CALLS = (abs, min, max, float, math.fabs, math.floor, math.ceil, math.sqrt)

#: how the primal writes a statement (``calls.primal_stmt``, which imports this module)
Emit = Callable[[Context, gast.stmt], gast.stmt]


def unwritten_arrays(cx: Context) -> set[str]:
    """Arrays read by name in the pullback whose items never change: nothing in the
    function writes into them or into anything that may share their memory."""
    if cx.unwritten is not None:
        return cx.unwritten
    touched: set[str] = set()
    calls_python = False
    for node in gast.walk(cx.norm.node):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            touched.add(node.value.id)
        elif isinstance(node, gast.Assign) and is_in_place(node) \
                and isinstance(node.targets[0], gast.Name):
            touched.add(node.targets[0].id)
        elif isinstance(node, gast.Call) and classify(node).may_write:
            calls_python = True
            touched.update(a.id for a in gast.walk(node) if isinstance(a, gast.Name))
    found = set()
    for name in cx.stable:
        if not isinstance(cx.kinds.get(name), ArrayKind) or name in touched:
            continue
        if calls_python and name in cx.hidden:  # a callee may write a global array
            continue
        if not any(other in touched for other in sharing(cx, name)):
            found.add(name)
    cx.unwritten = found
    return found


def plan(cx: Context, s: gast.For | gast.While, info: Loop) -> None:
    """Fill ``info.recompute`` with the loop's recomputable values (not emitted yet:
    only those the pullback asks for, through :func:`lookup`, are)."""
    counts = Counter(n.id for n in gast.walk(module(s.body))
                     if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
    if isinstance(s, gast.For) and range_loop(s) and counts[s.target.id] == 0:
        info.recompute[s.target.id] = None  # the loop variable, never rebound in the body
    read = {n.id for n in gast.walk(s.iter) if isinstance(n, gast.Name)} \
        if isinstance(s, gast.For) else set()
    for stmt in s.body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            name = stmt.targets[0].id
            if counts[name] == 1 and name not in read \
                    and cx.kinds.get(name) in NUMERIC and _cheap(cx, stmt.value, info):
                info.recompute[name] = stmt
        read.update(n.id for n in gast.walk(stmt)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))


def plan_top(cx: Context) -> Loop:
    """The top level as a loop of one iteration: its recomputable values are numbers
    bound once by a top-level statement, cheap, and computed from numbers (array
    items are not: their arrays would become residuals instead of numbers)."""
    top = Loop(counter="", line=line_of(cx.norm.node))
    for stmt in cx.norm.node.body[:-1]:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            name = stmt.targets[0].id
            if name in cx.stable and name not in cx.norm.params \
                    and cx.kinds.get(name) in NUMERIC \
                    and not isinstance(stmt.value, gast.Subscript) \
                    and _cheap(cx, stmt.value, top):
                top.recompute[name] = stmt
    return top


def top_head(cx: Context, emit: Emit) -> list[gast.stmt]:
    """The statements opening the pullback: the top-level values it recomputes."""
    if cx.top is None:
        return []
    head = reverse_head(cx, cx.top, "", {}, emit)
    if head:
        head[0] = comment("values recomputed, not saved for the pullback")
    return head


def lookup(cx: Context, name: str, loop: Loop | None) -> gast.expr | None:
    """The pullback's name for ``name`` if a loop around the save recomputes it."""
    loop = loop or cx.top
    while loop is not None:
        if name in loop.recompute:
            return load(_need(cx, name, loop))
        loop = _enclosing(loop, cx.top)
    return None


def reverse_head(cx: Context, info: Loop, k: str, bounds: dict[str, gast.expr],
                 emit: Emit) -> list[gast.stmt]:
    """The statements opening the k-th reverse iteration: the needed values, in the
    order the forward sweep computed them, each as ``emit`` (the primal's emitter)
    writes its statement, so the same operation runs (``2 ** -i`` of ints is
    ``rt.int_pow``: Numba's int power would give 0).  ``bounds`` has the pullback's
    ``start`` and ``step`` of a range loop."""
    out: list[gast.stmt] = []
    for name, stmt in info.recompute.items():
        if name not in info.renamed:
            continue
        new = info.renamed[name]
        if stmt is None:
            out.append(assign(new, _affine(bounds["start"], k, bounds["step"]), info.line))
            continue
        mapping = {n: load(_need(cx, n, owner))
                   for n, owner in _operands(stmt.value, info, cx.top)}
        line = line_of(stmt)
        out.append(assign(new, substitute(emit(cx, stmt).value, mapping), line))
    if out:
        note = comment("values of this iteration, recomputed (not taped)")
        set_line(note, info.line)
        out.insert(0, note)
    return out


def needs_index(info: Loop) -> bool:
    return any(stmt is None for name, stmt in info.recompute.items() if name in info.renamed)


def range_bounds(s: gast.For) -> tuple[gast.expr, gast.expr]:
    """(start, step) of ``for v in range(...)`` as written in the normal form."""
    args = s.iter.args
    start = args[0] if len(args) > 1 else const(0)
    step = args[2] if len(args) > 2 else const(1)
    return start, step


# -- helpers ---------------------------------------------------------------------------------
def _affine(start: gast.expr, k: str, step: gast.expr) -> gast.expr:
    """``start + k * step``, without the ``0 +`` and ``* 1``."""
    value: gast.expr = load(k)
    if not (isinstance(step, gast.Constant) and step.value == 1):
        value = binop(value, gast.Mult(), step)
    if not (isinstance(start, gast.Constant) and start.value == 0):
        value = binop(start, gast.Add(), value)
    return value


def _need(cx: Context, name: str, loop: Loop) -> str:
    """Mark ``name`` (recomputed by ``loop``) and what it reads as needed."""
    if name in loop.renamed:
        return loop.renamed[name]
    new = cx.namer.fresh(f"{name}_re")
    cx.kinds[new] = cx.kinds.get(name, "int")
    loop.renamed[name] = new
    stmt = loop.recompute[name]
    if stmt is not None:
        recomputed = dict(_operands(stmt.value, loop, cx.top))
        for operand, owner in recomputed.items():
            _need(cx, operand, owner)
        for node in gast.walk(stmt.value):  # read by name: the pullback receives them
            if isinstance(node, gast.Name) and node.id in cx.stable \
                    and node.id not in recomputed:
                cx.residual(node.id, cx.kinds.get(node.id, "unknown"))
    return new


def _operands(value: gast.expr, loop: Loop, cx_top: Loop | None
              ) -> list[tuple[str, Loop]]:
    """The recomputed names ``value`` reads, each with the loop that recomputes it
    (``cx_top``: the top level's)."""
    out = []
    for node in gast.walk(value):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            owner = loop
            while owner is not None and node.id not in owner.recompute:
                owner = _enclosing(owner, cx_top)
            if owner is not None:
                out.append((node.id, owner))
    return out


def _enclosing(loop: Loop, top: Loop | None) -> Loop | None:
    """The loop around ``loop``: the top level's around the outermost."""
    return loop.parent or (top if loop is not top else None)


def _available(cx: Context, name: str, loop: Loop) -> bool:
    if name in cx.stable:
        return True
    while loop is not None:
        if name in loop.recompute:
            return True
        loop = _enclosing(loop, cx.top)
    return False


def _cheap(cx: Context, value: gast.expr, loop: Loop) -> bool:
    """Whether ``value`` is cheap and reads only what the pullback can recompute."""
    names = [n.id for n in gast.walk(value)
             if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)]
    if isinstance(value, gast.Subscript):
        base = value.value
        if not (isinstance(base, gast.Name) and base.id in unwritten_arrays(cx)):
            return False
        index = [n for n in gast.walk(value.slice) if isinstance(n, gast.Name)]
        if any(cx.kinds.get(n.id) != "int" for n in index) or any(
                isinstance(n, gast.Slice) for n in gast.walk(value.slice)):
            return False
        names = [n.id for n in index]
    elif isinstance(value, gast.Call):
        if callee_of(value) not in CHEAP_CALLS or value.keywords:
            return False
    elif not isinstance(value, gast.BinOp | gast.UnaryOp | gast.Compare | gast.Name):
        return False
    if any(not isinstance(n, gast.Name | gast.Constant) for n in _atoms(value)):
        return False
    return all(_available(cx, n, loop) and cx.kinds.get(n) in NUMERIC for n in names)


def _atoms(value: gast.expr) -> list[gast.expr]:
    if isinstance(value, gast.BinOp):
        return [value.left, value.right]
    if isinstance(value, gast.UnaryOp):
        return [value.operand]
    if isinstance(value, gast.Compare):
        return [value.left, *value.comparators]
    if isinstance(value, gast.Call):
        return list(value.args)
    return [value] if isinstance(value, gast.Name) else []


def range_loop(s: gast.For) -> bool:
    """``for name in range(atoms)``."""
    it = s.iter
    return isinstance(s.target, gast.Name) and isinstance(it, gast.Call) \
        and callee_of(it) is range and not it.keywords \
        and all(isinstance(a, gast.Name | gast.Constant) for a in it.args)
