"""The reverse stages, part: the order of a function's statements, for the flow
sensitive questions about arrays: which assignments may run before a write (so
their variables may share the written memory), which binding of a name a write
sees, and whether a name is read after a statement before it is bound again.
"""

from __future__ import annotations

import gast


class Order:
    """Where each statement of a function sits, to tell which statements may run
    before or after another: the path of block indices leading to it, and the loops
    around it (a statement in a loop around another may run both before and after)."""

    def __init__(self, body: list[gast.stmt]) -> None:
        self.path: dict[int, tuple[int, ...]] = {}
        self.loops: dict[int, frozenset[int]] = {}
        self.blocks: dict[int, tuple[list[gast.stmt], int]] = {}  # its block, its index
        self.parent: dict[int, gast.stmt | None] = {}
        self.statements: list[gast.stmt] = []
        self._walk(body, (), frozenset(), None)

    def _walk(self, stmts: list[gast.stmt], path: tuple[int, ...], loops: frozenset[int],
              parent: gast.stmt | None) -> None:
        for i, s in enumerate(stmts):
            here = (*path, i)
            self.path[id(s)], self.loops[id(s)] = here, loops
            self.blocks[id(s)], self.parent[id(s)] = (stmts, i), parent
            self.statements.append(s)
            inner = loops | {id(s)} if isinstance(s, gast.For | gast.While) else loops
            for k, field in enumerate(("body", "orelse")):
                self._walk(getattr(s, field, []) or [], (*here, k), inner, s)

    def before(self, a: gast.stmt, b: gast.stmt) -> bool:
        """Whether ``a`` may run before ``b``."""
        return self.path[id(a)] < self.path[id(b)] or bool(self.loops[id(a)]
                                                             & self.loops[id(b)])

    def allocation(self, name: str, s: gast.stmt) -> gast.stmt | None:
        """The binding of ``name`` that statement ``s`` sees, if it is one assignment
        certain to be the last before ``s`` (in a block around ``s``, with no binding
        in between and none in a loop around ``s`` that a previous pass could leave)."""
        node: gast.stmt | None = s
        while node is not None:
            stmts, i = self.blocks[id(node)]
            for earlier in reversed(stmts[:i]):
                if isinstance(earlier, gast.Assign) and isinstance(earlier.targets[0], gast.Name) \
                        and earlier.targets[0].id == name:
                    return earlier
                if _binds(earlier, name):
                    return None
            node = self.parent[id(node)]
            if isinstance(node, gast.For | gast.While) and _binds(node, name):
                return None
        return None

    def between(self, a: gast.stmt, edge: gast.stmt, s: gast.stmt) -> bool:
        """Whether ``edge`` may run after ``a`` and before ``s`` on the same pass
        through ``a``'s block (``a`` is a statement of a block around ``s``)."""
        stmts, i = self.blocks[id(a)]
        depth = len(self.path[id(a)])
        edge_path, s_path = self.path[id(edge)], self.path[id(s)]
        if edge_path[:depth - 1] != s_path[:depth - 1] or edge_path[depth - 1] <= i:
            return False
        if edge_path[depth - 1] < s_path[depth - 1]:
            return True
        return edge_path[depth - 1] == s_path[depth - 1] and self.before(edge, s)


def _reads_of(s: gast.stmt) -> set[str]:
    """The names statement ``s`` itself reads (a compound statement: its header)."""
    if isinstance(s, gast.For):
        parts: list[gast.AST] = [s.iter]
    elif isinstance(s, gast.If | gast.While):
        parts = [s.test]
    else:
        parts = [s]
    return {n.id for p in parts for n in gast.walk(p)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def live_after(order: Order, name: str, s: gast.stmt) -> bool:
    """Whether ``name`` may be read after statement ``s`` runs, before it is bound
    again (a loop's statements may run again after ``s``)."""
    stmts, i = order.blocks[id(s)]
    return _live_before(stmts[i + 1:], name, _live_at_end(order, name, s))


def _live_at_end(order: Order, name: str, s: gast.stmt) -> bool:
    """Whether ``name`` is live at the end of the block holding ``s``."""
    parent = order.parent[id(s)]
    if parent is None:
        return False
    out = live_after(order, name, parent)
    if isinstance(parent, gast.For | gast.While):
        return _loop_head(parent, name, out)
    return out


def _loop_head(loop: gast.For | gast.While, name: str, out: bool) -> bool:
    """Whether ``name`` is live where a pass through ``loop``'s body ends (``out``:
    live after the loop)."""
    head = out
    while True:
        again = _live_before(loop.body + (loop.orelse or []), name, head)
        if isinstance(loop, gast.For) and _binds(loop.target, name):
            again = False
        new = out or again or name in _reads_of(loop)
        if new == head:
            return head
        head = new


def _binds(node: gast.AST, name: str) -> bool:
    """Whether ``node`` binds ``name`` (anywhere inside it)."""
    return any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
               for n in gast.walk(node))


def _live_before(stmts: list[gast.stmt], name: str, live: bool) -> bool:
    """Whether ``name`` is live before ``stmts``, given whether it is after them."""
    for s in reversed(stmts):
        if isinstance(s, gast.If):
            live = (name in _reads_of(s) or _live_before(s.body, name, live)
                    or _live_before(s.orelse, name, live))
        elif isinstance(s, gast.For | gast.While):
            live = name in _reads_of(s) or _loop_head(s, name, live)
        elif isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                and s.targets[0].id == name:
            live = name in _reads_of(s)
        else:
            live = live or name in _reads_of(s)
    return live
