"""Gradients of ``prange`` loops on every core: the speed-up of ``parallel=True``.

    python benchmarks/parallel_sums.py            # ~2 min on 2 cores
    python benchmarks/parallel_sums.py --quick    # smaller sizes

The programs are the parallel-loop tests' (tests/compiler/parallel_programs.py),
at sizes where a gradient takes milliseconds: a Gaussian log-likelihood through a
helper (10⁶ points), a 4-component mixture with two inner loops (2·10⁵ points),
reprojection residuals of gathered camera and point rows (2·10⁵ observations),
a pairwise energy with ``i < j`` (1,500 particles, 1.1·10⁶ pairs) and rows written
at the loop's index (10⁶ rows).  For each, in one process, the fastest of interleaved
rounds of:

* the ``numba.njit`` primal (value only), serial and with ``parallel=True``;
* ``ad.value_and_gradient`` with ``parallel=False`` (the serial gradient), with respect
  to the parameters (not the data);
* ``ad.value_and_gradient`` with ``parallel=True`` on one thread
  (``numba.set_num_threads(1)``) and on every thread.

The speed-up is parallel on every thread over parallel on one thread (the issue's
target: ≥ 1.7× on this 2-core machine for sums over ≥ 10⁵ points).  Every gradient
is checked against the serial one (1e-9 relative) before it is timed.  The table
goes to benchmarks/README.md between the ``parallel`` markers.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
README_START, README_END = "<!-- parallel: start -->", "<!-- parallel: end -->"

import numba  # noqa: E402
import numpy as np  # noqa: E402

import s2s_ad as ad  # noqa: E402
from tests.compiler import parallel_programs as pp  # noqa: E402


def problems(quick: bool) -> list[tuple[str, str, Callable, tuple, tuple]]:
    """(name, size, function, arguments, differentiated positions) of each program:
    the parameters, not the data."""
    rng = np.random.default_rng(0)
    scale = 10 if quick else 1
    n = 1_000_000 // scale
    m = 200_000 // scale
    cameras = rng.normal(size=(20, 3)) * 0.3 + np.array([1.0, 1.0, 4.0])
    pairs = 1500 // (3 if quick else 1)
    return [
        ("normal_loglik", f"{n:,} points", pp.normal_loglik, (0.3, 1.4, rng.normal(size=n)),
         (0, 1)),
        ("gmm_loglik", f"{m:,} points, 4 components", pp.gmm_loglik,
         (rng.normal(size=(4, 2)), rng.normal(size=4) * 0.2, rng.normal(size=4),
          rng.normal(size=(m, 2))), (0, 1, 2)),
        ("bundle_cost", f"{m:,} observations", pp.bundle_cost,
         (cameras, rng.normal(size=(2000, 3)), rng.integers(0, 20, size=m),
          rng.integers(0, 2000, size=m), rng.normal(size=(m, 2))), (0, 1)),
        ("pair_energy", f"{pairs:,} particles", pp.pair_energy,
         (rng.normal(size=(pairs, 3)), rng.normal(size=pairs)), (0, 1)),
        ("per_item_outputs", f"{n:,} rows", pp.per_item_outputs,
         (0.8, rng.normal(size=(n, 2)) * 2.0), (0,)),
    ]


def best(calls: dict[str, Callable], rounds: int) -> dict[str, float]:
    """The fastest of ``rounds`` interleaved calls of each (after one warm-up call)."""
    for fn in calls.values():
        fn()
    out = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            out[name] = min(out[name], time.perf_counter() - start)
    return out


def on_threads(count: int, fn: Callable) -> Callable:
    def run():
        before = numba.get_num_threads()
        numba.set_num_threads(count)
        try:
            return fn()
        finally:
            numba.set_num_threads(before)
    return run


def close(a, b, rtol=1e-9) -> bool:
    a = a if isinstance(a, tuple) else (a,)
    b = b if isinstance(b, tuple) else (b,)
    return all(np.allclose(u, v, rtol=rtol, atol=rtol * max(1.0, float(np.max(np.abs(v)))))
               for u, v in zip(a, b, strict=True))


def measure(name: str, fn: Callable, args: tuple, wrt: tuple, rounds: int
            ) -> dict[str, float]:
    from run import njit_with_callees

    serial = ad.value_and_gradient(ad.differentiable(fn, wrt=wrt, jit=True))
    parallel = ad.value_and_gradient(ad.differentiable(fn, wrt=wrt, jit=True, parallel=True))
    expected, got = serial(*args), parallel(*args)
    if not (close(got[0], expected[0]) and close(got[1], expected[1])):
        raise AssertionError(f"{name}: the parallel gradient differs from the serial one")
    primal = njit_with_callees(fn)
    primal_parallel = numba.njit(parallel=True)(primal.py_func)
    threads = numba.get_num_threads()
    return best({
        "primal": lambda: primal(*args),
        "primal_parallel": lambda: primal_parallel(*args),
        "serial": lambda: serial(*args),
        "one_thread": on_threads(1, lambda: parallel(*args)),
        "parallel": on_threads(threads, lambda: parallel(*args)),
    }, rounds)


def fmt(s: float) -> str:
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def report(rows: list[tuple[str, str, dict]], started: str, load: tuple[str, str],
           command: str) -> str:
    from run import machine

    m = machine()
    out = ["# Parallel loops (issue 25)",
           f"{started}, `{command}`; {m['cpus']} CPUs ({m['cpu']}), {m['ram']}, {m['os']}; "
           f"Numba {numba.__version__} ({numba.threading_layer()} threading layer), "
           f"{numba.get_num_threads()} threads; load average {load[0]} before, {load[1]} "
           "after. Times are the fastest of interleaved rounds; in parentheses the ratio to "
           "the serial `numba.njit` primal (value only) of the same run.", "",
           "| program | size | primal `njit` | primal `njit(parallel=True)` | gradient, "
           "`parallel=False` | gradient, `parallel=True`, 1 thread | gradient, "
           "`parallel=True` | speed-up over 1 thread |",
           "|---|---|---|---|---|---|---|---|"]
    for name, size, t in rows:
        cells = [f"{fmt(t[k])} ({t[k] / t['primal']:.2g}×)"
                 for k in ("primal_parallel", "serial", "one_thread", "parallel")]
        out.append(f"| {name} | {size} | {fmt(t['primal'])} | " + " | ".join(cells)
                   + f" | **{t['one_thread'] / t['parallel']:.2f}×** |")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes ten times smaller")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    os.environ.setdefault("S2S_AD_CACHE_DIR", tempfile.mkdtemp(prefix="s2s_ad_par_bench_"))
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for name, size, fn, fargs, wrt in problems(args.quick):
        rows.append((name, size, measure(name, fn, fargs, wrt, args.rounds)))
        t = rows[-1][2]
        print(f"{name}: speed-up {t['one_thread'] / t['parallel']:.2f}x", flush=True)
    load_after = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python benchmarks/parallel_sums.py" + (" --quick" if args.quick else "")
    text = report(rows, started, (load_before, load_after), command)
    print(text)
    if not args.quick:
        from run import update_readme

        update_readme(HERE / "README.md", text, (README_START, README_END))
    return 0


if __name__ == "__main__":
    sys.exit(main())
