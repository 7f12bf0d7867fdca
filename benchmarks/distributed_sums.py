"""What ``s2s_ad.distributed`` costs and gains on a LocalCluster of worker processes.

    python benchmarks/distributed_sums.py                 # ~1 min on 2 cores
    python benchmarks/distributed_sums.py --points 10000000 --workers 2

Three measures, each the median (and minimum) of repeated calls after warm-up calls
(the compile on every worker):

* **overhead per gradient call**: a tiny loss (3 parameters, 10 points per partition)
  summed over P partitions, against one in-process ``ad.value_and_gradient`` call and
  against a bare Dask round trip (``client.submit(f, x).result()``), the floor;
* **speed-up over one process** for a large sum: a Gaussian negative log-likelihood
  (vectorised NumPy) and an 8-component mixture written as a loop over the points (as
  a Numba user writes it), over ``--points`` samples split into P partitions, against
  the same gradient computed in this process on the whole array;
* **bytes moved per gradient**: pickled sizes of what each call sends (the parameters
  and the globals, once per worker) and of each partial result (value and gradient),
  and of what is sent once (the generated source).

The scaling model in benchmarks/README.md is built on these numbers.  (Not named
``distributed.py``: run as a script, that file would hide the ``distributed`` package.)
"""

from __future__ import annotations

import argparse
import math
import pickle
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np
from dask.distributed import Client, get_task_stream

import s2s_ad as ad
import s2s_ad.distributed as dist
from s2s_ad.shipping import prepared, shipped_function

COMPONENTS = 8


def tiny_loss(params, part):
    residuals = part - params[0] - params[1] * part * part - params[2]
    return np.sum(residuals * residuals)


def gaussian_nll(params, samples):
    mean, log_scale = params[0], params[1]
    standardized = (samples - mean) * np.exp(-log_scale)
    return np.sum(0.5 * standardized * standardized) + samples.shape[0] * log_scale


def mixture_nll(params, samples):
    total = 0.0
    for i in range(samples.shape[0]):
        density = 0.0
        for k in range(COMPONENTS):
            standardized = (samples[i] - params[k]) * math.exp(-params[COMPONENTS + k])
            density += math.exp(-0.5 * standardized * standardized - params[COMPONENTS + k])
        total -= math.log(density)
    return total


def timed(fn: Callable, repeats: int) -> tuple[float, float]:
    """(median, minimum) seconds of ``repeats`` calls of ``fn``."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def ms(pair: tuple[float, float]) -> str:
    if pair[0] < 1e-3:
        return f"{pair[0] * 1e6:.1f} µs (min {pair[1] * 1e6:.1f})"
    return f"{pair[0] * 1e3:.1f} ms (min {pair[1] * 1e3:.1f})"


def _identity(value):
    return value


def overhead(client: Client, repeats: int) -> None:
    params = np.array([0.1, 0.2, 0.3])
    data = np.linspace(0.0, 1.0, 10)
    local = ad.value_and_gradient(tiny_loss, wrt=0)
    local(params, data)
    print("\n## Overhead per gradient call (tiny loss, 10 points per partition)\n")
    print("| what | per call |\n|---|---|")
    print(f"| in-process ad.value_and_gradient | {ms(timed(lambda: local(params, data), 1000))} |")
    floor = timed(lambda: client.submit(_identity, params, pure=False).result(), repeats)
    print(f"| bare Dask round trip (submit + result) | {ms(floor)} |")
    for count in (1, 2, 8, 32):
        summed = dist.objective(tiny_loss, [data + i for i in range(count)], client=client)
        for _ in range(3):
            summed(params)
        per_call = timed(lambda summed=summed: summed(params), repeats)
        print(f"| s2s_ad.distributed, {count} partitions | {ms(per_call)} |")


def speedup(client: Client, points: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    samples = rng.normal(1.0, 2.0, size=points)
    cases = [("Gaussian NLL (vectorised)", gaussian_nll, np.array([0.5, 0.3])),
             (f"{COMPONENTS}-component mixture NLL (loop)", mixture_nll,
              np.concatenate([np.linspace(-2.0, 4.0, COMPONENTS), np.zeros(COMPONENTS)]))]
    print(f"\n## Speed-up over one process ({points:,} points)\n")
    print("| loss | in process | partitions | distributed | speed-up | slowest partial's "
          "compute on its worker |\n|---|---|---|---|---|---|")
    for name, loss, params in cases:
        local = ad.value_and_gradient(ad.differentiable(loss, jit=True), wrt=0)
        reference = local(params, samples)
        in_process = timed(lambda local=local, params=params: local(params, samples), repeats)
        for count in (2, 8):
            parts = np.array_split(samples, count)
            summed = dist.objective(loss, parts, client=client)
            value, grad = summed(params)
            assert math.isclose(value, reference[0], rel_tol=1e-10)
            assert np.allclose(grad, reference[1], rtol=1e-9, atol=0.0)
            spread = timed(lambda summed=summed, params=params: summed(params), repeats)
            print(f"| {name} | {ms(in_process)} | {count} | {ms(spread)} | "
                  f"{in_process[0] / spread[0]:.2f}x | {slowest_partial(client, summed, params)} |")


def slowest_partial(client: Client, summed: Callable, params: np.ndarray) -> str:
    """How long the slowest partial gradient of one call computed on its worker."""
    with get_task_stream(client) as stream:
        summed(params)
    times = [step["stop"] - step["start"] for task in stream.data
             if "s2s_ad-partial" in str(task["key"])
             for step in task["startstops"] if step["action"] == "compute"]
    return f"{max(times) * 1e3:.1f} ms"


def bytes_moved(points: int) -> None:
    samples = np.zeros(points // 8)
    print("\n## Bytes (pickled)\n")
    print("| loss | generated source, once | params + globals, per call and worker "
          "| one partial result |\n|---|---|---|---|")
    for name, loss, params in (("tiny", tiny_loss, np.zeros(3)),
                               ("mixture", mixture_nll, np.zeros(2 * COMPONENTS))):
        t = prepared(loss, params, samples)
        shipped = shipped_function(t, samples, "auto")
        partial = (0.0, np.zeros_like(params))
        print(f"| {name} ({params.size} parameters) | {len(pickle.dumps(shipped)):,} | "
              f"{len(pickle.dumps((params, t.global_values()))):,} | "
              f"{len(pickle.dumps(partial)):,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=30)
    options = parser.parse_args()
    print(f"# s2s_ad.distributed on {platform.node()} ({platform.processor() or 'cpu'}, "
          f"{options.workers} worker processes x 1 thread), "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    with dist.local_cluster(options.workers) as cluster, Client(cluster) as client:
        overhead(client, options.repeats)
        speedup(client, options.points, max(3, options.repeats // 6))
    bytes_moved(options.points)


if __name__ == "__main__":
    main()
