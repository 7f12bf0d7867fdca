"""Rules against NumPy's semantics: constructors with derivatives, stacked linalg, int
powers under Numba, list item kinds, kernel gradients given as tuples (issue 20,
items 7, 8, 9 and 13). Each is checked on the Python path (jit=False) and the Numba path (jit=True),
gradients against central finite differences of the original function.

* 13: a registered kernel gradient or a ``custom_grad`` returning one cotangent per
  input as a tuple (the SPEC's form) crashed in the pullback; None, lists and numbers are
  accepted, and a wrong count or shape is an error naming the kernel.
* 9: under Numba an int raised to an int power that may be negative (``2 ** -n``) was
  computed in int64 (0 instead of 0.5); a growing list whose first items are bools and
  later floats was typed as a list of bools (2.4 became True). Items are now converted
  to the join of every appended kind (bool < int < float).
* 8: ``np.linalg.det`` of a stack of matrices had a wrong gradient on the Python path,
  stacked ``inv`` and ``solve`` crashed in the pullback, and none compiled: the rules
  now follow NumPy over the stack dimensions on both paths (Numba's ``solve`` of stacks
  needs a 1-d ``b`` or one with ``A``'s stack; other forms are refused when compiled).
* 7: ``np.linspace(start, stop, num)`` and ``np.full(shape, value)`` were registered as
  constants (a zero gradient and a false ZeroDerivativeWarning). The audit of every rule
  is in test_rule_table.py (each parameter of each rule fed from a float argument).
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

PATHS = ("python", "numba")


def _no_zero_warning(fn, *args):
    """``fn``'s gradient on the Python path, which must not warn ZeroDerivativeWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ZeroDerivativeWarning)
        return ad.gradient(ad.differentiable(fn, jit=False))(*args)


# ---- item 7: linspace and full carry their float arguments' derivatives ------------------
def ramp_energy(t_start, t_stop):
    times = np.linspace(t_start, t_stop, 6)
    return np.sum(np.sin(times) * times)


def ramp_default_count(t_start, t_stop):
    return np.sum(np.linspace(t_start, t_stop) ** 2) / 50.0


def ramp_single_point(t_start, t_stop):
    return np.sum(np.linspace(t_start, t_stop, 1) ** 3)


def ramp_keyword_count(t_start, t_stop):
    return np.sum(np.exp(np.linspace(t_start, t_stop, num=3)))


def bias_grid(bias, weights):
    return np.sum(np.full(weights.shape, bias) * weights ** 2)


def row_tiled(row_bias, weights):
    return np.sum(np.tanh(np.full((3, 4), row_bias) + weights))


@pytest.mark.parametrize(("fn", "paths"), [
    (ramp_energy, PATHS), (ramp_default_count, ("python",)), (ramp_single_point, PATHS),
    (ramp_keyword_count, ("python",))])  # (Numba compiles are slow: a few suffice)
def test_linspace_endpoints_have_gradients(fn, paths):
    check_grads(fn, 0.3, 1.7, paths=paths)
    grads = _no_zero_warning(fn, 0.3, 1.7)
    assert fn is ramp_single_point or all(g != 0.0 for g in grads)


def test_full_value_has_a_gradient():
    weights = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    check_grads(bias_grid, 0.7, weights, paths=PATHS)
    assert _no_zero_warning(bias_grid, 0.7, weights)[0] == pytest.approx(np.sum(weights ** 2))


def test_full_broadcasts_an_array_value():
    weights = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    check_grads(row_tiled, np.array([0.1, -0.2, 0.3, 0.5]), weights, paths=PATHS)


def test_linspace_of_arrays_is_refused_at_its_line():
    def ramps(starts, stops):
        return np.sum(np.linspace(starts, stops, 4))

    with pytest.raises(ad.NonDifferentiableError, match="np.linspace: start and stop"):
        ad.gradient(ad.differentiable(ramps, jit=False))(np.zeros(2), np.ones(2))


# ---- item 13: gradients that return one cotangent per input, as a tuple -----------------------
@numba.njit(cache=True)
def _blend(base, detail):
    return 2.0 * base + detail * detail


@numba.njit(cache=True)
def _blend_grad(dy, saved):
    return (2.0 * dy, 2.0 * saved[1] * dy)  # the SPEC's form: one cotangent per input


@numba.njit(cache=True)
def _squash(signal):
    return np.tanh(signal)


@numba.njit(cache=True)
def _squash_grad(dy, saved):
    return (dy * (1.0 - np.tanh(saved[0]) ** 2),)  # a one-input kernel, as a 1-tuple


@pytest.fixture
def tuple_kernels():
    for name, fn, grad in (("blend", _blend, _blend_grad), ("squash", _squash, _squash_grad)):
        ad.register_kernel(name, "numpy", fn.py_func)
        ad.register_kernel(name, "numba", fn)
        ad.register_gradient(name, grad)
    yield
    for name in ("blend", "squash"):
        ad.unregister_gradient(name)
        ad.unregister_kernel(name, "numpy")
        ad.unregister_kernel(name, "numba")


def blended_energy(base, detail):
    return np.sum(ad.run_kernel("blend", base, detail) ** 2)


def squashed_energy(signal):
    return np.sum(ad.run_kernel("squash", signal * 1.5))


def test_kernel_gradient_returning_a_tuple(tuple_kernels):
    base, detail = np.array([0.5, -1.0, 0.25]), np.array([1.5, 2.0, -0.5])
    check_grads(blended_energy, base, detail, paths=PATHS)
    check_grads(squashed_energy, base, paths=PATHS)


def _with_gradient(name: str, grad_fn, fn, *args):
    """The gradient of ``fn`` on the Python path with ``grad_fn`` registered for ``name``
    (a plain function: Numba does not run it)."""
    ad.register_kernel(name, "numpy", lambda *inputs: sum(inputs))
    ad.register_kernel(name, "numba", numba.njit(lambda a, b: a + b))
    ad.register_gradient(name, grad_fn)
    try:
        return ad.gradient(ad.differentiable(fn, jit=False))(*args)
    finally:
        ad.unregister_gradient(name)
        for backend in ("numpy", "numba"):
            ad.unregister_kernel(name, backend)


def summed_pair(weights, bias):
    return np.sum(ad.run_kernel("pair_sum", weights, bias) * 3.0)


def test_kernel_gradient_none_list_and_numbers():
    weights = np.array([1.0, 2.0])
    grads = _with_gradient("pair_sum", lambda dy, saved: [dy, None], summed_pair, weights, 0.5)
    np.testing.assert_array_equal(grads[0], [3.0, 3.0])
    assert grads[1] == 0.0
    grads = _with_gradient("pair_sum", lambda dy, saved: (None, np.sum(dy)), summed_pair,
                           weights, 0.5)
    np.testing.assert_array_equal(grads[0], [0.0, 0.0])
    assert grads[1] == 6.0


def test_kernel_gradient_of_wrong_count_or_shape_names_the_kernel():
    weights = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match=r"gradient of kernel 'pair_sum' returns 1 cotangents "
                                         r"for 2 inputs"):
        _with_gradient("pair_sum", lambda dy, saved: (dy,), summed_pair, weights, 0.5)
    with pytest.raises(ValueError, match=r"gradient of kernel 'pair_sum' returns an array, "
                                         r"not a tuple of 2"):
        _with_gradient("pair_sum", lambda dy, saved: dy, summed_pair, weights, 0.5)
    with pytest.raises(ValueError, match=r"kernel 'pair_sum' returns a cotangent of shape "
                                         r"\(3,\) for input 0, which has shape \(2,\)"):
        _with_gradient("pair_sum", lambda dy, saved: (np.ones(3), 0.0), summed_pair, weights,
                       0.5)


@ad.custom_grad
def smooth_magnitude(level, save):
    save(level)
    return np.sqrt(level * level + 1.0), lambda dy, saved: (
        dy * saved[0] / np.sqrt(saved[0] ** 2 + 1.0),)


@ad.custom_grad
def weighted_norm(scale, weights, save):  # (the value's kind is the first input's)
    save(scale, weights)
    value = scale * np.sqrt(np.sum(weights ** 2))
    return value, lambda dy, saved: [dy * np.sqrt(np.sum(saved[1] ** 2)),
                                     dy * saved[0] * saved[1] / np.sqrt(np.sum(saved[1] ** 2))]


def smooth_loss(level):
    return smooth_magnitude(level) * 3.0


def norm_loss(weights, scale):
    return weighted_norm(scale, weights) ** 2


def test_custom_grad_returning_a_tuple():
    check_grads(smooth_loss, 0.7, paths=("python",))
    check_grads(norm_loss, np.array([0.3, -1.2, 0.8]), 1.5, paths=("python",))


@ad.custom_grad
def miscounted(scale, weights, save):
    return scale * np.sum(weights), lambda dy, saved: (dy,)


def miscounted_loss(weights, scale):
    return miscounted(scale, weights)


def test_custom_grad_of_wrong_count_names_the_function():
    with pytest.raises(ValueError, match="gradient of 'miscounted' returns 1 cotangents for 2"):
        ad.gradient(ad.differentiable(miscounted_loss, jit=False))(np.ones(2), 2.0)


# ---- item 9: ints under Numba: negative powers and lists of mixed kinds ------------------------
def halving_decay(rate, n_steps):
    return rate * 2 ** -n_steps


def shifted_power(rate, n_steps):
    return rate * 3 ** (n_steps - 3)


def builtin_power(rate, n_steps):
    return rate * pow(2, n_steps - 4) + rate * (n_steps + 1) ** 2


def inverse_square(rate, n_steps):
    return rate * n_steps ** -2


def flags_then_values(scale):
    readings = []
    readings.append(True)
    readings.append(False)
    readings.append(2.4 * scale)
    total = 0.0
    for reading in readings:
        total = total + reading * scale
    return total


def counts_then_values(scale, n_items):
    readings = []
    for k in range(n_items):
        if k < 2:
            readings.append(k > 0)
        elif k < 4:
            readings.append(k)
        else:
            readings.append(k * scale + 0.4)
    return np.sum(np.array(readings) * scale)


def _value_and_grads_match(fn, *args):
    """The Python path gives plain Python's value, the Numba path the same (check_grads
    compares the paths' values), and gradients agree with finite differences (the int
    arguments are not differentiated)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ad.IntegerArgumentWarning)
        value = ad.differentiable(fn, jit=False)(*args)
        assert value == pytest.approx(fn(*args), rel=1e-14), (fn.__name__, value)
        check_grads(fn, *args, paths=PATHS)


@pytest.mark.parametrize(("fn", "n_steps"), [
    (halving_decay, 1), (halving_decay, 3), (halving_decay, 0), (halving_decay, -2),
    (shifted_power, 2), (shifted_power, 0), (shifted_power, 5),
    (builtin_power, 2), (builtin_power, 6), (inverse_square, 2)])
def test_int_power_with_a_negative_exponent_is_a_float(fn, n_steps):
    _value_and_grads_match(fn, 1.5, n_steps)


def test_list_of_bools_then_floats_keeps_the_floats():
    _value_and_grads_match(flags_then_values, 1.25)
    value, _ = ad.value_with_pullback(ad.differentiable(flags_then_values, jit=True), 1.0)
    assert value == pytest.approx(3.4)


def test_list_of_bools_ints_then_floats():
    _value_and_grads_match(counts_then_values, 0.75, 6)


# ---- item 8: linear algebra over stacks of matrices ---------------------------------------------
def _stack_of_matrices(*stack: int, n: int = 3, seed: int = 0) -> np.ndarray:
    """Well-conditioned ``(*stack, n, n)`` matrices (diagonally dominant)."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 0.5, (*stack, n, n)) + n * np.eye(n)


def covariance_logdets(covariances):
    return np.sum(np.log(np.linalg.det(covariances)) * np.array([1.0, 2.0, 3.0]))


def det_energy(frames):
    return np.sum(np.linalg.det(frames) ** 2)


def inverse_energy(frames):
    return np.sum(np.linalg.inv(frames) ** 2 * np.arange(9.0).reshape(3, 3))


def solved_energy(frames, loads):
    return np.sum(np.linalg.solve(frames, loads) ** 2)


# Numba compiles of the stacked linalg loops are slow: one det case here (inv and solve
# of stacks are compiled in the rule table's Numba groups too)
@pytest.mark.parametrize(("fn", "shape", "paths"), [
    (covariance_logdets, (3,), PATHS), (det_energy, (3,), ("python",)),
    (det_energy, (2, 2), ("python",)), (inverse_energy, (3,), ("python",)),
    (inverse_energy, (2, 2), ("python",))])
def test_det_and_inv_of_a_stack(fn, shape, paths):
    check_grads(fn, _stack_of_matrices(*shape), paths=paths)


@pytest.mark.parametrize(("loads_shape", "paths"), [
    ((3, 3, 2), ("python",)), ((3,), PATHS), ((3, 3, 1), ("python",))])
def test_solve_of_a_stack(loads_shape, paths):
    loads = np.random.default_rng(1).uniform(-1.0, 1.0, loads_shape)
    check_grads(solved_energy, _stack_of_matrices(3), loads, paths=paths)


@pytest.mark.parametrize(("frames", "loads_shape"), [
    ((), (2, 3, 4)),  # one matrix, a stack of right-hand sides
    ((2,), (3, 2)),   # a stack of matrices, one right-hand side matrix (broadcast)
    ((2, 1), (3, 3, 2)),  # stacks broadcast against each other
])
def test_solve_with_broadcast_stacks_in_python(frames, loads_shape):
    loads = np.random.default_rng(2).uniform(-1.0, 1.0, loads_shape)
    check_grads(solved_energy, _stack_of_matrices(*frames), loads, paths=("python",))


def test_solve_with_broadcast_stacks_is_refused_by_numba():
    loads = np.ones((3, 2))
    with pytest.raises(ad.JitError, match="b must be 1-d or have as many dimensions as A"):
        ad.differentiable(solved_energy, jit=True)(_stack_of_matrices(2), loads)
    auto = ad.differentiable(solved_energy, jit="auto")
    value = auto(_stack_of_matrices(2), loads)
    assert value == pytest.approx(solved_energy(_stack_of_matrices(2), loads), rel=1e-13)
    assert ad.explain(auto).path == "python"
