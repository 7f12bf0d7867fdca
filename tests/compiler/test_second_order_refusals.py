"""Refusals of second and higher derivatives are located in the user's code (issue 34,
items 12 and 13): the user's file, line and column, naming the user's function, and no
name only generated code has.

A corpus of functions whose Hessian-vector product is refused today, each with the line
the refusal must name marked ``# refused``; if one starts to work, its test fails and
it leaves the corpus (its HVP is then checked by ``test_higher_order``).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.special

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError

JITS = [False, True]
GENERATED = ("d_", "_mul_", "_re", "generated/", "rt.", "value_and_grad")


def spread(samples):
    return np.var(samples) * np.sum(samples)  # refused


def log_volume(frame):
    sign, logdet = np.linalg.slogdet(frame @ frame.T + np.eye(frame.shape[0]))  # refused
    return logdet


def factor_sum(frame):
    return np.sum(np.linalg.cholesky(frame @ frame.T + np.eye(frame.shape[0])))  # refused


def log_gammas(counts):
    total = 0.0
    for i in range(counts.shape[0]):
        total += scipy.special.gammaln(counts[i] + 2.0)  # refused
    return total


def with_hook(weights):
    squared = ad.with_derivative(weights * weights, lambda d: 2.0 * d)  # refused
    return np.sum(squared * weights)


def softened(x):
    return x / (1.0 + abs(x))


@ad.derivative(of=softened)
def softened_vjp(x):
    return softened(x), lambda g: g / (1.0 + abs(x)) ** 2


def soft_energy(weights):
    return np.sum(weights * weights) * softened(weights[0])  # refused


VECTOR, MATRIX = np.array([0.5, 1.3, 0.8]), np.array([[1.0, 0.2], [0.3, 1.5]])
CORPUS = [(spread, VECTOR), (log_volume, MATRIX), (factor_sum, MATRIX),
          (log_gammas, VECTOR), (with_hook, VECTOR), (soft_energy, VECTOR)]


def _marked(fn, mark: str = "# refused") -> tuple[int, int]:
    """(line, column of its first non-blank character) of ``fn``'s line holding ``mark``."""
    lines, first = inspect.getsourcelines(fn)
    k = next(k for k, text in enumerate(lines) if mark in text)
    return first + k, len(lines[k]) - len(lines[k].lstrip()) + 1


def _assert_located(error: NonDifferentiableError, line: int, name: str) -> None:
    where = error.location
    assert where is not None and where.filename == __file__, str(error)
    assert where.lineno == line and where.col > 1, str(error)
    assert name in error.problem, str(error)
    said = f"{error.problem}\n{error.hint}"  # (the test file's name has "_re" in it)
    assert not any(word in said for word in GENERATED), str(error)


@pytest.mark.parametrize("jit", JITS)
@pytest.mark.parametrize("fn, point", CORPUS, ids=[fn.__name__ for fn, _ in CORPUS])
def test_a_refused_hvp_names_the_users_line_and_column(fn, point, jit):
    with pytest.raises(NonDifferentiableError) as caught:
        ad.hvp(ad.differentiable(fn, jit=jit), (point,), (np.ones_like(point),))
    line, _ = _marked(fn)
    _assert_located(caught.value, line, fn.__name__)


@pytest.mark.parametrize("fn, cause", [(log_gammas, "'scipy.special.gammaln(counts[i] + 2.0)'"),
                                       (with_hook, "with_derivative hook"),
                                       (soft_energy, "registered derivative")],
                         ids=["cause-in-a-loop", "hook", "registered"])
def test_a_refusal_names_its_cause(fn, cause):
    with pytest.raises(NonDifferentiableError) as caught:
        ad.hessian(ad.differentiable(fn, jit=False))(VECTOR)
    assert cause in caught.value.problem


@pytest.mark.parametrize("jit", JITS)
def test_the_column_is_the_refused_expressions(jit):
    with pytest.raises(NonDifferentiableError) as caught:
        ad.hessian(ad.differentiable(spread, jit=jit))(VECTOR)
    line, _ = _marked(spread)
    text = inspect.getsourcelines(spread)[0][1]
    assert caught.value.location.col == text.index("np.var") + 1
    assert "'np.var(samples)'" in caught.value.problem


def quartic(x):
    return x ** 4


def coupling(x, y):
    return x * x * y


def made_inside(x):
    return ad.gradient(coupling, wrt="y")(x, 2.0) * x  # refused


@pytest.mark.parametrize("jit", JITS)
def test_an_entry_point_made_inside_differentiated_code_is_refused_at_the_call(jit):
    with pytest.raises(NonDifferentiableError) as caught:
        ad.gradient(ad.differentiable(made_inside, jit=jit))(1.5)
    line, column = _marked(made_inside)
    _assert_located(caught.value, line, "ad.gradient")
    assert caught.value.location.col == column + len("return ")


def test_a_third_derivative_is_refused_at_the_users_call():
    second = ad.gradient(ad.gradient(quartic))
    with pytest.raises(NonDifferentiableError) as caught:
        ad.gradient(second)(0.5)  # refused: third
    line, column = _marked(test_a_third_derivative_is_refused_at_the_users_call,
                           "# refused: third")
    _assert_located(caught.value, line, "quartic")
    assert caught.value.location.col == column
    assert "third derivatives are not supported" in caught.value.problem
    assert "ad.hessian" in caught.value.hint


def test_the_hvp_of_a_gradient_is_refused_at_the_users_call_naming_hessian():
    # (ad.jacobian(ad.gradient(f)) is ad.hessian(f): tests/api/test_entry_points.py)
    with pytest.raises(NonDifferentiableError) as caught:
        ad.hvp(ad.gradient(quartic), (0.5,), (1.0,))  # refused: hvp
    line, _ = _marked(test_the_hvp_of_a_gradient_is_refused_at_the_users_call_naming_hessian,
                      "# refused: hvp")
    _assert_located(caught.value, line, "quartic")
    assert "ad.hessian(quartic)" in caught.value.hint
