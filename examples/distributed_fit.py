"""Fit a model to a dataset split into partitions, its gradient summed on Dask.

The model is a decaying oscillation, ``amplitude * exp(-decay * t) * cos(frequency * t)``,
fitted by least squares to 40,000 noisy samples split into 8 partitions.  SciPy's
BFGS calls ``s2s_ad.distributed.objective``: each call sends the parameters to the
workers, each worker runs the generated value-and-gradient code of ``loss`` on its
partitions, and the shares are summed pairwise on the cluster.

Run it (``pip install s2s_ad[distributed]``)::

    python examples/distributed_fit.py                          # a LocalCluster here
    python examples/distributed_fit.py --scheduler HOST:8786    # any running cluster

Pointing it at a real cluster needs no change to the code: ``--scheduler`` makes
``Client("HOST:8786")`` and passes it as ``client=``.  A scheduler started by hand
(``dask scheduler`` and ``dask worker HOST:8786`` on each machine), by dask-jobqueue
(``SLURMCluster(...).scheduler_address``) or by the Dask Kubernetes operator all give
such an address.  Workers need s2s_ad and its dependencies installed, never this file:
they get the generated source of ``loss``.  Start them with ``MALLOC_ARENA_MAX=1`` in
their environment (``s2s_ad.distributed.WORKER_ENVIRONMENT``; a LocalCluster made
here has it): gradients then keep their freed memory in Dask's task threads.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.optimize import minimize

import s2s_ad.distributed as dist

TRUE_PARAMS = np.array([2.0, 0.3, 1.7])  # amplitude, decay, frequency


def loss(params, partition):
    times, observed = partition
    amplitude, decay, frequency = params[0], params[1], params[2]
    model = amplitude * np.exp(-decay * times) * np.cos(frequency * times)
    residuals = model - observed
    return 0.5 * np.sum(residuals * residuals)


def partitions(count: int = 8, size: int = 5000, seed: int = 0) -> list:
    """The dataset, as ``count`` partitions of ``(times, observations)``."""
    rng = np.random.default_rng(seed)
    times = np.sort(rng.uniform(0.0, 10.0, size=count * size))
    amplitude, decay, frequency = TRUE_PARAMS
    observed = amplitude * np.exp(-decay * times) * np.cos(frequency * times)
    observed = observed + 0.05 * rng.normal(size=times.size)
    return [(times[i:i + size], observed[i:i + size]) for i in range(0, times.size, size)]


def fit(client=None):
    """Fit the model on ``client``'s cluster (None: a LocalCluster on this machine)."""
    summed = dist.objective(loss, partitions(), client=client)
    start = np.array([1.0, 0.1, 1.5])
    return minimize(summed, start, jac=True, method="BFGS")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheduler", help="address of a running Dask scheduler")
    options = parser.parse_args()
    client = None
    if options.scheduler:
        from dask.distributed import Client
        client = Client(options.scheduler)
    result = fit(client)
    print(f"converged: {result.success} after {result.nit} iterations "
          f"({result.njev} distributed gradients)")
    print("fitted [amplitude, decay, frequency]:", np.round(result.x, 3))
    print("true                                 :", TRUE_PARAMS)
    dist.close_default_client()


if __name__ == "__main__":  # worker processes import this module: no work at import
    main()
