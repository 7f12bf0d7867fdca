"""Derivative rules of NumPy's products and linear algebra, as a table (notation as
in math_rules).

Products (``np.dot``, ``np.matmul``, ``@``, ``np.outer``) pick their templates by
the operands' ranks.  ``A`` is a matrix or, through the helpers of
:mod:`s2s_ad.runtime.linalg`, a stack of matrices (NumPy broadcasts ``solve``,
``inv`` and ``det`` over leading axes).
"""

from __future__ import annotations

import gast
import numpy as np

from ..kinds import NUMERIC, ArrayKind
from . import product_rules as products
from .registry import Rule, primitive, register_binop
from .result_kinds import ndim as _ndim
from .result_kinds import same


def _product_kind(ndim_of):
    def kind(kinds: list, operands: list):
        na, nb = _ndim(kinds[0]), _ndim(kinds[1])
        if None in (na, nb) or not all(isinstance(k, ArrayKind) or k in NUMERIC for k in kinds):
            return "unknown"
        ndim = ndim_of(na, nb)
        return ArrayKind(ndim) if ndim else "float"

    return kind


_matmul = _product_kind(products.matmul_nd_ndim)
_dot = _product_kind(products.dot_nd_ndim)


def _outer(kinds: list, operands: list):
    return ArrayKind(2)


# ---- products ------------------------------------------------------------------------
# rt.as_float64: cotangents are float64, and Numba's products need one dtype
_PRODUCTS = {(0, 0): ("a * b", "g * b", "g * a"), (1, 1): ("np.dot(a, b)", "g * b", "g * a"),
             (2, 1): ("np.dot(a, b)", "np.outer(g, b)", "np.dot(rt.as_float64(a).T, g)"),
             (1, 2): ("np.dot(a, b)", "np.dot(rt.as_float64(b), g)", "np.outer(a, g)"),
             (2, 2): ("np.dot(a, b)", "np.dot(g, rt.as_float64(b).T)",
                      "np.dot(rt.as_float64(a).T, g)")}


def _product_variant(consts: dict, kinds: dict, dot: bool = False) -> dict:
    key = tuple(products.rank("np.dot" if dot else "matmul", kinds[p], p) for p in ("a", "b"))
    if key not in _PRODUCTS:  # issue 23: N-D arrays, a number and an array
        return products.dot_nd_variant(*key, kinds) if dot else \
            products.matmul_nd_variant(*key)
    forward, da, db = _PRODUCTS[key]
    return {"forward": forward, "adjoints": {"a": da, "b": db}}


primitive(np.dot, ("a", "b"), {"a": "g", "b": "g"}, kind=_dot,
          variant=lambda c, k: _product_variant(c, k, dot=True), methods=("dot",))
primitive(np.matmul, ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul, variant=_product_variant)
register_binop(gast.MatMult, Rule("@", ("a", "b"), {"a": "g", "b": "g"}, kind=_matmul,
                                  variant=_product_variant))
primitive(np.outer, ("a", "b"), {"a": "np.dot(g, b)", "b": "np.dot(a, g)"}, kind=_outer)


# ---- linear algebra (of a matrix, or of a stack of matrices: runtime.linalg) -------------
def _stacked_matrices(kind) -> bool:
    """Whether ``A`` may be a stack of matrices (more than 2 dimensions, or not known)."""
    return _ndim(kind) is None or _ndim(kind) > 2


def _solve_kind(kinds: list, operands: list):
    a, b = _ndim(kinds[0]), _ndim(kinds[1])
    if b == 1:
        return ArrayKind(None if a is None else a - 1)
    return ArrayKind(None if None in (a, b) else max(a, b))


def _solve_variant(consts: dict, kinds: dict) -> dict:
    b = _ndim(kinds["b"])
    if _stacked_matrices(kinds["A"]) or b is None or b > 2:
        return {"forward": "rt.solve(A, b)",
                "adjoints": {"A": "rt.solve_vjp_a(g, A, b, z)", "b": "rt.solve_vjp_b(g, A, b)"}}
    if b == 1:
        da = "-np.outer(np.linalg.solve(A.T, g), z)"
    else:
        da = "-np.dot(np.linalg.solve(A.T, g), z.T)"
    return {"adjoints": {"A": da, "b": "np.linalg.solve(A.T, g)"}}


def _stack_variant(forward: str, adjoint: str):
    def variant(consts: dict, kinds: dict) -> dict:
        if _stacked_matrices(kinds["A"]):
            return {"forward": forward, "adjoints": {"A": adjoint}}
        return {}

    return variant


def _det_kind(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    return ArrayKind(ndim - 2) if ndim is not None and ndim > 2 else "float"


primitive(np.linalg.solve, ("A", "b"), {"A": "g", "b": "g"}, kind=_solve_kind,
          variant=_solve_variant)
primitive(np.linalg.inv, ("A",), {"A": "-np.dot(np.dot(z.T, g), z.T)"}, kind=same,
          variant=_stack_variant("rt.inv(A)", "rt.inv_vjp(g, z)"))
primitive(np.linalg.det, ("A",), {"A": "g * z * np.linalg.inv(A).T"}, kind=_det_kind,
          variant=_stack_variant("rt.det(A)", "rt.det_vjp(g, A, z)"))
