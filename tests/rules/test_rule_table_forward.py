"""Forward mode over the rule table: for every differentiable case (the functions
``test_rule_table.py`` builds), ``ad.jvp`` along a random direction equals
``<gradient, direction>`` from reverse mode to 1e-9 (the dot-product identity of the two
modes; the gradient is itself checked against finite differences there).

The cases forward mode refuses are listed in ``REFUSED`` with what their refusal says;
a listed case that starts passing fails too. The Python path runs every sixth case by
default and all in the slow tier; the Numba path runs the cases of the tangent
helpers (sorts, cumulative products, decompositions) in the slow tier and one here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_rule_table import DIFFERENTIABLE, Built, _import

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError

_STACKS = "of a stack of matrices is not supported yet"
_NO_RULE = "has no tangent rule yet"

#: case -> what forward mode's refusal says (tangents not written yet)
REFUSED = {
    **dict.fromkeys(["np.linalg.solve-stack", "np.linalg.solve-stack-vector",
                     "np.linalg.solve-stack-broadcast", "np.linalg.inv-stack",
                     "np.linalg.det-stack", "np.linalg.slogdet-stack",
                     "np.linalg.cholesky-stack"], _STACKS),
    **dict.fromkeys(["scipy.linalg.cho_factor", "scipy.linalg.cho_factor-lower",
                     "scipy.linalg.cho_solve", "scipy.linalg.cho_solve-lower-matrix",
                     "scipy.linalg.cho_solve-given-factor",
                     "np.linalg.svd-u-tall", "np.linalg.svd-vt-wide",
                     "np.linalg.svd-s-square-full", "np.linalg.matrix_power",
                     "np.linalg.matrix_power-negative", "np.linalg.matrix_power-zero",
                     "scipy.linalg.solve_triangular-lower",
                     "scipy.linalg.solve_triangular-upper-trans",
                     "scipy.linalg.solve_triangular-unit-T", "np.arange-start-stop",
                     "np.arange-step", "np.gradient", "np.gradient-spacing-axis",
                     "np.partition", "np.partition-axis0", "np.linalg.pinv-tall",
                     "np.linalg.pinv-wide", "scipy.linalg.cholesky",
                     "scipy.linalg.cholesky-lower", "scipy.linalg.expm",
                     "scipy.linalg.expm-scaled"], _NO_RULE),
}

#: the cases of the tangent helpers, checked on the Numba path too
HELPER_CASES = ("np.sort", "np.cumprod", "x.cumprod", "np.linalg.cholesky", "np.linalg.eigh",
                "np.linalg.eigvalsh", "np.linalg.svd-values", "np.linalg.slogdet",
                "scipy.special.softmax", "scipy.special.logsumexp", "abs-array")
NUMBA_DEFAULT = ("np.cumprod-axis",)


def _check(case, jit: bool, tmp_path) -> None:
    built = Built(case)
    fn = _import(tmp_path, built.source()).f
    rng = np.random.default_rng(7)
    direction = [None if name not in built.wrt else
                 rng.standard_normal(np.shape(value)) if np.ndim(value) else
                 float(rng.standard_normal())
                 for name, value in zip(built.params, built.values, strict=True)]
    df = ad.differentiable(fn, wrt=built.wrt, jit=jit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.ZeroDerivativeWarning)
        try:
            value, tangent = ad.jvp(df, tuple(built.values), tuple(direction))
        except NonDifferentiableError as exc:
            assert case.name in REFUSED and REFUSED[case.name] in str(exc), str(exc)
            return
        grads = ad.gradient(df)(*built.values)
    assert case.name not in REFUSED, f"{case.name} is listed as refused but passes"
    grads = grads if len(built.wrt) > 1 else (grads,)
    expected = sum(float(np.sum(np.asarray(g) * direction[built.params.index(name)]))
                   for name, g in zip(built.wrt, grads, strict=True))
    np.testing.assert_allclose(value, fn(*built.values), rtol=1e-12, atol=1e-12)
    assert abs(tangent - expected) <= 1e-9 * (1.0 + abs(expected)), (
        f"{case.name}: jvp {tangent!r}, <gradient, direction> {expected!r}")


def _python_params() -> list:
    return [pytest.param(*p.values, id=p.id, marks=() if k % 6 == 0 else pytest.mark.slow)
            for k, p in enumerate(DIFFERENTIABLE)]


def _numba_params() -> list:
    return [pytest.param(*p.values, id=p.id,
                         marks=() if p.id in NUMBA_DEFAULT else pytest.mark.slow)
            for p in DIFFERENTIABLE if p.id.startswith(HELPER_CASES)]


@pytest.mark.parametrize(("key", "case"), _python_params())
def test_jvp_agrees_with_the_gradient(key, case, tmp_path):
    _check(case, False, tmp_path)


@pytest.mark.parametrize(("key", "case"), _numba_params())
def test_jvp_agrees_with_the_gradient_on_numba(key, case, tmp_path):
    _check(case, True, tmp_path)


def test_the_lists_name_table_cases():
    names = {p.id for p in DIFFERENTIABLE}
    assert set(REFUSED) <= names and set(NUMBA_DEFAULT) <= names
    assert all(any(n.startswith(h) for n in names) for h in HELPER_CASES)
