"""Renaming a variable apart where it is rebound to a value of another shape.

Kinds are inferred per name, so ``a = x * 2.0`` followed later by
``a = np.ones(3) * x`` would give every use of ``a`` (and of what is computed
from the scalar ``a``) the array kind.  For the names the kinds stage reports
as bound to values of different shapes, each rebinding in the function's
straight-line top level starts a new version (``a``, ``a_1``, ...): later uses
read the newest version.  Inside a loop or a branch a name keeps the version
current when the statement starts, since values flow around loops and out of
branches under one name.

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


def split_versions(fdef: gast.FunctionDef, names: set[str], namer: Namer) -> set[str]:
    """Give each top-level rebinding of one of ``names`` in ``fdef`` a fresh name,
    in place; return the new names.  Parameters count as the first binding."""
    current = {name: name for name in names}
    bound = {a.id for a in fdef.args.args} & names
    fresh: set[str] = set()
    for stmt in fdef.body:
        if isinstance(stmt, gast.Assign) and _target_name(stmt) in names:
            _rename_loads(stmt.value, current)
            name = stmt.targets[0].id
            if name in bound:
                current[name] = namer.fresh(name)
                fresh.add(current[name])
            bound.add(name)
            stmt.targets[0].id = current[name]
        else:
            _rename_loads(stmt, current, stores=True)
            bound |= {n.id for n in gast.walk(stmt)
                      if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)} & names
    return fresh


def _target_name(stmt: gast.Assign) -> str | None:
    target = stmt.targets[0]
    return target.id if isinstance(target, gast.Name) else None


def _rename_loads(node: gast.AST, current: dict[str, str], stores: bool = False) -> None:
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in current and (
                stores or not isinstance(n.ctx, gast.Store)):
            n.id = current[n.id]
