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


def call_node(func: gast.expr, args: list[gast.expr],
              keywords: list[gast.keyword] | None = None) -> gast.Call:
    """``func(*args, **keywords)`` of an expression ``func`` (``call`` takes its text)."""
    return gast.Call(func=func, args=args, keywords=[] if keywords is None else keywords)


def keyword(name: str | None, value: gast.expr) -> gast.keyword:
    """``name=value`` in a call (``**value`` for no ``name``)."""
    return gast.keyword(arg=name, value=value)


def attribute(value: gast.expr, attr: str) -> gast.Attribute:
    """``value.attr``, read."""
    return gast.Attribute(value=value, attr=attr, ctx=gast.Load())


def store_item(value: gast.expr, index: gast.expr) -> gast.Subscript:
    """``value[index]`` as an assignment target."""
    return gast.Subscript(value=value, slice=index, ctx=gast.Store())


def store_tuple(elts: list[gast.expr]) -> gast.Tuple:
    """``a, b`` as an assignment target."""
    return gast.Tuple(elts=elts, ctx=gast.Store())


def slice_of(lower: gast.expr | None, upper: gast.expr | None,
             step: gast.expr | None) -> gast.Slice:
    """``lower:upper:step``."""
    return gast.Slice(lower=lower, upper=upper, step=step)


def binop(left: gast.expr, op: gast.operator, right: gast.expr) -> gast.BinOp:
    return gast.BinOp(left=left, op=op, right=right)


def unary(op: gast.unaryop, operand: gast.expr) -> gast.UnaryOp:
    return gast.UnaryOp(op=op, operand=operand)


def bool_op(op: gast.boolop, values: list[gast.expr]) -> gast.BoolOp:
    return gast.BoolOp(op=op, values=values)


def compare(left: gast.expr, ops: list[gast.cmpop], comparators: list[gast.expr]
            ) -> gast.Compare:
    return gast.Compare(left=left, ops=ops, comparators=comparators)


def assignment(targets: list[gast.expr], value: gast.expr) -> gast.Assign:
    """``targets = value`` with no annotations (``assign`` names its target and line)."""
    return gast.Assign(targets=targets, value=value, type_comment=None)


def expr_stmt(value: gast.expr) -> gast.Expr:
    """The expression ``value`` as a statement."""
    return gast.Expr(value=value)


def return_stmt(value: gast.expr | None) -> gast.Return:
    return gast.Return(value=value)


def if_stmt(test: gast.expr, body: list[gast.stmt], orelse: list[gast.stmt]) -> gast.If:
    return gast.If(test=test, body=body, orelse=orelse)


def for_stmt(target: gast.expr, iter: gast.expr, body: list[gast.stmt]) -> gast.For:
    """``for target in iter: body`` (without ``else``)."""
    return gast.For(target=target, iter=iter, body=body, orelse=[], type_comment=None)


def while_stmt(test: gast.expr, body: list[gast.stmt]) -> gast.While:
    """``while test: body`` (without ``else``)."""
    return gast.While(test=test, body=body, orelse=[])


def assert_stmt(test: gast.expr, msg: gast.expr | None) -> gast.Assert:
    return gast.Assert(test=test, msg=msg)


def pass_stmt() -> gast.Pass:
    return gast.Pass()


def break_stmt() -> gast.Break:
    return gast.Break()


def module(body: list[gast.stmt]) -> gast.Module:
    return gast.Module(body=body, type_ignores=[])


def function_node(name: str, args: gast.arguments, body: list[gast.stmt]) -> gast.FunctionDef:
    """``def name(args): body`` of given ``arguments`` (no decorators or annotations)."""
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


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
    if isinstance(kind, ArrayKind) and _calls(value, "rt.unbroadcast_to_shape"):
        return call("rt.accumulate_to_shape", current, *value.args)  # no temporaries
    if isinstance(kind, ArrayKind):
        return call("rt.accumulate", current, value)
    return gast.BinOp(left=current, op=gast.Add(), right=value)


def _calls(node: gast.expr, dotted: str) -> bool:
    """``node`` is a call of the function spelled ``dotted`` (e.g. ``rt.grow``)."""
    if not isinstance(node, gast.Call):
        return False
    parts, func = [], node.func
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    return isinstance(func, gast.Name) and ".".join([func.id, *reversed(parts)]) == dotted


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


def renamed(stmts: list[gast.stmt], names: dict[str, gast.expr]) -> list[gast.stmt]:
    """Copies of ``stmts`` with every variable in ``names`` (read or bound) replaced by
    a copy of its expression: ``d_w`` by ``d_w_parts[c]`` turns ``d_w[j] += g`` into
    ``d_w_parts[c][j] += g``."""

    class _Rename(gast.NodeTransformer):
        def visit_Name(self, node: gast.Name) -> gast.expr:
            if node.id not in names:
                return node
            new = copy.deepcopy(names[node.id])
            new.ctx = node.ctx
            return new

    return [_Rename().visit(copy.deepcopy(s)) for s in stmts]


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


def written_arrays(node: gast.AST) -> list[str]:
    """Every name whose items ``node`` writes (``x[index] = ...``), in source order."""
    found = (n.value.id for n in gast.walk(node)
             if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
             and isinstance(n.value, gast.Name))
    return list(dict.fromkeys(found))


def assigned_names(stmts: list[gast.stmt]) -> set[str]:
    """Names ``stmts`` bind: assignment targets, loop variables and nested ``def``s."""
    defs = {n.name for s in stmts for n in gast.walk(s) if isinstance(n, gast.FunctionDef)}
    return set(stored_names(stmts)) | defs


def _names(node: gast.AST | list[gast.stmt], ctx: tuple[type, ...]) -> list[str]:
    roots = node if isinstance(node, list) else [node]
    found = (n.id for root in roots for n in gast.walk(root)
             if isinstance(n, gast.Name) and isinstance(n.ctx, ctx))
    return list(dict.fromkeys(found))
