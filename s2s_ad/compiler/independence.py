"""The independence check of parallel loops: which iterations of a ``prange`` loop
may run at once, and what each name of its body is to them.

A ``for i in prange(...)`` loop (normal form) runs its iterations in parallel
when they are independent; this pass proves it or refuses the loop at its line
with the reason.  It sorts the names the body touches:

* **private**: bound in the body before any read on every path of an iteration
  (temporaries, a per-iteration ``acc = 0.0``, arrays allocated in the body);
  never read after the loop;
* **reductions**: a number read and bound in the body only as ``r = r + v`` or
  ``r = r - v`` (``total += ...``): the iterations' terms are summed;
* **outer reads**: bound before the loop and only read in it;
* **outer writes**: arrays bound before the loop whose items the body writes at
  the loop's own index (``out[i] = v``, ``out[i, j] = v``) and never reads, and
  that nothing read before the loop can see.

Anything else (a number carried from one iteration to the next, an item write
at another index, an in-place update or a call that may change an outer value)
is refused.

>>> import gast
>>> from s2s_ad.compiler.syntax.builders import module
>>> tree = gast.parse('''
... def f(w, x):
...     total = 0.0
...     for i in range(x.shape[0]):
...         v = x[i] * w
...         total = total + v
...     return total''')
>>> loop = tree.body[0].body[1]
>>> facts = iterations(tree.body[0].body, loop, {}, lambda node: None, {'w', 'x'})
>>> sorted(facts.reductions), sorted(facts.private), sorted(facts.reads)
(['total'], ['i', 'v'], ['w', 'x'])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import gast

from s2s_ad.compiler.normalize.control import breaks_out
from s2s_ad.compiler.primitives import CutCall, FunctionCall, classify
from s2s_ad.compiler.syntax.annotations import is_in_place
from s2s_ad.compiler.syntax.builders import loaded_names, module, stored_names
from s2s_ad.errors import Location, NonDifferentiableError
from s2s_ad.kinds import Kind

Locate = Callable[[gast.AST], Location | None]


@dataclass
class Iterations:
    """What the names of a parallel loop's body are to its iterations."""

    index: str
    private: set[str] = field(default_factory=set)
    reductions: set[str] = field(default_factory=set)
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)


def iterations(function_body: list[gast.stmt], loop: gast.For, kinds: dict[str, Kind],
               locate: Locate, local_names: set[str] | None = None) -> Iterations:
    """The facts of ``loop`` (a statement of ``function_body``), or a located refusal;
    outer reads are among ``local_names`` (the function's variables) when given."""
    index = loop.target.id
    body = loop.body
    if breaks_out(body):  # how break and return leave a loop, desugared
        raise _refused(locate, loop, "break or return cannot leave a parallel loop",
                       "every iteration of a prange loop runs: set a flag instead, or "
                       "loop with range")
    stored = set(stored_names(body)) | {index}
    facts = Iterations(index=index)
    facts.reductions = {n for n in stored - {index} if _reduction(body, n)}
    for name in sorted(facts.reductions):
        if kinds.get(name, "float") not in ("float", "int"):
            raise _refused(locate, loop, f"'{name}' is summed over the iterations but is a "
                           f"{kinds.get(name)!r}; only numbers are summed in parallel",
                           "sum numbers, or write each iteration's array into a row")
    facts.private = stored - facts.reductions
    _carried(body, {index}, facts.private, loop, locate)
    outside = _outside(function_body, loop)
    for name in sorted(facts.private & outside):
        raise _refused(locate, loop, f"'{name}' is bound in every iteration and read after "
                       "the loop: which iteration's value it holds is not defined",
                       "sum it, or write it into an array at the loop's index")
    facts.writes = _item_writes(body, facts, loop, locate)
    before = set(loaded_names(function_body[:function_body.index(loop)])) \
        if loop in function_body else set()
    for name in sorted(facts.writes & before):
        raise _refused(locate, loop, f"the loop writes items of '{name}', which is read "
                       "before it", f"write into a new array ({name}_new = np.empty_like"
                       f"({name})) instead")
    facts.reads = (set(loaded_names(body)) | set(loaded_names(loop.iter))) \
        - facts.private - facts.reductions - facts.writes
    if local_names is not None:
        facts.reads &= local_names
    _no_changes(body, facts, loop, locate)
    return facts


def _reduction(body: list[gast.stmt], name: str) -> bool:
    """Whether every statement of ``body`` touching ``name`` is ``name = name +/- v``."""
    found = False
    for node in gast.walk(module(body)):
        if isinstance(node, gast.Assign) and any(
                isinstance(t, gast.Name) and t.id == name for t in node.targets):
            value = node.value
            if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add | gast.Sub)
                    and isinstance(value.left, gast.Name) and value.left.id == name
                    and name not in loaded_names(value.right)):
                return False
            found = True
        elif isinstance(node, gast.For | gast.If | gast.While | gast.Expr) and \
                name in _own_reads(node):
            return False
        elif isinstance(node, gast.Assign) and name in loaded_names(node):
            return False
    return found


def _own_reads(s: gast.stmt) -> list[str]:
    """Names a statement reads itself (a branch's test, a loop's range), not its body."""
    if isinstance(s, gast.For):
        return loaded_names(s.iter)
    if isinstance(s, gast.If | gast.While):
        return loaded_names(s.test)
    return loaded_names(s)


def _carried(stmts: list[gast.stmt], assigned: set[str], private: set[str],
             loop: gast.For, locate: Locate) -> set[str]:
    """Refuse a read of a name the body binds before this iteration bound it (the value
    would come from another iteration); return the names bound on every path."""
    for s in stmts:
        for name in _own_reads(s):
            if name in private and name not in assigned:
                raise _refused(locate, s, f"'{name}' is read before this iteration binds it: "
                               "its value would come from another iteration of the "
                               "parallel loop", "bind it first in each iteration, or sum "
                               f"into it ({name} += ...)")
        if isinstance(s, gast.Assign):
            assigned |= {t.id for t in s.targets if isinstance(t, gast.Name)}
        elif isinstance(s, gast.If):
            then = _carried(s.body, set(assigned), private, loop, locate)
            other = _carried(s.orelse, set(assigned), private, loop, locate)
            assigned |= then & other
        elif isinstance(s, gast.For | gast.While):
            inner = set(assigned) | ({s.target.id} if isinstance(s, gast.For) else set())
            _carried(s.body, inner, private, loop, locate)
    return assigned


def _outside(function_body: list[gast.stmt], loop: gast.For) -> set[str]:
    """Names read outside ``loop``: before it (a loop's reads of its own variable
    aside), and after it where they may still hold the value the loop left (not once
    rebound, as by a later ``for i in ...``)."""
    if loop not in function_body:
        return _reads(function_body, loop)
    at = function_body.index(loop)
    return _reads(function_body[:at], loop) | _read_after(function_body[at + 1:], set())[0]


def _reads(stmts: list[gast.stmt], loop: gast.For) -> set[str]:
    """Names ``stmts`` read outside ``loop``, a loop's reads of its own variable aside."""
    names: set[str] = set()
    for s in stmts:
        if s is loop:
            continue
        if isinstance(s, gast.If | gast.For | gast.While):
            names.update(_own_reads(s))
            inner = _reads(s.body, loop)
            if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                inner.discard(s.target.id)
            names |= inner | _reads(getattr(s, "orelse", []), loop)
        else:
            names.update(loaded_names(s))
    return names


def _read_after(stmts: list[gast.stmt], bound: set[str]) -> tuple[set[str], set[str]]:
    """(names ``stmts`` may read before binding them, the names bound after them on
    every path), given the names ``bound`` before them."""
    read: set[str] = set()
    bound = set(bound)
    for s in stmts:
        read.update(n for n in _own_reads(s) if n not in bound)
        if isinstance(s, gast.Assign):
            bound.update(stored_names(s))
        elif isinstance(s, gast.If):
            then_read, then_bound = _read_after(s.body, bound)
            other_read, other_bound = _read_after(s.orelse, bound)
            read |= then_read | other_read
            bound |= then_bound & other_bound
        elif isinstance(s, gast.For | gast.While):
            own = {s.target.id} if isinstance(s, gast.For) and isinstance(
                s.target, gast.Name) else set()
            read |= _read_after(s.body, bound | own)[0]
            read |= _read_after(getattr(s, "orelse", []), bound)[0]
    return read, bound


def _item_writes(body: list[gast.stmt], facts: Iterations, loop: gast.For,
                 locate: Locate) -> set[str]:
    """Arrays bound before the loop whose items the body writes, each at the loop's
    index on the first axis and never read in the body."""
    writes: set[str] = set()
    rebound = facts.index in stored_names(body)  # then out[i] may be any item
    for node in gast.walk(module(body)):
        if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript)):
            continue
        base = node.targets[0].value
        if not isinstance(base, gast.Name) or base.id in facts.private:
            continue
        index = node.targets[0].slice
        first = index.elts[0] if isinstance(index, gast.Tuple) and index.elts else index
        if not (isinstance(first, gast.Name) and first.id == facts.index):
            raise _refused(locate, node, f"an iteration writes an item of '{base.id}' that "
                           "another iteration may write or read", f"write {base.id}"
                           f"[{facts.index}] (the loop's index first), or loop with range")
        if rebound:
            raise _refused(locate, node, f"an iteration writes '{base.id}[{facts.index}]' "
                           f"but rebinds the loop's index '{facts.index}': it may write "
                           "another iteration's item", "bind another name instead of the "
                           "loop's index")
        writes.add(base.id)
    for name in sorted(writes):
        read = [n for n in gast.walk(module(body)) if isinstance(n, gast.Name)
                and n.id == name and not _is_write_base(body, n)]
        if read:
            raise _refused(locate, loop, f"the loop writes items of '{name}' and reads it: "
                           "an iteration could read another's item",
                           "read the values from another array than the one written")
    return writes


def _is_write_base(body: list[gast.stmt], name: gast.Name) -> bool:
    return any(isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Subscript)
               and s.targets[0].value is name for s in gast.walk(module(body)))


def _no_changes(body: list[gast.stmt], facts: Iterations, loop: gast.For,
                locate: Locate) -> None:
    """Refuse an in-place update of, or a call that may change, a value from outside."""
    outer = facts.reads | facts.writes
    for node in gast.walk(module(body)):
        if isinstance(node, gast.Assign) and is_in_place(node) and isinstance(
                node.targets[0], gast.Name) and node.targets[0].id in outer:
            raise _refused(locate, node, f"an iteration changes '{node.targets[0].id}' in "
                           "place, which every iteration shares", "bind a new value instead")
        value = getattr(node, "value", None) if isinstance(node, gast.Assign | gast.Expr) \
            else None
        if isinstance(value, gast.Call) and _may_change(value):
            changed = [n for n in loaded_names(value) if n in outer]
            if changed:
                raise _refused(locate, value, f"this call may change '{changed[0]}', which "
                               "every iteration of the parallel loop shares",
                               "give each iteration its own copy")


def _may_change(value: gast.Call) -> bool:
    """Whether a call may change its arguments: not a Python function the linker
    transforms (one that writes into an argument is refused there), nor
    ``without_derivative``."""
    primitive = classify(value)
    return primitive.may_write and not isinstance(primitive, FunctionCall | CutCall)


def _refused(locate: Locate, node: gast.AST, problem: str, hint: str) -> NonDifferentiableError:
    return NonDifferentiableError(f"{problem} (parallel loop)", locate(node), hint)
