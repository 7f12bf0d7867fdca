"""s2s_ad.testing: the public gradient checker ``check_grads`` on both catalogues, the
references it is built from, each shown to fail on wrong derivatives (a checker that
cannot fail proves nothing), and the rule that no test computes finite differences of
its own."""

import ast
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
from array_catalogue import CATALOGUE as ARRAY_CATALOGUE
from catalogue import CATALOGUE

import s2s_ad as ad
from s2s_ad.testing import (
    assert_close,
    assert_dot_product_identity,
    assert_vjp_matches_fd,
    central_difference,
    check_grads,
    differences,
    directional_difference,
    extrapolated_difference,
    five_point_difference,
    partial_derivatives,
)

SCALAR = [pytest.param(c, id=c.name) for c in CATALOGUE[::4]]
ARRAY = [pytest.param(c, id=c.name) for c in ARRAY_CATALOGUE[::4] if c.rtol == 1e-5]


@pytest.mark.parametrize("case", SCALAR)
def test_scalar_catalogue(case):
    check_grads(case.fn, *case.args, seed=zlib.crc32(case.name.encode()))


@pytest.mark.parametrize("case", ARRAY)
def test_array_catalogue(case):
    check_grads(case.fn, *case.args, seed=zlib.crc32(case.name.encode()))


def cube(q):
    return q * q * q


def wrong_cube_derivative(q):
    return cube(q), lambda v: 2.0 * q * q * v  # should be 3 q^2


def test_a_wrong_custom_derivative_is_caught():
    ad.derivative(of=cube)(wrong_cube_derivative)
    with pytest.raises(AssertionError, match="central finite differences"):
        check_grads(cube, 1.5, paths=("python",))


def twice_sum(w):
    return w * 2.0


def wrong_array_derivative(w):
    return twice_sum(w), lambda v: v * np.array([2.0, 2.0, 2.5])


def test_a_wrong_array_entry_is_caught():
    ad.derivative(of=twice_sum)(wrong_array_derivative)
    with pytest.raises(AssertionError, match=r"\[2\]"):
        check_grads(twice_sum, np.array([1.0, 2.0, 3.0]), paths=("python",))


# ---- the references themselves ---------------------------------------------------------
def test_the_stencils_are_exact_where_they_should_be():
    """The central difference is exact for quadratics, the five-point stencil for
    quartics, and the extrapolated one's error estimate is tiny for a smooth function."""
    estimate, bound = central_difference(lambda t: (1.5 + t) ** 2, 0.25)
    assert estimate == 3.0 and 0.0 < bound < 1e-13
    estimate, bound = five_point_difference(lambda t: (0.5 + t) ** 4, 0.125)
    assert estimate == 0.5 and 0.0 < bound < 1e-13
    estimate, error = extrapolated_difference(math.exp, 1e-3)
    assert abs(estimate - 1.0) < 1e-12 and error < 1e-11


def test_partial_derivatives_measure_every_entry_from_the_same_point():
    def rescale(weights, factor):
        weights *= factor  # writes into its argument: every call gets a fresh copy
        return float(np.sum(weights ** 2))

    weights = np.array([[1.0, -2.0], [0.5, 3.0]])
    estimate, bound = partial_derivatives(rescale, (weights, 2.0), 0)
    np.testing.assert_allclose(estimate, 8.0 * weights, rtol=1e-8)
    assert bound.shape == weights.shape and np.all(bound < 1e-6)
    assert partial_derivatives(rescale, (weights, 2.0), 1)[0] == pytest.approx(2 * 2.0 * 14.25)
    np.testing.assert_array_equal(weights, [[1.0, -2.0], [0.5, 3.0]])


def test_a_cotangent_reduces_an_array_result():
    def spread(centre):
        return np.array([centre, 2.0 * centre, centre ** 2])

    u = np.array([1.0, -1.0, 0.5])
    estimate, _ = partial_derivatives(spread, (1.5,), 0, cotangent=u)
    assert estimate == pytest.approx(1.0 - 2.0 + 0.5 * 3.0)
    moved = directional_difference(spread, (1.5,), {0: 2.0}, 1e-6, cotangent=u)[0]
    assert moved == pytest.approx(2.0 * estimate)


def test_the_assertions_fail_on_a_wrong_gradient():
    def energy(mass, speed):
        return 0.5 * mass * speed ** 2

    assert_vjp_matches_fd(energy, (2.0, 3.0), 1.0, (4.5, 6.0))
    with pytest.raises(AssertionError, match="argument 1"):
        assert_vjp_matches_fd(energy, (2.0, 3.0), 1.0, (4.5, 6.1))
    assert_dot_product_identity(energy, (2.0, 3.0), lambda u: (4.5 * u, 6.0 * u), 9.0, seed=1)
    with pytest.raises(AssertionError, match="J v"):
        assert_dot_product_identity(energy, (2.0, 3.0), lambda u: (4.5 * u, 6.1 * u), 9.0,
                                    seed=1)
    with pytest.raises(AssertionError, match="largest difference"):
        assert_close(np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-9]))


# ---- one place for finite differences ---------------------------------------------------
TESTS = Path(__file__).resolve().parent.parent
# names of the references (s2s_ad.testing's and the helpers it replaced)
REFERENCE_NAMES = {name for name, value in vars(differences).items()
                   if callable(value) and getattr(value, "__module__", "") == differences.__name__
                   } | {"central_difference", "five_point_derivative", "finite_difference_vjp",
                        "_finite_difference", "_difference_along", "finite_difference"}


def _is_stencil_quotient(node: ast.AST) -> bool:
    """``(... - ...) / (2 * h)`` or ``/ (12.0 * h * scale)``: a difference divided by a
    stencil's denominator."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)):
        return False
    factors, stack = [], [node.right]
    while stack:
        part = stack.pop()
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Mult):
            stack += [part.left, part.right]
        else:
            factors.append(part)
    constants = [f.value for f in factors if isinstance(f, ast.Constant)]
    differenced = any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
                      for n in ast.walk(node.left))
    return differenced and len(factors) > 1 and any(c in (2, 12) for c in constants)


def private_finite_differences(source: str, filename: str) -> list[str]:
    """Where ``source`` defines a finite-difference reference of its own."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and \
                node.name in REFERENCE_NAMES:
            found.append(f"{filename}:{node.lineno}: defines {node.name}()")
        elif _is_stencil_quotient(node):
            found.append(f"{filename}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_the_detector_finds_the_old_checkers():
    old = '''
def central_difference(fn, x, h):
    return (fn(x + h) - fn(x - h)) / (2.0 * h)

def fourth(at, h, scale):
    return (at(-2 * h) - 8.0 * at(-h) + 8.0 * at(h) - at(2 * h)) / (12.0 * h * scale)

def inline(f_hi, f_lo, h):
    return (f_hi - f_lo) / (2 * h)
'''
    assert len(private_finite_differences(old, "old.py")) == 4
    assert private_finite_differences("mean = (a + b) / 2\nhalf = (a - b) / 2\n", "ok.py") == []


def test_no_test_module_computes_finite_differences_of_its_own():
    """Gradients are checked against s2s_ad.testing only (in the tests, the benchmarks'
    gradient checks and the examples): what needs another reference adds it there
    (documented, tested), not a private copy."""
    root = TESTS.parent
    found = []
    for folder in ("tests", "benchmarks", "examples"):
        for path in sorted((root / folder).rglob("*.py")):
            found += private_finite_differences(path.read_text(), str(path.relative_to(root)))
    assert not found, "finite differences outside s2s_ad.testing:\n" + "\n".join(found)
