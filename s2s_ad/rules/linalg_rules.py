"""Derivative rules of NumPy's linear algebra, as a table (notation as in math_rules).

``A`` is a matrix or, through the helpers of :mod:`s2s_ad.runtime.linalg`, a stack
of matrices (NumPy broadcasts ``solve``, ``inv`` and ``det`` over leading axes).
"""

from __future__ import annotations

import numpy as np

from ..kinds import ArrayKind
from .registry import primitive
from .result_kinds import ndim as _ndim
from .result_kinds import same


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
