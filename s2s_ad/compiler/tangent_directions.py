"""Several tangent directions per run: the jvp function of the tangent stage, rewritten
so that every tangent holds ``k`` directions along a new leading axis
(``<name>_jvp_directions``).

The primal statements run once; each statement computing a tangent runs once per
direction, as the very expression the one-direction code has, with every tangent
``t_a`` read as ``t_a[j]``; copies, tuples of tangents and lists of tangents move all
directions at once.  A value computed from tangents (a reduction's slope, say) is a
tangent too.  ``ad.jacobian`` in forward mode runs it on blocks of unit directions.

>>> import s2s_ad as ad
>>> def damped(x, c):
...     return x * c + x * x
>>> print(ad.source(damped, 1.0, 2.0, mode="directions"))
def damped_jvp_directions(x, c, t_x, t_c):
    n_directions = t_x.shape[0]
    # line 2: return x * c + x * x
    x_mul_c = x * c
    # tangent of line 2: return x * c + x * x
    t_x_mul_c_first = float(t_x[0]) * c + float(t_c[0]) * x
    t_x_mul_c_next = rt.batch_like(t_x_mul_c_first, n_directions)
    t_x_mul_c_next[0] = t_x_mul_c_first
    for direction in range(1, n_directions):
        t_x_mul_c_next[direction] = float(t_x[direction]) * c + float(t_c[direction]) * x
    t_x_mul_c = t_x_mul_c_next
    x_mul_x = x * x
    t_x_mul_x_first = float(t_x[0]) * x + float(t_x[0]) * x
    t_x_mul_x_next = rt.batch_like(t_x_mul_x_first, n_directions)
    t_x_mul_x_next[0] = t_x_mul_x_first
    for direction in range(1, n_directions):
        t_x_mul_x_next[direction] = float(t_x[direction]) * x + float(t_x[direction]) * x
    t_x_mul_x = t_x_mul_x_next
    result = x_mul_c + x_mul_x
    t_result_first = float(t_x_mul_c[0]) + float(t_x_mul_x[0])
    t_result_next = rt.batch_like(t_result_first, n_directions)
    t_result_next[0] = t_result_first
    for direction in range(1, n_directions):
        t_result_next[direction] = float(t_x_mul_c[direction]) + float(t_x_mul_x[direction])
    t_result = t_result_next
    return (result, t_result)
"""

from __future__ import annotations

import copy

import gast

from s2s_ad.compiler.reverse.context import Context
from s2s_ad.compiler.syntax.annotations import comment_of, line_of
from s2s_ad.compiler.syntax.builders import (
    assign,
    assignment,
    attribute,
    call,
    call_node,
    const,
    for_stmt,
    function_def,
    load,
    store,
    store_item,
    subscript_of,
    tuple_of,
)
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ListKind


class Directions:
    """Rewrites one jvp function (see the module docstring)."""

    def __init__(self, cx: Context, tangents: set[str], renamed: dict[str, str]):
        self.cx = cx
        self.batched = set(tangents)  # names holding one value per direction
        self.renamed = renamed  # a callee's jvp -> its directions function
        self.k = cx.namer.fresh("n_directions")
        self.j = cx.namer.fresh("direction")

    # -- which names hold directions ------------------------------------------------------
    def reads(self, node: gast.AST) -> bool:
        return any(isinstance(n, gast.Name) and n.id in self.batched for n in gast.walk(node))

    def close(self, body: list[gast.stmt]) -> None:
        """Every name assigned from a value that holds directions holds them too."""
        changed = True
        while changed:
            changed = False
            for s in _assignments(body):
                for target in _targets(s):  # (y, t_y = helper_jvp(...): t_y is a tangent)
                    if target not in self.batched and self.reads(s.value):
                        self.batched.add(target)
                        changed = True

    # -- the function ---------------------------------------------------------------------
    def function(self, fdef: gast.FunctionDef, first: str) -> gast.FunctionDef:
        self.close(fdef.body)
        head = [assign(self.k, subscript_of(attribute(load(first), "shape"), 0))]
        name = fdef.name.removesuffix("_jvp") + "_jvp_directions"
        return function_def(name, [a.id for a in fdef.args.args],
                            head + self.block(fdef.body))

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            out += self.statement(s)
        return out

    def statement(self, s: gast.stmt) -> list[gast.stmt]:
        if comment_of(s) is not None:
            return [s]
        if isinstance(s, gast.If | gast.For | gast.While):
            node = copy.copy(s)
            node.body = self.block(s.body)
            node.orelse = self.block(s.orelse)
            return [node]
        if isinstance(s, gast.Return):
            return [self.returned(s)]
        if isinstance(s, gast.Expr):
            return [self.effect(s)]
        if isinstance(s, gast.Assign):
            return self.assigned(s)
        return [s]

    def returned(self, s: gast.Return) -> gast.Return:
        value, tangent = s.value.elts
        node = copy.copy(s)
        node.value = tuple_of([value, self.whole(tangent)])
        return node

    def effect(self, s: gast.Expr) -> gast.stmt:
        """``t_items.append(t_v)``: every direction at once (a zero for each if ``v``
        has no tangent)."""
        value = s.value
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
                value.func.attr == "append" and self.reads(value.func.value):
            node = copy.copy(s)
            node.value = call_node(value.func, [self.whole(value.args[0])])
            return node
        if self.reads(value):
            raise self.refused(s, "a call made for its effect on a tangent")
        return s

    def assigned(self, s: gast.Assign) -> list[gast.stmt]:
        target = s.targets[0]
        if isinstance(target, gast.Tuple):  # y, t_y = helper_jvp(...): its own directions
            node = copy.copy(s)
            callee = s.value.func.id
            node.value = call_node(load(self.renamed.get(callee, callee)), s.value.args)
            return [node]
        if isinstance(target, gast.Subscript):
            base = target.value
            if isinstance(base, gast.Name) and base.id in self.batched:
                return [self.each_direction(target, s.value, s)]
            return [s]
        name = target.id
        if name not in self.batched:
            return [s]
        if self.structural(s.value):
            return [assign(name, self.whole(s.value), line_of(s))]
        if not self.reads(s.value):  # a zero tangent, or an empty tangent list
            return [assign(name, self.whole(s.value), line_of(s))]
        return self.per_direction(name, s.value, s)

    def structural(self, value: gast.expr) -> bool:
        """Copies, tuple displays and items of tuples or lists of tangents: all
        directions at once."""
        if isinstance(value, gast.Name):
            return value.id in self.batched
        if isinstance(value, gast.Tuple):
            return True
        if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name):
            kind = self.cx.kinds.get(value.value.id)
            return isinstance(kind, tuple | ListKind) and value.value.id in self.batched
        return False

    def whole(self, value: gast.expr) -> gast.expr:
        """``value`` for every direction at once: itself when it holds them, else ``k``
        copies of it (a zero, say); tuples item by item."""
        if isinstance(value, gast.Tuple):
            return tuple_of([self.whole(e) for e in value.elts])
        if self.reads(value) or _makes_list(value):
            return value
        return call("rt.batch_of", value, load(self.k))

    # -- one direction at a time ----------------------------------------------------------
    def per_direction(self, name: str, value: gast.expr, s: gast.stmt) -> list[gast.stmt]:
        line = line_of(s)
        first = self.cx.namer.fresh(f"{name}_first")
        fresh = self.cx.namer.fresh(f"{name}_next")
        loop = for_stmt(store(self.j), call("range", const(1), load(self.k)),
                        [assignment([store_item(load(fresh), load(self.j))],
                                    self.at(value, load(self.j), s))])
        return [assign(first, self.at(value, const(0), s), line),
                assign(fresh, call("rt.batch_like", load(first), load(self.k)), line),
                assignment([store_item(load(fresh), const(0))], load(first)),
                loop, assign(name, load(fresh), line)]

    def each_direction(self, target: gast.Subscript, value: gast.expr,
                       s: gast.stmt) -> gast.stmt:
        """``t_x[i] = v`` -> ``for j in range(k): t_x[j][i] = v at j``."""
        item = store_item(subscript_of(target.value, load(self.j)), target.slice)
        return for_stmt(store(self.j), call("range", load(self.k)),
                        [assignment([item], self.at(value, load(self.j), s))])

    def at(self, value: gast.expr, j: gast.expr, s: gast.stmt) -> gast.expr:
        """``value`` with every name holding directions read at direction ``j``."""
        if isinstance(value, gast.Name) and value.id in self.batched:
            return self.name_at(value, self.cx.kinds.get(value.id), j, s)
        node = copy.copy(value)
        for field in value._fields:
            part = getattr(value, field, None)
            if isinstance(part, gast.AST) and not isinstance(part, gast.expr_context):
                setattr(node, field, self.at(part, j, s))
            elif isinstance(part, list):
                setattr(node, field, [self.at(p, j, s) if isinstance(p, gast.AST) else p
                                      for p in part])
        return node

    def name_at(self, node: gast.expr, kind, j: gast.expr, s: gast.stmt) -> gast.expr:
        if isinstance(kind, tuple):  # a tuple of tangents: each item at j
            return tuple_of([self.name_at(subscript_of(node, i), k, j, s)
                             for i, k in enumerate(kind)])
        if isinstance(kind, ListKind):
            raise self.refused(s, "a list of tangents read as a whole")
        item = subscript_of(copy.deepcopy(node), copy.deepcopy(j))
        # a number's tangent as a Python float, as one direction has it (NumPy treats a
        # float64 scalar as strong: float32 arrays would turn float64)
        return call("float", item) if kind in ("float", "int", "bool") else item

    def refused(self, s: gast.stmt, what: str) -> NonDifferentiableError:
        return NonDifferentiableError(
            f"several tangent directions in one run: {what} is not supported yet",
            self.cx.norm.parsed.location(s) if hasattr(s, "lineno") else None,
            "one direction per run (ad.jvp) works")


def _assignments(body: list[gast.stmt]) -> list[gast.Assign]:
    found = []
    for s in body:
        for node in gast.walk(s):
            if isinstance(node, gast.Assign):
                found.append(node)
    return found


def _targets(s: gast.Assign) -> list[str]:
    target = s.targets[0]
    return [target.id] if isinstance(target, gast.Name) else []


def _makes_list(value: gast.expr) -> bool:
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
        value.func.id == "List"


def directions_function(cx: Context, fdef: gast.FunctionDef, tangents: set[str],
                        params: list[str], renamed: dict[str, str]) -> gast.FunctionDef:
    """The directions form of the jvp function ``fdef`` whose tangent variables are
    ``tangents`` and tangent parameters ``params`` (one at least)."""
    return Directions(cx, tangents, renamed).function(fdef, params[0])
