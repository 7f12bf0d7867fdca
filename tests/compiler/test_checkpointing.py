"""differentiable_function and recompute_in_pullback (SPEC section 5)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.testing import check_grads

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_spec_example_prints_what_the_spec_shows():
    out = subprocess.run([sys.executable, str(EXAMPLES / "checkpointing.py")],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    lines = out.splitlines()
    assert lines[:4] == ["Running original computation...", "  Computing square...",
                         "Running backpropagation...", "  Computing square..."]
    # d/dx cos(x)^2 = -2 cos(x) sin(x) = -sin(2x): the SPEC prints -sin(20) to the last
    # digit (-0.9129452507276277); 2 * cos(10) * -sin(10) rounds one unit lower with
    # this libm, in any order of the products.
    gradient = float(lines[4].removeprefix("Gradient = "))
    assert gradient == pytest.approx(-math.sin(20.0), rel=4e-16)
    assert lines[-1] == "path: numba"
    assert lines.count("  Applying the smooth layer...") == 2  # forward, then pullback


def test_a_differentiable_function_of_several_arguments():
    def product_vjp(a, b):
        return a * b, lambda v: (v * b, v * a)

    product = ad.differentiable_function(product_vjp)
    assert product(2.0, 5.0) == 10.0
    assert ad.gradient(product)(2.0, 5.0) == (5.0, 2.0)
    check_grads(lambda a, b: math.sin(product(a, b)) + a, 0.3, 0.7)


def test_a_user_vjp_may_call_the_transforms():
    def log_cosh(x):
        return math.log(math.cosh(x))

    stable = ad.differentiable_function(lambda x: (log_cosh(x), ad.pullback(log_cosh, x)))
    check_grads(lambda x: stable(x) * x, 0.8, paths=("python",))
    assert ad.explain(lambda x: stable(x) * x, 0.8).path == "python"  # a Python closure


def _residual_bytes(f, *args) -> int:
    """The bytes the forward run keeps for the pullback, argument arrays included."""
    memory = ad.explain(f, *args, memory=True).memory
    return memory.residual + memory.arguments


def layer_body(x, w):
    h = np.tanh(x * w)
    g = np.exp(-h * h)
    return np.sum(g * h)


layer_recomputed = ad.recompute_in_pullback(layer_body)


def plain(x, w):
    return layer_body(x, w) * 2.0


def checkpointed(x, w):
    return layer_recomputed(x, w) * 2.0


def test_recompute_in_pullback_keeps_less_and_gives_the_same_gradient():
    x, w = np.linspace(-1.0, 1.0, 1000), 0.6
    assert ad.gradient(checkpointed)(x, w)[1] == ad.gradient(plain)(x, w)[1]
    np.testing.assert_array_equal(ad.gradient(checkpointed)(x, w)[0],
                                  ad.gradient(plain)(x, w)[0])
    kept, full = _residual_bytes(checkpointed, x, w), _residual_bytes(plain, x, w)
    # plain keeps x, h, g (and more) of 8000 bytes each; checkpointed only x and w
    assert full >= 3 * 8000 and kept <= 8000 + 64, (kept, full)
    check_grads(checkpointed, x[:7], w)


def test_recompute_in_pullback_runs_side_effects_again(capsys):
    @ad.recompute_in_pullback
    def noisy(x):
        print("forward of noisy")
        return x * x

    ad.gradient(lambda x: noisy(x) + x, wrt=0)(3.0)
    assert capsys.readouterr().out.count("forward of noisy") == 2
