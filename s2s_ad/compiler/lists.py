"""Lists that are only built and read become tuples (part of parsing).

``np.array([x * y, 2.0])``, ``np.concatenate([u, v])``, ``for w in [a, b]:``
and ``pair = [p, q]`` followed by reads of ``pair`` compute the same values
with tuples, whose items the compiler tracks one by one.  A list that is
changed after it is built stays a list: one that only grows (``append``,
``extend``) is a list value (``normalize/growing.py``); other changes (item
writes, ``+=``, ``pop``, ...) are refused at their line
(:func:`refused_list_change`).

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

from collections.abc import Callable

import gast
import numpy as np

from s2s_ad.compiler.syntax.annotations import set_callee
from s2s_ad.compiler.syntax.builders import attribute, call_node, load
from s2s_ad.errors import Location, NonDifferentiableError

# list methods that change the list in place
MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort",
                      "reverse"})


def index_arrays(fdef: gast.FunctionDef, locate: Callable[[gast.AST], Location]) -> None:
    """Turn every list display used as an index (``x[[0, 1]]``, ``x[[i, j], 2]``,
    ``out[[2, 0]] = v``) into ``np.array(...)`` of it, in place: NumPy reads a list
    index as an index array (fancy indexing), never as the tuple ``x[0, 1]`` that
    :func:`freeze_lists` would make of it.  Runs before :func:`freeze_lists`.

    >>> fdef = gast.parse("def f(x):\\n return x[[0, 0]]").body[0]
    >>> index_arrays(fdef, None)
    >>> print(gast.unparse(fdef).strip())
    def f(x):
        return x[np.array([0, 0])]
    """
    for node in gast.walk(fdef):
        if not isinstance(node, gast.Subscript):
            continue
        if isinstance(node.slice, gast.List):
            node.slice = _index_array(node.slice, locate)
        elif isinstance(node.slice, gast.Tuple):
            node.slice.elts = [_index_array(e, locate) if isinstance(e, gast.List) else e
                               for e in node.slice.elts]


def _index_array(display: gast.List, locate: Callable[[gast.AST], Location]) -> gast.Call:
    """``np.array(display)`` for a list display used as an index; an empty display or
    one holding a float constant (NumPy's IndexError) is refused at its position."""
    constants = [n.value for n in gast.walk(display) if isinstance(n, gast.Constant)]
    if not display.elts or any(isinstance(c, float) for c in constants):
        raise NonDifferentiableError(
            "a list used as an index must hold integers (an index array) or booleans "
            "(a mask)", locate(display), "write the positions as ints: x[[0, 2]]")
    convert = call_node(attribute(load("np"), "array"), [display])
    set_callee(convert, np.array)
    return gast.copy_location(convert, display)


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


def refused_list_change(fdef: gast.FunctionDef) -> tuple[gast.AST, str, str] | None:
    """The first change of a list that is not growth by ``append``/``extend``, with
    what is wrong and a hint; None if every list only grows."""
    comprehensions = (gast.ListComp, gast.GeneratorExp)
    pairs = list(named_values(fdef))
    displays = {id(value) for _, value in pairs if isinstance(value, gast.List)}
    growing = {name for name, value in pairs
               if isinstance(value, (gast.List, *comprehensions))}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store | gast.Del) \
                and _root(node.value) & growing:
            return node, "writing an item of a list is not supported", \
                "build the list by append, or write into an array (np.zeros(n))"
        if isinstance(node, gast.AugAssign) and _root(node.target) & growing:
            return node, "'+=' and other in-place operators on a list are not supported", \
                "use items.extend(...) or items.append(...)"
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in MUTATORS - {"append", "extend"} \
                and _root(node.func.value) & growing:
            return node, f"the list method '{node.func.attr}' is not supported", \
                "a list may only grow (append, extend); build a new list instead"
        if isinstance(node, gast.List) and id(node) not in displays:
            return node, "lists changed after they are built are only supported when " \
                "bound to a name that grows by append/extend", \
                "build the list in one display, or preallocate an array (out = np.zeros(n))"
    return None


def named_values(fdef: gast.FunctionDef):
    """(name, value) of ``name = value`` and of ``a, b = va, vb`` (no value reading a
    target) in ``fdef``."""
    for node in gast.walk(fdef):
        if not isinstance(node, gast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, gast.Name):
                yield target.id, node.value
            elif isinstance(target, gast.Tuple) and isinstance(node.value, gast.Tuple) and \
                    len(target.elts) == len(node.value.elts) and \
                    all(isinstance(t, gast.Name) for t in target.elts) and \
                    not _root(target) & _reads(node.value):
                yield from ((t.id, v) for t, v in zip(target.elts, node.value.elts,
                                                      strict=True))


def _reads(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


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
            # only a name bound to the list itself; y[i] = np.sum([a, b]) or
            # y = np.array([a, b]) then y[0] = ... bind no list
            names = [t for t in targets if isinstance(t, gast.Name | gast.Tuple)]
            if any(_root(t) & changed for t in names) and node.value is not None:
                yield from _bound_lists(node.value)


def _bound_lists(value: gast.expr):
    """The list displays a name assigned ``value`` holds: the value itself, items of
    a tuple display, operands of ``+`` and ``*``."""
    if isinstance(value, gast.List):
        yield value
    elif isinstance(value, gast.Tuple):
        for e in value.elts:
            yield from _bound_lists(e)
    elif isinstance(value, gast.BinOp):
        yield from _bound_lists(value.left)
        yield from _bound_lists(value.right)


def _root(node: gast.expr) -> set[str]:
    """The variable an expression like ``a``, ``a[i]`` or ``a.b[i]`` starts from
    (every name, for a tuple of targets)."""
    if isinstance(node, gast.Tuple | gast.List):
        return set().union(*(_root(e) for e in node.elts)) if node.elts else set()
    while isinstance(node, gast.Subscript | gast.Attribute | gast.Starred):
        node = node.value
    return {node.id} if isinstance(node, gast.Name) else set()
