"""Per-call overhead of ``ad.gradient``: its time against the compiled fused kernel it
calls, on problems small enough (n = 10) that the kernel's own work is ~1 µs.

    python benchmarks/overhead.py

Min of 15 repeats of 20,000 calls each, twice, for both.
"""

from __future__ import annotations

import sys
import timeit
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import problems  # noqa: E402

import s2s_ad as ad  # noqa: E402

CASES = [
    ("oscillator n=10 (scalars)", problems.oscillator, (1.0, 0.1, 0.5, 10), None),
    ("smooth_energy n=10 (an array)", problems.smooth_energy, problems.smooth_data(10),
     ("x", "lam")),
    ("rosenbrock_index n=10 (an array)", problems.rosenbrock_index, problems.vector_data(10),
     ("x",)),
]


def best_microseconds(fn, args: tuple) -> float:
    return min(timeit.repeat(lambda: fn(*args), number=20_000, repeat=15)) / 20_000 * 1e6


def main() -> None:
    warnings.simplefilter("ignore", ad.IntegerArgumentWarning)   # oscillator's int n
    for name, fn, args, wrt in CASES:
        df = ad.differentiable(fn, wrt=wrt, jit=True)
        gradient = ad.gradient(df)
        gradient(*args)
        t = df.prepare(args)
        kernel = t.module.numba(t.generated.fused.name)
        kernel(*args)
        api = min(best_microseconds(gradient, args) for _ in range(2))
        own = min(best_microseconds(kernel, args) for _ in range(2))
        print(f"{name}: gradient {api:.2f} µs, kernel {own:.2f} µs, "
              f"overhead {api - own:.2f} µs")


if __name__ == "__main__":
    main()
