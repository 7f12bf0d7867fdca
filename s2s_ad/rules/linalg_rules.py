"""Derivative rules of NumPy's products and linear algebra, as a table (notation as
in math_rules).

Products (``np.dot``, ``np.matmul``, ``@``, ``np.outer``) pick their templates by
the operands' ranks.  ``A`` is a matrix or, through the helpers of
:mod:`s2s_ad.runtime.linalg`, a stack of matrices (NumPy broadcasts ``solve``,
``inv`` and ``det`` over leading axes).

Decompositions (:mod:`s2s_ad.runtime.decompositions`): ``svd`` (``compute_uv``
either way; ``full_matrices=True`` only where no cotangent reaches the extra
columns), ``eigh``/``eigvalsh`` (either ``UPLO``: the derivative is on the triangle
NumPy reads), ``cholesky`` and ``slogdet`` (stacks too), ``pinv`` (at constant
rank) and ``matrix_power`` (any int ``n``).  Conventions where no derivative
exists: at equal singular values (eigenvalues) the terms coupling their vectors
are dropped, and ``1 / s`` terms of zero singular values are 0 -- exact for losses
of the values alone and of the vectors of simple ones, finite always; the VJPs do
not depend on LAPACK's sign choices for a loss that does not.  Matrix norms:
``ord=2``/``-2`` send ``g`` to ``outer(u, v)`` of the largest/smallest singular
value (LAPACK's first of equal ones), ``'nuc'`` to ``U @ Vt``, ``1``/``-1``/``inf``/
``-inf`` to the chosen column/row split equally among ties, times ``sign(x)`` (0 at
0).  ``eig`` and ``eigvals`` (complex results) are refused.
"""

from __future__ import annotations

import gast
import numpy as np

from ..kinds import NUMERIC, ArrayKind
from ..runtime import reductions
from . import product_rules as products
from .registry import NOT_CONSTANT, Rule, primitive, refuse, register_binop, rt_name
from .result_kinds import ndim as _ndim
from .result_kinds import same


def _product_kind(ndim_of):
    def kind(kinds: list, operands: list):
        na, nb = _ndim(kinds[0]), _ndim(kinds[1])
        if None in (na, nb) or not all(isinstance(k, ArrayKind) or k in NUMERIC for k in kinds):
            return "unknown"
        ndim = ndim_of(na, nb)
        if not ndim and all(k in ("int", "bool") for k in kinds):  # np.dot(2, 3) is 6
            return "int"
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
# np.outer flattens its operands: the cotangents are shaped back like them
primitive(np.outer, ("a", "b"), {"a": "rt.reshape_like(np.dot(g, np.ravel(b)), a)",
                                 "b": "rt.reshape_like(np.dot(np.ravel(a), g), b)"},
          kind=_outer)


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


# ---- decompositions (runtime.decompositions; conventions in its docstring) -----------------
def _matrix(name: str, kinds: dict, stacks: bool = False) -> None:
    """Refuse an ``a`` that is not a matrix (nor, with ``stacks``, a stack of them)."""
    ndim = _ndim(kinds["a"])
    if ndim == 2 or stacks and ndim is not None and ndim > 2:
        return
    what = "a matrix or a stack of matrices" if stacks else "a matrix (2-D)"
    raise ValueError(f"np.linalg.{name} of a {ndim}-D array is not supported here: it takes "
                     f"{what}" + ("" if stacks else "; loop over a stack of matrices"))


def _uv(operands: list) -> bool:
    flag = operands[2] if len(operands) > 2 else None
    return not (isinstance(flag, gast.Constant) and not flag.value)


def _svd_kind(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    if ndim is None or ndim < 2:
        return "unknown"
    if not _uv(operands):
        return ArrayKind(ndim - 1)
    return (ArrayKind(ndim), ArrayKind(ndim - 1), ArrayKind(ndim))


def _svd_variant(consts: dict, kinds: dict) -> dict:
    _matrix("svd", kinds)
    full, uv = consts.get("full_matrices"), consts.get("compute_uv")
    if NOT_CONSTANT in (full, uv):
        raise ValueError("np.linalg.svd: full_matrices and compute_uv must be constants")
    if not uv:
        return {"forward": "rt.singular_values(a)",
                "adjoints": {"a": "rt.singular_values_vjp(g, a)"},
                "tangent": {"a": "rt.singular_values_tangent(g, a)"}}
    return {"forward": f"rt.svd(a, {bool(full)})", "adjoints": {"a": "rt.svd_vjp(g, z)"}}


def _upper(name: str, consts: dict) -> bool:
    uplo = consts.get("UPLO")
    if uplo not in ("L", "U"):
        raise ValueError(f"np.linalg.{name}: UPLO must be the constant 'L' or 'U'")
    return uplo == "U"


def _eigh_variant(consts: dict, kinds: dict) -> dict:
    _matrix("eigh", kinds)
    upper = _upper("eigh", consts)
    return {"forward": f"rt.eigh(a, {upper})", "adjoints": {"a": f"rt.eigh_vjp(g, z, {upper})"},
            "tangent": {"a": f"rt.eigh_tangent(g, z, {upper})"}}


def _eigvalsh_variant(consts: dict, kinds: dict) -> dict:
    _matrix("eigvalsh", kinds)
    upper = _upper("eigvalsh", consts)
    return {"forward": f"rt.eigvalsh(a, {upper})",
            "adjoints": {"a": f"rt.eigvalsh_vjp(g, a, {upper})"},
            "tangent": {"a": f"rt.eigvalsh_tangent(g, a, {upper})"}}


def _stack_checked(name: str, stacks: bool = True):
    def variant(consts: dict, kinds: dict) -> dict:
        _matrix(name, kinds, stacks)
        return {}

    return variant


def _slogdet_kind(kinds: list, operands: list):
    ndim = _ndim(kinds[0])
    if ndim is None or ndim < 2:
        return "unknown"
    item = "float" if ndim == 2 else ArrayKind(ndim - 2)
    return (item, item)


primitive(np.linalg.svd, ("a", "full_matrices", "compute_uv"), {"a": "g"},
          defaults={"full_matrices": True, "compute_uv": True}, kind=_svd_kind,
          variant=_svd_variant)
primitive(np.linalg.eigh, ("a", "UPLO"), {"a": "g"}, defaults={"UPLO": "L"},
          kind=lambda k, o: (ArrayKind(1), ArrayKind(2)), variant=_eigh_variant)
primitive(np.linalg.eigvalsh, ("a", "UPLO"), {"a": "g"}, defaults={"UPLO": "L"},
          kind=lambda k, o: ArrayKind(1), variant=_eigvalsh_variant)
primitive(np.linalg.cholesky, ("a",), {"a": "rt.cholesky_vjp(g, z)"}, kind=same,
          forward="rt.cholesky(a)", variant=_stack_checked("cholesky"))
primitive(np.linalg.slogdet, ("a",), {"a": "rt.slogdet_vjp(g, a)"}, kind=_slogdet_kind,
          forward="rt.slogdet(a)", variant=_stack_checked("slogdet"))
primitive(np.linalg.pinv, ("a",), {"a": "rt.pinv_vjp(g, a, z)"}, kind=same,
          variant=_stack_checked("pinv", stacks=False))
primitive(np.linalg.matrix_power, ("a", "n"), {"a": "rt.matrix_power_vjp(g, a, n)"},
          kind=same, forward="rt.matrix_power(a, n)",
          variant=_stack_checked("matrix_power", stacks=False))


# ---- matrix norms (np.linalg.norm of a 2-D array, no axis: reduction_rules asks here) --------
def _abs_sums(reduce: str, axis: int) -> dict:
    """``np.<reduce>`` of the sums of ``|x|`` along ``axis`` (ord 1, -1: columns; inf,
    -inf: rows); the VJP sends ``g`` to the column (row) chosen, split equally among
    ties, times ``sign(x)`` (0 at 0), as the vector norms' ord=inf does."""
    sums = f"{rt_name(reductions.SUM.axis)}(np.abs(x), {axis})"
    chosen = rt_name((reductions.MAX if reduce == "max" else reductions.MIN).vjp_all)
    return {"forward": f"np.{reduce}({sums})",
            "adjoints": {"x": f"{rt_name(reductions.SUM.vjp_axis)}({chosen}(g, {sums}), x, "
                              f"{axis}) * np.sign(x)"}}


def matrix_norm(order) -> dict:
    """The templates of ``np.linalg.norm(x, ord)`` of a matrix for ``ord`` 2, -2 (the
    largest, smallest singular value: slope ``outer(u, v)`` of its singular vectors),
    'nuc' (their sum: slope ``U @ Vt``), 1, -1, inf, -inf (None and 'fro' are the
    2-norm of all entries, reduction_rules')."""
    if order == 2 or order == -2:
        return {"forward": f"np.{'max' if order == 2 else 'min'}(rt.singular_values(x))",
                "adjoints": {"x": f"g * rt.singular_outer(x, {0 if order == 2 else -1})"}}
    if order == "nuc":
        return {"forward": "np.sum(rt.singular_values(x))",
                "adjoints": {"x": "g * rt.nuclear_norm_slope(x)"}}
    forms = {1: ("max", 0), -1: ("min", 0), np.inf: ("max", 1), -np.inf: ("min", 1)}
    if isinstance(order, int | float) and order in forms:
        return _abs_sums(*forms[order])
    raise ValueError(f"np.linalg.norm: the matrix norm ord={order!r} is not supported (None, "
                     "'fro', 'nuc', 2, -2, 1, -1, inf or -inf)")


# ---- refused: complex results ------------------------------------------------------------
for _fn in (np.linalg.eig, np.linalg.eigvals):
    refuse(_fn, f"np.linalg.{_fn.__name__} is not differentiated: its results are complex in "
                "general, and s2s_ad differentiates real values only",
           "for a symmetric matrix use np.linalg.eigh or np.linalg.eigvalsh")
