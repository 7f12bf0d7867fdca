"""Per-call overhead of the public API above the compiled kernels it calls, on
problems small enough that a kernel's own work is well under a microsecond.

    python benchmarks/overhead.py

For each problem, side by side in one process (interleaved rounds, the minimum of
each): the generated fused kernel (value and gradient) called directly against
``ad.gradient(f)(*args)`` and ``ad.value_and_gradient(f)(*args)``, and the
generated primal kernel (the user's function compiled by Numba, as ``numba.njit``
would) against calling ``ad.differentiable(f, jit=True)``.  Overhead = the API
call's time minus its kernel's.  Targets (issue 22): at most 1 µs for scalar
arguments, 2 µs for small arrays.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import problems  # noqa: E402

import s2s_ad as ad  # noqa: E402

CASES = [
    ("oscillator n=10 (3 floats, an int)", problems.oscillator, (1.0, 0.1, 0.5, 10), None, 1.0),
    ("rosenbrock_index (an 8-element array)", problems.rosenbrock_index,
     problems.vector_data(8), ("x",), 2.0),
    ("smooth_energy (an 8-element array, a float)", problems.smooth_energy,
     problems.smooth_data(8), ("x", "lam"), 2.0),
]
CALLS = 20_000
ROUNDS = 25


def _batch(fn: Callable, args: tuple) -> float:
    """Seconds per call of ``fn(*args)`` over one batch of :data:`CALLS` calls."""
    start = time.perf_counter()
    for _ in range(CALLS):
        fn(*args)
    return (time.perf_counter() - start) / CALLS


def best_microseconds(callables: dict[str, Callable], args: tuple) -> dict[str, float]:
    """The fastest batch of each callable, in µs per call, measured in interleaved
    rounds so that a busy moment of the machine hits them all alike."""
    best = dict.fromkeys(callables, float("inf"))
    for _ in range(ROUNDS):
        for name, fn in callables.items():
            best[name] = min(best[name], _batch(fn, args))
    return {name: seconds * 1e6 for name, seconds in best.items()}


def measure(fn: Callable, args: tuple, wrt: tuple | None) -> dict[str, float]:
    df = ad.differentiable(fn, wrt=wrt, jit=True)
    t = df.prepare(args)
    callables = {
        "primal kernel": t.module.numba(t.generated.primal.name),
        "differentiable(f)": df,
        "fused kernel": t.module.numba(t.generated.fused.name),
        "gradient": ad.gradient(df),
        "value_and_gradient": ad.value_and_gradient(df),
    }
    for call in callables.values():  # compile, install the validated plans
        call(*args)
        call(*args)
    return best_microseconds(callables, args)


def main() -> None:
    warnings.simplefilter("ignore", ad.IntegerArgumentWarning)  # oscillator's int n
    print("| problem | primal kernel | differentiable(f) | overhead | fused kernel"
          " | gradient | overhead | value_and_gradient | overhead | target |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, fn, args, wrt, target in CASES:
        us = measure(fn, args, wrt)
        primal = us["differentiable(f)"] - us["primal kernel"]
        grad = us["gradient"] - us["fused kernel"]
        vg = us["value_and_gradient"] - us["fused kernel"]
        print(f"| {name} | {us['primal kernel']:.2f} | "
              f"{us['differentiable(f)']:.2f} | **{primal:.2f}** | {us['fused kernel']:.2f} | "
              f"{us['gradient']:.2f} | **{grad:.2f}** | {us['value_and_gradient']:.2f} | "
              f"**{vg:.2f}** | ≤ {target:.0f} |")
    print("\nµs per call, the minimum over interleaved rounds of "
          f"{CALLS:,} calls; overhead = the API call minus its kernel.")


if __name__ == "__main__":
    main()
