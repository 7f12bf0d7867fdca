"""Same results before and after a restructuring: values, gradients and refusals of
every catalogue function (tests/catalogue.py, tests/array_catalogue.py), on the
Python path and, with ``--numba``, the Numba path.

    python benchmarks/same_results.py dump before.pkl --numba     # at the old commit
    python benchmarks/same_results.py dump after.pkl --numba      # at the new one
    python benchmarks/same_results.py compare before.pkl after.pkl

``compare`` fails (exit 1) when a value or a gradient entry differs by more than
``--rtol`` (default 1e-12, relative to the larger magnitude, absolute below 1e-300)
or an outcome changed (a result became a refusal, or the refusal's type changed);
it prints each difference and a count. Set ``S2S_AD_CACHE_DIR`` to a private
directory for each run.
"""

from __future__ import annotations

import argparse
import copy
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "examples"), str(ROOT)]

import s2s_ad as ad  # noqa: E402


def _cases() -> list[tuple[str, object, tuple, bool]]:
    import array_catalogue
    import catalogue

    scalar = [(f"scalar/{c.name}", c.fn, c.args, True) for c in catalogue.CATALOGUE]
    arrays = [(f"array/{c.name}", c.fn, c.args, c.numba) for c in array_catalogue.CATALOGUE]
    return scalar + arrays


def _leaves(value) -> list[np.ndarray]:
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.array(value, dtype=np.float64)]


def _cotangent(value):
    """The same cotangent for the same result on every run: fixed random entries."""
    if isinstance(value, tuple | list):
        return type(value)(_cotangent(v) for v in value)
    if np.ndim(value) == 0:
        return 0.75
    return np.random.default_rng(0).uniform(-1.0, 1.0, np.shape(value))


def _outcome(fn, args, jit: bool):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = ad.differentiable(fn, jit=jit)
            value, pullback = ad.value_with_pullback(df, *copy.deepcopy(args))
            grad = pullback(_cotangent(value))
        return ("ok", _leaves(value), _leaves(grad))
    except Exception as exc:  # noqa: BLE001 - a refusal is an outcome to compare
        return ("raised", type(exc).__name__, str(exc).splitlines()[0][:200])


def dump(path: Path, numba: bool) -> None:
    results = {}
    for name, fn, args, compiles in _cases():
        results[(name, "python")] = _outcome(fn, args, False)
        if numba and compiles:
            results[(name, "numba")] = _outcome(fn, args, True)
    path.write_bytes(pickle.dumps(results))
    print(f"{len(results)} outcomes written to {path}")


def _differ(a: list, b: list, rtol: float) -> str | None:
    if len(a) != len(b):
        return f"{len(a)} leaves vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.shape != y.shape:
            return f"leaf {i}: shape {x.shape} vs {y.shape}"
        scale = np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)
        both_nan = np.isnan(x) & np.isnan(y)
        bad = ~both_nan & ~(np.abs(x - y) <= rtol * scale)
        if bad.any():
            worst = np.max(np.abs(x - y)[bad] / scale[bad])
            return f"leaf {i}: max relative difference {worst:.3e}"
    return None


def compare(before: Path, after: Path, rtol: float) -> int:
    old, new = pickle.loads(before.read_bytes()), pickle.loads(after.read_bytes())
    problems = [f"{key}: only in {before.name}" for key in old.keys() - new.keys()]
    problems += [f"{key}: only in {after.name}" for key in new.keys() - old.keys()]
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        if a[0] != b[0] or (a[0] == "raised" and a[1] != b[1]):
            problems.append(f"{key}: {a[0]} {a[1:] if a[0] == 'raised' else ''} -> {b[0]} "
                            f"{b[1:] if b[0] == 'raised' else ''}")
        elif a[0] == "ok":
            why = _differ(a[1], b[1], rtol) or _differ(a[2], b[2], rtol)
            if why:
                problems.append(f"{key}: {why}")
    for p in problems:
        print(p)
    same = len(old.keys() & new.keys()) - len(problems)
    print(f"{same} of {len(old)} outcomes the same (rtol {rtol:g}); {len(problems)} differ")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("path", type=Path)
    d.add_argument("--numba", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--rtol", type=float, default=1e-12)
    args = parser.parse_args(argv)
    if args.command == "dump":
        dump(args.path, args.numba)
        return 0
    return compare(args.before, args.after, args.rtol)


if __name__ == "__main__":
    sys.exit(main())
