"""Second derivatives (issue 24): ``ad.hvp``, ``ad.hessian``, ``ad.jvp`` of
``ad.gradient(f)`` and ``ad.gradient(ad.gradient(f))``, by forward mode over the
generated gradient code.

Every case of the scalar and the array catalogues whose result is a number is checked
on the Python path (``hvp_checks.check_hvp``): ``H v`` against extrapolated central
differences of the gradient along ``v``, and ``<w, H v> == <v, H w>``. The cases whose
second derivative is not supported yet are listed in ``REFUSED`` with the reason their
refusal names; a listed case that starts passing fails too. The Numba path runs every
case in the slow tier and two here; the default run takes every fourth case of the
Python path, the slow tier all.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from array_catalogue import CATALOGUE as ARRAY_CASES
from catalogue import CATALOGUE as SCALAR_CASES
from hvp_checks import check_hvp

import s2s_ad as ad
from s2s_ad.errors import ArgumentError, NonDifferentiableError
from s2s_ad.testing import check_grads, partial_derivatives

CASES = [*SCALAR_CASES, *ARRAY_CASES]
NUMBA_SAMPLE = [c for c in CASES if c.name in ("branch_on_int_even", "read_slice")]

#: case -> what its refusal names (second derivatives not written yet)
REFUSED: dict[str, str] = {}  # none now (prod, norm and rows of a list pass)


def _check(case, jit: bool) -> None:
    status, detail = check_hvp(case.fn, case.args, jit)
    if case.name in REFUSED:
        assert status == "refused" and REFUSED[case.name] in detail, (status, detail)
    else:
        assert status in ("pass", "skip"), f"{status}: {detail}"


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if k % 4 == 0 else pytest.mark.slow)
                                  for k, c in enumerate(CASES)],
                         ids=[c.name for c in CASES])
def test_catalogue_python_path(case):
    _check(case, False)


@pytest.mark.parametrize("case", NUMBA_SAMPLE, ids=[c.name for c in NUMBA_SAMPLE])
def test_catalogue_numba_sample(case):
    _check(case, True)


@pytest.mark.slow  # a compile of the gradient code's tangent per case
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_catalogue_numba_path(case):
    _check(case, True)


def test_the_sample_names_catalogue_cases():
    assert len(NUMBA_SAMPLE) == 2 and set(REFUSED) <= {c.name for c in CASES}


# ---- the Hessian -------------------------------------------------------------------------
def coulomb_energy(positions, charges):
    energy = 0.0
    for i in range(positions.shape[0]):
        for j in range(i + 1, positions.shape[0]):
            gap = positions[i] - positions[j]
            energy = energy + charges[i] * charges[j] / math.sqrt(np.sum(gap * gap) + 0.1)
    return energy


def rosenbrock(v):
    return np.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)


@pytest.mark.parametrize("jit", [False, True])
def test_a_hessian_is_symmetric_and_the_derivative_of_the_gradient(jit):
    positions = np.array([[0.0, 0.1], [1.0, -0.3], [0.4, 0.9]])
    charges = np.array([1.0, -2.0, 0.5])
    f = ad.differentiable(coulomb_energy, jit=jit)
    hessian = ad.hessian(f, wrt="positions")(positions, charges)
    assert hessian.shape == (3, 2, 3, 2)
    flat = hessian.reshape(6, 6)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-12, atol=1e-12)
    gradient = ad.gradient(f, wrt="positions")
    for k in range(6):
        at = np.unravel_index(k, (3, 2))
        column, _ = partial_derivatives(lambda p, c, at=at: gradient(p, c)[at],
                                        (positions, charges), 0)
        np.testing.assert_allclose(hessian[at], column, rtol=1e-6, atol=1e-7)


def test_the_hessian_of_rosenbrock_is_the_known_tridiagonal_matrix():
    v = np.array([1.2, 0.8, -0.5, 0.3])
    hessian = ad.hessian(rosenbrock)(v)
    # d2/dv_i2 = 1200 v_i^2 - 400 v_{i+1} + 2 (i < n-1), + 200 (i > 0); d2/dv_i dv_i+1 = -400 v_i
    expected = np.zeros((4, 4))
    for i in range(3):
        expected[i, i] += 1200.0 * v[i] ** 2 - 400.0 * v[i + 1] + 2.0
        expected[i + 1, i + 1] += 200.0
        expected[i, i + 1] = expected[i + 1, i] = -400.0 * v[i]
    np.testing.assert_allclose(hessian, expected, rtol=1e-12)


def test_several_parameters_give_the_blocks_of_the_hessian():
    def spring(stiffness, stretch):
        return 0.5 * stiffness * np.sum(stretch ** 2) + stiffness ** 3

    stretch = np.array([0.5, -1.0])
    blocks = ad.hessian(spring)(2.0, stretch)
    assert blocks[0][0] == pytest.approx(6.0 * 2.0)
    np.testing.assert_allclose(blocks[0][1], stretch)
    np.testing.assert_allclose(blocks[1][0], stretch)
    np.testing.assert_allclose(blocks[1][1], 2.0 * np.eye(2))


# ---- composing the entry points ----------------------------------------------------------
def drag(speed, area):
    return 0.5 * area * speed ** 3 + math.sin(speed * area)


def test_gradient_of_gradient_is_the_second_derivative():
    speed, area = 1.3, 0.7
    second = ad.gradient(ad.gradient(drag, wrt="speed"), wrt="speed")(speed, area)
    assert second == pytest.approx(3.0 * area * speed - area ** 2 * math.sin(speed * area),
                                   rel=1e-12)
    mixed = ad.gradient(ad.gradient(drag, wrt="speed"))(speed, area)
    row = ad.hessian(drag)(speed, area)[0]
    assert mixed == pytest.approx(row, rel=1e-12)


def test_jvp_of_the_gradient_is_the_gradient_and_the_hessian_vector_product():
    speed, area = 1.3, 0.7
    gradient, product = ad.jvp(ad.gradient(drag), (speed, area), (0.25, -1.0))
    assert gradient == pytest.approx(ad.gradient(drag)(speed, area), rel=1e-15)
    assert product == pytest.approx(ad.hvp(drag, (speed, area), (0.25, -1.0)), rel=1e-12)


def test_jvp_of_a_partial_gradient_moves_every_argument():
    # d/dt [d drag / d speed](speed + t u, area + t w) = H_ss u + H_sa w
    speed, area = 1.3, 0.7
    _, product = ad.jvp(ad.gradient(drag, wrt="speed"), (speed, area), (0.0, 1.0))
    assert product == pytest.approx(ad.hessian(drag)(speed, area)[0][1], rel=1e-12)


# ---- what is refused ---------------------------------------------------------------------
def test_gradient_of_an_array_gradient_points_to_the_hessian():
    with pytest.raises(ArgumentError, match="use ad.hessian"):
        ad.gradient(ad.gradient(rosenbrock))(np.ones(3))


def test_hvp_refuses_a_tangent_for_an_argument_not_differentiated():
    with pytest.raises(ArgumentError, match="'area' of drag is not differentiated"):
        ad.hvp(drag, (1.0, 2.0), (1.0, 1.0), wrt="speed")


def test_reverse_mode_through_gradient_code_is_refused():
    gradient_code = ad.source(drag, 1.0, 2.0).split("def drag_value_and_grad")[0]
    assert gradient_code  # the generated module, read again only by forward mode
    from s2s_ad.api import as_differentiable

    t = as_differentiable(drag).prepare((1.0, 2.0), ())
    code = t.module.python(t.generated.fused.name)
    with pytest.raises(NonDifferentiableError, match="reverse mode through generated"):
        ad.gradient(code, wrt="speed")(1.0, 2.0)


def test_no_perturbation_confusion_in_a_nested_derivative():
    # d/dx [x * d/dy (x + y)] = d/dx [x * 1] = 1 (a confused nesting gives 2)
    def shift(x, y):
        return x + y

    slope = ad.gradient(shift, wrt="y")

    def scaled(x):
        return x * slope(x, 1.0)

    for jit in (False, True):
        assert ad.gradient(ad.differentiable(scaled, jit=jit))(3.0) == 1.0
    assert ad.jvp(scaled, (3.0,), (1.0,)) == (3.0, 1.0)


def test_a_gradient_called_inside_differentiated_code_is_differentiated():
    def bend(load, shape):
        return load * shape * shape + math.sin(load * shape)

    bend_slope = ad.gradient(bend, wrt="shape")  # 2 load shape + load cos(load shape)

    def work(load):
        return load * bend_slope(load, 0.5)

    load, shape = 0.7, 0.5
    # d/dload [2 load^2 shape + load^2 cos(load shape)]
    exact = 4.0 * load * shape + 2.0 * load * math.cos(load * shape) - \
        load ** 2 * shape * math.sin(load * shape)
    assert ad.gradient(work)(load) == pytest.approx(exact, rel=1e-13)
    assert ad.jvp(work, (load,), (1.0,))[1] == pytest.approx(exact, rel=1e-13)


def test_a_gradient_called_inside_follows_a_redefined_helper(tmp_path):
    import textwrap

    namespace: dict = {"__name__": "cells"}

    def run(cell: int, text: str) -> None:
        path = tmp_path / f"cell{cell}.py"
        path.write_text(textwrap.dedent(text))
        exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102

    run(1, """
        import s2s_ad as ad

        def profile(y):
            return y * y

        def lift(x, y):
            return x * profile(y)

        lift_slope = ad.gradient(lift, wrt="y")

        def drag(x):
            return x * lift_slope(x, 3.0)
    """)
    drag_gradient = ad.gradient(namespace["drag"])
    assert drag_gradient(2.0) == pytest.approx(4.0 * 2.0 * 3.0)  # d/dx [x * x * 2y]
    run(2, """
        def profile(y):
            return y * y * y
    """)
    assert drag_gradient(2.0) == pytest.approx(4.0 * 3.0 * 9.0)  # d/dx [x * x * 3y^2]


def test_a_gradient_of_arrays_called_inside_differentiated_code_is_refused_at_its_line():
    inner_slope = ad.gradient(rosenbrock)

    def outer(v):
        return np.sum(v * inner_slope(v))

    with pytest.raises(NonDifferentiableError, match="gradient of 'rosenbrock'") as refusal:
        ad.gradient(outer)(np.ones(3))
    assert refusal.value.location.lineno == outer.__code__.co_firstlineno + 1


def test_a_refusal_inside_the_gradient_code_names_the_users_line():
    def spread(values):
        return np.sum(np.cumprod(values)) + np.sum(values)

    with pytest.raises(NonDifferentiableError, match="second derivatives of spread") as err:
        ad.hessian(spread)(np.array([1.0, 2.0]))
    assert err.value.location.filename == __file__
    assert err.value.location.lineno == spread.__code__.co_firstlineno + 1


@pytest.mark.parametrize("jit", [False, True])
def test_a_power_with_a_constant_slope_has_no_curvature_at_zero(jit):
    # d²/dp² of p ** 0 and p ** 1 is 0 everywhere, at p = 0 too, where the slope's slope
    # written b (b - 1) p ** (b - 2) reads 0.0 ** -2 (ZeroDivisionError in Python, nan
    # in Numba; found by the HVP fuzzer, seed 31000175); p ** 3 at p = 2: 6 p = 12.
    def powers(base, scale):
        total = 0.0
        for power in range(2):
            total += scale * base ** power
        return total + base ** 3

    hvp = ad.hvp(ad.differentiable(powers, jit=jit), (0.0, 1.5), (1.0, 0.0))
    assert hvp == (0.0, 1.0)  # d/dscale of d/dbase: d/dbase (1 + base) = 1
    assert ad.hvp(ad.differentiable(powers, jit=jit), (2.0, 1.5), (1.0, 0.0))[0] == 12.0


# ---- Numba's names of fused array expressions --------------------------------------------
def two_sums(values):
    return np.sum(values) * np.sum(values[:2])


def renamed_twice(values, flag):
    d = np.zeros(2)
    d = d + values[:2]
    d_1 = values[1:3]
    return np.sum((d_1 + d) * values[:2]) * flag


def test_numbas_array_expression_names_stay_unique():
    # the gradient code's tangent adds d_values_item_1 + d_values_item (bound twice):
    # Numba 0.68 named both parameters of the fused kernel alike and stopped
    values = np.array([0.5, 1.3, -0.7, 2.0])
    assert check_hvp(two_sums, (values,), True) == ("pass", "")
    check_grads(ad.differentiable(renamed_twice, jit=True), values, 1.5)


# ---- second derivatives through the helpers whose rules came last ----------------------
def running_totals(levels):
    return np.sum(np.cumsum(levels) * levels) + np.sum(np.diff(levels) ** 3)


def traced_square(levels):
    grid = np.outer(levels, np.sin(levels))
    return np.trace(grid @ grid) + np.trace(grid, 1) ** 2


def products_and_norms(levels):
    return np.sum(np.prod(levels.reshape(2, 2), axis=0) ** 2) + np.linalg.norm(levels) ** 3


def ranked_weights(levels):
    return np.sum(np.sort(levels) * np.tanh(levels)) + np.sum(np.sort(levels * levels)[:2])


def spread_over_axes(levels):
    block = np.outer(levels, levels).reshape(2, 2, 4)
    return np.sum(np.sum(block, axis=(0, 2)) ** 2) + np.sum(np.max(block, axis=(0, 1)))


@pytest.mark.parametrize("fn, jit", [
    (fn, jit) if not jit or fn in (running_totals, products_and_norms)
    else pytest.param(fn, jit, marks=pytest.mark.slow)  # a compile each: the slow tier
    for fn in (running_totals, traced_square, products_and_norms, ranked_weights,
               spread_over_axes)
    for jit in (False, True)])
def test_second_derivatives_through_scans_traces_sorts_and_tuple_axes(fn, jit):
    levels = np.array([0.4, -1.1, 0.9, 1.6])
    assert check_hvp(fn, (levels,), jit) == ("pass", "")


SCALE = np.array([-0.433281, -0.7513, -0.865962])


def last_of_a_grown_list(rate, limit):
    # from the HVP fuzzer (seed 60000330): the gradient pops the extended items'
    # cotangents and drops them (rt.list_pop for its effect); the tangent list must take
    # the same steps, or the first item's tangent is read for the last's (H was -0.22,
    # not 0: the result is linear in rate)
    items = [np.sum(SCALE), 5.0 ** math.sin(SCALE[-1] if rate < limit else rate)]
    while len(items) < 4:
        items.extend(SCALE * math.cos(SCALE[2]))
    last = items[-1]
    rate *= last
    return math.sin(SCALE[1]) * rate + last * last + items[1] * limit


@pytest.mark.parametrize("jit", [False, True])
def test_second_derivatives_through_cotangents_popped_and_dropped(jit):
    assert check_hvp(last_of_a_grown_list, (-0.187277, -1.732828), jit) == ("pass", "")
    assert check_hvp(last_of_a_grown_list, (0.4, -1.732828), jit) == ("pass", "")
