"""Jacobian benchmark problems (``forward.py``): ODE right-hand sides of 50 states,
written as a Numba user writes them (a loop over the states), and their vectorised
JAX formulations (``jax_rhs``), the way JAX is meant to be used.

An implicit integrator needs exactly this Jacobian, d rate / d state, once per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


def lorenz96(state, forcing):
    """Lorenz-96: dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F, periodic."""
    n = state.shape[0]
    rate = np.empty(n)
    for i in range(n):
        rate[i] = (state[(i + 1) % n] - state[i - 2]) * state[i - 1] - state[i] + forcing
    return rate


def brusselator(state, a, b, alpha):
    """A 1-D Brusselator reaction-diffusion on a periodic line of cells: ``state`` is
    (u of every cell, then v of every cell); u' = a + u^2 v - (b + 1) u + alpha lap u,
    v' = b u - u^2 v + alpha lap v."""
    n = state.shape[0] // 2
    rate = np.empty(2 * n)
    for i in range(n):
        left = (i - 1) % n
        right = (i + 1) % n
        u = state[i]
        v = state[n + i]
        reaction = u * u * v
        rate[i] = a + reaction - (b + 1.0) * u + alpha * (state[left] - 2.0 * u + state[right])
        rate[n + i] = b * u - reaction + alpha * (state[n + left] - 2.0 * v
                                                  + state[n + right])
    return rate


@dataclass(frozen=True)
class JacobianProblem:
    name: str
    fn: Callable
    wrt: str
    args: Callable[[], tuple]
    size: str


def _lorenz_args() -> tuple:
    return 8.0 + np.sin(np.arange(50.0)), 8.0


def _brusselator_args() -> tuple:
    cells = np.arange(25.0)
    return np.concatenate([1.0 + 0.1 * np.sin(cells), 3.0 + 0.1 * np.cos(cells)]), 1.0, 3.0, 0.02


JACOBIAN_PROBLEMS = [
    JacobianProblem("lorenz96", lorenz96, "state", _lorenz_args, "50 states"),
    JacobianProblem("brusselator", brusselator, "state", _brusselator_args,
                    "25 cells × 2 species"),
]


def jax_rhs(jax) -> dict[str, Callable]:
    """The right-hand sides in JAX, vectorised with ``jnp.roll``."""
    jnp = jax.numpy

    def lorenz(state, forcing):
        return (jnp.roll(state, -1) - jnp.roll(state, 2)) * jnp.roll(state, 1) - state + forcing

    def brusselator_jax(state, a, b, alpha):
        n = state.shape[0] // 2
        u, v = state[:n], state[n:]
        reaction = u * u * v

        def laplacian(w):
            return jnp.roll(w, 1) - 2.0 * w + jnp.roll(w, -1)
        return jnp.concatenate([a + reaction - (b + 1.0) * u + alpha * laplacian(u),
                                b * u - reaction + alpha * laplacian(v)])

    return {"lorenz96": lorenz, "brusselator": brusselator_jax}
