"""Forward mode and higher order against JAX and the ``numba.njit`` primal (issue 24).

    python benchmarks/forward.py            # ~2-3 min on 2 cores; writes
                                            # benchmarks/results_forward.md and copies
                                            # its tables into benchmarks/README.md
    python benchmarks/forward.py --quick    # fewer sizes and repeats, no cold starts

Side by side in one process, every tool on one thread, each time the minimum over
interleaved rounds of a loop of calls lasting >= 5 ms (a busy moment of a shared
machine hits every tool alike), and every number a ratio to the ``numba.njit``
primal of the same function in the same run:

- ``jvp`` of the scalar loops of ``problems.py`` and of the array loops of
  ``loop_problems.py``: ``ad.jvp(f, primals, tangents)`` against
  ``jax.jit`` of ``jax.jvp`` (the JAX formulations of ``peers.py`` and
  ``loop_peers.py``); target <= 2x the primal;
- 50x50 Jacobians of ODE right-hand sides written as loops (Lorenz-96, a
  Brusselator reaction-diffusion): ``ad.jacobian(f, mode="forward")`` against
  ``jax.jit(jax.jacfwd(f))`` of the vectorised formulation; target: at or under JAX;
- Hessian-vector products, ``ad.hvp`` against ``jax.jvp(jax.grad(f))`` under jit
  (target <= 5x the primal), where ``ad.hvp`` exists;
- cold first calls, each in a new process with an empty cache directory (and
  s2s_ad's again in a second process that finds Numba's disk cache).

Every tangent is checked against JAX's (1e-8 relative) and against central finite
differences (1e-5) before it is timed; the exit status is 1 if any disagrees.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
README_START, README_END = "<!-- forward: start -->", "<!-- forward: end -->"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")
sys.path.insert(0, str(HERE))

import numpy as np  # noqa: E402
from forward_problems import JACOBIAN_PROBLEMS, jax_rhs  # noqa: E402

import s2s_ad as ad  # noqa: E402
from s2s_ad.testing import directional_difference  # noqa: E402

AGREE_RTOL, FD_RTOL = 1e-8, 1e-5


def best_seconds(calls: dict[str, tuple[Callable, tuple]], budget: float) -> dict[str, float]:
    """Seconds per call of each ``fn(*args)``: the fastest of interleaved rounds, each
    round a loop of calls lasting >= 5 ms per callable, within about ``budget`` s."""
    loops, once = {}, {}
    for name, (fn, args) in calls.items():
        start = time.perf_counter()
        fn(*args)
        once[name] = max(time.perf_counter() - start, 1e-8)
        loops[name] = max(1, min(20_000, int(0.005 / once[name])))
    per_round = sum(once[n] * loops[n] for n in calls)
    rounds = max(3, min(15, int(budget / per_round)))
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(rounds):
        for name, (fn, args) in calls.items():
            start = time.perf_counter()
            for _ in range(loops[name]):
                fn(*args)
            best[name] = min(best[name], (time.perf_counter() - start) / loops[name])
    return best


def relative(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def njit_with_callees(fn: Callable) -> Callable:
    from run import njit_with_callees as njit
    return njit(fn)


class Row(dict):
    """One table row: name, size and the seconds of each tool."""


def jvp_rows(jax, quick: bool, failures: list[str]) -> list[Row]:
    """``jvp`` of the scalar loops and of the array loops."""
    from loop_peers import loop_jax_functions
    from loop_problems import LOOP_PROBLEMS
    from peers import jax_functions
    from problems import PROBLEMS

    rows = []
    jax_scalar = jax_functions()
    for p in PROBLEMS:
        for n in ((1_000,) if quick else (1_000, 100_000)):
            direction = (1.0, 0.5, -0.25)[:len(p.params)]
            jf = jax_scalar[p.name]
            jj = jax.jit(lambda primals, tangents, f=jf, n=n: jax.jvp(
                lambda *q: f(*q, n), primals, tangents))
            cases = {"s2s_ad": (ad.jvp, (ad.differentiable(p.fn, jit=True), (*p.params, n),
                                         (*direction, None))),
                     "jax": (lambda a, b, g=jj: jax.block_until_ready(g(a, b)),
                             (p.params, direction))}
            rows.append(_jvp_row(p.name, f"n={n:,}", p.fn, (*p.params, n),
                                 dict(enumerate(direction)), cases, quick, failures))
    jax_loops = loop_jax_functions()
    for p in LOOP_PROBLEMS:
        if p.name not in ("heat", "ode_rk4", "lennard_jones", "soft_dtw"):
            continue
        args = p.args()
        jf, nwrt, static = jax_loops[p.name]
        rng = np.random.default_rng(3)
        tangents = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else 0.7
                         for a in args[:nwrt])
        rest = args[nwrt:]
        jj = jax.jit(lambda primals, tangents, *rest, f=jf: jax.jvp(
            lambda *q: f(*q, *rest), primals, tangents),
            static_argnums=tuple(2 + s - nwrt for s in static))
        cases = {"s2s_ad": (ad.jvp, (ad.differentiable(p.fn, wrt=p.wrt, jit=True), args,
                                     (*tangents, *[None] * len(rest)))),
                 "jax": (lambda a, b, *r, g=jj: jax.block_until_ready(g(a, b, *r)),
                         (args[:nwrt], tangents, *rest))}
        rows.append(_jvp_row(p.name, p.size, p.fn, args, dict(enumerate(tangents)), cases,
                             quick, failures))
    return rows


def _jvp_row(name: str, size: str, fn: Callable, args: tuple, direction: dict,
             cases: dict, quick: bool, failures: list[str]) -> Row:
    ours = cases["s2s_ad"][0](*cases["s2s_ad"][1])[1]
    theirs = cases["jax"][0](*cases["jax"][1])[1]
    fd = directional_difference(fn, args, direction, 1e-6)[0]
    agree, fd_error = relative(ours, theirs), relative(ours, fd)
    if agree > AGREE_RTOL or fd_error > FD_RTOL:
        failures.append(f"jvp {name} {size}: JAX {agree:.1e}, finite differences {fd_error:.1e}")
    cases = {"primal": (njit_with_callees(fn), args), **cases}
    cases["primal"][0](*args)
    seconds = best_seconds(cases, 0.6 if quick else 2.0)
    return Row(name=name, size=size, **seconds, agree=agree)


def jacobian_rows(jax, quick: bool, failures: list[str]) -> list[Row]:
    """50x50 Jacobians of ODE right-hand sides, forward mode (and reverse, for scale)."""
    rows = []
    for p in JACOBIAN_PROBLEMS:
        args = p.args()
        forward = ad.jacobian(ad.differentiable(p.fn, jit=True), wrt=p.wrt, mode="forward")
        reverse = ad.jacobian(ad.differentiable(p.fn, jit=True), wrt=p.wrt, mode="reverse")
        jj = jax.jit(jax.jacfwd(jax_rhs(jax)[p.name]))
        rest = args[1:]
        cases = {"primal": (njit_with_callees(p.fn), args), "s2s_ad": (forward, args),
                 "jax": (lambda x, *r, g=jj: jax.block_until_ready(g(x, *r)), (args[0], *rest)),
                 "s2s_ad reverse": (reverse, args)}
        results = {name: np.asarray(fn(*a)) for name, (fn, a) in cases.items()
                   if name != "primal"}
        cases["primal"][0](*args)
        forward(*args)  # the second call compiles s2s_ad's driver: warm before timing
        agree = max(relative(results["s2s_ad"], results[k]) for k in ("jax", "s2s_ad reverse"))
        if agree > AGREE_RTOL:
            failures.append(f"jacobian {p.name}: tools disagree by {agree:.1e}")
        seconds = best_seconds(cases, 0.6 if quick else 2.0)
        rows.append(Row(name=p.name, size=p.size, **seconds, agree=agree))
    return rows


def hvp_rows(jax, quick: bool, failures: list[str]) -> list[Row] | str:
    """Hessian-vector products of the scalar loops, where ``ad.hvp`` exists."""
    if not hasattr(ad, "hvp"):
        return "`ad.hvp` is not on this branch yet: no HVP row (the place is kept)"
    from peers import jax_functions
    from problems import PROBLEMS

    rows, jax_scalar = [], jax_functions()
    for p in PROBLEMS:
        n = 1_000
        direction = (1.0, 0.5, -0.25)[:len(p.params)]
        jf = jax_scalar[p.name]
        argnums = tuple(range(len(p.params)))
        jj = jax.jit(lambda primals, tangents, f=jf, n=n, argnums=argnums: jax.jvp(
            jax.grad(lambda *q: f(*q, n), argnums=argnums), primals, tangents))
        df = ad.differentiable(p.fn, jit=True)
        cases = {"primal": (njit_with_callees(p.fn), (*p.params, n)),
                 "s2s_ad": (ad.hvp, (df, (*p.params, n), (*direction, None))),
                 "jax": (lambda a, b, g=jj: jax.block_until_ready(g(a, b)),
                         (p.params, direction))}
        try:
            ours = cases["s2s_ad"][0](*cases["s2s_ad"][1])
        except Exception as exc:  # reported in the table, not hidden
            failures.append(f"hvp {p.name}: {type(exc).__name__}: {exc}")
            continue
        theirs = cases["jax"][0](*cases["jax"][1])[1]  # (gradient, H v): H v
        agree = relative(np.ravel(ours), np.ravel(theirs))
        if agree > AGREE_RTOL:
            failures.append(f"hvp {p.name}: s2s_ad and JAX disagree by {agree:.1e}")
        cases["primal"][0](*cases["primal"][1])
        rows.append(Row(name=p.name, size=f"n={n:,}", agree=agree,
                        **best_seconds(cases, 0.6 if quick else 2.0)))
    return rows


COLD = {
    "s2s_ad jvp (oscillator, n=1000)":
        "from problems import oscillator as f\n"
        "go = lambda: ad.jvp(ad.differentiable(f, jit=True), (1.0, 0.1, 0.5, 1000), "
        "(1.0, 0.5, -0.25, None))",
    "JAX jit(jvp) (oscillator, n=1000)":
        "from peers import jax_functions\nf = jax_functions()['oscillator']\n"
        "g = jax.jit(lambda p, t: jax.jvp(lambda *q: f(*q, 1000), p, t))\n"
        "go = lambda: jax.block_until_ready(g((1.0, 0.1, 0.5), (1.0, 0.5, -0.25)))",
    "s2s_ad jacobian forward (lorenz96, 50x50)":
        "from forward_problems import JACOBIAN_PROBLEMS as P\np = P[0]\n"
        "go = lambda: ad.jacobian(ad.differentiable(p.fn, jit=True), wrt=p.wrt, "
        "mode='forward')(*p.args())",
    "s2s_ad jacobian forward, second call (compiles the driver)":
        "from forward_problems import JACOBIAN_PROBLEMS as P\np = P[0]\n"
        "J = ad.jacobian(ad.differentiable(p.fn, jit=True), wrt=p.wrt, mode='forward')\n"
        "J(*p.args())\ngo = lambda: J(*p.args())",
    "JAX jit(jacfwd) (lorenz96, 50x50)":
        "from forward_problems import JACOBIAN_PROBLEMS as P, jax_rhs\np = P[0]\n"
        "g = jax.jit(jax.jacfwd(jax_rhs(jax)['lorenz96']))\n"
        "go = lambda: jax.block_until_ready(g(*p.args()))",
    "`numba.njit` primal (lorenz96)":
        "from forward_problems import JACOBIAN_PROBLEMS as P\nimport numba\np = P[0]\n"
        "g = numba.njit(p.fn)\ngo = lambda: g(*p.args())",
}
COLD_HEAD = ("import sys, time, json\nsys.path.insert(0, {here!r})\nimport numpy, numba\n"
             "import s2s_ad as ad\nimport jax\njax.config.update('jax_enable_x64', True)\n")
COLD_TAIL = ("start = time.perf_counter()\ngo()\n"
             "print(json.dumps(time.perf_counter() - start))\n")


def cold_starts() -> dict[str, tuple[float | None, float | None]]:
    """First call in a new process (empty cache); s2s_ad's also in a second process."""
    out = {}
    for what, body in COLD.items():
        env = {**os.environ, "S2S_AD_CACHE_DIR": tempfile.mkdtemp(prefix="s2s_ad_fwd_cold_")}
        code = COLD_HEAD.format(here=str(HERE)) + body + "\n" + COLD_TAIL
        times = []
        for _ in range(2 if what.startswith("s2s_ad") else 1):
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  env=env, timeout=600)
            times.append(json.loads(done.stdout.strip().splitlines()[-1])
                         if done.returncode == 0 else None)
            if done.returncode:
                print(f"cold start of {what} failed:\n{done.stderr[-2000:]}")
        out[what] = (times[0], times[1] if len(times) > 1 else None)
    return out


def fmt_time(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    return f"{s * 1e3:.3g} ms" if s < 1 else f"{s:.3g} s"


def table(rows: list[Row], tools: list[str], titles: list[str]) -> list[str]:
    lines = ["| problem | size | primal `numba.njit` | " + " | ".join(titles) + " |",
             "|---|---|---|" + "---|" * len(tools)]
    for r in rows:
        cells = [f"{fmt_time(r[t])} ({r[t] / r['primal']:.2g}×)" for t in tools]
        lines.append(f"| {r['name']} | {r['size']} | {fmt_time(r['primal'])} | "
                     + " | ".join(cells) + " |")
    return lines


def report(sections: dict, cold: dict | None, started: str, load: tuple[str, str],
           command: str) -> str:
    from run import machine

    m = machine()
    out = ["# Forward mode and higher order against JAX (issue 24)", "",
           f"{started}, `{command}`; {m['cpus']} CPUs ({m['cpu']}), {m['ram']}, {m['os']}; "
           f"load average {load[0]} before, {load[1]} after (the machine is shared: another "
           "engineer's jobs were running where the load is above ~0.5). Every tool on one "
           f"thread. NumPy {np.__version__}, JAX {sections['jax_version']}. Times are the "
           "fastest of interleaved rounds; in parentheses the ratio to the `numba.njit` "
           "primal of the same function (value only) in the same run.", "",
           "### `jvp` (target: ≤ 2× the primal)", ""]
    out += table(sections["jvp"], ["s2s_ad", "jax"],
                 ["s2s_ad `ad.jvp` (public API)", "JAX `jit(jvp)`"])
    out += ["", "### 50×50 Jacobians of ODE right-hand sides (target: at or under JAX)", ""]
    out += table(sections["jacobian"], ["s2s_ad", "jax", "s2s_ad reverse"],
                 ["s2s_ad `jacobian(mode=\"forward\")`", "JAX `jit(jacfwd)` (vectorised)",
                  "s2s_ad `jacobian(mode=\"reverse\")` (for scale)"])
    out += ["", "### Hessian-vector products (target: ≤ 5× the primal)", ""]
    hvp = sections["hvp"]
    out += [hvp] if isinstance(hvp, str) else table(
        hvp, ["s2s_ad", "jax"], ["s2s_ad `ad.hvp`", "JAX `jit(jvp(grad))`"])
    if cold:
        out += ["", "### Cold first call (a new process, empty cache directory)", "",
                "| what | first call | second process (disk cache) |", "|---|---|---|"]
        for what, (first, second) in cold.items():
            out.append(f"| {what} | {fmt_time(first) if first else 'failed'} | "
                       f"{fmt_time(second) if second else '—'} |")
    return "\n".join(out) + "\n"


def update_readme(readme: Path, results: str) -> None:
    text = readme.read_text()
    if README_START not in text or README_END not in text:
        print(f"{readme}: no {README_START} / {README_END} markers; not updated")
        return
    head, rest = text.split(README_START, 1)
    body = results.split("\n", 1)[1].strip()
    readme.write_text(f"{head}{README_START}\n{body}\n{README_END}{rest.split(README_END, 1)[1]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes, no cold starts")
    parser.add_argument("--output", type=Path, default=HERE / "results_forward.md")
    args = parser.parse_args(argv)
    import jax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    os.environ.setdefault("S2S_AD_CACHE_DIR", tempfile.mkdtemp(prefix="s2s_ad_fwd_bench_"))
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load_before = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    failures: list[str] = []
    sections = {"jax_version": jax.__version__,
                "jvp": jvp_rows(jax, args.quick, failures),
                "jacobian": jacobian_rows(jax, args.quick, failures),
                "hvp": hvp_rows(jax, args.quick, failures)}
    cold = None if args.quick else cold_starts()
    load_after = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    command = "python benchmarks/forward.py" + (" --quick" if args.quick else "")
    results = report(sections, cold, started, (load_before, load_after), command)
    args.output.write_text(results)
    print(results)
    if not args.quick:
        update_readme(HERE / "README.md", results)
    for failure in failures:
        print("DISAGREE:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
