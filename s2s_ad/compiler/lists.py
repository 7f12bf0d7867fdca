"""Lists that are only built and read become tuples (part of parsing).

``np.array([x * y, 2.0])``, ``np.concatenate([u, v])``, ``for w in [a, b]:``
and ``pair = [p, q]`` followed by reads of ``pair`` compute the same values
with tuples, whose items the compiler tracks one by one.  A list that is
changed after it is built (``append``, ``extend``, item writes, ``+=``, ...)
stays a list, and parsing refuses it at its line.

>>> import gast
>>> fdef = gast.parse("def f(x):\\n a = [x, 2.0]\\n b = [x]\\n b.append(x)\\n"
...                   " return np.array([a[0], b[0]])").body[0]
>>> freeze_lists(fdef)
>>> print(gast.unparse(fdef).strip())
def f(x):
    a = (x, 2.0)
    b = [x]
    b.append(x)
    return np.array((a[0], b[0]))
"""

from __future__ import annotations

import gast

# list methods that change the list in place
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                      "reverse"})


def freeze_lists(fdef: gast.FunctionDef) -> None:
    """Turn every list display of ``fdef`` that no later statement can change into a
    tuple display, in place."""
    kept = {id(n) for n in _lists_of_mutated_names(fdef)}
    for node in gast.walk(fdef):
        if isinstance(node, gast.List) and id(node) not in kept:
            node.__class__ = gast.Tuple


def mutated_names(fdef: gast.FunctionDef) -> set[str]:
    """Names whose value the body changes in place (list methods, item writes, ``+=``)."""
    names: set[str] = set()
    for node in gast.walk(fdef):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in MUTATORS:
            names |= _root(node.func.value)
        elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store | gast.Del):
            names |= _root(node.value)
        elif isinstance(node, gast.AugAssign):
            names |= _root(node.target)
    return names


def _lists_of_mutated_names(fdef: gast.FunctionDef):
    mutated = mutated_names(fdef)
    lists = {t.id for node in gast.walk(fdef) if isinstance(node, gast.Assign)
             and isinstance(node.value, gast.List) for t in node.targets
             if isinstance(t, gast.Name)}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Assign | gast.AugAssign | gast.AnnAssign):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            # s *= np.sum(np.concatenate([u, v])) changes a number, not a list
            changed = mutated & lists if isinstance(node, gast.AugAssign) else mutated
            if any(_root(t) & changed for t in targets) and node.value is not None:
                yield from (n for n in gast.walk(node.value) if isinstance(n, gast.List))


def _root(node: gast.expr) -> set[str]:
    """The variable an expression like ``a``, ``a[i]`` or ``a.b[i]`` starts from
    (every name, for a tuple of targets)."""
    if isinstance(node, gast.Tuple | gast.List):
        return set().union(*(_root(e) for e in node.elts)) if node.elts else set()
    while isinstance(node, gast.Subscript | gast.Attribute | gast.Starred):
        node = node.value
    return {node.id} if isinstance(node, gast.Name) else set()
