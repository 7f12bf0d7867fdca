"""s2s_ad.distributed on a LocalCluster of 2 worker processes (one for the module).

Each partition's value and gradient runs on a worker from the generated source; the
shares are summed pairwise on the cluster, so the result equals the single-process
gradient of the whole dataset up to the order of the floating-point sums: 1e-12
relative.  Few losses, small data: each loss compiles once per worker.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from custom_functions import cexp  # tests/: a ctypes function with a derivative

import s2s_ad as ad

distributed = pytest.importorskip("dask.distributed")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import s2s_ad.distributed as dist  # noqa: E402

RTOL = 1e-12


FEATURE_SCALES = np.array([1.0, 0.5, 2.0])  # a global the loss reads: sent with each call


def squared_residuals(coefficients, batch):
    features, targets = batch
    residuals = features @ (FEATURE_SCALES * coefficients) - targets
    return 0.5 * np.sum(residuals * residuals)


def standardize(samples, mean, log_scale):
    return (samples - mean) / np.exp(log_scale)


def negative_log_likelihood(params, samples):
    mean, log_scale = params
    standardized = standardize(samples, mean, log_scale)  # a helper: its module is shipped too
    return np.sum(0.5 * standardized * standardized + log_scale)


def log_rates(rate, counts):
    total = 0.0
    for i in range(counts.shape[0]):
        total += counts[i] * math.log(rate * counts[i])  # fails for a negative count
    return total


@ad.differentiable(jit=False)
def slow_squared_residuals(coefficients, batch):
    features, targets = batch
    total = 0.0
    for row in range(features.shape[0]):  # Python, row by row: slow enough to interrupt
        residual = features[row] @ (FEATURE_SCALES * coefficients) - targets[row]
        total += 0.5 * residual * residual
    return total


@pytest.fixture(scope="module")
def client():
    cluster = dist.local_cluster(2)
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def regression_batches(count=4, rows=30, seed=0):
    rng = np.random.default_rng(seed)
    true_coefficients = np.array([1.5, -2.0, 0.5])
    batches = []
    for _ in range(count):
        features = rng.normal(size=(rows, 3))
        batches.append((features, features @ true_coefficients + 0.1 * rng.normal(size=rows)))
    return batches


def whole(batches):
    return tuple(np.concatenate(parts) for parts in zip(*batches, strict=True))


def in_process(loss, params, data):
    return ad.value_and_gradient(ad.differentiable(loss, jit=False), wrt=0)(params, data)


def assert_same(result, expected):
    assert result[0] == pytest.approx(expected[0], rel=RTOL)
    for got, want in zip(ad_leaves(result[1]), ad_leaves(expected[1]), strict=True):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)


def ad_leaves(value):
    return value if isinstance(value, tuple) else (value,)


def test_a_list_of_arrays_gives_the_single_process_gradient(client):
    batches = regression_batches()
    coefficients = np.array([0.3, 0.1, -0.4])
    result = dist.value_and_gradient(squared_residuals, coefficients, batches, client=client)
    assert_same(result, in_process(squared_residuals, coefficients, whole(batches)))
    assert isinstance(result[1], np.ndarray) and result[1].shape == (3,)


def test_the_globals_the_loss_reads_are_read_at_each_call(client, monkeypatch):
    batches = regression_batches(count=2, seed=6)
    coefficients = np.array([0.3, 0.1, -0.4])
    summed = dist.objective(squared_residuals, batches, client=client)
    before = summed(coefficients)
    monkeypatch.setattr(sys.modules[__name__], "FEATURE_SCALES", np.array([2.0, 1.0, 0.5]))
    after = summed(coefficients)
    assert after[0] != before[0]
    assert_same(after, in_process(squared_residuals, coefficients, whole(batches)))


def compiled_on_the_worker(stem_prefix):
    """(stems loaded, compiled signatures of their fused functions, Numba cache index
    files beside them) in this worker process."""
    import os
    from pathlib import Path

    from s2s_ad.shipping import _LOADED

    found = {}
    for stem, module in _LOADED.items():
        if stem.startswith(stem_prefix) and module._numba is not None:
            fused = module._numba[module.functions[-1]]
            # beside the module, or under NUMBA_CACHE_DIR where that is set (as .ci/run does)
            cache = os.environ.get("NUMBA_CACHE_DIR")
            index = list(Path(cache).rglob(f"{stem}.*.nbi")) if cache else \
                list((module.path.parent / "__pycache__").glob(f"{stem}.*.nbi"))
            found[stem] = (len(fused.signatures), bool(index))
    return found


def test_each_worker_compiles_the_shipped_source_once_into_numbas_disk_cache(client):
    batches = regression_batches(count=4, seed=7)
    summed = dist.objective(squared_residuals, batches, client=client)
    for scale in (1.0, 2.0, 3.0):
        summed(np.full(3, scale))
    per_worker = client.run(compiled_on_the_worker, "squared_residuals_")
    entries = [entry for found in per_worker.values() for entry in found.values()]
    assert entries and all(entry == (1, True) for entry in entries), per_worker


def test_delayed_partitions_and_tuple_params(client):
    rng = np.random.default_rng(1)
    chunks = [rng.normal(2.0, 0.5, size=40) for _ in range(3)]
    params = (1.0, math.log(0.7))
    delayed = [dask.delayed(np.asarray)(chunk) for chunk in chunks]
    result = dist.value_and_gradient(negative_log_likelihood, params, delayed, client=client)
    assert_same(result, in_process(negative_log_likelihood, params, np.concatenate(chunks)))
    assert isinstance(result[1], tuple) and all(isinstance(g, float) for g in result[1])


def test_the_blocks_of_a_dask_array(client):
    samples = np.random.default_rng(2).normal(-1.0, 2.0, size=100)
    params = (0.0, 0.5)
    chunked = da.from_array(samples, chunks=30)  # 4 blocks: 30, 30, 30, 10
    result = dist.value_and_gradient(negative_log_likelihood, params, chunked, client=client)
    assert_same(result, in_process(negative_log_likelihood, params, samples))


def test_futures_already_on_the_workers(client):
    batches = regression_batches(count=3, seed=3)
    futures = client.scatter(batches)
    coefficients = np.array([1.0, 1.0, 1.0])
    result = dist.value_and_gradient(squared_residuals, coefficients, futures, client=client)
    assert_same(result, in_process(squared_residuals, coefficients, whole(batches)))


def test_an_exception_on_a_worker_names_the_users_line_and_the_partition(client):
    parts = [np.array([1.0, 2.0]), np.array([3.0]), np.array([2.0, -1.0])]
    with pytest.raises(ValueError) as caught:
        dist.value_and_gradient(log_rates, 0.5, parts, client=client)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    line = log_rates.__code__.co_firstlineno + 3
    assert f"{__file__}:{line}: total += counts[i] * math.log(rate * counts[i])" in notes
    assert "partition 2" in notes


@ad.differentiable(jit=False)
def checked_rates(rate, counts):
    if np.any(counts < 0.0):
        raise ValueError("counts must not be negative")
    return rate * np.sum(counts)


def test_an_exception_in_the_python_path_names_the_users_line_too(client):
    parts = [np.array([1.0]), np.array([-2.0])]
    with pytest.raises(ValueError, match="must not be negative") as caught:
        dist.value_and_gradient(checked_rates, 0.5, parts, client=client)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert f"{__file__}:{checked_rates.fn.__code__.co_firstlineno + 3}: raise ValueError" in notes
    assert "partition 1" in notes


def exp_rate_loss(rate, counts):
    return cexp(rate) * np.sum(counts)  # a ctypes function, with a registered derivative


def test_a_loss_calling_what_cannot_be_pickled_is_refused_by_name(client):
    with pytest.raises(ad.ArgumentError, match="cexp .* calls exp, a .* cannot be sent"):
        dist.value_and_gradient(exp_rate_loss, 0.5, [np.ones(2)], client=client)


def test_a_partition_of_another_kind_is_refused_by_index(client):
    parts = [np.ones(3), np.ones((2, 2))]
    with pytest.raises(ad.ArgumentError, match="partition 1 holds"):
        dist.value_and_gradient(negative_log_likelihood, (0.0, 0.0), parts, client=client)


def test_the_workers_run_gradients_in_one_malloc_arena(client):
    assert set(client.run(os.environ.get, "MALLOC_ARENA_MAX").values()) == {"1"}


def test_without_client_it_uses_the_current_client(client):
    assert dist.default_client() is client


def test_without_any_client_it_makes_one_local_cluster_and_reuses_it(monkeypatch):
    def no_current_client():
        raise ValueError("No clients found")

    monkeypatch.setattr(distributed, "default_client", no_current_client)
    made = dist.default_client()
    try:
        assert dist.default_client() is made
        assert made.nthreads() and set(made.nthreads().values()) == {1}
        assert len(made.nthreads()) == 2
        assert set(made.run(os.environ.get, "MALLOC_ARENA_MAX").values()) == {"1"}
    finally:
        dist.close_default_client()
    assert made.status == "closed"


def worker_pids(client):
    return client.run(os.getpid)


def run_in_thread(fn):
    box = {}

    def target():
        try:
            box["result"] = fn()
        except BaseException as exc:  # reported by the test
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    return thread, box


def wait_until_partials_run(client, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        busy = [worker for worker, keys in client.processing().items()
                if any("s2s_ad-partial" in str(k) for k in keys)]
        if busy:
            return busy
        time.sleep(0.02)
    raise AssertionError("no partial gradient started")


@pytest.fixture(scope="module")
def slow_case(client):
    batches = regression_batches(count=4, rows=20000, seed=4)
    coefficients = np.array([0.2, 0.4, -0.1])
    undisturbed = dist.value_and_gradient(slow_squared_residuals, coefficients, batches,
                                          client=client)
    return batches, coefficients, undisturbed


def test_a_worker_killed_mid_gradient_changes_nothing(client, slow_case):
    batches, coefficients, undisturbed = slow_case
    pids = worker_pids(client)
    thread, box = run_in_thread(lambda: dist.value_and_gradient(
        slow_squared_residuals, coefficients, batches, client=client))
    victim = wait_until_partials_run(client)[0]
    os.kill(pids[victim], signal.SIGKILL)  # a worker process this module's cluster started
    thread.join(120)
    assert "error" not in box, box.get("error")
    assert box["result"][0] == undisturbed[0]
    np.testing.assert_array_equal(box["result"][1], undisturbed[1])
    assert pids[victim] not in worker_pids(client).values()
    assert box["result"][0] == pytest.approx(
        in_process(squared_residuals, coefficients, whole(batches))[0], rel=RTOL)


def test_a_restart_mid_gradient_changes_nothing(client, slow_case, monkeypatch):
    batches, coefficients, undisturbed = slow_case
    recovered = []
    recover = dist.DistributedSum._recover
    monkeypatch.setattr(dist.DistributedSum, "_recover",
                        lambda self, *args: recovered.append(args) or recover(self, *args))
    on_the_workers = dist.objective(negative_log_likelihood, client.scatter([np.ones(3)]),
                                    client=client)
    thread, box = run_in_thread(lambda: dist.value_and_gradient(
        slow_squared_residuals, coefficients, batches, client=client))
    wait_until_partials_run(client)
    client.restart()
    thread.join(120)
    assert "error" not in box, box.get("error")
    assert len(recovered) == 1  # the restart forgot the gradient: it was made again
    assert box["result"][0] == undisturbed[0]
    np.testing.assert_array_equal(box["result"][1], undisturbed[1])
    # futures the user made cannot be made again by s2s_ad: said so, not retried
    with pytest.raises(RuntimeError, match="forgot the partitions given as futures"):
        on_the_workers((0.0, 0.0))


def test_scipy_minimize_fits_least_squares_through_it(client):
    from scipy.optimize import minimize

    batches = regression_batches(count=4, rows=25, seed=5)
    fit = minimize(dist.objective(squared_residuals, batches, client=client), np.zeros(3),
                   jac=True, method="BFGS", options={"gtol": 1e-10})
    features, targets = whole(batches)
    assert fit.success
    solution = np.linalg.lstsq(features * FEATURE_SCALES, targets, rcond=None)[0]
    np.testing.assert_allclose(fit.x, solution, rtol=1e-7)


def test_the_core_imports_without_dask_and_says_how_to_install_it():
    code = ("import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
            "import s2s_ad, s2s_ad.distributed as dist, numpy as np\n"
            "try:\n"
            "    dist.value_and_gradient(lambda p, x: p, 1.0, [np.ones(1)])\n"
            "except ImportError as exc:\n"
            "    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install s2s_ad[distributed]" in done.stdout
    check = ("import sys, s2s_ad, s2s_ad.distributed\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('dask', 'distributed')))")
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_example_fits_its_model_on_the_cluster(client):
    import distributed_fit  # examples/ is on the path (conftest)

    result = distributed_fit.fit(client)
    assert result.success
    np.testing.assert_allclose(result.x, distributed_fit.TRUE_PARAMS, atol=0.01)
