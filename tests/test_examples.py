"""The examples run as scripts and print exactly what SPEC §2 and §3 show.

Expected numbers are computed here from their derivations, not pasted.
"""

import ctypes
import ctypes.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str, tmp_path: Path, users_optimisation: bool = False) -> str:
    """``users_optimisation``: at Numba's own optimisation level, not the tests' level 0."""
    env = dict(os.environ, S2S_AD_CACHE_DIR=str(tmp_path / "cache"), PYTHONWARNINGS="error")
    if users_optimisation:
        env.pop("NUMBA_OPT", None)
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_custom_derivative_of_a_c_function(tmp_path):
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.pow.restype, libm.pow.argtypes = ctypes.c_double, [ctypes.c_double] * 2
    # silly_exp(x) = pow(e, x); its registered pullback is v -> v * y, so the
    # gradient at 3 is y = pow(e, 3) itself; the forward prints once per run.
    y = libm.pow(math.e, 3.0)
    taking = f"Taking e({math.e}) to the power of 3.0!"
    assert run_example("custom_derivative.py", tmp_path).splitlines() == [
        taking, f"exp(3) = {y}", taking, f"grad exp(3) = {y}"]


def test_stopping_and_editing_derivatives(tmp_path):
    # g: d/dx sin(sin(sin x)) = cos(sin(sin x)) cos(sin x) cos x; y is cut: 0.0.
    x = 2.0
    dx = math.cos(math.sin(math.sin(x))) * math.cos(math.sin(x)) * math.cos(x)
    # body: d+/dsin is 1; d log(x)/dx = 1/30 before the hook rewrites it to 0.5;
    # the gradient is cos(30) * 1 + 0.5.  Hooks run in reverse program order.
    expected = [str((dx, 0.0)),
                f"dlog/dx = {1 / 30.0}, but rewritten to 0.5",
                "d+/dsin = 1.0",
                str(math.cos(30.0) + 0.5)]
    assert run_example("derivative_surgery.py", tmp_path).splitlines() == expected


@pytest.mark.parametrize("name", ["demo.py"])
def test_demo_shows_gradient_source_and_warning(name, tmp_path):
    env = dict(os.environ, S2S_AD_CACHE_DIR=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"gradient f(1, 2) = {(2.0 + 2.0 * math.cos(1.0), math.sin(1.0))}" in done.stdout
    assert "def f_pullback(residuals, d_value):" in done.stdout
    assert "# adjoint of line" in done.stdout
    assert "runs with Numba" in done.stdout
    lines = (EXAMPLES / name).read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "round(quantity)" in text)
    col = lines[line - 1].index("round(") + 1
    assert "ZeroDerivativeWarning" in done.stderr
    assert f"demo.py:{line}:{col}: the result of rounded_price" in done.stderr


def test_custom_op(tmp_path):
    # loss = sum(softplus(x)); softplus' = sigmoid, on both backends; the straight-through
    # override passes dy = 1 through; d/dx 2 log(1 + e^x) = 2 sigmoid(x): 2 at x = 1000,
    # 0 (2 e^-1000 underflows) at x = -1000, where log(1 + e^-1000) is 0 in floats.
    sigmoid = [f"{1.0 / (1.0 + math.exp(-v)):.6f}" for v in (-1.0, 0.0, 2.0)]
    # at level 0 (conftest's NUMBA_OPT), Numba 0.68 will not cache generated code calling a
    # kernel of the user's compiled with cache=True ("uses dynamic globals"): a warning
    # this run makes an error, which users (at Numba's own level) never see
    assert run_example("custom_op.py", tmp_path, users_optimisation=True).splitlines() == [
        f"gradient, numba backend: [{', '.join(sigmoid)}]",
        "loss: runs with Numba (Numba compiled it for (array(float64, 1d, C)))",
        f"gradient, numpy backend: [{', '.join(sigmoid)}]",
        "backend in the block: numpy",
        "backend after it: numba",
        "warning: a gradient of kernel 'softplus' was already registered; "
        "'straight_through' replaces it",
        "gradient, overridden: [1.000000, 1.000000, 1.000000]",
        "2 log1pexp(1000.0) = 2000.0, derivative = 2.0",
        "2 log1pexp(-1000.0) = 0.0, derivative = 0.0",
    ]


@pytest.mark.slow  # compiles the gradient code and its tangent with Numba (about 30 s)
def test_trust_ncg_with_hvp_fits_the_ode_in_fewer_iterations_than_lbfgs(tmp_path):
    import re

    lines = run_example("ode_fit_trust_region.py", tmp_path).splitlines()
    fits = [re.search(r"misfit (\S+), (\d+) iterations", line) for line in lines]
    (newton, quasi), far = [f for f in fits if f][:2], [f for f in fits if f][2]
    assert float(newton.group(1)) == pytest.approx(float(quasi.group(1)), rel=1e-8)
    assert int(newton.group(2)) < int(quasi.group(2))
    assert float(far.group(1)) == pytest.approx(float(newton.group(1)), rel=1e-8)
    assert "symmetric to" in lines[-1]


def test_newton_on_the_bratu_system(tmp_path):
    """Newton's residual norms fall quadratically (|F_k+1| <= C |F_k|^2 until rounding,
    C bounded by |J^-1| |F''|: 100 is ample here), the forward-mode Jacobian equals the
    tridiagonal one by hand, and the solution is the exact one up to O(h^2) = O(1e-3)."""
    lines = run_example("newton_system.py", tmp_path).splitlines()
    norms = [float(line.split("= ")[1]) for line in lines if line.startswith("iteration")]
    assert norms[-1] < 1e-9 and len(norms) <= 6
    for before, after in zip(norms[:-1], norms[1:], strict=True):
        assert after < before and (after < 1e-10 or after <= 100.0 * before ** 2)
    assert float(lines[-2].split("= ")[1]) < 1e-9
    assert float(lines[-1].split("= ")[1].split()[0]) < 1e-3


def test_forward_sensitivities_of_a_simulation(tmp_path):
    """d I(t)/d (beta, gamma, i0) by jvp agree with central differences (to their
    truncation, ~1e-10 here) and with the Jacobian by reverse mode (to rounding)."""
    lines = run_example("sensitivities.py", tmp_path).splitlines()
    assert lines[0].startswith("SIR by RK4, 400 steps: 3 parameters, 401 outputs")
    assert [line.split("/ d")[1].split("=")[0].strip() for line in lines[1:4]] == \
        ["beta", "gamma", "i0"]
    assert float(lines[4].split()[-1]) < 1e-6 and float(lines[5].split()[-1]) < 1e-12
    assert lines[6].endswith("gives the same columns: True")


@pytest.mark.slow  # two fits, each compiled (one with Numba's parallel=True)
def test_parallel_fit_takes_the_same_steps_as_the_serial_fit(tmp_path):
    lines = run_example("parallel_fit.py", tmp_path).splitlines()
    serial = next(line for line in lines if line.startswith("serial:")).split(",")
    parallel = next(line for line in lines if line.startswith("parallel:")).split(",")
    assert serial[:2] == parallel[:2]  # the same iterations and the same nll (6 digits)
    assert "means found: -2.00 1.50" in lines[-2]
    assert float(lines[-1].rsplit(" ", 1)[1]) < 1e-8
