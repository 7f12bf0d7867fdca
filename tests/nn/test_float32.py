"""float32 models compile (``Dense.init``'s default dtype): the literals of ``relu``
and ``sigmoid`` keep float32 activations under Numba as NumPy 2 does, so the next
layer's ``x @ weight`` does not mix dtypes (which Numba refuses, and the model
used to run in Python without a word but ``ad.explain``).

Gradients are checked on the Numba path against the Python path (float32
activations on both), and against a float64 copy of the model whose own gradient
is checked against finite differences.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import nn
from s2s_ad.testing import check_grads


@dataclasses.dataclass(frozen=True)
class TwoLayers:
    hidden: nn.Dense
    readout: nn.Dense

    def __call__(self, x):
        return self.readout(self.hidden(x))


def squared_loss(model, inputs, targets):
    return nn.mean_squared_error(model(inputs), targets)


def _problem(dtype=None):
    """A 3 -> 5 (relu) -> 2 (sigmoid) model, Dense.init's default dtype unless given."""
    options = {} if dtype is None else {"dtype": dtype}
    model = TwoLayers(nn.Dense.init(3, 5, activation=nn.relu, seed=2, **options),
                      nn.Dense.init(5, 2, activation=nn.sigmoid, seed=3, **options))
    rng = np.random.default_rng(4)
    model = dataclasses.replace(model, hidden=dataclasses.replace(
        model.hidden, bias=rng.uniform(0.1, 0.3, 5).astype(model.hidden.weight.dtype)))
    inputs = rng.standard_normal((4, 3)).astype(model.hidden.weight.dtype)
    targets = rng.uniform(0.0, 1.0, (4, 2)).astype(model.hidden.weight.dtype)
    return model, inputs, targets


def _as_float64(model):
    return ad.map_leaves(lambda leaf: np.asarray(leaf, dtype=np.float64), model)


def test_dense_init_defaults_to_float32():
    model, inputs, _ = _problem()
    assert model.hidden.weight.dtype == model.readout.bias.dtype == np.float32
    assert model(inputs).dtype == np.float32  # NumPy 2: the literals are weak


def test_a_float32_model_is_compiled_and_its_gradient_is_right():
    model, inputs, targets = _problem()
    compiled = ad.differentiable(squared_loss, wrt=("model",), jit=True)  # Numba or an error
    value, grad = ad.value_and_gradient(compiled)(model, inputs, targets)
    assert all(how == "numba" for how, _ in compiled.status.values())
    assert "runs with Numba" in str(ad.explain(compiled, model, inputs, targets))
    assert all(leaf.dtype == np.float32 for leaf in _leaves(grad))

    in_python = ad.differentiable(squared_loss, wrt=("model",), jit=False)
    python_value, python_grad = ad.value_and_gradient(in_python)(model, inputs, targets)
    assert value == pytest.approx(python_value, rel=1e-6)
    reference = ad.gradient(ad.differentiable(squared_loss, wrt=("model",), jit=False))(
        _as_float64(model), inputs.astype(np.float64), targets.astype(np.float64))
    for mine, python, exact in zip(_leaves(grad), _leaves(python_grad), _leaves(reference),
                                   strict=True):
        np.testing.assert_allclose(mine, python, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(mine, exact, rtol=2e-4, atol=2e-6)


def test_the_float64_reference_matches_finite_differences():
    model, inputs, targets = _problem(np.float64)
    check_grads(squared_loss, model, inputs, targets, wrt=("model",), paths=("python",))


def _leaves(tree):
    found = []
    ad.map_leaves(lambda leaf: found.append(leaf) or leaf, tree)
    return found
