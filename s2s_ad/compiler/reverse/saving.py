"""The reverse stages, part: saving values for the pullback.

Top-level values become residual variables, values in loops and branches are
pushed on tapes: arrays indexed by the loop position (preallocated or grown),
typed lists read back to front for everything else.
"""

from __future__ import annotations

import copy

import gast

from s2s_ad.compiler.reverse import recompute
from s2s_ad.compiler.reverse.aliasing import scratch_views
from s2s_ad.compiler.reverse.context import Block, CalleeLink, Context, Loop, Where
from s2s_ad.compiler.syntax.annotations import set_line
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    attribute,
    aug,
    binop,
    call,
    const,
    expr_stmt,
    load,
    store_item,
    subscript_of,
    tuple_of,
)
from s2s_ad.kinds import NUMERIC, ArrayKind, Kind

_DTYPES = {"int": "np.int64", "bool": "np.bool_"}


def save(cx: Context, atom: gast.expr, where: Where, reference: bool = False
         ) -> tuple[list[gast.stmt], list[gast.stmt], gast.expr]:
    """(forward statements, pullback statements, pullback expression) for a value.

    A scratch array (see ``Context.scratch``), or a variable that may share its
    memory, is saved as a copy of its contents now, unless only a ``reference`` is
    needed (for its shape)."""
    if not isinstance(atom, gast.Name):
        return [], [], atom
    name, kind = atom.id, cx.kind(atom)
    again = recompute.lookup(cx, name, where.loop)
    if again is not None:
        return [], [], again
    if name in scratch_views(cx) and not reference and not _in_block(name, kind, where):
        return _save_copy(cx, name, kind, where)
    if name in cx.stable:
        cx.residual(name, kind)
        return [], [], load(name)
    if _in_block(name, kind, where) and not reference:  # a copy into the loop's block
        return _saved_once(cx, name, where, lambda: _push_block(cx, name, kind, where))
    if name in cx.scratch and not reference:
        return _save_copy(cx, name, kind, where)
    numeric = kind in NUMERIC
    # one save per value: a second read of the same value in the same block (the name
    # not bound again in between) reads the first one's copy or tape slot; a reference
    # (for the shape) reads an array's copy in the loop's block
    key = (id(where), name, cx.versions.get(name, 0))
    if (numeric or reference) and key in cx.saved:
        return [], [], copy.deepcopy(cx.saved[key][1])
    if where.top or (where.loop is None and numeric):
        copy_name = cx.namer.fresh(f"{name}_saved")
        cx.residual(copy_name, kind)
        if not where.top:
            cx.fwd_init.append(assign(copy_name, _zero_value(cx, kind)))
        out = [assign(copy_name, load(name), cx.line)], [], load(copy_name)
    elif numeric:
        out = _push_array(cx, name, kind, where.loop)
    else:
        return _push_list(cx, name)
    if numeric:
        cx.saved[key] = (where, out[2])  # (the Where kept alive, so its id stays unique)
    return out


def keep(cx: Context, atom: gast.expr, where: Where, fwd: list[gast.stmt],
         pops: list[gast.stmt], reference: bool = False) -> gast.expr:
    """Save ``atom`` for the pullback (see :func:`save`) as one of several saves of a
    statement, and return the expression the pullback reads it by.

    Its forward statements go at the end of ``fwd`` (saves run in order), its pullback
    statements at the front of ``pops``: the pullback runs the forward sweep backwards,
    so the value saved last is read back first."""
    f, p, e = save(cx, atom, where, reference)
    fwd.extend(f)
    pops[:0] = p
    return e


def keep_shape(cx: Context, atom: gast.expr, where: Where, fwd: list[gast.stmt],
               pops: list[gast.stmt]) -> gast.expr:
    """Save only the shape of array ``atom`` (see :func:`keep`) and return the
    expression the pullback reads it by: what broadcasting's adjoint needs, without
    keeping the array (and its memory) alive until the pullback runs.

    An array of unknown or no dimensions is kept whole."""
    kind = cx.kind(atom)
    if not isinstance(atom, gast.Name) or kind.ndim in (None, 0):
        return attribute(keep(cx, atom, where, fwd, pops, reference=True), "shape")
    if atom.id in cx.stable or recompute.lookup(cx, atom.id, where.loop) is not None:
        return attribute(keep(cx, atom, where, fwd, pops, reference=True), "shape")
    return tuple_of(_dims(cx, atom.id, kind.ndim, where, fwd, pops))


def _dims(cx: Context, name: str, ndim: int, where: Where, fwd: list[gast.stmt],
          pops: list[gast.stmt]) -> list[gast.expr]:
    """Save the array's dimensions as numbers (number tapes in loops): the pullback's
    expressions for them. Once per value and block, like :func:`save`."""
    key = ("dims", id(where), name, cx.versions.get(name, 0))
    if key in cx.saved:
        return copy.deepcopy(cx.saved[key][1]).elts
    dims = []
    for d in range(ndim):
        dim = cx.namer.fresh(f"{name}_dim{d}")
        cx.kinds[dim] = "int"
        fwd.append(assign(dim, subscript_of(attribute(load(name), "shape"), d), cx.line))
        dims.append(keep(cx, load(dim), where, fwd, pops))
    cx.saved[key] = (where, tuple_of(dims))
    return dims


def rebound(cx: Context, names: list[str]) -> None:
    """``names`` were just bound again: later reads save their new values."""
    for name in names:
        cx.versions[name] = cx.versions.get(name, 0) + 1


def _in_block(name: str, kind: Kind, where: Where) -> bool:
    """Arrays of a known number of dimensions, saved in a loop, go to a block. Not the
    value of a function with early returns (``retval``, from normalize): its kind joins
    those of the returns, so it may hold a number where the kind says array."""
    return (where.loop is not None and isinstance(kind, ArrayKind)
            and kind.ndim not in (None, 0) and not name.startswith("retval"))


def _saved_once(cx: Context, name: str, where: Where, push):
    """One save per value and block: a second read of the same value (the name not
    bound again in between) reads the first one's save."""
    key = (id(where), name, cx.versions.get(name, 0))
    if key in cx.saved:
        return [], [], copy.deepcopy(cx.saved[key][1])
    out = push()
    cx.saved[key] = (where, out[2])  # (the Where kept alive, so its id stays unique)
    return out


def _push_block(cx: Context, name: str, kind: ArrayKind, where: Where):
    """Copy the array into its loop's block at the block's end; the offset and the
    shape go on number tapes, and the pullback reads the array back as a view."""
    dtype = {"float": cx.float_dtype, "int": "np.int64", "bool": "np.bool_"}[kind.element()]
    block = _block(cx, where.loop, dtype)
    block.pushes += 1
    at = cx.namer.fresh(f"{name}_at")
    cx.kinds[at] = "int"
    expected = binop(_trip_product(where) or const(1), gast.Mult(), load(block.per_trip))
    fwd = [assign(at, load(block.end), cx.line),
           assign(block.name, call("rt.block_push", load(block.name), load(at), load(name),
                                   expected), cx.line),
           assign(block.end, binop(load(at), gast.Add(), attribute(load(name), "size")),
                  cx.line)]
    pops: list[gast.stmt] = []
    at_read = keep(cx, load(at), where, fwd, pops)
    dims = _dims(cx, name, kind.ndim, where, fwd, pops)
    return fwd, pops, call("rt.block_read", load(block.name), at_read, tuple_of(dims))


def _block(cx: Context, loop: Loop, dtype: str) -> Block:
    """The loop's block for arrays of ``dtype``, made on its first use."""
    if dtype not in loop.blocks:
        name = cx.namer.fresh("tape_block")
        block = Block(name, cx.namer.fresh(f"{name}_end"), cx.namer.fresh(f"{name}_per_trip"))
        cx.tapes[name] = "block"
        cx.residual(name)
        cx.kinds[block.per_trip] = "int"
        cx.fwd_init += [assign(name, call("np.empty", const(0),
                                          gast.parse(dtype, mode="eval").body)),
                        assign(block.end, const(0))]
        loop.blocks[dtype] = block
    return loop.blocks[dtype]


def per_trip_counts(loop: Loop, line: int | None) -> list[gast.stmt]:
    """Before the loop: how many arrays each of its blocks receives per iteration."""
    return [assign(b.per_trip, const(b.pushes), line) for b in loop.blocks.values()]


def _trip_product(where: Where) -> gast.expr | None:
    """The number of iterations of the preallocated loops around ``where``, if known."""
    if where.prealloc is None:
        return None
    trips = [load(t) for t in where.prealloc.trips]
    total = trips[0]
    for t in trips[1:]:
        total = binop(total, gast.Mult(), t)
    return total


def _save_copy(cx: Context, name: str, kind: Kind, where: Where):
    snapshot = cx.namer.fresh(f"{name}_copy")
    cx.kinds[snapshot] = kind
    f, p, e = save(cx, load(snapshot), where)
    return [assign(snapshot, call("np.copy", load(name)), cx.line)] + f, p, e


def _zero_value(cx: Context, kind: Kind) -> gast.expr:
    return const({"int": 0, "bool": False}.get(kind, 0.0))


def _push_array(cx: Context, name: str, kind: Kind, loop: Loop):
    tape = cx.namer.fresh(f"{name}_tape")
    dtype = _DTYPES.get(kind, cx.float_dtype)
    loop.tapes.append((tape, dtype))
    cx.residual(tape)
    slot = subscript_of(load(tape), load(loop.position))
    write = assignment([store_item(load(tape), load(loop.position))], load(name))
    set_line(write, cx.line)
    return [write], [], slot


def _push_list(cx: Context, name: str):
    """Push on a typed list; the pullback reads it back to front with a cursor,
    leaving it intact so the pullback can run again."""
    tape = cx.namer.fresh(f"{name}_stack")
    cursor = cx.namer.fresh(f"{tape}_top")
    cx.tapes[tape] = "list"
    cx.residual(tape)
    cx.fwd_init.append(assign(tape, call("List")))
    cx.cursors.append(assign(cursor, call("len", load(tape))))
    read = cx.namer.fresh(f"{name}_read")
    push = expr_stmt(call(f"{tape}.append", load(name)))
    set_line(push, cx.line)
    pop = [aug(cursor, gast.Sub(), const(1), cx.line),
           assign(read, subscript_of(load(tape), load(cursor)), cx.line)]
    return [push], pop, load(read)


def save_residuals(cx: Context, res: str, link: CalleeLink, where: Where,
                   args: list[gast.expr], target: str):
    """Save a callee's residual tuple, called with ``args``; element by element when
    all are numbers or arrays, so loops keep them in (preallocated) arrays and blocks
    rather than lists of tuples.  An element that is one of the callee's parameters
    is saved as the caller's argument (a variable other than the call's ``target``, or
    a constant): a variable bound once is then read by name (a loop does not tape or
    copy what does not change in it), and a value saved twice is saved once."""
    kinds = link.transform.generated.residual_kinds
    if not kinds:  # nothing to keep (and Numba cannot store empty tuples in a list)
        return [], [], tuple_of([])
    if where.top or not all(k in NUMERIC or _in_block("", k, where) for k in kinds):
        if all(k in NUMERIC for k in kinds):  # a tuple of numbers (parallel loops tape it)
            cx.kinds[res] = tuple(kinds)
        return save(cx, load(res), where)
    fwd: list[gast.stmt] = []
    pops: list[gast.stmt] = []
    reads: list[gast.expr] = []
    passed = _passed_through(cx, link, args, target)
    for i, kind in enumerate(kinds):
        if i in passed:
            reads.append(keep(cx, passed[i], where, fwd, pops))
            continue
        part = cx.namer.fresh(f"{res}_{i}")
        cx.kinds[part] = kind
        fwd.append(assign(part, subscript_of(load(res), i), cx.line))
        reads.append(keep(cx, load(part), where, fwd, pops))
    return fwd, pops, tuple_of(reads)


def _passed_through(cx: Context, link: CalleeLink, args: list[gast.expr], target: str
                    ) -> dict[int, gast.expr]:
    """Residual position -> the caller's argument it is, for residuals that are the
    callee's own parameters (bound once there, so the value passed) and whose argument
    is a constant or a name other than ``target`` (saved after the call, it must still
    hold the value passed), of the residual's kind."""
    generated = link.transform.generated
    callee = generated.context
    if callee is None:
        return {}
    params = [a.id for a in generated.forward.args.args]
    if len(params) != len(args):  # not one argument per parameter: keep the tuple's
        return {}
    passed = {}
    for i, (name, kind) in enumerate(zip(generated.residuals, generated.residual_kinds,
                                         strict=True)):
        if name not in params or name not in callee.stable:
            continue
        arg = args[params.index(name)]
        if cx.kind(arg) != kind:
            continue
        if isinstance(arg, gast.Constant) or (isinstance(arg, gast.Name)
                                              and arg.id != target):
            passed[i] = arg
    return passed
