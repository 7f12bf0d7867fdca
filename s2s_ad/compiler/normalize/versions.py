"""The versions stage: a variable renamed apart where it is rebound to a value of
another shape.

Kinds are inferred per name, so ``a = x * 2.0`` followed later by
``a = np.ones(3) * x`` would give every use of ``a`` (and of what is computed
from the scalar ``a``) the array kind.  For the names the kinds stage reports
as bound to values of different shapes, each rebinding in the function's
straight-line top level starts a new version (``a``, ``a_1``, ...): later uses
read the newest version.  So does a rebinding in a branch when the name is not
read after the branch (the code after an early return sits in such a branch).
Otherwise, inside a loop or a branch, a name keeps the version current when the
statement starts, since values flow around loops and out of branches under one
name.  Arrays written item by item and bound more than once are split the same
way (:func:`written_and_rebound`): each version is then one array, whose
overwritten items the pullback can restore (``m = m[:, ::-1]; m[0, 0] = v``).

>>> import gast
>>> from s2s_ad.compiler.syntax.names import Namer
>>> tree = gast.parse("def f(x):\\n a = x * 2.0\\n b = a + 1.0\\n a = b * x\\n return a + b")
>>> fdef = tree.body[0]
>>> split_versions(fdef, {"a"}, Namer({"x", "a", "b"}))
{'a_1'}
>>> print(gast.unparse(fdef).strip())  # doctest: +NORMALIZE_WHITESPACE
def f(x):
    a = x * 2.0
    b = a + 1.0
    a_1 = b * x
    return a_1 + b
"""

from __future__ import annotations

import gast

from s2s_ad.compiler.syntax.names import Namer


def split_versions(fdef: gast.FunctionDef, names: set[str], namer: Namer,
                   return_flag: str | None = None) -> set[str]:
    """Give each rebinding of one of ``names`` in ``fdef``'s top level (or in a
    branch, when the name is not read after the branch) a fresh name, in place;
    return the new names.  Parameters count as the first binding.  A branch that
    sets ``return_flag`` (an early return) skips every later ``if not flag:``."""
    guards = set() if return_flag is None else {
        n.targets[0].id for n in gast.walk(fdef) if isinstance(n, gast.Assign)
        and _target_name(n) and isinstance(n.value, gast.UnaryOp)
        and isinstance(n.value.op, gast.Not) and isinstance(n.value.operand, gast.Name)
        and n.value.operand.id == return_flag}
    splitter = _Splitter(names, namer, {a.id for a in fdef.args.args} & names,
                         return_flag, guards)
    splitter.block(fdef.body, {name: name for name in names}, names, set(), set())
    return splitter.fresh


class _Splitter:
    """One walk over the statements, in order, renaming as it goes."""

    def __init__(self, names: set[str], namer: Namer, bound: set[str],
                 return_flag: str | None, guards: set[str]) -> None:
        self.names, self.namer, self.bound = names, namer, bound
        self.return_flag, self.guards = return_flag, guards
        self.fresh: set[str] = set()

    def block(self, stmts: list[gast.stmt], current: dict[str, str], splittable: set[str],
              read_after: set[str], read_after_return: set[str]) -> None:
        """Rename in ``stmts``; ``splittable`` names may start a new version here,
        ``read_after`` are the names read after this block ends, and
        ``read_after_return`` those read there once the function has returned."""
        for i, stmt in enumerate(stmts):
            name = _target_name(stmt) if isinstance(stmt, gast.Assign) else None
            if name in splittable:
                _rename_loads(stmt.value, current)
                if name in self.bound:
                    current[name] = self.namer.fresh(name, source=name)
                    self.fresh.add(current[name])
                self.bound.add(name)
                stmt.targets[0].id = current[name]
            elif isinstance(stmt, gast.If):
                _rename_loads(stmt.test, current)
                after = _live(stmts[i + 1:], read_after, set())
                after_return = _live(stmts[i + 1:], read_after_return, self.guards)
                for branch in (stmt.body, stmt.orelse):
                    live = after_return if self._returns(branch) else after
                    self.block(branch, dict(current), splittable - live, after, after_return)
            else:
                _rename_loads(stmt, current, stores=True)
                self.bound |= {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
                               and isinstance(n.ctx, gast.Store)} & self.names

    def _returns(self, branch: list[gast.stmt]) -> bool:
        """Whether ``branch`` ends the function (sets the early-return flag)."""
        return any(isinstance(s, gast.Assign) and _target_name(s) == self.return_flag
                   and isinstance(s.value, gast.Constant) and s.value.value is True
                   for s in branch)


def written_and_rebound(fdef: gast.FunctionDef) -> set[str]:
    """The variables whose items ``fdef`` writes (``a[i] = v``) that are bound more
    than once (a parameter's argument counts as a binding)."""
    written: set[str] = set()
    bindings = {a.id: 1 for a in fdef.args.args}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                and isinstance(node.value, gast.Name):
            written.add(node.value.id)
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            name = node.targets[0].id
            bindings[name] = bindings.get(name, 0) + 1
    return {name for name in written if bindings.get(name, 0) > 1}


def _live(stmts: list[gast.stmt], live_out: set[str], skipped: set[str]) -> set[str]:
    """The names ``stmts`` may read before assigning them, given those read after;
    ``if g:`` blocks with ``g`` in ``skipped`` do not run."""
    live = set(live_out)
    for stmt in reversed(stmts):
        name = _target_name(stmt) if isinstance(stmt, gast.Assign) else None
        if name is not None:
            live = (live - {name}) | _reads(stmt.value)
        elif isinstance(stmt, gast.If) and isinstance(stmt.test, gast.Name) \
                and stmt.test.id in skipped:
            live.add(stmt.test.id)
        elif isinstance(stmt, gast.If):
            live = (_reads(stmt.test) | _live(stmt.body, live, skipped)
                    | _live(stmt.orelse, live, skipped))
        else:
            live |= _reads(stmt)
    return live


def _reads(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store)}


def _target_name(stmt: gast.Assign) -> str | None:
    target = stmt.targets[0]
    return target.id if isinstance(target, gast.Name) else None


def _rename_loads(node: gast.AST, current: dict[str, str], stores: bool = False) -> None:
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in current and (
                stores or not isinstance(n.ctx, gast.Store)):
            n.id = current[n.id]
