"""Benchmark problems: scalar, loop-heavy Python that tracing frameworks find hard.

Each problem is written once as plain Python (floats, ints, ``math``, loops,
branches, calls).  That function is the primal, the input of s2s_ad, and the
input of autograd, which traces plain Python too.  The JAX and PyTorch versions
live in ``peers.py``; they compute the same numbers with each framework's
idioms.  ``PROBLEMS`` lists, per problem, the function, the differentiated
arguments, the integer size argument, and which Python features it exercises.

Parameters are chosen so every gradient is well conditioned for the sizes the
suite runs (no chaos, no overflow): tools that evaluate in a different order
must still agree to 1e-8 relative.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from gmm import gmm_data, gmm_objective  # noqa: E402  (the example is the one definition)

# --------------------------------------------------------------------------------------
# 1. Damped nonlinear (Duffing) oscillator, explicit Euler, loss = mean x^2.
#    Exercises: for-range, a call to another Python function.
# --------------------------------------------------------------------------------------


def duffing_force(x, v, k, c, a):
    return -k * x - c * v - a * x * x * x


def oscillator(k, c, a, n):
    x = 1.0
    v = 0.0
    dt = 0.01
    loss = 0.0
    for _ in range(n):
        acc = duffing_force(x, v, k, c, a)
        x = x + dt * v
        v = v + dt * acc
        loss = loss + x * x
    return loss / n


# --------------------------------------------------------------------------------------
# 2. Rosenbrock chain: sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2 where the points
#    x_i come from a recurrence driven by two parameters, carried in scalars.
#    Exercises: for-range, math.sin / math.cos, int -> float.
# --------------------------------------------------------------------------------------


def rosenbrock_chain(p, q, n):
    x = p
    total = 0.0
    for i in range(n):
        x_next = p + q * math.sin(x) + 0.1 * math.cos(0.001 * i)
        total = total + 100.0 * (x_next - x * x) ** 2 + (1.0 - x) ** 2
        x = x_next
    return total / n


# --------------------------------------------------------------------------------------
# 3. Kepler's equation E - e sin(E) = M solved by Newton's method for n mean
#    anomalies; a while loop with a data-dependent trip count inside a for loop.
#    Exercises: nested loops, while, break, math.fabs.
# --------------------------------------------------------------------------------------


def kepler(e, m0, n):
    total = 0.0
    for i in range(n):
        m = m0 + 0.001 * i
        big_e = m
        it = 0
        while it < 50:
            step = (big_e - e * math.sin(big_e) - m) / (1.0 - e * math.cos(big_e))
            big_e = big_e - step
            it += 1
            if math.fabs(step) < 1e-12:
                break
        total = total + math.cos(big_e)
    return total / n


# --------------------------------------------------------------------------------------
# 4. Logistic-map style recurrence with a branch per step: the update and the loss
#    term both depend on which side of 1/2 the state is.
#    Exercises: if/else inside a loop, continue.
# --------------------------------------------------------------------------------------


def logistic_branches(r, w, n):
    x = 0.3
    loss = 0.0
    for _ in range(n):
        x_new = r * x * (1.0 - x)
        if x_new > 0.5:
            loss = loss + w * (x_new - 0.5) ** 2
            x = x_new - 0.01 * w * (x_new - 0.5)
            continue
        loss = loss + math.exp(-w * x_new)
        x = x_new
    return loss / n


# --------------------------------------------------------------------------------------
# A 30-line scalar function, for the cold-start figure only (run.py, cold_starts): a
# projectile with quadratic drag and wind, integrated with Heun's method, bouncing off
# the ground, with a loss on where it lands and how fast it arrives.
# --------------------------------------------------------------------------------------


def drag_acceleration(vx, vy, wind, drag):
    rel = vx - wind
    speed = math.sqrt(rel * rel + vy * vy)
    return -drag * speed * rel, -9.81 - drag * speed * vy


def projectile(angle, speed, drag, wind, n):
    dt = 0.01
    x = 0.0
    y = 1.0
    vx = speed * math.cos(angle)
    vy = speed * math.sin(angle)
    bounces = 0
    for _ in range(n):
        ax, ay = drag_acceleration(vx, vy, wind, drag)
        px = x + dt * vx
        py = y + dt * vy
        pvx = vx + dt * ax
        pvy = vy + dt * ay
        bx, by = drag_acceleration(pvx, pvy, wind, drag)
        x = x + 0.5 * dt * (vx + pvx)
        y = y + 0.5 * dt * (vy + pvy)
        vx = vx + 0.5 * dt * (ax + bx)
        vy = vy + 0.5 * dt * (ay + by)
        if y < 0.0:
            y = -y
            vy = -0.7 * vy
            bounces += 1
            if bounces > 3:
                break
        elif py > 50.0:
            vy = vy - 0.1 * (py - 50.0)
        if px > 40.0:
            vx = -0.5 * vx
    miss = x - 20.0
    arrival = math.hypot(vx, vy)
    return miss * miss + 0.01 * arrival * arrival + 0.1 * math.exp(-y)


@dataclass(frozen=True)
class Problem:
    """One benchmark problem: ``fn(*params, n)`` with ``params`` differentiated."""

    name: str
    fn: Callable
    params: tuple[float, ...]
    features: str
    sizes: tuple[int, ...] = field(default=(1_000, 100_000))

    def args(self, n: int) -> tuple:
        return (*self.params, n)


PROBLEMS = [
    Problem("oscillator", oscillator, (1.0, 0.1, 0.5),
            "for-range, call to a helper"),
    Problem("rosenbrock_chain", rosenbrock_chain, (0.6, 0.3),
            "for-range, sin/cos, ** 2"),
    Problem("kepler", kepler, (0.3, 0.2),
            "while (Newton) nested in for, break"),
    Problem("logistic_branches", logistic_branches, (2.9, 0.7),
            "if/else per step, continue, exp"),
]


# ======================================================================================
# Array problems: NumPy arrays in, a float out; the gradient is taken with respect to
# the arrays named in ``wrt``.  Copied from tests/test_workloads.py (the loop form
# of GMM that s2s_ad compiles), with the ADBench/benchmark sizes.
# ======================================================================================


# --------------------------------------------------------------------------------------
# 5. ADBench Gaussian mixture objective, written with index loops (the C++ formulation).
#    Exercises: 2-D indexing, item writes (+=) into scratch arrays in nested loops,
#    math.exp/log/lgamma, a running max with if.  Defined once, in examples/gmm.py
#    (imported at the top of this module).
# --------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------
# 6. A one-hidden-layer MLP with a softmax cross-entropy loss, vectorised.
#    Exercises: @, broadcasting (+ bias), np.maximum, np.max/np.exp/np.log/np.sum over
#    axis=1 with keepdims, np.mean.
# --------------------------------------------------------------------------------------


def mlp_loss(w1, b1, w2, b2, inputs, labels):
    hidden = np.maximum(inputs @ w1 + b1, 0.0)
    logits = hidden @ w2 + b2
    top = np.max(logits, axis=1, keepdims=True)
    lse = top + np.log(np.sum(np.exp(logits - top), axis=1, keepdims=True))
    picked = np.sum(labels * logits, axis=1, keepdims=True)
    return np.mean(lse - picked)


def mlp_data(batch=256, inputs=64, hidden=128, classes=10, seed=3) -> tuple:
    rng = np.random.default_rng(seed)
    w1 = rng.normal(0.0, 1.0 / math.sqrt(inputs), (inputs, hidden))
    b1 = rng.normal(0.0, 0.1, hidden)
    w2 = rng.normal(0.0, 1.0 / math.sqrt(hidden), (hidden, classes))
    b2 = rng.normal(0.0, 0.1, classes)
    x = rng.normal(0.0, 1.0, (batch, inputs))
    labels = np.eye(classes)[rng.integers(0, classes, batch)]
    return w1, b1, w2, b2, x, labels


# --------------------------------------------------------------------------------------
# 7-10. Array-indexed loops, written as a Numba user writes them (the peers get the
#    vectorised formulation, peers.py).  Exercises: items read at i - 1, i, i + 1;
#    2-D indexing; a loop-carried accumulator over an inner index loop.
# --------------------------------------------------------------------------------------


def smooth_energy(x, lam):
    """A 1-D second-difference smoothness energy (a three-point stencil)."""
    e = 0.0
    for i in range(1, x.shape[0] - 1):
        d2 = x[i - 1] - 2.0 * x[i] + x[i + 1]
        e += lam * d2 * d2 + (x[i] - 1.0) ** 2
    return e


def rosenbrock_index(x):
    """The extended Rosenbrock function with an index loop."""
    total = 0.0
    for i in range(x.shape[0] - 1):
        total += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return total


def stencil_2d(u, kappa):
    """A 2-D five-point Laplacian energy plus a double-well term on the interior."""
    e = 0.0
    for i in range(1, u.shape[0] - 1):
        for j in range(1, u.shape[1] - 1):
            lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
            well = u[i, j] * u[i, j] - 1.0
            e += kappa * lap * lap + well * well
    return e


def dense_loops(w, b, x, y):
    """A tanh dense layer and a squared loss, written with loops."""
    loss = 0.0
    for n in range(x.shape[0]):
        for o in range(w.shape[0]):
            acc = b[o]
            for i in range(w.shape[1]):
                acc += w[o, i] * x[n, i]
            err = math.tanh(acc) - y[n, o]
            loss += err * err
    return loss


# --------------------------------------------------------------------------------------
# 11. The ADBench LSTM objective: a stacked LSTM with diagonal weights over a sequence
#    of characters (one row of bits each), predicting each next character with a
#    log-softmax (ADBench adds 2 inside the logsumexp).  Written as a Numba user
#    writes it: loops over time steps, layers and bits, the state in a scratch copy.
#    Exercises: a helper function, overwritten items of a scratch array (restores),
#    exp/tanh, a loop-carried accumulator.
# --------------------------------------------------------------------------------------


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def lstm_objective(main_params, extra_params, state, sequence):
    """ADBench's ``lstm_objective``: ``main_params`` (2 layers, 4 b) holds each layer's
    weight and bias rows (forget, input, output gate, change), ``extra_params`` (3, b)
    the input weight, output weight and output bias, ``state`` (2 layers, b) each
    layer's hidden and cell state, ``sequence`` (c, b) the characters' bits."""
    layers = state.shape[0] // 2
    b = sequence.shape[1]
    c = sequence.shape[0]
    s = state.copy()
    x = np.empty(b)
    ypred = np.empty(b)
    total = 0.0
    for t in range(c - 1):
        for j in range(b):
            x[j] = sequence[t, j] * extra_params[0, j]
        for layer in range(layers):
            h = 2 * layer
            for j in range(b):
                forget = sigmoid(x[j] * main_params[h, j] + main_params[h + 1, j])
                ingate = sigmoid(s[h, j] * main_params[h, b + j] + main_params[h + 1, b + j])
                outgate = sigmoid(x[j] * main_params[h, 2 * b + j]
                                  + main_params[h + 1, 2 * b + j])
                change = math.tanh(s[h, j] * main_params[h, 3 * b + j]
                                   + main_params[h + 1, 3 * b + j])
                s[h + 1, j] = s[h + 1, j] * forget + ingate * change
                s[h, j] = outgate * math.tanh(s[h + 1, j])
                x[j] = s[h, j]
        lse = 0.0
        for j in range(b):
            ypred[j] = x[j] * extra_params[1, j] + extra_params[2, j]
            lse += math.exp(ypred[j])
        lse = math.log(lse + 2.0)
        for j in range(b):
            total += sequence[t + 1, j] * (ypred[j] - lse)
    return -total / ((c - 1) * b)


def lstm_data(layers=2, chars=1024, bits=14, seed=9) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1.0, 1.0, (2 * layers, 4 * bits)),
            rng.uniform(-1.0, 1.0, (3, bits)),
            rng.uniform(-1.0, 1.0, (2 * layers, bits)),
            rng.integers(0, 2, (chars, bits)).astype(np.float64))


# --------------------------------------------------------------------------------------
# 12. The GMM objective vectorised, as a NumPy user writes it: the triangular factors
#    gathered with np.take (axis=1), einsum over (N, K, d), a max-shifted logsumexp with
#    keepdims.  The same maths as the peers' GMM (peers.py).
# --------------------------------------------------------------------------------------


def lower_gather_index(d: int) -> np.ndarray:
    """Indices into ``[icf[k, d:], 0]`` that lay out the strictly lower triangle of
    Q_k row-major as d*d entries: entry (row, col) of the loop form's
    ``icf[k, lparams]``, numbered column by column, and 0 (the padding column)
    elsewhere."""
    nlower = d * (d - 1) // 2
    index = np.full(d * d, nlower, dtype=np.int64)
    position = 0
    for col in range(d):
        for row in range(col + 1, d):
            index[row * d + col] = position
            position += 1
    return index


def gmm_vectorised(alphas, means, icf, x, wishart_gamma, wishart_m, lower_index):
    """The GMM objective of ``examples/gmm.py`` without loops over the data."""
    n = x.shape[0]
    d = x.shape[1]
    k = alphas.shape[0]
    diag = icf[:, :d]
    padded = np.concatenate((icf[:, d:], np.zeros((k, 1))), axis=1)
    lower = np.take(padded, lower_index, axis=1).reshape(k, d, d)
    centred = x.reshape(n, 1, d) - means.reshape(1, k, d)
    qx = np.exp(diag) * centred + np.einsum("kij,nkj->nki", lower, centred)
    main_term = alphas + np.sum(diag, axis=1) - 0.5 * np.sum(qx * qx, axis=2)
    top = np.max(main_term, axis=1, keepdims=True)
    slse = np.sum(top) + np.sum(np.log(np.sum(np.exp(main_term - top), axis=1)))
    top_alpha = np.max(alphas)
    lse_alphas = top_alpha + np.log(np.sum(np.exp(alphas - top_alpha)))
    frobenius = np.sum(np.exp(diag) ** 2, axis=1) + np.sum(icf[:, d:] ** 2, axis=1)
    prior = np.sum(0.5 * wishart_gamma * wishart_gamma * frobenius
                   - wishart_m * np.sum(diag, axis=1))
    dof = d + wishart_m + 1
    log_gamma = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        log_gamma += math.lgamma(0.5 * dof + 0.5 * (1 - j))
    normaliser = dof * d * (math.log(wishart_gamma) - 0.5 * math.log(2.0)) - log_gamma
    constant = -n * d * 0.5 * math.log(2.0 * math.pi)
    return constant + slse - n * lse_alphas + prior - k * normaliser


def gmm_vectorised_data() -> tuple:
    """The loop-form GMM's data, plus the gather index of its triangular factors."""
    args = gmm_data()
    return (*args, lower_gather_index(args[3].shape[1]))


def vector_data(n=100_000, seed=5) -> tuple:
    return (np.random.default_rng(seed).uniform(0.5, 1.5, n),)


def smooth_data(n=100_000, seed=6) -> tuple:
    return np.random.default_rng(seed).standard_normal(n), 0.7


def grid_data(side=300, seed=7) -> tuple:
    return np.random.default_rng(seed).standard_normal((side, side)), 0.3


def dense_data(batch=128, inputs=64, outputs=32, seed=8) -> tuple:
    rng = np.random.default_rng(seed)
    return (rng.normal(0.0, 1.0 / math.sqrt(inputs), (outputs, inputs)),
            rng.normal(0.0, 0.1, outputs), rng.standard_normal((batch, inputs)),
            rng.uniform(-0.5, 0.5, (batch, outputs)))


@dataclass(frozen=True)
class ArrayProblem:
    """One array benchmark: ``fn(*make_args())``, differentiated w.r.t. ``wrt``."""

    name: str
    fn: Callable
    wrt: tuple[str, ...]
    make_args: Callable[[], tuple]
    features: str
    size: str                      # the shapes, for the table
    numba_primal: bool = True      # does plain ``numba.njit`` compile ``fn``?
    python_gradient: bool = True   # time s2s_ad's ``jit=False`` gradient?

    def args(self) -> tuple:
        return self.make_args()


ARRAY_PROBLEMS = [
    # The loop form in CPython takes ~0.5 s for the primal alone; its jit=False
    # gradient is not part of the suite.
    ArrayProblem("gmm", gmm_objective, ("alphas", "means", "icf"), gmm_data,
                 "index loops, item writes, exp/log/lgamma", "d=10, K=25, N=1000",
                 python_gradient=False),
    # numba.njit has no axis/keepdims for np.max and np.sum, so no plain-Numba primal.
    ArrayProblem("smooth_energy", smooth_energy, ("x", "lam"), smooth_data,
                 "1-D three-point stencil: x[i - 1], x[i], x[i + 1]", "n=100,000",
                 python_gradient=False),
    ArrayProblem("rosenbrock_index", rosenbrock_index, ("x",), vector_data,
                 "index loop, x[i] and x[i + 1]", "n=100,000", python_gradient=False),
    ArrayProblem("stencil_2d", stencil_2d, ("u", "kappa"), grid_data,
                 "2-D five-point stencil, nested loops", "300×300",
                 python_gradient=False),
    ArrayProblem("dense_loops", dense_loops, ("w", "b"), dense_data,
                 "dense layer as loops: w[o, i] * x[n, i], tanh, squared loss",
                 "batch 128, 64 → 32", python_gradient=False),
    ArrayProblem("mlp", mlp_loss, ("w1", "b1", "w2", "b2"), mlp_data,
                 "vectorised: @, broadcasting, relu, logsumexp over axis=1",
                 "X 256×64, W1 64×128 (+b1), W2 128×10 (+b2)", numba_primal=False),
    ArrayProblem("lstm", lstm_objective, ("main_params", "extra_params"), lstm_data,
                 "ADBench LSTM: loops over time, layers, bits; scratch state; exp/tanh",
                 "l=2, c=1024, b=14", python_gradient=False),
    # numba.njit has no np.take(axis=...), einsum or keepdims: no plain-Numba primal.
    ArrayProblem("gmm_vectorised", gmm_vectorised, ("alphas", "means", "icf"),
                 gmm_vectorised_data,
                 "vectorised GMM: np.take(axis=1), einsum, max(keepdims=True)",
                 "d=10, K=25, N=1000", numba_primal=False),
]
