"""The anf stage (normalize), part: lists that grow, and comprehensions.

A list display changed after it is built (see ``compiler/lists.py``) and every
list comprehension or generator expression become a list value built by
appends: ``items = List()`` then ``items = rt.appended(items, v)`` for each
item, a comprehension as the loops it stands for.  A list is then only read:
``items[i]`` (the position made non-negative by ``rt.list_position``),
``len(items)``, ``for v in items``, or as an argument of a library function,
which gets ``rt.list_array(items)`` (NumPy converts a list argument to that
array anyway; ``sum``, ``max`` and ``min`` of it give the same value too;
``np.stack`` along axis 0 becomes ``np.array`` of it).  ``np.concatenate``,
``np.hstack`` and ``np.vstack`` (``np.row_stack``) of a list, whose items may differ
in length along the joining axis, become ``rt.list_concatenate(items, axis)``,
``rt.list_hstack(items)`` and ``rt.list_vstack(items)``: joins of the items
themselves, which the rules tell apart by the items' kinds.

>>> import gast
>>> from s2s_ad.compiler.normalize import normalize
>>> from s2s_ad.compiler.parse import parse_function
>>> def f(v):
...     return sum([w * w for w in v])
>>> print(gast.unparse(normalize(parse_function(f)).node).strip())
... # doctest: +NORMALIZE_WHITESPACE
def f(v):
    items = List()
    len_v = len(v)
    for i in range(len_v):
        w_1 = v[i]
        w_1_mul_w_1 = w_1 * w_1
        items = rt.appended(items, w_1_mul_w_1)
    items_array = rt.list_array(items)
    result = sum(items_array)
    return result
"""

from __future__ import annotations

import builtins
import copy
import types
from typing import Any

import gast
import numpy as np
from numba.typed import List as NumbaList

from s2s_ad import runtime
from s2s_ad.compiler.ir import LocalFunction
from s2s_ad.compiler.lists import named_values
from s2s_ad.compiler.normalize.expressions import ExpressionNormalizer
from s2s_ad.compiler.syntax.annotations import callee_of, set_callee
from s2s_ad.compiler.syntax.builders import (
    assignment,
    attribute,
    call_node,
    const,
    expr_stmt,
    for_stmt,
    if_stmt,
    load,
    store,
    subscript_of,
)
from s2s_ad.errors import NonDifferentiableError

COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp)
_JOINED = ((np.stack, np.array),)
#: NumPy's joins of a list's items -> the runtime's (items of different lengths too)
_LIST_JOINS = ((np.concatenate, runtime.list_concatenate), (np.hstack, runtime.list_hstack),
               (np.vstack, runtime.list_vstack)) + (
    ((np.row_stack, runtime.list_vstack),) if hasattr(np, "row_stack") else ())
_TAKES_LISTS = (builtins.len, runtime.appended, runtime.list_array, runtime.list_position,
                runtime.list_concatenate, runtime.list_hstack, runtime.list_vstack,
                runtime.list_extents)  # (in gradient code, which forward mode reads)


def list_names(fdef: gast.FunctionDef) -> set[str]:
    """The names bound to a list display (one that grows) or a comprehension."""
    return {name for name, value in named_values(fdef)
            if isinstance(value, (gast.List, *COMPREHENSIONS))}


def _runtime_call(fn: Any, name: str, *args: gast.expr) -> gast.Call:
    node = call_node(load(name), list(args))
    set_callee(node, fn)
    return node


class ListNormalizer(ExpressionNormalizer):
    """List building, reading and conversion; the statement normalizer extends it."""

    list_names: set[str]
    list_arrays: set[str]  # the names of rt.list_array(items) values

    # -- building --------------------------------------------------------------
    def build_list(self, name: str, node: gast.expr, like: gast.AST) -> None:
        """``name = [a, b]`` or ``name = [e for ...]`` as ``List()`` and appends."""
        self.list_names.add(name)
        self.locals.add(name)
        self.assign(name, _runtime_call(runtime.new_list, "List"), like)
        if isinstance(node, gast.List):
            for item in node.elts:
                self.append_to(name, item, like)
        elif isinstance(node, COMPREHENSIONS):
            self.stmt(self.comprehension_loops(name, node))

    def new_typed_list(self, value: gast.expr) -> bool:
        """``list()``, or ``List()`` of ``numba.typed``: an empty list (generated gradient
        code keeps its tapes of other values in ``List()``, which is ``list`` on the
        Python path; forward mode over it reads them as lists)."""
        if not (isinstance(value, gast.Call) and not value.args and not value.keywords):
            return False
        try:
            return self.resolve(value.func) in (NumbaList, builtins.list)
        except (KeyError, NonDifferentiableError):
            return False

    def typed_lists(self, fdef: gast.FunctionDef) -> set[str]:
        """The names bound to ``List()`` (see :meth:`new_typed_list`)."""
        return {name for name, value in named_values(fdef) if self.new_typed_list(value)}

    def append_to(self, name: str, item: gast.expr, like: gast.AST) -> None:
        value = self.atom(item)
        self.assign(name, _runtime_call(runtime.appended, "rt.appended", load(name), value),
                    like)

    def comprehension_loops(self, name: str, node: gast.expr) -> gast.For:
        """The loops (and ``if`` filters) a comprehension stands for, its targets
        renamed apart (they are local to the comprehension)."""
        node = copy.deepcopy(node)
        mapping = {n.id: self.namer.fresh(n.id) for gen in node.generators
                   for n in gast.walk(gen.target) if isinstance(n, gast.Name)}
        self.locals |= set(mapping.values())
        first_iter = node.generators[0].iter
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and n.id in mapping and not _inside(n, first_iter):
                n.id = mapping[n.id]
        append = call_node(attribute(load(name), "append"), [node.elt])
        body: list[gast.stmt] = [expr_stmt(append)]
        for gen in reversed(node.generators):
            for cond in reversed(gen.ifs):
                body = [if_stmt(cond, body, [])]
            body = [for_stmt(gen.target, gen.iter, body)]
        _locate(body[0], node)
        return body[0]

    def list_method(self, call: gast.Call, s: gast.stmt) -> None:
        """``items.append(v)`` and ``items.extend(values)`` as statements."""
        name, method = call.func.value.id, call.func.attr
        if method not in ("append", "extend") or len(call.args) != 1 or call.keywords:
            raise self.error(call, f"the list method '{method}' is not supported: a list "
                             "may only grow by append(v) and extend(values)",
                             "build a new list, or use an array")
        item = call.args[0]
        if method == "append":
            self.append_to(name, item, s)
        elif isinstance(item, gast.Tuple | gast.List):
            elts = list(item.elts)
            if any(isinstance(n, gast.Name) and n.id == name
                   for e in elts[1:] for n in gast.walk(e)):
                # Python builds the whole display before extending: an element that
                # reads the list must see it as it was (x.extend((a, x[-1])))
                elts = [self.evaluated(e, s) for e in elts]
            for e in elts:
                self.append_to(name, e, s)
        else:
            value = self.namer.fresh("item")
            self.locals.add(value)
            add = expr_stmt(call_node(attribute(load(name), "append"), [load(value)]))
            loop = for_stmt(store(value), item, [add])
            _locate(loop, s)
            self.stmt(loop)

    def evaluated(self, value: gast.expr, s: gast.stmt) -> gast.Name:
        """A new variable holding ``value``, assigned now."""
        name = self.namer.fresh("item")
        self.locals.add(name)
        node = assignment([store(name)], value)
        _locate(node, s)
        self.stmt(node)
        return load(name)

    def is_list_method(self, call: gast.expr) -> bool:
        return isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) \
            and isinstance(call.func.value, gast.Name) and call.func.value.id in self.list_names

    def check_list_uses(self, body: list[gast.stmt]) -> None:
        """Refuse, at its line, any use of a list other than growing and reading it."""
        allowed: set[int] = set()
        for stmt in body:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Subscript):
                    allowed.add(id(node.value))
                elif isinstance(node, gast.Call) and callee_of(node) in _TAKES_LISTS:
                    allowed |= {id(a) for a in node.args}
        for stmt in body:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) \
                        and node.targets[0].id in self.list_names and not (
                            isinstance(node.value, gast.Call) and callee_of(
                                node.value) in (runtime.new_list, runtime.appended)):
                    raise self.error(node, f"the list '{node.targets[0].id}' is bound to "
                                     "another value", "give the new value its own name")
                if isinstance(node, gast.Name) and node.id in self.list_names and \
                        isinstance(node.ctx, gast.Load) and id(node) not in allowed:
                    raise self.error(stmt, f"the list '{node.id}' can only grow (append, "
                                     "extend), be indexed, iterated, measured with len() or "
                                     "passed to NumPy functions, sum, max and min",
                                     f"use np.array({node.id}) for anything else")

    # -- reading ---------------------------------------------------------------
    def atom(self, node: gast.expr) -> gast.expr:
        if isinstance(node, COMPREHENSIONS):
            name = self.namer.fresh("items")
            self.build_list(name, node, node)
            return load(name)
        return super().atom(node)

    def subscript(self, node: gast.Subscript) -> tuple[gast.expr, str]:
        base = self.atom(node.value) if isinstance(node.value, COMPREHENSIONS) else node.value
        if not (isinstance(base, gast.Name) and base.id in self.list_names):
            return super().subscript(node)
        if isinstance(node.slice, gast.Slice | gast.Tuple):
            raise self.error(node, "a slice of a list is not supported",
                             "index one item at a time, or convert: np.array(items)[a:b]")
        index = self.index(node.slice)
        if not (isinstance(index, gast.Constant) and index.value >= 0):
            index = self.temp(_runtime_call(runtime.list_position, "rt.list_position",
                                            load(base.id), index), "position", node)
        return subscript_of(load(base.id), index), f"{base.id}_item"

    def call(self, node: gast.Call) -> tuple[gast.expr, str]:
        """A call; ``np.stack(items)`` (axis 0) of a list as the same operation on
        ``rt.list_array(items)``, ``np.concatenate(items)`` (a constant axis),
        ``np.hstack(items)`` and ``np.vstack(items)`` as the runtime's joins."""
        op, stem = super().call(node)
        if not isinstance(op, gast.Call):  # (the pieces of np.split: a tuple)
            return op, stem
        target = callee_of(op)
        join = self._list_join(target, op.args, op.keywords)
        if join is not None:
            axis = _axis_of(op.args[1:], op.keywords)
            joined = _runtime_call(join, f"rt.{join.__name__}", op.args[0],
                                   *([const(axis)] if join is runtime.list_concatenate else []))
            return gast.copy_location(joined, op), stem
        joins = [to for of, to in _JOINED if of is target]
        if joins and op.args and self._from_list(op.args[0]) and \
                _axis_of(op.args[1:], op.keywords) == 0:
            joined = call_node(op.func, [op.args[0]])
            set_callee(joined, joins[0])
            return gast.copy_location(joined, op), stem
        return op, stem

    def _list_join(self, target: Any, args: list, keywords: list) -> Any:
        """The runtime's join for a call of ``target`` joining a list's items (None if
        it is not one: another function, or an axis that is not a constant int)."""
        joins = [to for of, to in _LIST_JOINS if of is target]
        if not (joins and args and isinstance(args[0], gast.Name) and
                args[0].id in self.list_names):
            return None
        axis = _axis_of(args[1:], keywords)
        if joins[0] is runtime.list_concatenate:
            return joins[0] if axis is not None else None
        return joins[0] if len(args) == 1 and not keywords else None

    def _from_list(self, atom: gast.expr) -> bool:
        return isinstance(atom, gast.Name) and atom.id in self.list_arrays

    def bind(self, node: gast.Call, target: Any) -> tuple[list[gast.expr], list[gast.keyword]]:
        """Arguments bound as the expression normalizer does; a list passed to a
        library function is passed as ``rt.list_array(items)``."""
        args, keywords = super().bind(node, target)
        if any(target is t for t in _TAKES_LISTS) or \
                self._list_join(target, args, keywords) is not None:
            return args, keywords
        args = [self._as_array(a, target, node) for a in args]
        for kw in keywords:
            kw.value = self._as_array(kw.value, target, node)
        return args, keywords

    def _as_array(self, atom: gast.expr, target: Any, node: gast.Call) -> gast.expr:
        if not (isinstance(atom, gast.Name) and atom.id in self.list_names):
            return atom
        if isinstance(target, LocalFunction | types.FunctionType) and not \
                getattr(target, "__module__", "").startswith(("numpy", "builtins")):
            raise self.error(node, f"passing the list '{atom.id}' to a function is not "
                             "supported", f"pass np.array({atom.id}) or a tuple")
        array = self.temp(_runtime_call(runtime.list_array, "rt.list_array", atom),
                          f"{atom.id}_array", node)
        self.list_arrays.add(array.id)
        return array


def _axis_of(args: list[gast.expr], keywords: list[gast.keyword]) -> int | None:
    """The constant int axis given by these arguments (0 when none is), or None."""
    axes = list(args) + [k.value for k in keywords if k.arg == "axis"]
    if any(k.arg != "axis" for k in keywords) or len(axes) > 1:
        return None
    if not axes:
        return 0
    value = axes[0].value if isinstance(axes[0], gast.Constant) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _locate(tree: gast.AST, like: gast.AST) -> None:
    """Give the nodes the normalizer wrote the position of ``like`` (the user's
    nodes inside keep their own)."""
    for n in gast.walk(tree):
        if isinstance(n, gast.stmt | gast.expr) and not hasattr(n, "lineno"):
            gast.copy_location(n, like)


def _inside(node: gast.AST, tree: gast.AST) -> bool:
    return any(n is node for n in gast.walk(tree))
