"""Number literals as NumPy 2 combines them with arrays, in the source Numba compiles.

The generated module file is loaded twice (see :mod:`s2s_ad.compiler.jit`); for
Numba, each int or float literal that is an operand of an arithmetic operation
(``x * 2.0``, ``1.0 / d``, ``np.maximum(z, 0.0)``, ``np.where(c, x, 0.0)``) next to
a plain operand (a name, an attribute or an item of one) is wrapped in
``s2s_weak_float(literal, operand)``: :func:`s2s_ad.runtime.weak_floats.weak`, which
gives it a float32 operand's dtype, as NumPy 2 does for a Python number.  The
Python path runs the file as written.  Line numbers are kept.

>>> print(ast.unparse(weakened_tree(ast.parse("y = np.maximum(z, 0.0) * 2"))))
y = np.maximum(z, s2s_weak_float(0.0, z)) * 2
"""

from __future__ import annotations

import ast
from types import CodeType

#: The name the wrapper is bound to in the module loaded for Numba.
WEAK = "s2s_weak_float"
#: NumPy functions of two operands, and ``where`` (its second and third).
_BINARY = frozenset({"maximum", "minimum", "fmax", "fmin", "add", "subtract", "multiply",
                     "divide", "true_divide", "power", "arctan2", "hypot", "copysign"})


def weakened(source: str, filename: str) -> CodeType:
    """``source`` compiled with its literals wrapped (see the module doc)."""
    tree = weakened_tree(ast.parse(source, filename))
    return compile(tree, filename, "exec")


def weakened_tree(tree: ast.AST) -> ast.AST:
    """``tree`` with its literals wrapped, in place."""
    return ast.fix_missing_locations(_Weaken().visit(tree))


def _number(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _plain(node: ast.expr) -> bool:
    """A name, or an attribute or constant item of a plain operand (no call)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Subscript):
        return _plain(node.value) and (isinstance(node.slice, ast.Constant)
                                       or _plain(node.slice))
    return False


def _wrapped(literal: ast.expr, like: ast.expr) -> ast.expr:
    call = ast.Call(ast.Name(WEAK, ast.Load()), [literal, like], [])
    return ast.copy_location(call, literal)


def _pair(a: ast.expr, b: ast.expr) -> tuple[ast.expr, ast.expr]:
    """``a`` and ``b`` with a literal of them wrapped like the other."""
    if _number(a) and _plain(b):
        return _wrapped(a, b), b
    if _number(b) and _plain(a):
        return a, _wrapped(b, a)
    return a, b


def _numpy_function(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
            and func.value.id == "np":
        return func.attr
    return ""


class _Weaken(ast.NodeTransformer):
    def visit_BinOp(self, node: ast.BinOp) -> ast.BinOp:
        self.generic_visit(node)
        node.left, node.right = _pair(node.left, node.right)
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        name = _numpy_function(node.func)
        if node.keywords:
            return node
        if name in _BINARY and len(node.args) == 2:
            node.args = list(_pair(*node.args))
        elif name == "where" and len(node.args) == 3:
            node.args = [node.args[0], *_pair(node.args[1], node.args[2])]
        return node
