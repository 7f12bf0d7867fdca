"""Building generated code: small constructors of gast nodes and template substitution.

A leaf module used by the reverse pass.
"""

from __future__ import annotations

import copy

import gast

from s2s_ad.compiler.syntax.annotations import set_comment, set_line
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import ArrayKind, Kind, ListKind


def store(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None)


def load(name: str) -> gast.Name:
    return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)


def const(value) -> gast.Constant:
    return gast.Constant(value=value, kind=None)


def assign(target: str, value: gast.expr, line: int | None = None) -> gast.Assign:
    node = gast.Assign(targets=[store(target)], value=value, type_comment=None)
    set_line(node, line)
    return node


def aug(target: str, op: gast.operator, value: gast.expr, line: int | None) -> gast.AugAssign:
    node = gast.AugAssign(target=store(target), op=op, value=value)
    set_line(node, line)
    return node


def aug_item(name: str, index: gast.expr, value: gast.expr, line: int | None) -> gast.stmt:
    node = gast.AugAssign(target=gast.Subscript(value=load(name), slice=index,
                                                ctx=gast.Store()),
                          op=gast.Add(), value=value)
    set_line(node, line)
    return node


def call(func: str, *args: gast.expr) -> gast.Call:
    return gast.Call(func=gast.parse(func, mode="eval").body, args=list(args), keywords=[])


def subscript_of(value: gast.expr, i: int | gast.expr) -> gast.Subscript:
    idx = const(i) if isinstance(i, int) else i
    return gast.Subscript(value=value, slice=idx, ctx=gast.Load())


def tuple_of(elts: list[gast.expr]) -> gast.Tuple:
    return gast.Tuple(elts=elts, ctx=gast.Load())


def comment(text: str) -> gast.Expr:
    node = gast.Expr(value=gast.Constant(value=text, kind=None))
    set_comment(node, text)
    return node


def zero(kind: Kind) -> gast.expr:
    """A zero cotangent for a value of ``kind``.

    For an array it is an empty array of the same rank: "no cotangent yet".
    The first contribution replaces it (``rt.accumulate``), so the pullback
    never needs the shape of a value it has not saved.
    """
    if isinstance(kind, tuple):
        return tuple_of([zero(k) for k in kind])
    if isinstance(kind, ListKind):  # a new list: its cotangent grows in place
        item = kind.element if isinstance(kind.element, ArrayKind) else "float"
        return call("rt.cotangent_list", zero(item))
    if isinstance(kind, ArrayKind):
        if kind.ndim is None:
            raise NonDifferentiableError("an array whose number of dimensions changes cannot "
                                         "be differentiated", None,
                                         "keep each variable's array rank fixed")
        return call("np.zeros", tuple_of([const(0)] * kind.ndim))
    return const(0.0)


def add(kind: Kind, current: gast.expr, value: gast.expr) -> gast.expr:
    """``current + value`` for cotangents of ``kind``: element by element for tuples
    (never tuple concatenation), ``rt.accumulate`` for arrays (an empty array is a
    zero cotangent)."""
    if isinstance(kind, tuple):
        return tuple_of([add(k, subscript_of(current, i), subscript_of(value, i))
                         for i, k in enumerate(kind)])
    if isinstance(kind, ArrayKind):
        return call("rt.accumulate", current, value)
    return gast.BinOp(left=current, op=gast.Add(), right=value)


def function_def(name: str, params: list[str], body: list[gast.stmt]) -> gast.FunctionDef:
    args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for p in params],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def substitute(template: gast.expr, names: dict[str, gast.expr]) -> gast.expr:
    tree = copy.deepcopy(template)

    class _Sub(gast.NodeTransformer):
        def visit_Name(self, node: gast.Name) -> gast.expr:
            if node.id in names:
                return copy.deepcopy(names[node.id])
            return node

        def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
            self.generic_visit(node)
            return fold(node)

    return _Sub().visit(tree)


_FOLDABLE = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
             gast.Mult: lambda a, b: a * b}


def fold(node: gast.BinOp) -> gast.expr:
    """Fold constant arithmetic in substituted templates (``x ** (2 - 1)`` -> ``x ** 1``)."""
    left, right = node.left, node.right
    both = isinstance(left, gast.Constant) and isinstance(right, gast.Constant)
    if both and type(node.op) in _FOLDABLE and isinstance(left.value, int | float) \
            and isinstance(right.value, int | float) and not isinstance(left.value, bool):
        return const(_FOLDABLE[type(node.op)](left.value, right.value))
    if isinstance(node.op, gast.Pow) and isinstance(right, gast.Constant) and right.value == 1 \
            and not isinstance(right.value, bool):
        return left
    return node


def def_like(name: str, args: list[gast.Name], body: list[gast.stmt],
             like: gast.AST) -> gast.FunctionDef:
    """``def name(args): body`` at the source position of ``like``."""
    for a in args:
        a.ctx = gast.Param()
    node = gast.FunctionDef(
        name=name, args=gast.arguments(args=args, posonlyargs=[], vararg=None, kwonlyargs=[],
                                       kw_defaults=[], kwarg=None, defaults=[]),
        body=body, decorator_list=[], returns=None, type_comment=None, type_params=[])
    return gast.copy_location(node, like)


def loaded_names(node: gast.AST | list[gast.stmt]) -> list[str]:
    """Every name ``node`` (a tree or a list of statements) reads, in source order.

    >>> loaded_names(gast.parse("y = x + np.sin(x)").body)
    ['x', 'np']
    """
    return _names(node, (gast.Load,))


def stored_names(node: gast.AST | list[gast.stmt]) -> list[str]:
    """Every name ``node`` (a tree or a list of statements) assigns, in source order."""
    return _names(node, (gast.Store,))


def assigned_names(stmts: list[gast.stmt]) -> set[str]:
    """Names ``stmts`` bind: assignment targets, loop variables and nested ``def``s."""
    defs = {n.name for s in stmts for n in gast.walk(s) if isinstance(n, gast.FunctionDef)}
    return set(stored_names(stmts)) | defs


def _names(node: gast.AST | list[gast.stmt], ctx: tuple[type, ...]) -> list[str]:
    roots = node if isinstance(node, list) else [node]
    found = (n.id for root in roots for n in gast.walk(root)
             if isinstance(n, gast.Name) and isinstance(n.ctx, ctx))
    return list(dict.fromkeys(found))
