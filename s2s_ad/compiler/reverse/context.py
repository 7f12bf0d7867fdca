"""What the reverse pass shares: one :class:`Context` per generated function family,
passed down to every part (saving, arrays, calls, statements, control, assemble).

The context holds the state the parts build together (cotangent names,
residuals, tapes, callee links, injected objects) and the small operations on
that state alone (``d_x`` names, ``d_x += v``, residual registration).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from s2s_ad.compiler.activity import Activity
from s2s_ad.compiler.ir import GlobalRead
from s2s_ad.compiler.normalize import NormalFunction
from s2s_ad.compiler.primitives import Primitive
from s2s_ad.compiler.reverse.order import Order
from s2s_ad.compiler.syntax.annotations import callee_of, set_line
from s2s_ad.compiler.syntax.builders import (
    add,
    assign,
    aug,
    comment,
    load,
    subscript_of,
    tuple_of,
    zero,
)
from s2s_ad.compiler.syntax.names import Namer
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind, kind_of_value

Linker = Callable[..., Any]  # (callee, kinds, primal_only, call=None) -> Transform


def _item(value: gast.expr, i: int) -> gast.expr:
    """Item ``i`` of a tuple expression: the element itself of a tuple display."""
    return value.elts[i] if isinstance(value, gast.Tuple) else subscript_of(value, i)


@dataclass
class CalleeLink:
    """A call from generated code to another transformed function."""

    transform: Any
    primal: str
    forward: str
    pullback: str
    wrt_positions: list[int]
    globals_passed: list[str] = field(default_factory=list)  # caller names of its globals


@dataclass
class Block:
    """One buffer for the arrays a loop saves (see ``runtime.block_push``): its name,
    the name of its end offset, and the name and number of arrays pushed per iteration
    (set before the loop, so the first push makes room for all iterations)."""

    name: str
    end: str
    per_trip: str
    pushes: int = 0


@dataclass
class Loop:
    """A loop being reversed: its trip counter, tape position and tapes."""

    counter: str
    position: str | None = None
    trip: str | None = None  # name of the trip count when the tapes are preallocated
    tapes: list[tuple[str, str]] = field(default_factory=list)  # (tape, dtype)
    # arrays saved in the loop, one block per dtype: dtype -> the Block
    blocks: dict[str, Block] = field(default_factory=dict)
    parent: Loop | None = None  # the loop around this one
    line: int | None = None
    # values the reverse iteration recomputes (see recompute.py): name -> its statement
    # (None: the loop variable), in forward order; those needed, renamed for the pullback
    recompute: dict[str, Any] = field(default_factory=dict)
    renamed: dict[str, str] = field(default_factory=dict)


@dataclass
class Prealloc:
    """Tapes of ``range`` loops nested in a top-level ``range`` loop, with bounds that
    do not change inside it, are preallocated before that outermost loop."""

    assigned: set[str]  # names assigned anywhere inside the outermost loop
    trips: list[str]  # trip counts of the enclosing preallocated loops
    before: list[gast.stmt]  # statements to run before the outermost loop


@dataclass
class Where:
    """Where a statement sits: in which loop, under a branch, in which preallocation."""

    loop: Loop | None = None
    conditional: bool = False
    prealloc: Prealloc | None = None

    @property
    def top(self) -> bool:
        return self.loop is None and not self.conditional


@dataclass(eq=False)
class Context:
    """The state of reversing one function (see the module docstring)."""

    norm: NormalFunction
    kinds: dict[str, Kind]
    activity: Activity
    wrt: list[str]
    float_dtype: str
    linker: Linker
    parallel: bool = False  # prange loops run in parallel (see parallel.py)
    stable: set[str] = field(default_factory=set)  # read by name in the pullback
    adjoints: dict[str, str] = field(default_factory=dict)
    residuals: list[str] = field(default_factory=list)
    residual_kinds: list[Kind] = field(default_factory=list)
    fwd_init: list[gast.stmt] = field(default_factory=list)
    cursors: list[gast.stmt] = field(default_factory=list)
    tapes: dict[str, str] = field(default_factory=dict)
    links: dict[int, CalleeLink] = field(default_factory=dict)
    externals: dict[str, Any] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)  # arrays with item writes
    hidden: dict[str, GlobalRead] = field(default_factory=dict)  # extra parameters
    line: int | None = None
    scratch: set[str] = field(default_factory=set)  # arrays allocated again and written
    scratch_views: set[str] | None = None  # what may share their memory (aliasing.py)
    unwritten: set[str] | None = None  # arrays whose items never change (recompute.py)
    top: Loop | None = None  # the top level as a loop of one iteration (recompute.py)
    full_cotangents: set[str] = field(default_factory=set)  # allocated when pullback starts
    # saves already made (saving.py): (id of the Where, name, binding version) ->
    # (the Where, the pullback's expression); versions count rebindings seen so far
    saved: dict[tuple, tuple] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    # why reverse mode cannot differentiate it (a call of a function with only a
    # differential): raised when reverse-mode code is asked for, not when forward mode is
    refusal: NonDifferentiableError | None = None

    def __post_init__(self) -> None:
        self.externals = dict(self.norm.externals)
        self.hidden = dict(self.norm.hidden)
        self.stable = stable_names(self.norm) | set(self.hidden)
        self.scratch = scratch_arrays(self.norm, self.stable)

    @property
    def namer(self) -> Namer:
        return self.norm.namer

    # -- names and kinds --------------------------------------------------------------
    def adj(self, name: str) -> str:
        """The cotangent variable of ``name`` (``d_name``, renamed apart if taken)."""
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
        """Pass ``name`` from the forward function to the pullback."""
        if name not in self.residuals:
            self.residuals.append(name)
            self.residual_kinds.append(kind)

    def global_name(self, read: GlobalRead) -> str:
        """The parameter that passes the global variable ``read`` (added if new: a
        callee's globals are passed through its callers)."""
        for name, known in self.hidden.items():
            if known.key == read.key:
                return name
        name = self.namer.fresh(read.name)
        self.hidden[name] = read
        self.kinds[name] = kind_of_value(read.value())
        self.stable.add(name)
        return name

    def external(self, obj: Any) -> str:
        """A name in the generated module bound to ``obj`` when it is loaded."""
        for name, known in self.externals.items():
            if known is obj:
                return name
        name = self.namer.fresh(getattr(obj, "__name__", "external"))
        self.externals[name] = obj
        return name

    # -- adjoint accumulation -----------------------------------------------------------
    def accumulate(self, name: str, kind: Kind, value: gast.expr) -> list[gast.stmt]:
        """``d_name += value`` (element-wise for tuples; a tuple computed by a call
        is named first, so the call runs once)."""
        target = self.adj(name)
        if isinstance(kind, tuple):
            first: list[gast.stmt] = []
            if not isinstance(value, gast.Name | gast.Tuple):
                named = self.namer.fresh(f"{target}_part")
                first, value = [assign(named, value, self.line)], load(named)
            elts = [add(k, subscript_of(load(target), i), _item(value, i))
                    for i, k in enumerate(kind)]
            return first + [assign(target, tuple_of(elts), self.line)]
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

    def grad_source(self, target: str, prim: Primitive) -> tuple[list, gast.expr]:
        """Statements that take the cotangent of ``target`` and the expression for it."""
        if any(isinstance(a, gast.Name) and a.id == target for a in prim.operands):
            incoming = self.namer.fresh(f"{self.adj(target)}_in")
            kind = self.kinds.get(target)
            return [assign(incoming, load(self.adj(target)), self.line),
                    assign(self.adj(target), zero(kind), self.line)], load(incoming)
        return [], load(self.adj(target))

    def reset(self, target: str, prim: Primitive) -> list[gast.stmt]:
        """Zero ``d_target`` once its contributions are passed on (unless it is read by
        name, or the operation reads ``target`` itself)."""
        if target in self.stable or any(isinstance(a, gast.Name) and a.id == target
                                        for a in prim.operands):
            return []
        return [assign(self.adj(target), zero(self.kinds.get(target)), self.line)]

    def header(self) -> gast.Expr:
        """The ``# adjoint of line N`` comment opening an adjoint block."""
        node = comment(f"adjoint of line {self.line}")
        set_line(node, self.line)
        return node


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


ALLOCATORS = (np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
              np.empty_like, np.full_like, np.copy, np.eye, np.identity)


def scratch_arrays(norm: NormalFunction, stable: set[str]) -> set[str]:
    """Arrays written item by item that are bound more than once, each time to a new
    array (``tmp = np.zeros(k)`` or ``new = old * 1.0`` inside a loop), or bound
    to a new array before each write on the same pass (``prev, cur = cur, prev``
    after the writes does not matter):
    every array written is its own memory, so the pullback keeps copies of their
    values instead of restoring overwritten items.
    """
    order = Order(norm.node.body)
    writes: dict[str, list[gast.stmt]] = {}
    for s in order.statements:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript) \
                and isinstance(s.targets[0].value, gast.Name):
            writes.setdefault(s.targets[0].value.id, []).append(s)
    bindings: dict[str, list[gast.expr]] = {}
    for s in order.statements:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            bindings.setdefault(s.targets[0].id, []).append(s.value)
    return {name for name, at in writes.items()
            if name not in stable and name not in norm.params and name in bindings
            and (all(map(_new_array, bindings[name]))
                 or all(_fresh_before(order, name, s) for s in at))}


def _fresh_before(order: Order, name: str, s: gast.stmt) -> bool:
    """Whether the array the write ``s`` into ``name`` sees is a new one."""
    bound = order.allocation(name, s)
    return bound is not None and _new_array(bound.value)


def _new_array(value: gast.expr) -> bool:
    """Whether ``value`` is always a new array: an allocator's, or an arithmetic
    operator's (``x * 1.0``; the generated code rebinds for ``y *= s`` too)."""
    return isinstance(value, gast.BinOp | gast.UnaryOp) or (
        isinstance(value, gast.Call) and callee_of(value) in ALLOCATORS)


def stable_names(norm: NormalFunction) -> set[str]:
    """Names the pullback may read by name: bound once, at the top level (parameters
    never reassigned included)."""
    counts: Counter = Counter()
    _count_assignments(norm.node.body, True, counts, set())
    params = set(norm.params)
    return {p for p in params if counts[p] == 0} | (
        bound_once_in(norm.node.body, norm.node.body) - params)


def bound_once_in(block: list[gast.stmt], function_body: list[gast.stmt]) -> set[str]:
    """Names bound once in ``function_body``, by a statement at the top level of
    ``block`` (a part of it: the body itself, or a parallel loop's body, whose
    iterations the pullback runs as functions of their own)."""
    counts: Counter = Counter()
    _count_assignments(function_body, True, counts, set())
    here: Counter = Counter()
    nested: set[str] = set()
    _count_assignments(block, True, here, nested)
    return {n for n, c in here.items() if c == 1 and counts[n] == 1 and n not in nested}
