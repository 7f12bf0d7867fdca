"""The reverse stages, part: parallel (``prange``) loops.

With ``parallel=True``, a loop written over ``prange`` at the top level of the
function, whose iterations are independent (:mod:`s2s_ad.compiler.independence`
proves it or refuses the loop), runs in parallel in every generated function.
The pullback runs the iterations in ``rt.chunk_count`` interleaved chunks, the
chunks in parallel.  When an iteration's adjoint reads only numbers (or tuples of
numbers, a helper's residuals) and the body has no inner loop, the forward sweep
stores them on tapes at the iteration's index and the pullback reads them back;
otherwise the forward sweep keeps nothing and each reverse iteration first
recomputes its own values.  Then it runs its adjoint:

* the cotangents of an iteration's own values are private to it;
* the cotangent of a value every iteration reads (a parameter, an array read at
  any index) is one row per chunk of a buffer, summed when the loop ends;
* the cotangent of a sum (``total += v``) is read by every iteration, unchanged;
* the cotangent of an array written at the loop's index is read and cleared at that
  index only.

What the iterations read from outside the loop is saved at the loop like any value.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

import gast

from s2s_ad.compiler.independence import Iterations, iterations
from s2s_ad.compiler.reverse import calls, saving
from s2s_ad.compiler.reverse.aliasing import sharing
from s2s_ad.compiler.reverse.context import Context, Where, bound_once_in
from s2s_ad.compiler.syntax.annotations import is_parallel, line_of, set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    binop,
    call,
    call_node,
    comment,
    const,
    expr_stmt,
    for_stmt,
    keyword,
    load,
    loaded_names,
    module,
    pass_stmt,
    renamed,
    store,
    store_item,
    stored_names,
    subscript_of,
    tuple_of,
    zero,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind

Block = Callable[[Context, list, Where], tuple[list, list]]


def runs_parallel(cx: Context, s: gast.stmt) -> bool:
    """Whether ``s`` is a ``prange`` loop compiled to run in parallel."""
    return cx.parallel and isinstance(s, gast.For) and is_parallel(s)


def primal(cx: Context, s: gast.stmt, top: bool = True) -> gast.stmt | list[gast.stmt]:
    """``s`` computing the original values in the generated module's names (see
    ``calls.primal_stmt``); a parallel loop at the top level in parallel."""
    if isinstance(s, gast.Assign | gast.Expr):
        return calls.primal_stmt(cx, s)
    if not isinstance(s, gast.If | gast.For | gast.While):
        return s
    node = copy.copy(s)
    node.body = _flat([primal(cx, b, False) for b in s.body]) or [pass_stmt()]  # (if x: pass)
    if hasattr(s, "orelse"):
        node.orelse = _flat([primal(cx, b, False) for b in s.orelse])
    if top and runs_parallel(cx, s):
        return _in_parallel(cx, s, node.body)
    return node


def _flat(stmts: list) -> list[gast.stmt]:
    return [x for s in stmts for x in (s if isinstance(s, list) else [s])]


def _in_parallel(cx: Context, s: gast.For, body: list[gast.stmt]) -> list[gast.stmt]:
    """``trips = len(range(...))``; ``for k in rt.prange(trips): i = start + k * step; body``."""
    line = line_of(s)
    trips, k = cx.namer.fresh("trips"), cx.namer.fresh("k")
    cx.kinds[trips] = cx.kinds[k] = "int"
    opening, mark, closing = _finishing(cx, trips, k, line)
    node = for_stmt(store(k), call("rt.prange", load(trips)),
                    [assign(s.target.id, _index(s, k), line)] + body + [mark])
    set_line(node, line)
    return [assign(trips, call("len", copy.deepcopy(s.iter)), line), opening, node, closing]


def _finishing(cx: Context, count: str, index: str, line: int | None
               ) -> tuple[gast.stmt, gast.stmt, gast.stmt]:
    """(before, last statement of the body, after) of a parallel loop of ``count``
    iterations or chunks, by ``index``: a flag each sets when it ends, checked after
    the loop, outside Numba's threads, which lose an exception raised in them
    (``rt.check_finished`` raises ``LoopNotFinished``: the caller reruns the Python
    path, which raises the real error)."""
    flags = cx.namer.fresh("finished")
    bools = gast.parse("np.bool_", mode="eval").body
    before = assign(flags, call("np.zeros", load(count), bools), line)
    mark = assignment([store_item(load(flags), load(index))], const(True))
    set_line(mark, line)
    after = expr_stmt(call("rt.check_finished", load(flags)))
    set_line(after, line)
    return before, mark, after


def _index(s: gast.For, k: str) -> gast.expr:
    """``start + k * step`` of the loop's range."""
    args = s.iter.args
    start = args[0] if len(args) > 1 else const(0)
    step = args[2] if len(args) > 2 else const(1)
    value: gast.expr = load(k)
    if not (isinstance(step, gast.Constant) and step.value == 1):
        value = binop(value, gast.Mult(), copy.deepcopy(step))
    if not (isinstance(start, gast.Constant) and start.value == 0):
        value = binop(copy.deepcopy(start), gast.Add(), value)
    return value


@dataclass
class _Iteration:
    """One iteration's pullback code, made as if the loop body were a function."""

    init: list[gast.stmt]  # its tape positions and tapes
    forward: list[gast.stmt]  # its values, with what its adjoint reads saved
    cursors: list[gast.stmt]
    adjoint: list[gast.stmt]
    full: set[str]  # its own arrays whose cotangents start as full arrays
    whole: list[gast.stmt]  # its forward sweep with the additions into the sums
    residuals: list[tuple[str, Kind]]  # what its adjoint reads, as it saved them


def loop(cx: Context, s: gast.For, where: Where, block: Block) -> tuple[list, list]:
    """(forward, pullback) statements of the parallel loop ``s``."""
    line = line_of(s, cx.line)
    if not where.top:
        raise NonDifferentiableError(
            "a prange loop inside another loop or a branch cannot run in parallel yet",
            cx.norm.parsed.location(s), "put the prange loop at the top level of the "
            "function, use range, or differentiate with parallel=False")
    facts = iterations(cx.norm.node.body, s, cx.kinds, cx.norm.parsed.location,
                       set(cx.norm.locals) | set(cx.norm.temps) | set(cx.hidden))
    _no_masks(cx, s)
    for name in sorted(facts.writes):
        shared = sorted(set(sharing(cx, name)) & (facts.reads | facts.writes) - {name})
        if shared:
            raise NonDifferentiableError(
                f"the loop writes items of '{name}', which may share memory with "
                f"'{shared[0]}' it also uses: an iteration could read or write another's "
                "item (parallel loop)", cx.norm.parsed.location(s),
                f"write into a new array ({name} = np.empty_like(...)) instead")
    it = _iteration(cx, s, facts, block)
    cx.line = line
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    rebind: list[gast.stmt] = []
    local = set(stored_names(it.init + it.forward)) | {facts.index}
    read = set(loaded_names(it.init + it.forward + it.cursors + it.adjoint)) \
        | set(loaded_names(s.iter))
    for name in sorted(read - local):
        if name not in cx.norm.locals and name not in cx.norm.temps and name not in cx.hidden:
            continue  # a module, function or constant of the generated module
        e = saving.keep(cx, load(name), where, fwd, pops, reference=name in facts.writes)
        if not (isinstance(e, gast.Name) and e.id == name):
            rebind.append(assign(name, e, line))
    trips, chunks, chunk, k = (cx.namer.fresh(n) for n in ("trips", "chunks", "chunk", "k"))
    for name in (trips, chunks, chunk, k):
        cx.kinds[name] = "int"
    plan = _cotangents(cx, s, facts, it, local, (chunks, chunk))
    taped = _taped(cx, it, local - {facts.index})
    if taped is None:  # recomputed: the forward sweep keeps nothing
        forward = primal(cx, s)
        values = it.init + it.forward + it.cursors
    else:  # what the adjoint reads is taped, one item per iteration
        tapes = {name: [cx.namer.fresh(f"{name}_tape")
                        for _ in (dtypes if isinstance(dtypes, list) else [dtypes])]
                 for name, dtypes in taped.items()}
        forward = _taped_forward(cx, s, it, tapes, taped)
        values = [assign(name, _read_back(tapes[name], taped[name], k), line)
                  for name in tapes]
    iteration = ([assign(facts.index, _index(s, k), line)] + plan.opening + values
                 + plan.zeroed + renamed(it.adjoint, plan.renames))
    inner = for_stmt(store(k), call("range", load(chunk), load(trips), load(chunks)), iteration)
    opening, mark, closing = _finishing(cx, chunks, chunk, line)
    outer = for_stmt(store(chunk), call("rt.prange", load(chunks)),
                     plan.chunk_open + [inner] + plan.chunk_close + [mark])
    set_line(inner, line)
    set_line(outer, line)
    note = comment(f"adjoint of the parallel loop of line {line}, its iterations in "
                   "interleaved chunks, " + ("each recomputing its values" if taped is None
                                             else "each reading its values from tapes"))
    set_line(note, line)
    head = [assign(trips, call("len", copy.deepcopy(s.iter)), line),
            assign(chunks, call("rt.chunk_count", load(trips)), line)]
    rev = pops + rebind + [note] + head + plan.before + [opening, outer, closing] + plan.after
    return fwd + forward, rev


def _taped(cx: Context, it: _Iteration, local: set[str]
           ) -> dict[str, list[str] | str] | None:
    """The tapes of an iteration whose adjoint reads only numbers, or tuples of numbers
    (a callee's residuals), it computed, with no inner loop: value -> its dtype (a
    list of dtypes, one per item, for a tuple); None when the pullback recomputes."""
    if it.cursors or it.full or any(isinstance(n, gast.For | gast.While)
                                    for n in gast.walk(module(it.whole))):
        return None
    if not all(isinstance(st, gast.Assign) and isinstance(st.value, gast.Constant)
               for st in it.init):
        return None
    dtypes = {"float": cx.float_dtype, "int": "np.int64", "bool": "np.bool_"}
    out = {}
    for name, kind in it.residuals:
        if name not in local:
            continue
        if isinstance(kind, tuple) and all(k in dtypes for k in kind):
            out[name] = [dtypes[k] for k in kind]
        elif kind in dtypes:
            out[name] = dtypes[kind]
        else:
            return None
    return out


def _read_back(tapes: list[str], dtype: list[str] | str, k: str) -> gast.expr:
    """The value the ``k``-th iteration stored: a number, or a tuple of them."""
    items = [subscript_of(load(tape), load(k)) for tape in tapes]
    return tuple_of(items) if isinstance(dtype, list) else items[0]


def _taped_forward(cx: Context, s: gast.For, it: _Iteration, tapes: dict[str, list[str]],
                   dtypes: dict[str, list[str] | str]) -> list[gast.stmt]:
    """The parallel loop's forward sweep storing, at each iteration's index, the values
    its adjoint reads (``tapes``: value -> its tapes, one per item of a tuple)."""
    line = line_of(s)
    trips, k = cx.namer.fresh("trips"), cx.namer.fresh("k")
    cx.kinds[trips] = cx.kinds[k] = "int"
    out = [assign(trips, call("len", copy.deepcopy(s.iter)), line)]
    stores = []
    for name, named in tapes.items():
        kinds = dtypes[name] if isinstance(dtypes[name], list) else [dtypes[name]]
        for j, (tape, dtype) in enumerate(zip(named, kinds, strict=True)):
            out.append(assign(tape, call("np.empty", load(trips),
                                         gast.parse(dtype, mode="eval").body), line))
            cx.residual(tape)
            item = subscript_of(load(name), j) if isinstance(dtypes[name], list) \
                else load(name)
            stores.append(assignment([store_item(load(tape), load(k))], item))
    opening, mark, closing = _finishing(cx, trips, k, line)
    node = for_stmt(store(k), call("rt.prange", load(trips)),
                    [assign(s.target.id, _index(s, k), line)] + it.init + it.whole + stores
                    + [mark])
    set_line(node, line)
    return out + [opening, node, closing]


def _no_masks(cx: Context, s: gast.For) -> None:
    """Refuse boolean-mask indexing in a parallel loop: Numba 0.68 with ``parallel=True``
    loses a value bound after a masked read in a branch of a parallel loop's body (it
    reads 0, a wrong result; tests/compiler/test_parallel_loops.py has the pattern)."""
    for node in gast.walk(module(s.body)):
        index = node.slice if isinstance(node, gast.Subscript) else None
        kind = cx.kinds.get(index.id) if isinstance(index, gast.Name) else None
        if isinstance(kind, ArrayKind) and kind.boolean:
            raise NonDifferentiableError(
                "a boolean mask indexes an array in a parallel loop: Numba's parallel code "
                "can lose values bound after such a read (a wrong result), so it is "
                "refused (parallel loop)", cx.norm.parsed.location(node),
                "sum with np.where(mask, values, 0.0) instead, or differentiate with "
                "parallel=False")


def _iteration(cx: Context, s: gast.For, facts: Iterations, block: Block) -> _Iteration:
    """The loop body's forward-with-saves and adjoint, made as the body of a function of
    its own: what it saves stays in the iteration, and the values it reads from
    outside the loop are read by name (saved at the loop by :func:`loop`)."""
    kept = (cx.fwd_init, cx.residuals, cx.residual_kinds, cx.cursors, cx.stable,
            cx.unwritten, cx.top)
    full_before = set(cx.full_cotangents)
    cx.fwd_init, cx.residuals, cx.residual_kinds, cx.cursors = [], [], [], []
    # read by name too: what the iteration binds once at its top level (recomputed
    # before its adjoint runs), so its arrays' cotangents start full there, never
    # made full inside an inner loop (see :func:`_own_stable`)
    cx.stable = cx.stable | facts.reads | facts.writes | {facts.index} \
        | bound_once_in(s.body, cx.norm.node.body)
    cx.unwritten, cx.top = None, None  # values from outside are read by name
    try:
        forward, adjoint = block(cx, s.body, Where())
        made = _Iteration(cx.fwd_init, _without_sums(forward, facts.reductions), cx.cursors,
                          adjoint, set(), forward,
                          list(zip(cx.residuals, cx.residual_kinds, strict=True)))
    finally:
        (cx.fwd_init, cx.residuals, cx.residual_kinds, cx.cursors, cx.stable,
         cx.unwritten, cx.top) = kept
    made.full = cx.full_cotangents - full_before
    cx.full_cotangents -= made.full  # made in the iteration, where the array is
    return made


def _without_sums(stmts: list[gast.stmt], sums: set[str]) -> list[gast.stmt]:
    """``stmts`` without the additions into the loop's sums (``total = total + v``): the
    pullback recomputes an iteration's values, not the sums, which it never reads."""
    return _dropped(stmts, lambda s: isinstance(s, gast.Assign) and isinstance(
        s.targets[0], gast.Name) and s.targets[0].id in sums)


def _dropped(stmts: list[gast.stmt], drop: Callable[[gast.stmt], bool]) -> list[gast.stmt]:
    """Copies of ``stmts`` without the statements ``drop`` picks, in branches and loops too."""
    out = []
    for s in stmts:
        if drop(s):
            continue
        if isinstance(s, gast.If | gast.For | gast.While):
            s = copy.copy(s)
            s.body = _dropped(s.body, drop) or [pass_stmt()]
            if hasattr(s, "orelse"):
                s.orelse = _dropped(s.orelse, drop)
        out.append(s)
    return out


@dataclass
class _Cotangents:
    """Where the cotangents an iteration's adjoint touches live, as statements around
    and in the loop, and the names the adjoint reads them by (``renames``)."""

    renames: dict[str, gast.expr] = field(default_factory=dict)
    before: list[gast.stmt] = field(default_factory=list)  # buffers, before the loop
    chunk_open: list[gast.stmt] = field(default_factory=list)  # a chunk's own sums
    opening: list[gast.stmt] = field(default_factory=list)  # an iteration's first lines
    zeroed: list[gast.stmt] = field(default_factory=list)  # after its recomputed values
    chunk_close: list[gast.stmt] = field(default_factory=list)  # a chunk's sums kept
    after: list[gast.stmt] = field(default_factory=list)  # the buffers summed


def _cotangents(cx: Context, s: gast.For, facts: Iterations, it: _Iteration,
                local: set[str], chunking: tuple[str, str]) -> _Cotangents:
    """The plan of the cotangents the iterations' adjoint touches; ``chunking`` names
    the number of chunks and the chunk.  A shared value's cotangent is summed per chunk
    in a variable of the chunk, copied into the chunk's row of a buffer when the chunk
    ends (rows written on every iteration would share cache lines between threads)."""
    owner = {d: name for name, d in cx.adjoints.items()}
    touched = sorted({n for n in loaded_names(it.adjoint) + stored_names(it.adjoint)
                      if n in owner})
    plan = _Cotangents()
    chunks, chunk = chunking
    for d in touched:
        name = owner[d]
        kind = cx.kinds.get(name)
        if name in facts.reductions:  # every iteration reads the sum's cotangent
            here = cx.namer.fresh(f"{d}_here")
            plan.renames[d] = load(here)
            plan.opening.append(assign(here, load(d), cx.line))
        elif name in facts.writes:  # read and cleared at the iteration's own index
            it.adjoint = _made_before(it.adjoint, d)
            if d in stored_names(it.adjoint):
                raise _unsupported(cx, s, name)
            plan.before.append(assign(d, call("rt.materialize", load(d), load(name)),
                                      cx.line))
        elif name in local:
            value = call("rt.materialize", zero(kind), load(name)) if name in it.full \
                else zero(kind)
            plan.zeroed.append(assign(d, value, cx.line))
        else:  # summed in a variable of the chunk, kept in the chunk's row of a buffer
            parts, mine = cx.namer.fresh(f"{d}_parts"), cx.namer.fresh(f"{d}_chunk")
            plan.before.append(_buffer(cx, s, name, parts, chunks))
            plan.renames[d] = load(mine)
            array = isinstance(kind, ArrayKind)
            if array:  # made full when the chunk starts
                it.adjoint = _made_before(it.adjoint, d)
            start = call("np.zeros", call("np.shape", load(name))) if array else const(0.0)
            plan.chunk_open.append(assign(mine, start, cx.line))
            plan.chunk_close.append(assignment([store_item(load(parts), load(chunk))],
                                               load(mine)))
            sum_axis = [keyword("axis", const(0))] if array else []
            total = call_node(load("np.sum"), [load(parts)], sum_axis)
            plan.after.extend(cx.accumulate(name, kind, total))
    return plan


def _made_before(stmts: list[gast.stmt], d: str) -> list[gast.stmt]:
    """``stmts`` without making the array cotangent ``d`` full on its first use
    (``if d.size == 0: d = rt.materialize(d, x)``): it is made full before."""
    def makes(s: gast.stmt) -> bool:
        if isinstance(s, gast.If):
            return bool(s.body) and all(map(makes, s.body)) and not s.orelse
        return isinstance(s, gast.Assign) and stored_names(s) == [d] and \
            isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Attribute) \
            and s.value.func.attr == "materialize"
    return _dropped(stmts, makes)


def _buffer(cx: Context, s: gast.For, name: str, parts: str, chunks: str) -> gast.stmt:
    """``parts = np.zeros(...)``: one row per chunk for the cotangent of ``name``, read
    from outside the loop; the adjoint adds into its chunk's row."""
    kind = cx.kinds.get(name)
    if isinstance(kind, ArrayKind) and kind.ndim is not None:
        shape = binop(tuple_of([load(chunks)]), gast.Add(), call("np.shape", load(name)))
        return assign(parts, call("np.zeros", shape), cx.line)
    if kind in ("float", "int"):
        return assign(parts, call("np.zeros", load(chunks)), cx.line)
    raise _unsupported(cx, s, name)


def _unsupported(cx: Context, s: gast.For, name: str) -> NonDifferentiableError:
    return NonDifferentiableError(
        f"the parallel loop reads '{name}', a {cx.kinds.get(name)!r}, whose cotangent "
        "cannot be summed over the iterations yet", cx.norm.parsed.location(s),
        "pass numbers or arrays, or differentiate with parallel=False")
