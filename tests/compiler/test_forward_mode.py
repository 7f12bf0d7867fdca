"""Forward mode (``ad.jvp``, ``ad.source(..., mode="forward")``), issue 24.

Every case of the scalar and the array catalogues is checked on the Python path: the
tangent against central finite differences of the original along a random direction,
and ``<u, J v>`` (forward mode) against ``<J^T u, v>`` (the pullback) to 1e-10 (1e-5
for float32 arguments, which each mode rounds in its own order). Every case runs on the
Numba path in the slow tier; the default run compiles jvp for lists, Jacobians and
in-place writes below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from array_catalogue import CATALOGUE as ARRAY_CASES
from catalogue import CATALOGUE as SCALAR_CASES
from forward_checks import check_jvp

import s2s_ad as ad
from s2s_ad.errors import ArgumentError, NonDifferentiableError
from s2s_ad.testing import partial_derivatives
from s2s_ad.testing.differences import directional_difference

CASES = [*SCALAR_CASES, *ARRAY_CASES]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_catalogue_python_path(case):
    status, detail = check_jvp(case.fn, case.args, False, case.name)
    assert status == "pass", f"{status}: {detail}"


@pytest.mark.slow  # a compile per case; jvp under Numba is checked below in the default run
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_catalogue_numba_path(case):
    status, detail = check_jvp(case.fn, case.args, True, case.name)
    assert status == "pass", f"{status}: {detail}"


# ---- the generated source ----------------------------------------------------------------
def relax(signal, rate, steps):
    level = 0.0
    for k in range(steps):
        level = level + rate * (signal[k] - level)
    return level


def test_the_tangent_source_follows_the_loop_with_no_tape():
    text = ad.source(relax, np.ones(3), 0.5, 3, mode="forward")
    assert text.startswith("def relax_jvp(signal, rate, steps, t_signal, t_rate):")
    assert "    for k in range(steps):" in text
    line = relax.__code__.co_firstlineno + 3
    assert f"# tangent of line {line}: level = level + rate * (signal[k] - level)" in text
    assert "tape" not in text and "push" not in text


def test_source_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="mode must be 'reverse', 'forward' or 'directions'"):
        ad.source(relax, np.ones(3), 0.5, 3, mode="sideways")


# ---- arguments ---------------------------------------------------------------------------
def test_wrt_and_tangents_of_arguments_not_differentiated():
    signal = np.array([1.0, 2.0, 4.0])
    value, tangent = ad.jvp(relax, (signal, 0.5, 3), (None, 1.0, None), wrt="rate")
    estimate, _ = partial_derivatives(relax, (signal, 0.5, 3), 1)
    assert value == relax(signal, 0.5, 3)
    assert math.isclose(tangent, estimate, rel_tol=1e-7)
    with pytest.raises(ArgumentError, match="argument 'signal' .* not differentiated"):
        ad.jvp(relax, (signal, 0.5, 3), (np.ones(3), 1.0, None), wrt="rate")


def test_a_tangent_of_the_wrong_shape_names_its_argument():
    with pytest.raises(ArgumentError, match="tangent of argument 'signal' .* shape \\(2,\\)"):
        ad.jvp(relax, (np.ones(3), 0.5, 3), (np.ones(2), 1.0, None))
    with pytest.raises(ArgumentError, match="2 primals but 1 tangents"):
        ad.jvp(lambda a, b: a * b, (1.0, 2.0), (1.0,))


def smooth_in_place(field, weight):
    field[1:] = field[1:] + weight * field[:-1]
    return np.sum(field * field)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_the_callers_arrays_are_left_as_calling_the_function_leaves_them(jit):
    field, direction = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    expected_field = field.copy()
    expected = smooth_in_place(expected_field, 0.3)
    value, tangent = ad.jvp(ad.differentiable(smooth_in_place, jit=jit), (field, 0.3),
                            (direction, 0.0))
    assert value == expected and np.array_equal(field, expected_field)  # as the original
    assert np.array_equal(direction, [0.5, -1.0, 2.0])  # the tangent given is not written


# ---- what forward mode does not do yet is refused where it is --------------------------
@ad.derivative(of=lambda x: x)
def _identity_pullback(x):
    return x, lambda g: (g,)


def softclip(x):
    return np.tanh(x)


@ad.derivative(of=softclip)
def _softclip_derivative(x):
    z = np.tanh(x)
    return z, lambda g: (g * (1.0 - z * z),)


def uses_custom(x):
    return softclip(x) * 2.0


def test_a_custom_derivative_with_only_a_pullback_is_refused_with_its_name():
    with pytest.raises(NonDifferentiableError, match="custom derivative of 'softclip'") as err:
        ad.jvp(uses_custom, (0.3,), (1.0,))
    assert err.value.location is not None and err.value.location.lineno > 0
    assert "differential" in str(err.value)
    assert ad.gradient(uses_custom)(0.3) == pytest.approx(2.0 * (1.0 - np.tanh(0.3) ** 2))


# ---- notebooks: a helper redefined between calls -----------------------------------------
def test_a_redefined_helper_gives_the_new_tangent(tmp_path):
    import importlib.util

    path = tmp_path / "notebook_cell.py"

    def load(body: str):
        path.write_text("import numpy as np\n\ndef helper(v):\n    return " + body +
                        "\n\ndef model(v):\n    return helper(v) * 3.0\n")
        spec = importlib.util.spec_from_file_location("notebook_cell", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    first = load("v * v")
    assert ad.jvp(first.model, (2.0,), (1.0,))[1] == pytest.approx(12.0)
    first.helper = load("v * v * v").helper  # rebound, as a notebook cell does
    assert ad.jvp(first.model, (2.0,), (1.0,))[1] == pytest.approx(36.0)


# ---- Jacobians ---------------------------------------------------------------------------
def chemistry(concentrations, rates):
    """A small reaction network's right-hand side: 4 species, 3 rate constants."""
    a, b, c, d = concentrations[0], concentrations[1], concentrations[2], concentrations[3]
    flux = np.zeros(4)
    first = rates[0] * a * b
    second = rates[1] * c * c
    third = rates[2] * np.sqrt(d + 1.0)
    flux[0] = -first + third
    flux[1] = -first
    flux[2] = first - 2.0 * second
    flux[3] = second - third
    return flux


def _finite_difference_jacobian(fn, args, index):
    """Row i of the Jacobian: the central differences of ``<e_i, fn>`` (s2s_ad.testing)."""
    size = np.size(fn(*args))
    rows = [partial_derivatives(fn, args, index, cotangent=np.eye(size)[i])[0]
            for i in range(size)]
    return np.stack(rows).reshape(np.shape(fn(*args)) + np.shape(args[index]))


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_jacobians_of_every_mode_agree_with_finite_differences(jit):
    concentrations, rates = np.array([1.0, 0.5, 0.25, 2.0]), np.array([0.3, 1.5, 0.7])
    f = ad.differentiable(chemistry, jit=jit)
    results = {mode: ad.jacobian(f, mode=mode)(concentrations, rates)
               for mode in ("forward", "reverse", "auto")}
    for index, block in enumerate(results["forward"]):
        expected = _finite_difference_jacobian(chemistry, (concentrations, rates), index)
        assert block.shape == expected.shape
        np.testing.assert_allclose(block, expected, rtol=1e-6, atol=1e-8)
    for mode in ("reverse", "auto"):
        for got, want in zip(results[mode], results["forward"], strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_jacobian_shapes_follow_result_then_argument():
    def spread(matrix, scale):
        return np.sum(matrix * scale, axis=1)
    matrix = np.arange(6.0).reshape(2, 3)
    block = ad.jacobian(spread, wrt="matrix", mode="forward")(matrix, 2.0)
    assert block.shape == (2, 2, 3)
    np.testing.assert_array_equal(block[0], [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]])
    assert ad.jacobian(spread, wrt="scale")(matrix, 2.0).shape == (2,)
    with pytest.raises(ValueError, match="mode must be"):
        ad.jacobian(spread, mode="both")


def collect(x, weights):
    items = []
    for k in range(3):
        items.append(x * k + weights[k])
    pair = [x, 2.0 * x]
    stacked = np.array(items)
    return items[0] + items[2] * pair[1] + np.sum(stacked * weights) + len(items)


@pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])
def test_growing_lists_carry_a_tangent_list_beside_them(jit):
    weights, direction = np.array([1.0, 0.5, 2.0]), np.array([0.1, 0.2, 0.3])
    value, tangent = ad.jvp(ad.differentiable(collect, jit=jit), (0.5, weights),
                            (1.0, direction))
    estimate, _ = directional_difference(collect, (0.5, weights), {0: 1.0, 1: direction},
                                         1e-6, 1.0)
    assert value == collect(0.5, weights)
    assert tangent == pytest.approx(estimate, rel=1e-8)


# ---- tuples joined by + ------------------------------------------------------------------
def joined_readings(gain, offset):
    readings = (0.5,) + (gain, offset * gain)
    more = (gain * gain, 2.0) + readings
    return readings[1] * more[0] + readings[-3] + more[3] * more[1]


@pytest.mark.parametrize("jit", [False, True])
def test_the_tangent_of_joined_tuples_keeps_each_item_in_place(jit):
    # an operand without a tangent used to drop out of the joined tangent, shifting the
    # items after it (a wrong tangent at a positive index, an IndexError at a negative)
    f = ad.differentiable(joined_readings, jit=jit)
    for direction in ((1.0, 0.0), (0.0, 1.0), (0.3, -0.7)):
        _, tangent = ad.jvp(f, (1.3, 0.4), direction)
        estimate, rounding = directional_difference(joined_readings, (1.3, 0.4),
                                                    dict(enumerate(direction)), 1e-6)
        assert tangent == pytest.approx(estimate, rel=1e-7, abs=1e-9 + 10 * rounding)
