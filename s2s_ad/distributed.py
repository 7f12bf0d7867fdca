"""Sums of a loss over the partitions of a dataset, and their gradient, on Dask.

``value_and_gradient(loss, params, partitions)`` is ``sum(loss(params, part) for part
in partitions)`` and its gradient in ``params``, each partition's share computed on a
Dask worker and the shares summed pairwise, as a tree, on the cluster::

    import s2s_ad.distributed as dist
    value, grad = dist.value_and_gradient(loss, params, partitions)
    fit = scipy.optimize.minimize(dist.objective(loss, partitions), x0, jac=True)

Workers get the generated source of the loss (:mod:`s2s_ad.shipping`), never the
user's file, and compile it once per process.  ``partitions`` is a list of arrays
(or tuples of arrays), of ``dask.delayed`` objects or of futures already on the
workers, or a ``dask.array`` (one partition per block along its first axis).

Dask is an optional extra (``pip install s2s_ad[distributed]``): this module imports
without it, and its functions say how to install it.
"""

from __future__ import annotations

import atexit
import threading
import uuid
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from typing import Any

import numpy as np

from .boundary import passed_globals, type_key
from .errors import ArgumentError
from .shipping import (
    ShippedFunction,
    add_values,
    check_sendable,
    jit_option,
    prepared,
    run_partition,
    shipped_function,
)

INSTALL_HINT = "s2s_ad.distributed needs Dask: pip install s2s_ad[distributed]"
INLINE_BYTES = 64 * 1024  # params and globals up to this size go inside each task
RETRIES = 3  # whole gradients resubmitted when the cluster forgot them (client.restart())


def _distributed() -> Any:
    """The ``dask.distributed`` module, or an ImportError saying how to install it."""
    try:
        import dask.distributed
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return dask.distributed


_default: list = []  # the LocalCluster and Client made at the first call without client=
_default_lock = threading.Lock()


def default_client() -> Any:
    """The client used when none is given: the current ``dask.distributed`` client of
    this process if there is one, else a ``LocalCluster`` of 2 worker processes (1
    thread each) on this machine, made at the first call and reused."""
    distributed = _distributed()
    try:
        return distributed.default_client()
    except ValueError:  # no client in this process yet
        pass
    with _default_lock:
        if not _default or _default[1].status == "closed":
            cluster = local_cluster()
            _default[:] = [cluster, distributed.Client(cluster, set_as_default=False)]
            atexit.register(close_default_client)
        return _default[1]


# Gradient code allocates its tapes afresh at every call.  s2s_ad keeps freed memory in
# the process (compiler/memory.py), but glibc gives each thread that allocates its own
# arena, whose freed heaps go back to the system: a gradient run in a Dask worker's
# task thread then page-faults through its tapes again at every call (2x slower,
# measured).  One arena for the whole worker process keeps them; glibc reads this
# before the process starts, so it goes in the environment the nanny spawns it with.
WORKER_ENVIRONMENT = {"MALLOC_ARENA_MAX": "1"}


def local_cluster(workers: int = 2, **options: Any) -> Any:
    """A ``dask.distributed.LocalCluster`` of ``workers`` processes (1 thread each) on
    this machine, their environment set as gradients run best (``WORKER_ENVIRONMENT``);
    ``options`` go to ``LocalCluster``."""
    distributed = _distributed()
    import dask

    settings = {f"distributed.nanny.pre-spawn-environ.{name}": value
                for name, value in WORKER_ENVIRONMENT.items()}
    options = {"threads_per_worker": 1, "processes": True, "dashboard_address": None,
               **options}
    with dask.config.set(settings):
        return distributed.LocalCluster(n_workers=workers, **options)


def close_default_client() -> None:
    """Close the client and LocalCluster :func:`default_client` made (if it made one);
    the next call without ``client=`` makes new ones.  Runs at exit too."""
    with _default_lock:
        if _default:
            cluster, client = _default
            _default.clear()
            client.close()
            cluster.close()


def _dumps() -> Callable[[Any], bytes]:
    """The pickler Dask sends task arguments with."""
    import cloudpickle  # a dependency of dask

    return cloudpickle.dumps


def _identity(value: Any) -> Any:
    return value


def _skeleton(value: Any) -> Any:
    """A small value of the same kind as ``value`` (what the transform depends on)."""
    if isinstance(value, np.ndarray):
        return np.zeros((1,) * value.ndim, dtype=value.dtype)
    if type(value) is tuple:
        return tuple(_skeleton(v) for v in value)
    return value


def _partial(shipped: ShippedFunction, inputs: tuple, part: Any, index: int) -> tuple:
    params, global_values = inputs
    return run_partition(shipped, params, part, global_values, index)


def _pair_sum(first: tuple, second: tuple) -> tuple:
    return add_values(first, second)


class DistributedSum:
    """``params -> (value, gradient)`` of ``sum(loss(params, part) for part in
    partitions)``, computed on Dask: the ``fun`` of ``scipy.optimize.minimize(...,
    jac=True)`` (params first, as SciPy calls it).

    The partitions are placed on the cluster once, when it is made (arrays given
    here are sent once, as tasks Dask can run again if a worker is lost); each call
    sends only ``params`` and the global variables the loss reads.
    """

    def __init__(self, loss: Callable, partitions: Any, client: Any = None):
        self.loss = loss
        self.client = client if client is not None else default_client()
        self.source = _partition_sources(partitions)
        if not self.source:
            raise ArgumentError("partitions is empty: give at least one partition")
        self.futures = self._placed()
        self.sample = self._sample()
        self._shipped: dict[Any, tuple] = {}

    def _placed(self) -> list:
        """One future per partition, each computed from what the user gave."""
        distributed = _distributed()
        futures = []
        with warnings.catch_warnings():  # the data has to go: once, and recomputable
            warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
            for index, part in enumerate(self.source):
                if isinstance(part, distributed.Future):
                    futures.append(part)
                elif _is_delayed(part):
                    futures.append(self.client.compute(part))
                else:
                    futures.append(self.client.submit(_identity, part,
                                                      key=_key("partition", index)))
        return futures

    def _sample(self) -> Any:
        first = self.source[0]
        if _is_delayed(first) or isinstance(first, _distributed().Future):
            return self.client.submit(_skeleton, self.futures[0], pure=False).result()
        return _skeleton(first)

    def shipped(self, params: Any) -> tuple[Any, ShippedFunction, Any]:
        """(transform, shipped function, its future on the cluster) for ``params``."""
        key = type_key(params)
        hit = self._shipped.get(key)
        if hit is None or not hit[0].current():
            t = prepared(self.loss, params, self.sample)
            shipped = shipped_function(t, self.sample, jit_option(self.loss))
            check_sendable(shipped, _dumps())
            future = self.client.submit(_identity, shipped, key=_key("shipped", shipped.key))
            self.client.replicate([future])  # kept by every worker: not fetched at each call
            hit = self._shipped[key] = (t, shipped, future)
        return hit

    def __call__(self, params: Any) -> tuple[Any, Any]:
        attempt = 0
        while True:
            try:
                return self._gradient(params)
            except CancelledError as exc:  # what Dask raises for work it forgot
                self._recover(exc, attempt)
                attempt += 1

    def _gradient(self, params: Any) -> tuple[Any, Any]:
        """One gradient: the partial tasks and their pairwise sums, sent as one graph."""
        from dask import delayed

        t, _, shipped = self.shipped(params)
        inputs = (params, passed_globals(t, t.global_values()))
        if _nbytes(inputs) > INLINE_BYTES:  # sent once to each worker, not once per task
            inputs = self.client.submit(_identity, inputs, key=_key("inputs"))
        level = [delayed(_partial)(shipped, inputs, part, index,
                                   dask_key_name=_key("partial", index))
                 for index, part in enumerate(self.futures)]
        while len(level) > 1:  # pairwise sums, in a fixed order: the same result every run
            pairs = [delayed(_pair_sum)(level[i], level[i + 1], dask_key_name=_key("sum"))
                     for i in range(0, len(level) - 1, 2)]
            level = pairs + level[len(level) - len(level) % 2:]
        value, grad = self.client.compute(level[0]).result()
        return float(value), grad

    def _recover(self, exc: BaseException, attempt: int) -> None:
        """The cluster forgot the work (``client.restart()``): place the partitions
        again and retry, unless they were futures only the user can remake."""
        distributed = _distributed()
        if any(isinstance(p, distributed.Future) for p in self.source):
            raise RuntimeError("the cluster forgot the partitions given as futures (a "
                               "client.restart()?): only you can make them again; give "
                               "arrays or dask.delayed objects to have them remade") from exc
        if attempt == RETRIES:
            raise exc
        self.futures = self._placed()
        self._shipped.clear()


def _nbytes(value: Any) -> int:
    """About how many bytes ``value`` (numbers, arrays, tuples of them) pickles to."""
    if isinstance(value, tuple):
        return sum(map(_nbytes, value))
    return value.nbytes if isinstance(value, np.ndarray) else 16


def _key(what: str, index: int | str = "") -> str:
    return f"s2s_ad-{what}-{index}-{uuid.uuid4().hex}"


def _is_delayed(value: Any) -> bool:
    return type(value).__module__.startswith("dask.") and hasattr(value, "__dask_graph__") \
        and hasattr(value, "key")


def _partition_sources(partitions: Any) -> list:
    """The partitions as a list: a dask.array's blocks along axis 0 as delayed objects."""
    if type(partitions).__module__.startswith("dask.array"):
        other_axes = {axis: -1 for axis in range(1, partitions.ndim)}
        blocks = partitions.rechunk(other_axes).to_delayed()
        return list(blocks.reshape(-1))
    if not isinstance(partitions, Sequence) or isinstance(partitions, np.ndarray):
        raise ArgumentError(f"partitions must be a list (of arrays, tuples of arrays, "
                            f"dask.delayed objects or futures) or a dask.array, not a "
                            f"{type(partitions).__name__}")
    return list(partitions)


def objective(loss: Callable, partitions: Any, client: Any = None) -> DistributedSum:
    """``params -> (value, gradient)`` of the sum of ``loss(params, part)`` over
    ``partitions``, for ``scipy.optimize.minimize(objective(loss, parts), x0,
    jac=True)``: the partitions are placed on the cluster once, here."""
    return DistributedSum(loss, partitions, client)


def value_and_gradient(loss: Callable, params: Any, partitions: Any, client: Any = None
                       ) -> tuple[Any, Any]:
    """``(sum(loss(params, part) for part in partitions), its gradient in params)``,
    each partition on a Dask worker of ``client`` (default: :func:`default_client`).

    ``params`` is an array, a number or a tuple of them, as
    :func:`s2s_ad.value_and_gradient` takes it; the gradient has its structure.
    Each call places the partitions anew: to call it repeatedly (an optimizer),
    make the sum once with :func:`objective`.
    """
    return DistributedSum(loss, partitions, client)(params)
