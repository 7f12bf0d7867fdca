"""Derivative rules of ``scipy.linalg``, as a table (notation as in math_rules).

Generated code cannot name SciPy (the emitted names are NumPy's, math's and the
runtime's), so every rule here computes through a helper of
:mod:`s2s_ad.runtime.scipy_linalg`, which runs SciPy's function on the Python path
and its own implementation under Numba: ``solve_triangular`` (``lower``, ``trans``
0/1 -- 'N'/'T', and 2/'C', the same for real matrices -- ``unit_diagonal``;
forward or back substitution), ``cholesky`` (``lower``; upper by default, as SciPy),
``cho_factor``/``cho_solve`` (the ``(c, lower)`` pair as SciPy passes it) and
``expm`` (a degree-13 Pade approximant with scaling and squaring; the VJP is the
Frechet derivative at ``A.T``: the upper right block of ``expm([[A.T, G], [0, A.T]])``).
``det``, ``inv`` and ``solve`` are NumPy's rules.

Each derivative is on the entries SciPy reads: a triangular solve's on its triangle
(without the diagonal when ``unit_diagonal``), a Cholesky factorization's on the
triangle it reads (``tril(G) + tril(G.T, -1)`` of the symmetric gradient ``G``).
``cho_factor``'s ``c`` holds ``a``'s own entries in the other triangle (SciPy leaves
them there), and they pass their cotangent straight back.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..kinds import ArrayKind
from .registry import NOT_CONSTANT, lookup, primitive, register
from .result_kinds import ndim as _ndim
from .result_kinds import same
from .tangent_rules import MATRIX_TANGENTS, TANGENTS

# SciPy's spellings of NumPy's matrix functions take NumPy's tangents
for _scipy, _numpy in ((scipy.linalg.inv, np.linalg.inv), (scipy.linalg.det, np.linalg.det),
                       (scipy.linalg.solve, np.linalg.solve)):
    TANGENTS[_scipy] = TANGENTS[_numpy]
    MATRIX_TANGENTS.add(_scipy)

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}


def _matrix(name: str, kinds: dict, param: str = "a") -> None:
    if _ndim(kinds[param]) != 2:
        raise ValueError(f"scipy.linalg.{name} of a {_ndim(kinds[param])}-D array is not "
                         "supported here: it takes a matrix (2-D)")


def _flag(name: str, consts: dict, param: str) -> bool:
    value = consts.get(param)
    if value is NOT_CONSTANT or not isinstance(value, bool | int):
        raise ValueError(f"scipy.linalg.{name}: {param} must be a constant True or False")
    return bool(value)


def _solve_triangular_variant(consts: dict, kinds: dict) -> dict:
    _matrix("solve_triangular", kinds)
    if _ndim(kinds["b"]) not in (1, 2):
        raise ValueError("scipy.linalg.solve_triangular: b must be 1-D or 2-D here")
    trans = consts.get("trans")
    if trans is NOT_CONSTANT or not isinstance(trans, int | str) or trans not in _TRANS:
        raise ValueError("scipy.linalg.solve_triangular: trans must be a constant 0, 1, 2, "
                         "'N', 'T' or 'C'")
    options = (f"{_TRANS[trans]}, {_flag('solve_triangular', consts, 'lower')}, "
               f"{_flag('solve_triangular', consts, 'unit_diagonal')}")
    return {"forward": f"rt.solve_triangular(a, b, {options})",
            "adjoints": {"a": f"rt.solve_triangular_vjp_a(g, a, z, {options})",
                         "b": f"rt.solve_triangular_vjp_b(g, a, {options})"}}


def _cholesky_variant(consts: dict, kinds: dict) -> dict:
    _matrix("cholesky", kinds)
    lower = _flag("cholesky", consts, "lower")
    return {"forward": f"rt.scipy_cholesky(a, {lower})",
            "adjoints": {"a": f"rt.scipy_cholesky_vjp(g, z, {lower})"}}


def _cho_factor_variant(consts: dict, kinds: dict) -> dict:
    _matrix("cho_factor", kinds)
    lower = _flag("cho_factor", consts, "lower")
    return {"forward": f"rt.cho_factor(a, {lower})",
            "adjoints": {"a": f"rt.cho_factor_vjp(g, a, z, {lower})"}}


def _cho_solve_variant(consts: dict, kinds: dict) -> dict:
    pair = kinds["c_and_lower"]
    if not (isinstance(pair, tuple) and len(pair) == 2 and _ndim(pair[0]) == 2):
        raise ValueError("scipy.linalg.cho_solve: the first argument must be the pair "
                         "(c, lower) cho_factor returns")
    if _ndim(kinds["b"]) not in (1, 2):
        raise ValueError("scipy.linalg.cho_solve: b must be 1-D or 2-D here")
    return {}


def _expm_variant(consts: dict, kinds: dict) -> dict:
    _matrix("expm", kinds, "A")
    return {}


primitive(scipy.linalg.solve_triangular, ("a", "b", "trans", "lower", "unit_diagonal"),
          {"a": "g", "b": "g"}, defaults={"trans": 0, "lower": False, "unit_diagonal": False},
          kind=lambda k, o: k[1], variant=_solve_triangular_variant,
          name="scipy.linalg.solve_triangular")
primitive(scipy.linalg.cholesky, ("a", "lower"), {"a": "g"}, defaults={"lower": False},
          kind=same, variant=_cholesky_variant, name="scipy.linalg.cholesky")
primitive(scipy.linalg.cho_factor, ("a", "lower"), {"a": "g"}, defaults={"lower": False},
          kind=lambda k, o: (ArrayKind(2), "bool"), variant=_cho_factor_variant,
          name="scipy.linalg.cho_factor")
primitive(scipy.linalg.cho_solve, ("c_and_lower", "b"),
          {"c_and_lower": "(rt.cho_solve_vjp_c(g, c_and_lower, b, z), 0.0)",
           "b": "rt.cho_solve_vjp_b(g, c_and_lower, b)"},
          kind=lambda k, o: k[1], forward="rt.cho_solve(c_and_lower, b)",
          variant=_cho_solve_variant, name="scipy.linalg.cho_solve")
primitive(scipy.linalg.expm, ("A",), {"A": "rt.expm_vjp(g, A)"}, kind=same,
          forward="rt.expm(A)", variant=_expm_variant, name="scipy.linalg.expm")

# the same functions as NumPy's (for the arguments NumPy's take)
for _scipy, _numpy in ((scipy.linalg.det, np.linalg.det), (scipy.linalg.inv, np.linalg.inv),
                       (scipy.linalg.solve, np.linalg.solve)):
    register(_scipy, lookup(_numpy, 2 if _numpy is np.linalg.solve else 1))
