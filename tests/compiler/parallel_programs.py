"""Parallel-loop programs of the kinds users write (sums over points, per-observation
helpers, pairwise energies, per-item outputs), each with arguments, for
tests/compiler/test_parallel_loops.py and benchmarks/parallel_sums.py.

Names are the users' (``chunk``, ``trips``, ``k`` and ``parts`` included: the
generated code must not capture them).
"""

import math

import numba
import numpy as np

import s2s_ad as ad


def log_density(value, mu, sigma):
    z = (value - mu) / sigma
    return -0.5 * z * z - math.log(sigma)


def normal_loglik(mu, sigma, data):
    total = 0.0
    for i in numba.prange(data.shape[0]):
        total += log_density(data[i], mu, sigma)
    return total


def gmm_loglik(means, log_widths, weights, points):
    # per point: log-sum-exp over the components (an inner loop, a private max)
    total = 0.0
    for chunk in numba.prange(points.shape[0]):
        best = -1e300
        for k in range(means.shape[0]):
            diff = points[chunk] - means[k]
            trips = weights[k] - 0.5 * np.sum(diff * diff) * math.exp(-2.0 * log_widths[k])
            if trips > best:
                best = trips
        parts = 0.0
        for k in range(means.shape[0]):
            diff = points[chunk] - means[k]
            parts += math.exp(weights[k] - 0.5 * np.sum(diff * diff)
                              * math.exp(-2.0 * log_widths[k]) - best)
        total += best + math.log(parts)
    return total


def reprojection(camera, point):
    depth = point[2] + camera[2]
    return np.array([camera[0] * point[0] / depth, camera[1] * point[1] / depth])


def bundle_cost(cameras, points, cam_of, point_of, observed):
    # per observation: a helper on gathered rows (every iteration reads any row)
    cost = 0.0
    for obs in numba.prange(observed.shape[0]):
        r = reprojection(cameras[cam_of[obs]], points[point_of[obs]]) - observed[obs]
        cost += r[0] * r[0] + r[1] * r[1]
    return cost


def pair_energy(positions, charges):
    # i < j as a parallel outer loop and a serial inner one
    energy = 0.0
    n = positions.shape[0]
    for i in numba.prange(n):
        for j in range(i + 1, n):
            d = positions[i] - positions[j]
            energy += charges[i] * charges[j] / math.sqrt(np.sum(d * d) + 0.1)
    return energy


def per_item_outputs(scale, series):
    # each iteration writes its own row; branches and continue in the body
    out = np.zeros((series.shape[0], 2))
    for row in numba.prange(series.shape[0]):
        level = series[row, 0] * scale
        if level < -2.0:
            continue
        if level > 0.0:
            out[row, 0] = math.tanh(level)
        else:
            out[row, 0] = level * level
        out[row, 1] = scale * series[row, 1]
    return np.sum(out * out) + np.sum(out[:, 0])


def strided(weights, data):
    # start and step; a private array made in each iteration
    acc = 0.0
    for i in ad.prange(1, data.shape[0], 3):
        local = np.zeros(2)
        local[0] = data[i] * weights[0]
        local[1] = data[i - 1] * weights[1]
        acc -= np.sum(local * local)
    return acc


def programs(rng):
    """(name, function, arguments) for each program, small sizes."""
    n = 23
    points = rng.normal(size=(n, 2))
    cameras = rng.normal(size=(3, 3)) * 0.3 + np.array([1.0, 1.0, 4.0])
    world = rng.normal(size=(5, 3))
    return [
        ("normal_loglik", normal_loglik, (0.3, 1.4, rng.normal(size=n))),
        ("gmm_loglik", gmm_loglik, (rng.normal(size=(3, 2)), rng.normal(size=3) * 0.2,
                                    rng.normal(size=3), points)),
        ("bundle_cost", bundle_cost, (cameras, world, rng.integers(0, 3, size=n),
                                      rng.integers(0, 5, size=n), rng.normal(size=(n, 2)))),
        ("pair_energy", pair_energy, (rng.normal(size=(9, 3)), rng.normal(size=9))),
        ("per_item_outputs", per_item_outputs, (0.8, rng.normal(size=(n, 2)) * 2.0)),
        ("strided", strided, (rng.normal(size=2), rng.normal(size=n))),
    ]
