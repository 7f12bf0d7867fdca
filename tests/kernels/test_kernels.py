"""The kernel and gradient registries (SPEC section 7): registration, override with a
warning, unregistration, missing kernels, backends, custom_grad, kernels without a
gradient, and differentiating registered ops in both paths."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import cli
from s2s_ad.kernels import KernelOp, conv2d, gradient_of
from s2s_ad.testing import check_grads


@numba.njit(cache=True)
def _softplus_numba(x):
    return np.log1p(np.exp(x))


@numba.njit(cache=True)
def _softplus_grad_numba(dy, saved):
    return dy / (1.0 + np.exp(-saved[0]))


def _softplus_numpy(x):
    return np.logaddexp(0.0, x)


@numba.njit(cache=True)
def zero_grad(dy, saved):
    return 0.0 * dy


CALLS = {"numpy": 0}


def _counting_softplus(x):
    CALLS["numpy"] += 1
    return _softplus_numpy(x)


@pytest.fixture
def softplus():
    """A user kernel "softplus" on both backends with a compiled gradient."""
    ad.register_kernel("softplus", "numpy", _counting_softplus)
    ad.register_kernel("softplus", "numba", _softplus_numba)
    ad.register_gradient("softplus", _softplus_grad_numba, inputs_to_save=[0])
    yield "softplus"
    ad.unregister_gradient("softplus")
    for backend in ("numpy", "numba"):
        ad.unregister_kernel("softplus", backend)


def softplus_loss(x):
    return np.sum(ad.run_kernel("softplus", x) * x)


def test_register_run_list_and_unregister():
    ad.register_kernel("triple", "numpy", lambda x: 3.0 * x)
    try:
        assert ("triple", "numpy") in ad.list_kernels()
        with ad.backend("numpy"):
            assert ad.run_kernel("triple", 2.0) == 6.0
    finally:
        ad.unregister_kernel("triple", "numpy")
    assert ("triple", "numpy") not in ad.list_kernels()
    with pytest.raises(LookupError, match="no kernel 'triple' for the active backend 'numpy'; "
                       "no backend has it"), ad.backend("numpy"):
        ad.run_kernel("triple", 2.0)
    with pytest.raises(KeyError, match="no kernel 'triple' is registered for backend 'numpy'"):
        ad.unregister_kernel("triple", "numpy")


def test_missing_kernel_names_the_backends_that_have_it():
    ad.register_kernel("only_numpy", "numpy", lambda x: x)
    try:
        with pytest.raises(LookupError, match="no kernel 'only_numpy' for the active backend "
                           "'numba'; it is registered for: numpy"), ad.backend("numba"):
            ad.run_kernel("only_numpy", 1.0)
    finally:
        ad.unregister_kernel("only_numpy", "numpy")


def test_bad_registrations_are_refused():
    with pytest.raises(ValueError, match="unknown backend 'cuda'; choose one of numpy, numba"):
        ad.register_kernel("k", "cuda", lambda x: x)
    with pytest.raises(TypeError, match="fn must be callable"):
        ad.register_kernel("k", "numpy", 3)
    with pytest.raises(TypeError, match="inputs_to_save holds input positions"):
        ad.register_gradient("k", lambda dy, saved: dy, inputs_to_save=["x"])
    with pytest.raises(ValueError, match="unknown backend"):
        ad.set_backend("tpu")


def test_set_backend_and_the_context_manager():
    start = ad.get_backend()
    try:
        ad.set_backend("numpy")
        assert ad.get_backend() == "numpy"
        with ad.backend("numba"):
            assert ad.get_backend() == "numba"
            with ad.backend("numpy"):
                assert ad.get_backend() == "numpy"
            assert ad.get_backend() == "numba"
        assert ad.get_backend() == "numpy"
    finally:
        ad.set_backend(start)


def test_the_python_path_runs_the_active_backends_kernel(softplus):
    x = np.linspace(-2.0, 2.0, 5)
    f = ad.differentiable(softplus_loss, jit=False)
    before = CALLS["numpy"]
    with ad.backend("numba"):
        numba_grad = ad.gradient(f)(x)
    assert CALLS["numpy"] == before
    with ad.backend("numpy"):
        numpy_grad = ad.gradient(f)(x)
    assert CALLS["numpy"] == before + 1
    np.testing.assert_allclose(numpy_grad, numba_grad, rtol=1e-12)


def test_a_registered_op_differentiates_in_both_paths(softplus):
    check_grads(softplus_loss, np.linspace(-2.0, 2.0, 7))
    explanation = str(ad.explain(softplus_loss, np.ones(3)))
    assert explanation.startswith("softplus_loss: runs with Numba"), explanation
    ad.differentiable(softplus_loss, jit=True)(np.ones(3))  # compiles, or raises


def test_built_in_ops_run_compiled():
    def conv_sum(x, w):
        return np.sum(conv2d(x, w, strides=(2, 2), padding="same"))
    x, w = np.ones((1, 4, 4, 2)), np.ones((3, 3, 2, 1))
    assert str(ad.explain(conv_sum, x, w)).startswith("conv_sum: runs with Numba")
    gx, gw = ad.gradient(ad.differentiable(conv_sum, jit=True))(x, w)
    # d sum / d w[i, j, c, 0] counts the outputs whose tap (i, j) falls inside the image.
    # "same": 2 outputs per axis, padding 0 before and 1 after; output p reads row
    # 2p + i, so taps 0 and 1 are inside twice, tap 2 once (row 4 is padding)
    per_axis = np.array([2.0, 2.0, 1.0])
    assert gw[:, :, 0, 0].tolist() == np.outer(per_axis, per_axis).tolist()
    assert gx.shape == x.shape


def test_a_python_gradient_falls_back_to_python_and_explain_says_why():
    ad.register_kernel("halve", "numpy", lambda x: 0.5 * x)
    ad.register_kernel("halve", "numba", numba.njit(lambda x: 0.5 * x))
    ad.register_gradient("halve", lambda dy, saved: 0.5 * dy, inputs_to_save=[])
    try:
        def f(x):
            return np.sum(ad.run_kernel("halve", x))
        assert ad.gradient(f)(np.ones(2)).tolist() == [0.5, 0.5]
        explanation = str(ad.explain(f, np.ones(2)))
        assert "runs with Python" in explanation
        assert "a Python object Numba cannot call" in explanation
        with pytest.raises(ad.JitError):
            ad.gradient(ad.differentiable(f, jit=True))(np.ones(2))
    finally:
        ad.unregister_gradient("halve")
        ad.unregister_kernel("halve", "numpy")
        ad.unregister_kernel("halve", "numba")


def test_a_kernel_without_a_numba_implementation_is_explained():
    ad.register_kernel("twice", "numpy", lambda x: 2.0 * x)
    ad.register_kernel("twice_grad", "numpy", lambda dy, saved: 2.0 * dy)
    ad.register_gradient("twice", KernelOp("twice_grad"), inputs_to_save=[])
    try:
        def f(x):
            return ad.run_kernel("twice", x)
        with ad.backend("numpy"):
            assert ad.gradient(f)(1.5) == 2.0
        explanation = str(ad.explain(f, 1.5))
        assert "kernel 'twice' has no 'numba' implementation (registered for: numpy)" \
            in explanation, explanation
    finally:
        ad.unregister_gradient("twice")
        ad.unregister_kernel("twice", "numpy")
        ad.unregister_kernel("twice_grad", "numpy")


def exp_loss(x):
    return np.sum(ad.run_kernel("exp_kernel", x))


def test_outputs_to_save_passes_the_output_to_the_gradient():
    ad.register_kernel("exp_kernel", "numpy", np.exp)
    ad.register_kernel("exp_kernel", "numba", numba.njit(lambda x: np.exp(x)))
    ad.register_gradient("exp_kernel", numba.njit(lambda dy, saved: dy * saved[0]),
                         inputs_to_save=[], outputs_to_save=True)
    try:
        check_grads(exp_loss, np.array([-1.0, 0.5, 2.0]))
    finally:
        ad.unregister_gradient("exp_kernel")
        ad.unregister_kernel("exp_kernel", "numpy")
        ad.unregister_kernel("exp_kernel", "numba")


def test_overriding_a_gradient_warns_and_takes_effect(softplus):
    x = np.array([0.0, 1.0])
    right = ad.gradient(softplus_loss)(x)
    with pytest.warns(UserWarning, match="a gradient of kernel 'softplus' was already "
                      "registered; 'zero_grad' replaces it"):
        ad.register_gradient("softplus", zero_grad, inputs_to_save=[0])
    # the kernel's part of d/dx sum(softplus(x) * x) is now zero: softplus(x) remains
    np.testing.assert_allclose(ad.gradient(softplus_loss)(x), _softplus_numpy(x), rtol=1e-12)
    with pytest.warns(UserWarning, match="already registered"):
        ad.register_gradient("softplus", _softplus_grad_numba, inputs_to_save=[0])
    np.testing.assert_array_equal(ad.gradient(softplus_loss)(x), right)


def test_overriding_a_built_in_gradient_warns():
    built_in = gradient_of("matmul")
    with pytest.warns(UserWarning, match="a gradient of kernel 'matmul' was already"):
        ad.register_gradient("matmul", built_in.grad_fn, built_in.inputs_to_save)
    assert gradient_of("matmul").grad_fn is built_in.grad_fn


def no_gradient_loss(x):
    return ad.run_kernel("no_gradient", x) * 2.0


def test_a_kernel_without_a_gradient_is_a_located_error():
    ad.register_kernel("no_gradient", "numpy", lambda x: x)
    try:
        with pytest.raises(ad.NonDifferentiableError) as info:
            ad.gradient(no_gradient_loss)(1.0)
    finally:
        ad.unregister_kernel("no_gradient", "numpy")
    line = no_gradient_loss.__code__.co_firstlineno + 1
    assert info.value.one_line == (
        f"{__file__}:{line}:12: error: kernel 'no_gradient' has no registered gradient")
    assert "ad.register_gradient('no_gradient', grad_fn)" in str(info.value)


def test_unregistered_and_unnamed_kernels_are_located_errors():
    def unknown(x):
        return ad.run_kernel("nowhere", x)
    with pytest.raises(ad.NonDifferentiableError,
                       match="kernel 'nowhere' is not registered for any backend"):
        ad.gradient(unknown)(1.0)

    def unnamed(a, b, name):
        return np.sum(ad.run_kernel(name, a, b))
    with pytest.raises(ad.NonDifferentiableError,
                       match="run_kernel needs the kernel's name as a string constant"):
        ad.gradient(unnamed)(np.eye(2), np.eye(2), "matmul")


@ad.custom_grad
def log1pexp(x, save):
    save(x)
    value = x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))
    return value, lambda dy, saved: dy / (1.0 + math.exp(-saved[0]))


def log1pexp_loss(x):
    return log1pexp(x) * math.sin(x)


def test_custom_grad_is_stable_and_right():
    assert log1pexp(1000.0) == 1000.0
    assert ad.gradient(lambda x: log1pexp(x))(1000.0) == 1.0  # exp(1000) would overflow
    check_grads(log1pexp_loss, 0.3, paths=("python",))
    check_grads(log1pexp_loss, -2.0, paths=("python",))
    assert "log1pexp_custom_grad" in str(ad.explain(log1pexp_loss, 0.3))


@ad.custom_grad
def scaled_product(x, y, save):
    save(x, y)
    return x * y, lambda dy, saved: (dy * saved[1], dy * saved[0])


def test_custom_grad_of_two_inputs():
    check_grads(lambda x, y: scaled_product(x, y) * math.cos(x), 0.7, -1.3, paths=("python",))


def test_cli_lists_kernels_and_check_reports_missing_gradients(tmp_path, capsys):
    assert cli.main(["kernels"]) == 0
    out = capsys.readouterr().out
    assert "conv2d" in out and "numpy, numba" in out
    assert cli.main(["kernels", "--help"]) == 0
    source = tmp_path / "ops_without_gradient.py"
    source.write_text(  # check runs only definitions: the kernel is registered here
        "import s2s_ad as ad\n"
        "\n"
        "@ad.differentiable\n"
        "def f(x: float):\n"
        "    return ad.run_kernel('cli_no_gradient', x)\n")
    capsys.readouterr()
    ad.register_kernel("cli_no_gradient", "numpy", lambda x: x)
    try:
        assert cli.main(["check", str(source)]) == 1
    finally:
        ad.unregister_kernel("cli_no_gradient", "numpy")
    out = capsys.readouterr().out
    assert ":5:12: error: kernel 'cli_no_gradient' has no registered gradient" in out, out
