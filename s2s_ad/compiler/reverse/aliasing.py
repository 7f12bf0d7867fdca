"""The reverse stages, part: which variables may share an array's memory.

Views (slices, reshapes, transposes), copies of the reference, tuples holding an
array, and results of calls it is passed to may all be the same memory; item
writes and the recomputation of array items (recompute.py) must know.
"""

from __future__ import annotations

import gast
import numpy as np

from s2s_ad.compiler.primitives import classify
from s2s_ad.compiler.reverse.context import Context
from s2s_ad.compiler.reverse.order import Order
from s2s_ad.compiler.syntax.annotations import callee_of
from s2s_ad.kinds import ArrayKind, Kind
from s2s_ad.rules import returns_view


def definitions(stmts: list[gast.stmt]):
    """(name, value) of every plain assignment in ``stmts``, nested blocks included."""
    for s in stmts:
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            yield s.targets[0].id, s.value
        for field in ("body", "orelse"):
            yield from definitions(getattr(s, field, []) or [])


def is_view(op: gast.expr, of: str | None = None) -> bool:
    """Whether ``op`` may return memory of an existing array (of ``of``, if given)."""
    base = _view_base(op)
    return base is not None and (of is None or base == of)


def _view_base(op: gast.expr) -> str | None:
    """The variable whose memory ``op`` may return, if any."""
    if isinstance(op, gast.Name):
        base = op
    elif isinstance(op, gast.Subscript):
        base = op.value
    elif isinstance(op, gast.Call) and returns_view(callee_of(op)) and op.args:
        base = op.args[0]
    elif isinstance(op, gast.Call) and callee_of(op) is np.einsum and len(op.args) == 2:
        base = op.args[1]  # NumPy returns a view for "ij->ji", "ii->i"...
    else:
        return None
    return base.id if isinstance(base, gast.Name) else None


def sharing(cx: Context, name: str, temps: bool = False) -> list[str]:
    """The user's variables that may share memory with the array ``name``: views,
    copies of the reference, tuples holding it (and items taken from them), and
    results of calls it is passed to (a function may return its argument); with
    ``temps``, the normal form's temporaries too."""
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    for target, op in definitions(cx.norm.node.body):
        if not _holds_memory(cx.kinds.get(target)):
            continue
        for source in _referenced(op):
            if _holds_memory(cx.kinds.get(source)):
                parent[root(target)] = root(source)
    group = root(name)
    return sorted(v for v in set(parent) | set(parent.values())
                  if v != name and root(v) == group and (temps or v not in cx.norm.temps)
                  and _holds_memory(cx.kinds.get(v)))


def scratch_views(cx: Context) -> set[str]:
    """The variables (temporaries included) that may share memory with a scratch
    array (see ``Context.scratch``): saved as copies, like the scratch arrays, since
    nothing restores what a later write changes."""
    if cx.scratch_views is None:
        cx.scratch_views = {v for name in cx.scratch for v in sharing(cx, name, temps=True)
                            if v not in cx.scratch}
    return cx.scratch_views


def _holds_memory(kind: Kind | None) -> bool:
    if isinstance(kind, tuple):
        return any(_holds_memory(k) for k in kind)
    return isinstance(kind, ArrayKind) or kind == "unknown"


def _referenced(op: gast.expr) -> list[str]:
    """The variables whose memory the value of ``op`` may be (or hold)."""
    if isinstance(op, gast.Tuple):
        return [e.id for e in op.elts if isinstance(e, gast.Name)]
    base = _view_base(op)
    if base is not None:
        return [base]
    if isinstance(op, gast.Call) and classify(op).shares_operands:
        return [a.id for a in op.args if isinstance(a, gast.Name)]
    return []


def aliases_at(cx: Context, order: Order, name: str, s: gast.stmt,
               since: gast.stmt | None = None) -> list[str]:
    """The variables that may share memory with ``name`` when ``s`` runs: the groups of
    :func:`sharing`, built only from the assignments that may run before ``s`` (after
    ``since``, the allocation of the array ``s`` sees, on the same pass)."""
    parent: dict[str, str] = {}

    def root(v: str) -> str:
        while parent.get(v, v) != v:
            v = parent[v]
        return v

    for t in order.statements:
        if not (isinstance(t, gast.Assign) and isinstance(t.targets[0], gast.Name)):
            continue
        if t is s or not (order.between(since, t, s) if since is not None
                          else order.before(t, s)):
            continue
        target = t.targets[0].id
        if not _holds_memory(cx.kinds.get(target)):
            continue
        for source in _referenced(t.value):
            if _holds_memory(cx.kinds.get(source)):
                parent[root(target)] = root(source)
    group = root(name)
    return sorted(v for v in set(parent) | set(parent.values())
                  if v != name and root(v) == group and _holds_memory(cx.kinds.get(v)))
