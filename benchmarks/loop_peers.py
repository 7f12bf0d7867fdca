"""The problems of ``loop_problems.py`` for JAX and PyTorch, and hand-written Numba adjoints.

Each ``make_*`` returns ``{problem name: grad(*args)}`` where ``grad`` takes the
problem's arguments and returns a tuple of float64 arrays (or floats), one per
differentiated argument (the leading ones), like ``peers.py``'s array problems.

How each peer is written (what a user of that tool writes for a fast gradient):

- JAX: ``jax.jit(jax.grad(f))`` in float64, loops as ``lax.fori_loop`` (heat, RK4),
  ``lax.scan`` (Kalman filter, the rows and columns of soft-DTW), everything else
  vectorised (bundle adjustment over all observations at once, Lennard-Jones over
  the ``triu_indices`` pairs).  Step counts are static arguments.
- PyTorch eager (one thread): the time loops as Python loops over tensors, bundle
  adjustment and Lennard-Jones vectorised, soft-DTW by anti-diagonals (each
  diagonal of the table is one vector operation).
- Hand-written Numba adjoints: heat (the forward keeps every state, the reverse loop
  runs the transposed stencil), RK4 (the forward keeps each step's state, the reverse
  recomputes the step's stages and runs their adjoints in scalars), Lennard-Jones (one
  pass: the energy's gradient is local to each pair), soft-DTW (the table of Cuturi &
  Blondel's backward pass), bundle adjustment (one pass over the observations) and
  the Kalman filter (the forward keeps each step's prior; the reverse recomputes the
  step and runs the matrix adjoints with NumPy inside Numba, as the primal does).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

# --------------------------------------------------------------------------------------
# Hand-written reverse mode in Numba
# --------------------------------------------------------------------------------------


@numba.njit(cache=False)
def heat_grad_by_hand(u0, k, steps):
    n = u0.shape[0]
    states = np.empty((steps + 1, n))
    states[0] = u0
    for t in range(steps):
        u = states[t]
        nxt = states[t + 1]
        nxt[0] = u[0]
        nxt[n - 1] = u[n - 1]
        for i in range(1, n - 1):
            nxt[i] = u[i] + k * (u[i + 1] - 2.0 * u[i] + u[i - 1])
    d_u = 2.0 * states[steps]
    d_prev = np.empty(n)
    d_k = 0.0
    for t in range(steps - 1, -1, -1):
        u = states[t]
        d_prev[0] = d_u[0]
        d_prev[n - 1] = d_u[n - 1]
        for i in range(1, n - 1):
            d_prev[i] = d_u[i] * (1.0 - 2.0 * k)
        for i in range(1, n - 1):
            d_prev[i + 1] += k * d_u[i]
            d_prev[i - 1] += k * d_u[i]
            d_k += d_u[i] * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        d_u, d_prev = d_prev, d_u
    return d_u, d_k


@numba.njit(cache=False)
def _lotka_volterra_at(s0, s1, params):
    return (params[0] * s0 - params[1] * s0 * s1, params[3] * s0 * s1 - params[2] * s1)


@numba.njit(cache=False)
def _lotka_volterra_vjp(s0, s1, params, g0, g1, d_params):
    """(g0, g1) @ d rhs / d state; adds (g0, g1) @ d rhs / d params into d_params."""
    d_params[0] += g0 * s0
    d_params[1] -= g0 * s0 * s1
    d_params[2] -= g1 * s1
    d_params[3] += g1 * s0 * s1
    return (g0 * (params[0] - params[1] * s1) + g1 * params[3] * s1,
            -g0 * params[1] * s0 + g1 * (params[3] * s0 - params[2]))


@numba.njit(cache=False)
def ode_rk4_grad_by_hand(state0, params, dt, steps):
    states = np.empty((steps + 1, 2))
    states[0] = state0
    h = dt
    for t in range(steps):
        a0, a1 = states[t, 0], states[t, 1]
        k10, k11 = _lotka_volterra_at(a0, a1, params)
        k20, k21 = _lotka_volterra_at(a0 + 0.5 * h * k10, a1 + 0.5 * h * k11, params)
        k30, k31 = _lotka_volterra_at(a0 + 0.5 * h * k20, a1 + 0.5 * h * k21, params)
        k40, k41 = _lotka_volterra_at(a0 + h * k30, a1 + h * k31, params)
        states[t + 1, 0] = a0 + h / 6.0 * (k10 + 2.0 * k20 + 2.0 * k30 + k40)
        states[t + 1, 1] = a1 + h / 6.0 * (k11 + 2.0 * k21 + 2.0 * k31 + k41)
    d_params = np.zeros(4)
    g0 = 2.0 * states[steps, 0]
    g1 = 2.0 * states[steps, 1]
    for t in range(steps - 1, -1, -1):
        a0, a1 = states[t, 0], states[t, 1]
        k10, k11 = _lotka_volterra_at(a0, a1, params)
        b0, b1 = a0 + 0.5 * h * k10, a1 + 0.5 * h * k11
        k20, k21 = _lotka_volterra_at(b0, b1, params)
        c0, c1 = a0 + 0.5 * h * k20, a1 + 0.5 * h * k21
        k30, k31 = _lotka_volterra_at(c0, c1, params)
        d0, d1 = a0 + h * k30, a1 + h * k31
        gk1 = (h / 6.0 * g0, h / 6.0 * g1)
        gk2 = (h / 3.0 * g0, h / 3.0 * g1)
        gk3 = (h / 3.0 * g0, h / 3.0 * g1)
        gd0, gd1 = _lotka_volterra_vjp(d0, d1, params, h / 6.0 * g0, h / 6.0 * g1, d_params)
        s0, s1 = g0 + gd0, g1 + gd1
        gc0, gc1 = _lotka_volterra_vjp(c0, c1, params, gk3[0] + h * gd0, gk3[1] + h * gd1,
                                       d_params)
        s0, s1 = s0 + gc0, s1 + gc1
        gb0, gb1 = _lotka_volterra_vjp(b0, b1, params, gk2[0] + 0.5 * h * gc0,
                                       gk2[1] + 0.5 * h * gc1, d_params)
        s0, s1 = s0 + gb0, s1 + gb1
        ga0, ga1 = _lotka_volterra_vjp(a0, a1, params, gk1[0] + 0.5 * h * gb0,
                                       gk1[1] + 0.5 * h * gb1, d_params)
        g0, g1 = s0 + ga0, s1 + ga1
    return np.array([g0, g1]), d_params


@numba.njit(cache=False)
def kalman_grad_by_hand(transition, process_noise, observation_noise, observations, observe):
    """The forward keeps each step's prior mean and covariance; the reverse recomputes
    the step and runs the matrix adjoints (S and its inverse are symmetric)."""
    F, H = transition, observe
    dim, steps = F.shape[0], observations.shape[0]
    Q = np.diag(process_noise)
    R = observation_noise * np.eye(H.shape[0])
    eye = np.eye(dim)
    xs = np.empty((steps + 1, dim))
    Ps = np.empty((steps + 1, dim, dim))
    xs[0] = 0.0
    Ps[0] = eye
    for t in range(steps):
        x = F @ xs[t]
        P = F @ Ps[t] @ F.T + Q
        S_inv = np.linalg.inv(H @ P @ H.T + R)
        gain = P @ H.T @ S_inv
        xs[t + 1] = x + gain @ (observations[t] - H @ x)
        Ps[t + 1] = (eye - gain @ H) @ P
    d_F = np.zeros_like(F)
    d_q = np.zeros(dim)
    d_r = 0.0
    g_x = np.zeros(dim)
    g_P = np.zeros((dim, dim))
    for t in range(steps - 1, -1, -1):
        x0, P0 = xs[t], Ps[t]
        x = F @ x0
        P = F @ P0 @ F.T + Q
        residual = observations[t] - H @ x
        S_inv = np.linalg.inv(H @ P @ H.T + R)
        PHt = P @ H.T
        gain = PHt @ S_inv
        # loss term 0.5 (r' S^-1 r + log det S)
        g_r = S_inv @ residual + gain.T @ g_x
        g_S_inv = 0.5 * np.outer(residual, residual)
        g_S = 0.5 * S_inv
        # x' = x + K r, P' = (I - K H) P
        g_K = np.outer(g_x, residual) - g_P @ (H @ P).T
        g_P1 = (eye - gain @ H).T @ g_P
        # K = P H' S^-1
        g_P1 += g_K @ S_inv @ H
        g_S_inv += PHt.T @ g_K
        # S^-1 = inv(S), S = H P H' + R
        g_S -= S_inv @ g_S_inv @ S_inv
        g_P1 += H.T @ g_S @ H
        d_r += np.trace(g_S)
        # r = y - H x
        g_x1 = g_x - H.T @ g_r
        # P = F P0 F' + Q, x = F x0
        d_F += g_P1 @ F @ P0.T + g_P1.T @ F @ P0 + np.outer(g_x1, x0)
        d_q += np.diag(g_P1)
        g_P = F.T @ g_P1 @ F
        g_x = F.T @ g_x1
    return d_F, d_q, d_r


@numba.njit(cache=False)
def bundle_grad_by_hand(cameras, points, camera_index, point_index, observed):
    """Per observation: the projection's intermediates in scratch arrays, then their
    adjoints in reverse order, accumulated into the camera's and point's rows."""
    d_cameras = np.zeros_like(cameras)
    d_points = np.zeros_like(points)
    axis = np.empty(3)
    cross = np.empty(3)
    p = np.empty(3)
    g_p = np.empty(3)
    g_axis = np.empty(3)
    g_cross = np.empty(3)
    for obs in range(observed.shape[0]):
        cam = cameras[camera_index[obs]]
        point = points[point_index[obs]]
        d_cam = d_cameras[camera_index[obs]]
        d_point = d_points[point_index[obs]]
        theta = math.sqrt(cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2])
        for a in range(3):
            axis[a] = cam[a] / theta
        cos = math.cos(theta)
        sin = math.sin(theta)
        cross[0] = axis[1] * point[2] - axis[2] * point[1]
        cross[1] = axis[2] * point[0] - axis[0] * point[2]
        cross[2] = axis[0] * point[1] - axis[1] * point[0]
        along = axis[0] * point[0] + axis[1] * point[1] + axis[2] * point[2]
        for a in range(3):
            p[a] = (point[a] * cos + cross[a] * sin + axis[a] * along * (1.0 - cos)
                    + cam[3 + a])
        x = -p[0] / p[2]
        y = -p[1] / p[2]
        r2 = x * x + y * y
        distortion = 1.0 + cam[7] * r2 + cam[8] * r2 * r2
        g0 = 2.0 * (cam[6] * distortion * x - observed[obs, 0])
        g1 = 2.0 * (cam[6] * distortion * y - observed[obs, 1])
        # projection = focal * distortion * (x, y)
        d_cam[6] += distortion * (g0 * x + g1 * y)
        g_distortion = cam[6] * (g0 * x + g1 * y)
        d_cam[7] += g_distortion * r2
        d_cam[8] += g_distortion * r2 * r2
        g_r2 = g_distortion * (cam[7] + 2.0 * cam[8] * r2)
        g_x = cam[6] * distortion * g0 + 2.0 * x * g_r2
        g_y = cam[6] * distortion * g1 + 2.0 * y * g_r2
        # (x, y) = -p[:2] / p[2]
        g_p[0] = -g_x / p[2]
        g_p[1] = -g_y / p[2]
        g_p[2] = (g_x * p[0] + g_y * p[1]) / (p[2] * p[2])
        # p = point cos + cross sin + axis along (1 - cos) + translation
        g_cos = 0.0
        g_sin = 0.0
        g_along = 0.0
        for a in range(3):
            d_cam[3 + a] += g_p[a]
            d_point[a] += g_p[a] * cos
            g_cos += g_p[a] * (point[a] - axis[a] * along)
            g_sin += g_p[a] * cross[a]
            g_cross[a] = g_p[a] * sin
            g_axis[a] = g_p[a] * along * (1.0 - cos)
            g_along += g_p[a] * axis[a] * (1.0 - cos)
        for a in range(3):
            g_axis[a] += g_along * point[a]
            d_point[a] += g_along * axis[a]
        # cross = axis x point: d/d axis = point x g_cross, d/d point = g_cross x axis
        g_axis[0] += point[1] * g_cross[2] - point[2] * g_cross[1]
        g_axis[1] += point[2] * g_cross[0] - point[0] * g_cross[2]
        g_axis[2] += point[0] * g_cross[1] - point[1] * g_cross[0]
        d_point[0] += g_cross[1] * axis[2] - g_cross[2] * axis[1]
        d_point[1] += g_cross[2] * axis[0] - g_cross[0] * axis[2]
        d_point[2] += g_cross[0] * axis[1] - g_cross[1] * axis[0]
        # axis = angle_axis / theta, theta = |angle_axis|
        g_theta = cos * g_sin - sin * g_cos
        g_axis_dot = g_axis[0] * cam[0] + g_axis[1] * cam[1] + g_axis[2] * cam[2]
        g_theta -= g_axis_dot / (theta * theta)
        for a in range(3):
            d_cam[a] += g_axis[a] / theta + g_theta * cam[a] / theta
    return d_cameras, d_points


@numba.njit(cache=False)
def lennard_jones_grad_by_hand(positions, sigma, epsilon):
    n = positions.shape[0]
    d_pos = np.zeros_like(positions)
    s2 = sigma * sigma
    for i in range(n):
        for j in range(i + 1, n):
            dx = positions[i, 0] - positions[j, 0]
            dy = positions[i, 1] - positions[j, 1]
            dz = positions[i, 2] - positions[j, 2]
            r2 = dx * dx + dy * dy + dz * dz
            s6 = (s2 / r2) ** 3
            # dE/dr2 = 4 eps (2 s6 - 1) ds6/dr2, ds6/dr2 = -3 s6 / r2
            scale = 2.0 * 4.0 * epsilon * (2.0 * s6 - 1.0) * (-3.0 * s6 / r2)
            d_pos[i, 0] += scale * dx
            d_pos[i, 1] += scale * dy
            d_pos[i, 2] += scale * dz
            d_pos[j, 0] -= scale * dx
            d_pos[j, 1] -= scale * dy
            d_pos[j, 2] -= scale * dz
    return d_pos


@numba.njit(cache=False)
def soft_dtw_grad_by_hand(x, y, gamma):
    """Forward table R, then the backward table E = dR[n, m] / dR[i, j]."""
    n, m, d = x.shape[0], y.shape[0], x.shape[1]
    cost = np.empty((n + 2, m + 2))
    R = np.full((n + 2, m + 2), -np.inf)
    R[0, :m + 1] = np.inf
    R[:n + 1, 0] = np.inf
    R[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = 0.0
            for a in range(d):
                c += (x[i - 1, a] - y[j - 1, a]) ** 2
            cost[i, j] = c
            r0 = -R[i - 1, j - 1] / gamma
            r1 = -R[i - 1, j] / gamma
            r2 = -R[i, j - 1] / gamma
            rmax = max(r0, r1, r2)
            total = math.exp(r0 - rmax) + math.exp(r1 - rmax) + math.exp(r2 - rmax)
            R[i, j] = c - gamma * (math.log(total) + rmax)
    E = np.zeros((n + 2, m + 2))
    E[n, m] = 1.0
    for i in range(n, 0, -1):
        for j in range(m, 0, -1):
            if i == n and j == m:
                continue
            # R[i, j] feeds R[i + 1, j] (as "up"), R[i, j + 1] ("left"), R[i + 1, j + 1]
            e = 0.0
            if i < n:
                e += E[i + 1, j] * math.exp((R[i + 1, j] - cost[i + 1, j] - R[i, j]) / gamma)
            if j < m:
                e += E[i, j + 1] * math.exp((R[i, j + 1] - cost[i, j + 1] - R[i, j]) / gamma)
            if i < n and j < m:
                e += (E[i + 1, j + 1]
                      * math.exp((R[i + 1, j + 1] - cost[i + 1, j + 1] - R[i, j]) / gamma))
            E[i, j] = e
    d_x = np.zeros_like(x)
    d_y = np.zeros_like(y)
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            for a in range(d):
                g = 2.0 * E[i, j] * (x[i - 1, a] - y[j - 1, a])
                d_x[i - 1, a] += g
                d_y[j - 1, a] -= g
    return d_x, d_y


def make_loop_hand_numba() -> dict[str, Callable]:
    return {"heat": heat_grad_by_hand, "ode_rk4": ode_rk4_grad_by_hand,
            "kalman": kalman_grad_by_hand, "bundle": bundle_grad_by_hand,
            "lennard_jones": lennard_jones_grad_by_hand, "soft_dtw": soft_dtw_grad_by_hand}


# --------------------------------------------------------------------------------------
# JAX
# --------------------------------------------------------------------------------------


def jax_array_grad(jax, f: Callable, nwrt: int, static: tuple[int, ...]) -> Callable:
    """``jax.jit(jax.grad(f))`` w.r.t. the first ``nwrt`` arguments (``static``: the
    positions of static arguments), returning NumPy arrays once the result is ready."""
    g = jax.jit(jax.grad(f, argnums=tuple(range(nwrt))), static_argnums=static)

    def grad(*args):
        out = jax.block_until_ready(g(*args))
        return tuple(np.asarray(v) for v in out)
    return grad


def make_loop_jax() -> dict[str, Callable]:
    import jax

    return {name: jax_array_grad(jax, f, nwrt, static)
            for name, (f, nwrt, static) in loop_jax_functions().items()}


def loop_jax_functions() -> dict[str, tuple[Callable, int, tuple[int, ...]]]:
    """The loop problems in JAX, undifferentiated: name -> (function, how many leading
    arguments are differentiated, the positions of static arguments)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)

    def heat(u0, k, steps):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2]))
        u = lax.fori_loop(0, steps, step, u0)
        return jnp.sum(u * u)

    def lotka_volterra(state, params):
        prey, predator = state[0], state[1]
        return jnp.stack([params[0] * prey - params[1] * prey * predator,
                          params[3] * prey * predator - params[2] * predator])

    def ode_rk4(state0, params, dt, steps):
        def step(_, state):
            k1 = lotka_volterra(state, params)
            k2 = lotka_volterra(state + 0.5 * dt * k1, params)
            k3 = lotka_volterra(state + 0.5 * dt * k2, params)
            k4 = lotka_volterra(state + dt * k3, params)
            return state + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        state = lax.fori_loop(0, steps, step, state0)
        return jnp.sum(state * state)

    def kalman(transition, process_noise, observation_noise, observations, observe):
        dim = transition.shape[0]
        Q = jnp.diag(process_noise)
        R = observation_noise * jnp.eye(observe.shape[0])

        def step(carry, y):
            x, P = carry
            x = transition @ x
            P = transition @ P @ transition.T + Q
            residual = y - observe @ x
            S = observe @ P @ observe.T + R
            S_inv = jnp.linalg.inv(S)
            gain = P @ observe.T @ S_inv
            x = x + gain @ residual
            P = (jnp.eye(dim) - gain @ observe) @ P
            _, logdet = jnp.linalg.slogdet(S)
            return (x, P), 0.5 * (residual @ S_inv @ residual + logdet)

        _, terms = lax.scan(step, (jnp.zeros(dim), jnp.eye(dim)), observations)
        return jnp.sum(terms)

    def bundle(cameras, points, camera_index, point_index, observed):
        residual = project_all(jnp, jnp.stack, cameras[camera_index], points[point_index])
        return jnp.sum((residual - observed) ** 2)

    def lennard_jones(positions, sigma, epsilon):
        i, j = np.triu_indices(positions.shape[0], 1)
        d = positions[i] - positions[j]
        s6 = (sigma * sigma / jnp.sum(d * d, axis=1)) ** 3
        return jnp.sum(4.0 * epsilon * (s6 * s6 - s6))

    def soft_dtw(x, y, gamma):
        cost = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=2)      # n, m
        first = jnp.full(y.shape[0] + 1, jnp.inf).at[0].set(0.0)            # row 0

        def softmin(a, b, c):
            return -gamma * jax.nn.logsumexp(jnp.stack([a, b, c]) / -gamma)

        def row(previous, cost_row):
            def cell(left, inputs):
                up_left, up, c = inputs
                value = c + softmin(up_left, up, left)
                return value, value
            _, values = lax.scan(cell, jnp.inf, (previous[:-1], previous[1:], cost_row))
            current = jnp.concatenate([jnp.array([jnp.inf]), values])
            return current, None

        last, _ = lax.scan(row, first, cost)
        return last[-1]

    return {"heat": (heat, 2, (2,)), "ode_rk4": (ode_rk4, 2, (3,)), "kalman": (kalman, 3, ()),
            "bundle": (bundle, 2, ()), "lennard_jones": (lennard_jones, 1, ()),
            "soft_dtw": (soft_dtw, 2, ())}


def project_all(xp, stack: Callable, cameras, points):
    """BAL's projection of each point by its camera, vectorised over observations:
    ``cameras`` (m, 9), ``points`` (m, 3); ``stack(list, axis)`` per array module."""
    angle_axis = cameras[:, 0:3]
    theta = xp.sqrt(xp.sum(angle_axis * angle_axis, axis=1))[:, None]
    axis = angle_axis / theta
    cross = stack([axis[:, 1] * points[:, 2] - axis[:, 2] * points[:, 1],
                   axis[:, 2] * points[:, 0] - axis[:, 0] * points[:, 2],
                   axis[:, 0] * points[:, 1] - axis[:, 1] * points[:, 0]], 1)
    along = xp.sum(axis * points, axis=1)[:, None]
    rotated = points * xp.cos(theta) + cross * xp.sin(theta) + axis * along * (1.0 - xp.cos(theta))
    p = rotated + cameras[:, 3:6]
    xy = -p[:, 0:2] / p[:, 2:3]
    r2 = xp.sum(xy * xy, axis=1)[:, None]
    distortion = 1.0 + cameras[:, 7:8] * r2 + cameras[:, 8:9] * r2 * r2
    return cameras[:, 6:7] * distortion * xy


# --------------------------------------------------------------------------------------
# PyTorch eager
# --------------------------------------------------------------------------------------


def make_loop_torch() -> dict[str, Callable]:
    import torch

    torch.set_num_threads(1)

    def heat(u0, k, steps):
        u = u0.clone()
        for _ in range(steps):
            u[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        return torch.sum(u * u)

    def lotka_volterra(state, params):
        prey, predator = state[0], state[1]
        return torch.stack([params[0] * prey - params[1] * prey * predator,
                            params[3] * prey * predator - params[2] * predator])

    def ode_rk4(state0, params, dt, steps):
        state = state0
        for _ in range(steps):
            k1 = lotka_volterra(state, params)
            k2 = lotka_volterra(state + 0.5 * dt * k1, params)
            k3 = lotka_volterra(state + 0.5 * dt * k2, params)
            k4 = lotka_volterra(state + dt * k3, params)
            state = state + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return torch.sum(state * state)

    def kalman(transition, process_noise, observation_noise, observations, observe):
        dim = transition.shape[0]
        eye = torch.eye(dim, dtype=torch.float64)
        Q = torch.diag(process_noise)
        R = observation_noise * torch.eye(observe.shape[0], dtype=torch.float64)
        x = torch.zeros(dim, dtype=torch.float64)
        P = eye
        total = 0.0
        for t in range(observations.shape[0]):
            x = transition @ x
            P = transition @ P @ transition.T + Q
            residual = observations[t] - observe @ x
            S = observe @ P @ observe.T + R
            S_inv = torch.linalg.inv(S)
            gain = P @ observe.T @ S_inv
            x = x + gain @ residual
            P = (eye - gain @ observe) @ P
            total = total + 0.5 * (residual @ S_inv @ residual + torch.logdet(S))
        return total

    def bundle(cameras, points, camera_index, point_index, observed):
        residual = project_all(torch, lambda parts, axis: torch.stack(parts, dim=axis),
                               cameras[camera_index], points[point_index])
        return torch.sum((residual - observed) ** 2)

    def lennard_jones(positions, sigma, epsilon):
        i, j = torch.triu_indices(positions.shape[0], positions.shape[0], 1)
        d = positions[i] - positions[j]
        s6 = (sigma * sigma / torch.sum(d * d, dim=1)) ** 3
        return torch.sum(4.0 * epsilon * (s6 * s6 - s6))

    def soft_dtw(x, y, gamma):
        """By anti-diagonals: diagonal s holds R[i, s - i] for i = 0..n; cells
        outside the table hold a large finite value (exp(-big) is exactly 0, and
        no inf - inf appears)."""
        n, m = x.shape[0], y.shape[0]
        big = 1e10
        cost = torch.sum((x[:, None, :] - y[None, :, :]) ** 2, dim=2)
        padded = torch.full((n + 1, m + 2), big, dtype=torch.float64)
        padded[1:, 1:m + 1] = cost
        rows = torch.arange(1, n + 1)
        before = torch.full((n + 1,), big, dtype=torch.float64)    # diagonal s - 2
        last = before.clone()                                        # diagonal s - 1
        last[0] = 0.0                                                # diagonal 0: R[0, 0]
        for s in range(1, n + m + 1):
            cols = torch.clamp(s - rows, 0, m + 1)
            stacked = torch.stack([before[:-1], last[:-1], last[1:]]) / -gamma
            values = padded[rows, cols] - gamma * torch.logsumexp(stacked, dim=0)
            current = torch.cat([torch.full((1,), big, dtype=torch.float64), values])
            before, last = last, current
        return last[n]

    def grad_of(f: Callable, nwrt: int) -> Callable:
        def grad(*args):
            params = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
                      for a in args[:nwrt]]
            rest = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a
                    for a in args[nwrt:]]
            f(*params, *rest).backward()
            return tuple(p.grad.numpy() if p.grad.ndim else p.grad.item() for p in params)
        return grad

    return {"heat": grad_of(heat, 2), "ode_rk4": grad_of(ode_rk4, 2),
            "kalman": grad_of(kalman, 3), "bundle": grad_of(bundle, 2),
            "lennard_jones": grad_of(lennard_jones, 1), "soft_dtw": grad_of(soft_dtw, 2)}
