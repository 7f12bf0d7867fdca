"""``ad.explain`` says which generated functions run with Python under ``jit="auto"``
and why, down to the user's line Numba could not compile; without example arguments
it never reports a refusal that comes from guessing the argument types."""

import inspect
import math

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.introspect import Explanation


def _line_of(f, text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if text in line)


def damped_combinations(rate, order):
    return rate * math.factorial(order) + rate ** 2  # Numba cannot type math.factorial


def calls_the_helper(rate, order):
    return damped_combinations(rate, order) * 3.0


def test_explain_names_the_line_numba_cannot_compile():
    how = ad.explain(damped_combinations, 1.5, 4)
    assert how.path == "python"
    line = _line_of(damped_combinations, "math.factorial")
    assert "factorial" in how.reason
    assert f"test_explain_fallback.py:{line}, in damped_combinations: return rate * " \
           "math.factorial(order)" in how.reason
    assert str(how).startswith("damped_combinations: runs with Python because")


def test_explain_names_the_callees_line_when_a_callee_cannot_be_compiled():
    how = ad.explain(calls_the_helper, 1.5, 4)
    assert how.path == "python"
    line = _line_of(damped_combinations, "math.factorial")
    assert f"test_explain_fallback.py:{line}, in " in how.reason
    assert ad.gradient(calls_the_helper)(1.5, 4) == pytest.approx(3.0 * (24.0 + 3.0))


def test_functions_that_ran_with_python_are_named_even_when_the_hot_one_is_compiled():
    how = Explanation("layer", "numba", "Numba compiled it for (float64)", entries={
        "layer_value_and_grad": ("numba", "Numba compiled it for (float64)"),
        "layer_pullback": ("python", "TypingError: ... (at model.py:7, in layer: ...)")})
    text = str(how)
    assert "but layer_pullback ran with Python (why below)" in text
    assert "layer_pullback: python (TypingError" in text


def energy_of(positions):
    return np.sum(positions[1:] * positions[:-1])


def annotated_energy(positions: np.ndarray):
    return np.sum(positions * positions)


@pytest.mark.parametrize("jit", [True, "auto"])
def test_explain_without_arguments_does_not_refuse_because_of_its_guess(jit):
    df = ad.differentiable(energy_of, jit=jit)  # never called: its types are unknown
    with pytest.raises(ad.ArgumentError, match="'positions' have no annotation or default, "
                       "so they were taken to be floats.*pass example arguments"):
        ad.explain(df)
    assert ad.explain(df, np.ones(3)).path == "numba"
    assert ad.explain(ad.differentiable(annotated_energy, jit=jit)).path == "numba"
