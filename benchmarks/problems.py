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
from collections.abc import Callable
from dataclasses import dataclass, field

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
