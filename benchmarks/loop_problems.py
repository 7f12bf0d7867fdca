"""Benchmark problems: NumPy array statements inside loops, written as a user writes them.

Each function is the primal, the input of s2s_ad and of ``numba.njit`` alike:
slices updated in a time-stepping loop, a vector-state ODE whose right-hand side
returns ``np.array([...])``, a small-matrix Kalman filter with ``@`` and
``np.linalg.inv``, a per-observation projection helper, a double loop over pairs
of positions, a dynamic-programming table.  The JAX and PyTorch versions, and the
hand-written Numba adjoints, are in ``loop_peers.py``.

Sizes are chosen so one s2s_ad gradient call takes about 1-50 ms and every
gradient is well conditioned (tools that evaluate in another order agree to 1e-8).
"""

from __future__ import annotations

import numpy as np
from problems import ArrayProblem

# --------------------------------------------------------------------------------------
# 1. Explicit heat equation on a rod, fixed ends: slices in a time-stepping loop.
# --------------------------------------------------------------------------------------


def heat(u0, k, steps):
    """Energy sum(u * u) of the temperature after ``steps`` explicit Euler steps."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def heat_data(n=1000, steps=500, seed=11) -> tuple:
    x = np.linspace(0.0, 1.0, n)
    rng = np.random.default_rng(seed)
    return np.sin(np.pi * x) + 0.1 * rng.standard_normal(n), 0.2, steps


# --------------------------------------------------------------------------------------
# 2. RK4 on a 2-element state array: Lotka-Volterra with its parameters in an array.
# --------------------------------------------------------------------------------------


def lotka_volterra(state, params):
    """d(prey, predator)/dt; params = (birth, predation, death, conversion)."""
    prey = state[0]
    predator = state[1]
    return np.array([params[0] * prey - params[1] * prey * predator,
                     params[3] * prey * predator - params[2] * predator])


def ode_rk4(state0, params, dt, steps):
    """Sum of squares of the state after ``steps`` classical Runge-Kutta steps."""
    state = state0
    for _ in range(steps):
        k1 = lotka_volterra(state, params)
        k2 = lotka_volterra(state + 0.5 * dt * k1, params)
        k3 = lotka_volterra(state + 0.5 * dt * k2, params)
        k4 = lotka_volterra(state + dt * k3, params)
        state = state + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(state * state)


def ode_data(steps=2000) -> tuple:
    return np.array([1.0, 0.5]), np.array([1.1, 0.4, 0.4, 0.1]), 0.005, steps


# --------------------------------------------------------------------------------------
# 3. Kalman filter, constant-velocity model in 2-D (4x4 state matrices, 2-D position
#    observations): the negative log-likelihood of the observations.
# --------------------------------------------------------------------------------------


def kalman(transition, process_noise, observation_noise, observations, observe):
    """Negative log-likelihood (up to a constant) of ``observations`` (T, 2) under
    the linear-Gaussian model x' = transition @ x + N(0, diag(process_noise)),
    y = observe @ x + N(0, observation_noise * I)."""
    dim = transition.shape[0]
    Q = np.eye(dim) * process_noise
    R = observation_noise * np.eye(observe.shape[0])
    x = np.zeros(dim)
    P = np.eye(dim)
    total = 0.0
    for t in range(observations.shape[0]):
        x = transition @ x
        P = transition @ P @ transition.T + Q
        residual = observations[t] - observe @ x
        S = observe @ P @ observe.T + R
        S_inv = np.linalg.inv(S)
        gain = P @ observe.T @ S_inv
        x = x + gain @ residual
        P = (np.eye(dim) - gain @ observe) @ P
        total += 0.5 * (residual @ S_inv @ residual + np.log(np.linalg.det(S)))
    return total


def kalman_data(steps=500, seed=12) -> tuple:
    dt = 0.1
    transition = np.eye(4)
    transition[0, 2] = transition[1, 3] = dt
    observe = np.zeros((2, 4))
    observe[0, 0] = observe[1, 1] = 1.0
    process_noise = np.array([1e-3, 1e-3, 1e-2, 1e-2])
    rng = np.random.default_rng(seed)
    x = np.array([0.0, 0.0, 1.0, 0.5])
    observations = np.empty((steps, 2))
    for t in range(steps):
        x = transition @ x + np.sqrt(process_noise) * rng.standard_normal(4)
        observations[t] = observe @ x + 0.05 * rng.standard_normal(2)
    return transition, process_noise, 0.0025, observations, observe


# --------------------------------------------------------------------------------------
# 4. Bundle adjustment (BAL's camera model): a project(camera, point) helper called
#    per observation; squared reprojection error.
# --------------------------------------------------------------------------------------


def rotate(angle_axis, point):
    """Rodrigues' rotation of ``point`` by ``angle_axis`` (angle = its norm)."""
    theta = np.sqrt(angle_axis @ angle_axis)
    axis = angle_axis / theta
    cos = np.cos(theta)
    sin = np.sin(theta)
    cross = np.array([axis[1] * point[2] - axis[2] * point[1],
                      axis[2] * point[0] - axis[0] * point[2],
                      axis[0] * point[1] - axis[1] * point[0]])
    return point * cos + cross * sin + axis * (axis @ point) * (1.0 - cos)


def project(camera, point):
    """BAL's camera: rotation, translation, perspective division, radial distortion;
    ``camera`` = (angle-axis 3, translation 3, focal, k1, k2)."""
    p = rotate(camera[0:3], point) + camera[3:6]
    xy = -p[0:2] / p[2]
    r2 = xy @ xy
    distortion = 1.0 + camera[7] * r2 + camera[8] * r2 * r2
    return camera[6] * distortion * xy


def bundle(cameras, points, camera_index, point_index, observed):
    """Sum of squared reprojection errors over all observations."""
    total = 0.0
    for i in range(observed.shape[0]):
        residual = project(cameras[camera_index[i]], points[point_index[i]]) - observed[i]
        total += residual @ residual
    return total


def bundle_data(n_cameras=10, n_points=200, n_observations=1000, seed=13) -> tuple:
    rng = np.random.default_rng(seed)
    cameras = np.empty((n_cameras, 9))
    cameras[:, 0:3] = rng.uniform(-0.2, 0.2, (n_cameras, 3))
    cameras[:, 3:5] = rng.uniform(-0.5, 0.5, (n_cameras, 2))
    cameras[:, 5] = rng.uniform(-8.0, -6.0, n_cameras)
    cameras[:, 6] = rng.uniform(0.9, 1.1, n_cameras)
    cameras[:, 7] = rng.uniform(-0.05, 0.05, n_cameras)
    cameras[:, 8] = rng.uniform(-0.01, 0.01, n_cameras)
    points = rng.uniform(-1.0, 1.0, (n_points, 3))
    camera_index = rng.integers(0, n_cameras, n_observations)
    point_index = rng.integers(0, n_points, n_observations)
    observed = np.empty((n_observations, 2))
    for i in range(n_observations):
        observed[i] = project(cameras[camera_index[i]], points[point_index[i]])
    observed += 0.01 * rng.standard_normal(observed.shape)
    return cameras, points, camera_index, point_index, observed


# --------------------------------------------------------------------------------------
# 5. Lennard-Jones energy of N particles: a double loop reading pos[i] - pos[j].
# --------------------------------------------------------------------------------------


def lennard_jones(positions, sigma, epsilon):
    """Total pairwise Lennard-Jones energy."""
    energy = 0.0
    n = positions.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            d = positions[i] - positions[j]
            s6 = (sigma * sigma / (d @ d)) ** 3
            energy += 4.0 * epsilon * (s6 * s6 - s6)
    return energy


def lennard_jones_data(n=300, seed=14) -> tuple:
    """A jittered cubic lattice (spacing 1.2 sigma): no two particles close."""
    side = int(np.ceil(n ** (1.0 / 3.0)))
    grid = np.array([(a, b, c) for a in range(side) for b in range(side)
                     for c in range(side)], dtype=np.float64)[:n]
    rng = np.random.default_rng(seed)
    return 1.2 * grid + 0.05 * rng.standard_normal((n, 3)), 1.0, 1.0


# --------------------------------------------------------------------------------------
# 6. Soft-DTW (Cuturi & Blondel 2017) between two 3-D series: a 2-D table filled
#    with a soft minimum of three neighbours.
# --------------------------------------------------------------------------------------


def soft_dtw(x, y, gamma):
    """Soft-DTW discrepancy between the series ``x`` (n, d) and ``y`` (m, d)."""
    n = x.shape[0]
    m = y.shape[0]
    R = np.full((n + 1, m + 1), np.inf)
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            diff = x[i - 1] - y[j - 1]
            r0 = -R[i - 1, j - 1] / gamma
            r1 = -R[i - 1, j] / gamma
            r2 = -R[i, j - 1] / gamma
            rmax = max(r0, r1, r2)
            softmin = -gamma * (np.log(np.exp(r0 - rmax) + np.exp(r1 - rmax)
                                       + np.exp(r2 - rmax)) + rmax)
            R[i, j] = diff @ diff + softmin
    return R[n, m]


def soft_dtw_data(n=100, m=120, d=3, seed=15) -> tuple:
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 2.0 * np.pi, n)
    s = np.linspace(0.0, 2.0 * np.pi, m)
    x = np.stack([np.sin(t), np.cos(t), 0.5 * t], axis=1) + 0.1 * rng.standard_normal((n, d))
    y = np.stack([np.sin(s + 0.3), np.cos(s), 0.5 * s], axis=1) + 0.1 * rng.standard_normal((m, d))
    return x, y, 1.0


LOOP_PROBLEMS = [
    ArrayProblem("heat", heat, ("u0", "k"), heat_data,
                 "slice update u[1:-1] = ... in a time loop", "n=1000, 500 steps"),
    ArrayProblem("ode_rk4", ode_rk4, ("state0", "params"), ode_data,
                 "RK4, 2-element state, helper returning np.array([...])", "2000 steps"),
    ArrayProblem("kalman", kalman, ("transition", "process_noise", "observation_noise"),
                 kalman_data, "4x4 @, .T, np.linalg.inv/det, 2-D observations",
                 "4 states, 500 steps"),
    ArrayProblem("bundle", bundle, ("cameras", "points"), bundle_data,
                 "project(cam, X) helper per observation: Rodrigues, pinhole, distortion",
                 "10 cameras, 200 points, 1000 observations"),
    ArrayProblem("lennard_jones", lennard_jones, ("positions",), lennard_jones_data,
                 "double loop, d = pos[i] - pos[j], d @ d", "N=300 (44,850 pairs)"),
    ArrayProblem("soft_dtw", soft_dtw, ("x", "y"), soft_dtw_data,
                 "DP table R[i, j] = cost + soft-min of 3 neighbours", "100×3 vs 120×3"),
]
