"""Kernels in forward mode (SPEC sections 7 and 10): the tangent registry, the built-in
kernels' tangents (NumPy and Numba agree; jvp equals finite differences and agrees with
the pullback, <u, J v> = <J^T u, v>, on both paths and both backends), a user's kernel
with a user's tangent, and the refusal of a kernel without one."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.forward_mode import jvp_directions
from s2s_ad.kernels import conv2d, matmul, max_pool2d, softmax_cross_entropy
from s2s_ad.kernels import numba_kernels as nb
from s2s_ad.kernels import numpy_kernels as npk

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "compiler"))
from forward_checks import check_jvp  # noqa: E402  (tests/compiler's shared checks)

WINDOWS = [((1, 1), "valid"), ((2, 1), "same"), ((2, 2), "valid"), ((3, 2), "same")]
PATHS = [(False, "numpy"), (False, "numba"), (True, "numba")]  # (jit, backend)


def _inner(a, b) -> float:
    return math.fsum(np.ravel(np.asarray(a) * np.asarray(b)))


# -- the kernels themselves -----------------------------------------------------------------
@pytest.mark.parametrize("strides,padding", WINDOWS)
def test_max_pool2d_tangent_kernels_agree_and_transpose_the_gradient_at_ties(strides, padding):
    rng = np.random.default_rng(1)
    image = np.round(rng.normal(size=(2, 5, 6, 3)))  # many ties inside each window
    direction = rng.normal(size=image.shape)
    tangent = npk.max_pool2d_tangent((image,), (direction,), (3, 2), strides, padding)
    np.testing.assert_array_equal(
        nb.max_pool2d_tangent((image,), (direction,), (3, 2), strides, padding), tangent)
    weights = rng.normal(size=tangent.shape)
    for grad in (npk.max_pool2d_grad, nb.max_pool2d_grad):  # the same argmax, ties included
        cotangent = grad(weights, (image,), (3, 2), strides, padding)
        assert _inner(weights, tangent) == pytest.approx(_inner(cotangent, direction),
                                                         rel=1e-12, abs=1e-12)


def test_softmax_cross_entropy_tangent_kernels_agree_with_the_gradient():
    rng = np.random.default_rng(2)
    logits, labels = 3.0 * rng.normal(size=(6, 4)), rng.integers(0, 4, size=6)
    direction = rng.normal(size=logits.shape)
    tangent = npk.softmax_cross_entropy_tangent((logits, labels), (direction, None))
    assert nb.softmax_cross_entropy_tangent((logits, labels), (direction, None)) == \
        pytest.approx(tangent, rel=1e-12)
    grad = npk.softmax_cross_entropy_grad(1.0, (logits, labels))[0]
    assert tangent == pytest.approx(_inner(grad, direction), rel=1e-12)


def test_the_built_in_kernels_have_tangents():
    tangents = ad.list_tangents()
    assert tangents["matmul"].linear_in == tangents["conv2d"].linear_in == (0, 1)
    for name in ("max_pool2d", "softmax_cross_entropy"):
        assert tangents[name].tangent_fn.name == f"{name}_tangent"
        assert {("numpy", name), ("numba", name)} <= {
            (b, k.removesuffix("_tangent")) for k, b in ad.list_kernels() if
            k == f"{name}_tangent"}
    table = "\n".join(ad.kernels.kernel_table())  # what s2s-ad kernels prints
    assert "linear in 0, 1" in table and "max_pool2d_tangent" in table


# -- forward mode through them --------------------------------------------------------------
def feature_maps(image, filters):
    responses = conv2d(image, filters, strides=(2, 1), padding="same")
    return max_pool2d(np.tanh(responses), (2, 2), (1, 1), "same")


def class_loss(features, weights, labels):
    return softmax_cross_entropy(np.sin(matmul(features, weights)), labels)


def _inputs():
    rng = np.random.default_rng(3)
    return {"feature_maps": (feature_maps, (rng.normal(size=(2, 5, 4, 2)),
                                            rng.normal(size=(3, 2, 2, 3)))),
            "class_loss": (class_loss, (rng.normal(size=(4, 3)), rng.normal(size=(3, 5)),
                                        np.array([0, 4, 2, 2])))}


@pytest.mark.parametrize("jit,backend", PATHS)
@pytest.mark.parametrize("case", ["feature_maps", "class_loss"])
def test_jvp_through_the_built_in_kernels(case, jit, backend):
    fn, args = _inputs()[case]
    with ad.backend(backend):
        status, detail = check_jvp(fn, args, jit, case)
    assert status == "pass", detail


@pytest.mark.parametrize("jit", [False, True])
def test_forward_and_reverse_jacobians_agree_through_conv2d(jit):
    _, (image, filters) = _inputs()["feature_maps"]
    df = ad.differentiable(feature_maps, jit=jit)
    for wrt in ("image", "filters"):
        forward = ad.jacobian(df, wrt=wrt, mode="forward")(image, filters)
        reverse = ad.jacobian(df, wrt=wrt, mode="reverse")(image, filters)
        assert forward.shape == feature_maps(image, filters).shape + locals()[wrt].shape
        np.testing.assert_allclose(forward, reverse, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["feature_maps", "class_loss"])
def test_several_directions_through_the_kernels_equal_one_jvp_each(case):
    fn, args = _inputs()[case]
    rng = np.random.default_rng(4)
    directions = tuple(rng.normal(size=(3,) + a.shape) if a.dtype.kind == "f" else None
                       for a in args)
    df = ad.differentiable(fn, jit=False)
    _, tangents = jvp_directions(df, args, directions)
    for j in range(3):
        _, tangent = ad.jvp(df, args, tuple(d if d is None else d[j] for d in directions))
        np.testing.assert_allclose(tangents[j], tangent, rtol=1e-12, atol=1e-12)


def test_the_generated_tangent_code_calls_the_kernel_once_per_input():
    _, (image, filters) = _inputs()["feature_maps"]
    text = ad.source(conv2d, image, filters, mode="forward")
    assert "# tangent of line" in text
    tangent_line = next(line for line in text.splitlines() if "t_result =" in line)
    assert tangent_line.count("conv2d_kernel_") == 2 and "(t_x, w," in tangent_line and \
        "(x, t_w," in tangent_line
    assert "max_pool2d_tangent_" in ad.source(max_pool2d, image, mode="forward")


# -- a user's kernel --------------------------------------------------------------------------
@numba.njit(cache=True)
def _softplus_numba(x, scale):
    return scale * np.log1p(np.exp(x))


@numba.njit(cache=True)
def _softplus_tangent_numba(inputs, tangents):
    x, scale = inputs
    t_x, t_scale = tangents
    return scale * t_x / (1.0 + np.exp(-x)) + t_scale * np.log1p(np.exp(x))


@numba.njit(cache=True)
def _softplus_gradient(dy, saved):
    x, scale = saved
    return scale * dy / (1.0 + np.exp(-x)), np.sum(dy * np.log1p(np.exp(x)))


def smooth_response(signal, gain):
    return np.sum(np.cos(ad.run_kernel("scaled_softplus", signal, gain)))


@pytest.fixture
def scaled_softplus():
    ad.register_kernel("scaled_softplus", "numpy", lambda x, scale: scale * np.logaddexp(0, x))
    ad.register_kernel("scaled_softplus", "numba", _softplus_numba)
    ad.register_gradient("scaled_softplus", _softplus_gradient)
    yield
    for backend in ("numpy", "numba"):
        ad.unregister_kernel("scaled_softplus", backend)
    ad.unregister_gradient("scaled_softplus")
    if "scaled_softplus" in ad.list_tangents():
        ad.unregister_tangent("scaled_softplus")


@pytest.mark.parametrize("jit,backend", PATHS)
def test_a_users_kernel_with_a_users_tangent(scaled_softplus, jit, backend):
    ad.register_tangent("scaled_softplus", _softplus_tangent_numba)
    signal, gain = np.array([0.3, -1.2, 2.0]), 0.7
    with ad.backend(backend):
        status, detail = check_jvp(smooth_response, (signal, gain), jit, "softplus")
        assert status == "pass", detail
        # a float input without a tangent gets a zero one
        _, only_signal = ad.jvp(ad.differentiable(smooth_response, jit=jit),
                                (signal, gain), (np.ones(3), None), wrt="signal")
    np.testing.assert_allclose(only_signal, np.sum(ad.gradient(smooth_response)(signal, gain)[0]),
                               rtol=1e-12)


def test_a_kernel_without_a_tangent_is_refused_at_its_line(scaled_softplus):
    df = ad.differentiable(smooth_response, jit=False)
    assert ad.gradient(df)(np.ones(2), 2.0)[1] != 0.0  # reverse mode has its gradient
    with pytest.raises(NonDifferentiableError) as refused:
        ad.jvp(df, (np.ones(2), 2.0), (np.ones(2), 0.0))
    message = str(refused.value)
    assert "kernel 'scaled_softplus' has no registered tangent" in message
    assert "ad.register_tangent('scaled_softplus'" in message
    assert refused.value.location.lineno == smooth_response.__code__.co_firstlineno + 1


def test_a_linear_in_registration_refuses_a_tangent_of_another_input(scaled_softplus):
    ad.register_tangent("scaled_softplus", linear_in=(1,))  # linear in the gain only
    df = ad.differentiable(smooth_response, jit=False)
    _, tangent = ad.jvp(df, (np.ones(2), 2.0), (None, 0.5), wrt="gain")
    assert tangent == pytest.approx(0.5 * ad.gradient(df)(np.ones(2), 2.0)[1], rel=1e-12)
    with pytest.raises(NonDifferentiableError, match="linear in input.s. 1, but a tangent "
                                                     "reaches input 0"):
        ad.jvp(df, (np.ones(2), 2.0), (np.ones(2), 0.0))


def test_register_tangent_checks_its_arguments(scaled_softplus):
    with pytest.raises(TypeError, match="give either tangent_fn or linear_in"):
        ad.register_tangent("scaled_softplus")
    with pytest.raises(TypeError, match="tangent_fn must be callable"):
        ad.register_tangent("scaled_softplus", 3.0)
    ad.register_tangent("scaled_softplus", _softplus_tangent_numba)
    with pytest.warns(UserWarning, match="already registered"):
        ad.register_tangent("scaled_softplus", linear_in=(1,))
    ad.unregister_tangent("scaled_softplus")
    with pytest.raises(KeyError, match="no tangent is registered"):
        ad.unregister_tangent("scaled_softplus")


def test_forward_mode_compiles_where_only_the_gradient_cannot(scaled_softplus):
    # the gradient is Python, the tangent a Numba function: the jvp code never calls
    # the gradient, so it compiles (jit=True raises JitError otherwise)
    with pytest.warns(UserWarning, match="already registered"):
        ad.register_gradient("scaled_softplus", lambda dy, saved: (dy, None))
    ad.register_tangent("scaled_softplus", _softplus_tangent_numba)
    df = ad.differentiable(smooth_response, jit=True)
    signal = np.array([0.3, -1.2])
    _, tangent = ad.jvp(df, (signal, 0.7), (np.ones(2), 0.0))
    expected = -np.sum(np.sin(_softplus_numba(signal, 0.7)) * 0.7 / (1.0 + np.exp(-signal)))
    assert tangent == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ad.JitError):
        ad.gradient(df)(signal, 0.7)


def test_diagnose_notes_a_kernel_without_a_tangent(scaled_softplus):
    notes = [d for d in ad.diagnose(smooth_response, np.ones(2), 2.0) if d.severity == "note"]
    assert len(notes) == 1 and notes[0].line == smooth_response.__code__.co_firstlineno + 1
    assert "kernel 'scaled_softplus' has no registered tangent" in notes[0].message
    ad.register_tangent("scaled_softplus", _softplus_tangent_numba)
    assert not [d for d in ad.diagnose(smooth_response, np.ones(2), 2.0) if d.severity == "note"]
