"""Two commits of s2s_ad side by side: each gradient's ratio to its ``numba.njit`` primal,
measured in alternating processes, and how much the ratio changed.

    python benchmarks/compare_commits.py --base 6fa9970            # against this checkout
    python benchmarks/compare_commits.py --base 6fa9970 --problems lstm gmm --rounds 5

The base commit is checked out into a temporary git worktree; both sides run this
checkout's problem definitions (``problems.py``, ``loop_problems.py``), each in a fresh
process per round (rounds alternate base, current), with its own compile cache, so
each side compiles its own generated code. Each process reports, per problem, the
fastest of ``--repeats`` calls (CPU time) of the njit primal and of
``value_and_gradient``; the table keeps each side's fastest over the rounds. Written
for issue 34's bounds checks (the ratios may change by at most 10%).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _problems() -> dict:
    sys.path.insert(0, str(HERE))
    from loop_problems import LOOP_PROBLEMS
    from problems import ARRAY_PROBLEMS, PROBLEMS

    table = {p.name: p for p in (*ARRAY_PROBLEMS, *LOOP_PROBLEMS) if p.numba_primal}
    table.update({p.name: p for p in PROBLEMS})
    return table


def _call_args(problem) -> tuple:
    return problem.args(100_000) if hasattr(problem, "sizes") else problem.args()


def _wrt(problem, args: tuple):
    return getattr(problem, "wrt", None) or tuple(range(len(args) - 1))


def _fastest(fn, args: tuple, repeats: int) -> float:
    """The fastest call in CPU time of this process (every problem runs on one thread:
    a loaded machine stretches wall time, not this)."""
    fn(*args)
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - start)
    return best


def measure(names: list[str], repeats: int) -> dict:
    """{problem: (primal seconds, gradient seconds)} with the s2s_ad on sys.path."""
    from run import njit_with_callees

    import s2s_ad as ad

    table = _problems()
    out = {}
    for name in names:
        problem = table[name]
        args = _call_args(problem)
        primal = njit_with_callees(problem.fn)
        gradient = ad.value_and_gradient(problem.fn, wrt=_wrt(problem, args))
        out[name] = (_fastest(primal, args, repeats), _fastest(gradient, args, repeats))
    return out


def _side(path: Path, names: list[str], repeats: int, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(path), S2S_AD_CACHE_DIR=cache)
    code = (f"import json, sys; sys.path.insert(0, {str(HERE)!r}); "
            f"import compare_commits as c; "
            f"print(json.dumps(c.measure({names!r}, {repeats})))")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(base: str, names: list[str], rounds: int, repeats: int) -> str:
    with tempfile.TemporaryDirectory(prefix="s2s_compare_") as work:
        checkout = Path(work) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                        str(checkout), base], check=True)
        try:
            best: dict[str, dict[str, list[float]]] = {"base": {}, "current": {}}
            for _ in range(rounds):
                for side, path in (("base", checkout), ("current", ROOT)):
                    got = _side(path, names, repeats, str(Path(work) / f"cache-{side}"))
                    for name, times in got.items():
                        kept = best[side].setdefault(name, list(times))
                        best[side][name] = [min(a, b) for a, b in zip(kept, times, strict=True)]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(checkout)], check=False)
    lines = [f"| problem | base ({base}) | current | change |", "|---|---:|---:|---:|"]
    for name in names:
        (p0, g0), (p1, g1) = best["base"][name], best["current"][name]
        r0, r1 = g0 / p0, g1 / p1
        lines.append(f"| {name} | {r0:.2f}x | {r1:.2f}x | {100 * (r1 / r0 - 1):+.0f}% |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare against")
    parser.add_argument("--problems", nargs="*", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    names = options.problems or list(_problems())
    print(compare(options.base, names, options.rounds, options.repeats))


if __name__ == "__main__":
    main()
