"""The s2s_ad.nn examples run as scripts and show what SPEC section 6 promises.

They use the default disk cache of generated and compiled code: compiling the
CNN example's gradient from nothing takes about a minute of CPU, a rerun seconds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, *args: str) -> str:
    env = dict(os.environ, PYTHONWARNINGS="error")
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _blocks(lines: list[str], header: str) -> list[list[str]]:
    """The lines after each line starting with ``header``, up to the next such line."""
    blocks: list[list[str]] = []
    for line in lines:
        if line.startswith(header):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    return blocks


def _numbers(lines: list[str]) -> list[float]:
    text = " ".join(line.split("=", 1)[-1] for line in lines)
    return [float(v) for v in re.findall(r"-?\d+\.\d*(?:e[-+]\d+)?", text)]


@pytest.mark.slow  # whole-CNN Numba compiles: the slow tier (README, Tests)
def test_checkpointed_cnn_recomputes_the_convolution_once_per_step():
    lines = run_example("checkpointed_cnn.py").splitlines()
    steps = _blocks(lines, "Step ")
    assert [s[0] for s in steps] == [f"Step {k}" for k in range(1, 6)]
    losses = []
    for block in steps:
        # once in the forward run, once when backpropagation recomputes it
        assert block[1:] == ["Applying Conv2D layer...", "Applying Conv2D layer...",
                             block[3]], block
        losses.append(float(re.fullmatch(r"Loss: (\S+)", block[3]).group(1)))
    assert losses[4] < losses[0], losses


def test_xor_mlp_prints_hooked_cotangents_and_its_loss_falls():
    lines = run_example("xor_mlp.py").splitlines()
    steps = _blocks(lines, "step ")
    assert len(steps) == 10
    losses = []
    for k, block in enumerate(steps, 1):
        losses.append(float(re.fullmatch(rf"step {k}: loss = (\S+)", block[0]).group(1)))
        # hooks run in reverse program order: the output's cotangent first
        assert block[1].startswith("dL/dy_hat = [") and len(_numbers(block[1:2])) == 4, block
        assert block[2].startswith("dL/dlayer1 = [[") and len(_numbers(block[2:])) == 40, block
    assert losses[-1] < losses[0], losses


@pytest.mark.slow
def test_mnist_like_cnn_reaches_its_stated_accuracy():
    lines = run_example("mnist_like.py").splitlines()
    epochs = [line for line in lines if line.startswith("epoch ")]
    assert len(epochs) == 4, lines
    accuracy = float(re.search(r"test accuracy ([\d.]+)%", epochs[-1]).group(1))
    # the docstring states 95.8% on scikit-learn's digits, 99-100% on the synthetic set
    assert accuracy >= 95.0, lines
