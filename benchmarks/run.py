"""Time s2s_ad's gradients against the primal, a hand-written adjoint and peer AD tools.

    python benchmarks/run.py                    # full run (~3-5 min on 2 cores)
    python benchmarks/run.py --sizes 10 1000    # a quick run
    python benchmarks/run.py --problems kepler --tools s2s_ad-numba jax

For each problem of ``problems.py`` and each size ``n`` it first checks that every
tool's gradient agrees with s2s_ad's Numba gradient (1e-8 relative, infinity
norm) and that s2s_ad agrees with central finite differences (1e-5), then times
every tool warm, in this one process, side by side: ``min`` over 5 to 20
repeats of a loop sized to last >= 5 ms.  Compile times are measured apart:
s2s_ad's first call in this process (with an empty cache directory, so a cold
transform + Numba compile), s2s_ad's first call in a second process that finds
the disk cache, JAX's first call, the hand-written Numba gradient's first call.

The array problems (``ARRAY_PROBLEMS``: GMM in loop form, a vectorised MLP) run
after the scalar ones, each at its one size, with the same checks (finite
differences at a few random entries) and a table of their own; so do the problems
of NumPy array statements inside loops (``loop_problems.py``: heat equation, RK4,
Kalman filter, bundle adjustment, Lennard-Jones, soft-DTW), whose peers are in
``loop_peers.py`` and whose cold start is compared with JAX's first call, each in
a new process.  Every tool
runs on one thread (BLAS, XLA and PyTorch are limited before they are imported).

The table is written to ``benchmarks/results.md`` as ratios to s2s_ad-numba
(>1 means slower than s2s_ad-numba).  Peers are optional: a tool that does not
import is skipped with the reason.  Slow tools are skipped at a size where
their projected time per call (from the previous size) exceeds
``--max-call-seconds``; the table says so, it never extrapolates a number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REFERENCE = "s2s_ad-numba"
KERNEL = "s2s_ad-kernel"
TOOL_ORDER = ["primal-python", "primal-numba", REFERENCE, KERNEL, "s2s_ad-python", "hand-numba",
              "jax", "torch", "autograd"]
ARRAY_TOOL_ORDER = ["primal-python", "primal-numba", "s2s_ad-primal", REFERENCE, KERNEL,
                    "s2s_ad-python", "hand-numba", "jax", "torch", "autograd"]
TOOL_TITLES = {
    "primal-python": "primal, Python (no gradient)",
    "s2s_ad-primal": "s2s_ad's primal, Numba (no gradient)",
    "primal-numba": "primal, `numba.njit` (no gradient)",
    REFERENCE: "s2s_ad, Numba",
    KERNEL: "s2s_ad's compiled kernel, called directly",
    "s2s_ad-python": "s2s_ad, `jit=False`",
    "hand-numba": "hand-written adjoint, Numba",
    "jax": "JAX `jit(grad)`",
    "torch": "PyTorch eager",
    "autograd": "autograd",
}
GRAD_RTOL = 1e-8
S2S_NUMBA: dict = {}      # problem name -> ad.differentiable(fn, jit=True), for ad.explain
FD_RTOL = 1e-5


# --------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------


@dataclass
class Timing:
    seconds: float          # best time of one call
    repeats: int
    loops: int


def best_time(fn: Callable, args: tuple, first_call: float, budget: float) -> Timing:
    """Min over 5 to 20 repeats of ``loops`` calls each (>= 5 ms a repeat), within about
    ``budget`` seconds; a slow tool gets fewer than 5 repeats rather than blow the budget.
    Many short repeats make the minimum robust to other processes on a shared machine."""
    loops = max(1, min(10_000, int(0.005 / max(first_call, 1e-9))))
    repeats = max(1, min(20, int(budget / max(first_call * loops, 1e-9))))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(loops):
            fn(*args)
        best = min(best, (time.perf_counter() - start) / loops)
    return Timing(best, repeats, loops)


def timed_call(fn: Callable, args: tuple) -> tuple[object, float]:
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


# --------------------------------------------------------------------------------------
# Tools
# --------------------------------------------------------------------------------------


def as_tuple(g: object) -> tuple[float, ...]:
    return tuple(float(v) for v in g) if isinstance(g, tuple) else (float(g),)


def build_tools(problems, array_problems, wanted: set[str]) -> tuple[dict, dict, dict]:
    """{tool: {problem: callable}}, versions, skipped reasons."""
    import numba
    import numpy as np

    import s2s_ad as ad

    sys.path.insert(0, str(HERE))
    import loop_peers
    import peers

    tools: dict[str, dict[str, Callable]] = {}
    versions = {"python": platform.python_version(), "numba": numba.__version__,
                "numpy": np.__version__, "s2s_ad": _s2s_version()}
    tools["primal-python"] = {p.name: p.fn for p in problems}
    numba.njit(lambda x: x + 1.0)(1.0)   # Numba's one-time start-up, so no tool pays it
    tools["primal-numba"] = {p.name: njit_with_callees(p.fn) for p in problems}
    S2S_NUMBA.update({p.name: ad.differentiable(p.fn, jit=True) for p in problems})
    tools[REFERENCE] = {name: ad.gradient(df) for name, df in S2S_NUMBA.items()}
    tools[KERNEL] = {p.name: _fused_kernel(S2S_NUMBA[p.name], p) for p in problems}
    tools["s2s_ad-python"] = {p.name: ad.gradient(ad.differentiable(p.fn, jit=False))
                              for p in problems}
    tools["hand-numba"] = {**peers.make_hand_numba(), **loop_peers.make_loop_hand_numba()}
    for p in array_problems:
        df = ad.differentiable(p.fn, wrt=p.wrt, jit=True)
        S2S_NUMBA[p.name] = df
        tools["primal-python"][p.name] = p.fn
        if p.numba_primal:
            tools["primal-numba"][p.name] = njit_with_callees(p.fn)
        tools.setdefault("s2s_ad-primal", {})[p.name] = df
        tools[REFERENCE][p.name] = ad.gradient(df)
        tools[KERNEL][p.name] = _fused_kernel(df, p)
        if p.python_gradient:
            tools["s2s_ad-python"][p.name] = ad.gradient(
                ad.differentiable(p.fn, wrt=p.wrt, jit=False))
    found, peer_versions, skipped = peers.available_peers(wanted)
    tools.update(found)
    versions.update(peer_versions)
    tools = {k: v for k, v in tools.items() if k in wanted or k == REFERENCE}
    return tools, versions, skipped


def _fused_kernel(df, problem) -> Callable:
    """The Numba dispatcher of s2s_ad's fused value-and-gradient function, called
    without the public API's per-call work (argument checks, signature lookup).

    This reaches into s2s_ad internals (``prepare``, ``module``, ``generated``) to
    separate the generated code's speed from the API's dispatch overhead; the
    public ``ad.gradient`` is what the reference column times.
    """
    kernel = None

    def grad(*args):
        nonlocal kernel
        if kernel is None:
            t = df.prepare(args)
            kernel = t.module.numba(t.generated.fused.name)
        return kernel(*args)[1]

    return grad


def njit_with_callees(fn: Callable) -> Callable:
    """``numba.njit(fn)`` with the plain Python functions it calls jitted too."""
    import types

    import numba

    names = {}
    for name in fn.__code__.co_names:
        value = fn.__globals__.get(name)
        if isinstance(value, types.FunctionType):
            names[name] = njit_with_callees(value)
    if not names:
        return numba.njit(fn)
    scope = {**fn.__globals__, **names}
    return numba.njit(types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__))


def _s2s_version() -> str:
    from importlib import metadata
    try:
        version = metadata.version("s2s_ad")
    except metadata.PackageNotFoundError:
        version = "?"
    try:
        commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain",
                                "s2s_ad"], capture_output=True, text=True).stdout.strip()
        return f"{version} ({commit}{'+dirty' if dirty else ''})"
    except (OSError, subprocess.CalledProcessError):
        return version


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def rel_error(g: tuple[float, ...], ref: tuple[float, ...]) -> float:
    scale = max(max(abs(r) for r in ref), 1e-300)
    return max(abs(a - b) for a, b in zip(g, ref, strict=True)) / scale


def finite_differences(fn: Callable, params: tuple[float, ...], n: int) -> tuple[float, ...]:
    """Central differences of ``fn(*params, n)`` in each parameter (s2s_ad.testing's)."""
    from s2s_ad.testing import partial_derivatives

    return tuple(partial_derivatives(lambda *ps: fn(*ps, n), params, j)[0]
                 for j in range(len(params)))


def loud(message: str) -> None:
    bar = "!" * 78
    print(f"\n{bar}\n{message}\n{bar}\n", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


@dataclass
class Cell:
    timing: Timing | None = None
    error: float | None = None       # relative gradient error vs the reference
    note: str = ""                   # why there is no timing


@dataclass
class Results:
    cells: dict[tuple[str, int, str], Cell] = field(default_factory=dict)
    compile_s2s: dict[str, float] = field(default_factory=dict)
    compile_s2s_cached: dict[str, float] = field(default_factory=dict)
    compile_jax: dict[str, float] = field(default_factory=dict)
    compile_hand: dict[str, float] = field(default_factory=dict)
    fd_error: dict[tuple[str, int], float] = field(default_factory=dict)
    problems_found: list[str] = field(default_factory=list)
    paths: dict[str, str] = field(default_factory=dict)
    memory: dict[str, object] = field(default_factory=dict)   # name -> ad TapeMemory
    cold: dict[str, list] = field(default_factory=dict)       # cold_starts()
    loop_cold: dict[str, dict] = field(default_factory=dict)  # loop_cold_starts()


def run_problem(p, sizes, tools, results: Results, args) -> None:
    import s2s_ad as ad

    last_time: dict[str, tuple[int, float]] = {}
    for n in sizes:
        call_args = p.args(n)
        print(f"\n== {p.name}  n={n}", flush=True)
        try:
            ref, t_first = timed_call(tools[REFERENCE][p.name], call_args)
        except Exception as exc:  # report the compiler's failure, time nothing else
            loud(f"s2s_ad FAILED on {p.name} (n={n}): {type(exc).__name__}: {exc}")
            results.problems_found.append(f"{p.name}: {type(exc).__name__}: {exc}")
            for tool in tools:
                results.cells[(p.name, n, tool)] = Cell(note="s2s_ad failed")
            continue
        ref = as_tuple(ref)
        if p.name not in results.compile_s2s:
            results.compile_s2s[p.name] = t_first
            results.paths[p.name] = ad.explain(S2S_NUMBA[p.name]).path
        fd = finite_differences(p.fn, p.params, n)
        results.fd_error[(p.name, n)] = rel_error(fd, ref)
        if results.fd_error[(p.name, n)] > FD_RTOL:
            loud(f"s2s_ad gradient of {p.name} (n={n}) disagrees with finite differences: "
                 f"{ref} vs {fd}")
            results.problems_found.append(f"{p.name} n={n}: s2s_ad vs finite differences "
                                          f"{ref} vs {fd}")
        for tool in TOOL_ORDER:
            if tool not in tools:
                continue
            fn = tools[tool].get(p.name)
            cell = results.cells.setdefault((p.name, n, tool), Cell())
            if fn is None:
                cell.note = "not written"
                continue
            if tool in last_time:
                n0, t0 = last_time[tool]
                projected = t0 * n / n0
                if projected > args.max_call_seconds:
                    cell.note = f"skipped: ~{projected:.0f} s/call projected"
                    print(f"  {tool:15s} {cell.note}", flush=True)
                    continue
            try:
                out, t_first = timed_call(fn, call_args)
                if tool == "primal-numba":   # first call compiled; time a warm one too
                    out, t_first = timed_call(fn, call_args)
            except Exception as exc:
                cell.note = f"failed: {type(exc).__name__}"
                loud(f"{tool} FAILED on {p.name} (n={n}): {type(exc).__name__}: {exc}")
                continue
            if tool == "jax" and p.name not in results.compile_jax:
                _, t_warm = timed_call(fn, call_args)
                results.compile_jax[p.name] = t_first - t_warm
                t_first = t_warm
            if tool == "hand-numba" and p.name not in results.compile_hand:
                results.compile_hand[p.name] = t_first
                _, t_first = timed_call(fn, call_args)
            if not tool.startswith("primal"):
                cell.error = rel_error(as_tuple(out), ref)
                if cell.error > GRAD_RTOL:
                    loud(f"GRADIENTS DISAGREE: {tool} vs {REFERENCE} on {p.name} (n={n}): "
                         f"{as_tuple(out)} vs {ref} (relative error {cell.error:.2e})")
            budget = args.cell_seconds
            if tool == REFERENCE:
                t_first = timed_call(fn, call_args)[1]
            cell.timing = best_time(fn, call_args, t_first, budget)
            last_time[tool] = (n, cell.timing.seconds)
            err = "" if cell.error is None else f"  err {cell.error:.1e}"
            print(f"  {tool:15s} {cell.timing.seconds * 1e3:12.4f} ms  "
                  f"(min of {cell.timing.repeats}x{cell.timing.loops}){err}", flush=True)


def flat(g: object) -> object:
    """A gradient (array, float or tuple of them) as one flat float64 vector."""
    import numpy as np
    parts = g if isinstance(g, tuple) else (g,)
    return np.concatenate([np.ravel(np.asarray(v, dtype=np.float64)) for v in parts])


def array_rel_error(g: object, ref: object) -> float:
    import numpy as np
    a, b = flat(g), flat(ref)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-300))


def array_fd_error(fn: Callable, p, call_args: tuple, ref: tuple, per_array: int = 4) -> float:
    """Central differences at ``per_array`` random entries of each differentiated
    array, against s2s_ad's gradient: max |fd - g| / max |g| over all of them."""
    import numpy as np

    from s2s_ad.testing import central_difference, moving_entry, relative_step

    rng = np.random.default_rng(7)
    params = list(p.fn.__code__.co_varnames[:len(call_args)])
    scale = max(float(np.max(np.abs(flat(ref)))), 1e-300)
    worst = 0.0
    grads = ref if len(p.wrt) > 1 else (ref,)
    for name, g in zip(p.wrt, grads, strict=True):
        position = params.index(name)
        base = np.asarray(call_args[position], dtype=np.float64)  # a float: 0-d
        g = np.asarray(g)
        for _ in range(per_array if base.ndim else 1):
            entry = tuple(int(rng.integers(0, s)) for s in base.shape)
            along = moving_entry(fn, call_args, position, entry)
            fd = central_difference(along, relative_step(base[entry]))[0]
            worst = max(worst, abs(fd - float(g[entry])) / scale)
    return worst


def run_array_problem(p, tools, results: Results, args) -> None:
    """One array problem at its one size: check every gradient, then time every tool."""
    import s2s_ad as ad

    call_args = p.args()
    print(f"\n== {p.name}  {p.size}", flush=True)
    try:
        ref, t_first = timed_call(tools[REFERENCE][p.name], call_args)
    except Exception as exc:  # report the compiler's failure, time nothing else
        loud(f"s2s_ad FAILED on {p.name}: {type(exc).__name__}: {exc}")
        results.problems_found.append(f"{p.name}: {type(exc).__name__}: {exc}")
        for tool in tools:
            results.cells[(p.name, 0, tool)] = Cell(note="s2s_ad failed")
        return
    results.compile_s2s[p.name] = t_first
    results.paths[p.name] = ad.explain(S2S_NUMBA[p.name]).path
    primal = tools.get("primal-numba", {}).get(p.name, p.fn)
    results.fd_error[(p.name, 0)] = array_fd_error(primal, p, call_args, ref)
    if results.fd_error[(p.name, 0)] > FD_RTOL:
        loud(f"s2s_ad gradient of {p.name} disagrees with finite differences "
             f"(relative error {results.fd_error[(p.name, 0)]:.2e})")
        results.problems_found.append(f"{p.name}: s2s_ad vs finite differences, relative "
                                      f"error {results.fd_error[(p.name, 0)]:.2e}")
    for tool in ARRAY_TOOL_ORDER:
        if tool not in tools:
            continue
        fn = tools[tool].get(p.name)
        cell = results.cells.setdefault((p.name, 0, tool), Cell())
        if fn is None:
            cell.note = "not run"
            continue
        try:
            out, t_first = timed_call(fn, call_args)
            if tool in ("primal-numba", "s2s_ad-primal", "jax", "hand-numba"):  # compiled
                out, t_warm = timed_call(fn, call_args)
                if tool == "jax":
                    results.compile_jax[p.name] = t_first - t_warm
                t_first = t_warm
        except Exception as exc:
            cell.note = f"failed: {type(exc).__name__}"
            loud(f"{tool} FAILED on {p.name}: {type(exc).__name__}: {exc}")
            continue
        if not tool.startswith("primal") and tool != "s2s_ad-primal":
            cell.error = array_rel_error(out, ref)
            if cell.error > GRAD_RTOL:
                loud(f"GRADIENTS DISAGREE: {tool} vs {REFERENCE} on {p.name}: relative "
                     f"error {cell.error:.2e}")
        if tool == REFERENCE:
            t_first = timed_call(fn, call_args)[1]
        cell.timing = best_time(fn, call_args, t_first, args.cell_seconds)
        err = "" if cell.error is None else f"  err {cell.error:.1e}"
        print(f"  {tool:15s} {cell.timing.seconds * 1e3:12.4f} ms  "
              f"(min of {cell.timing.repeats}x{cell.timing.loops}){err}", flush=True)


def measure_memory(problems, array_problems, n: int, results: Results) -> None:
    """``ad.explain(..., memory=True)`` for every problem (scalar ones at size ``n``):
    the bytes the forward keeps for the pullback and the bytes the pullback reads."""
    import s2s_ad as ad

    calls = [(p.name, p.args(n)) for p in problems]
    calls += [(p.name, p.args()) for p in array_problems]
    for name, call_args in calls:
        if name not in S2S_NUMBA:
            continue
        start = time.perf_counter()
        results.memory[name] = ad.explain(S2S_NUMBA[name], *call_args, memory=True).memory
        print(f"  memory of {name}: {results.memory[name]} "
              f"({time.perf_counter() - start:.1f} s)", flush=True)


def memory_table(problems, array_problems, n: int, results: Results) -> list[str]:
    """The tape-memory table: bytes kept for the pullback against bytes it reads."""
    if not results.memory:
        return []
    lines = [
        "",
        "Tape memory (`ad.explain(f, *args, memory=True)`): the bytes the forward keeps for "
        "the pullback (tapes, copies, scalars; argument arrays kept by reference are listed "
        "apart and not counted), and the bytes of them the pullback reads at least once "
        "(the generated Python pullback run with reads recorded). Scalar problems at "
        f"n={n:,}.",
        "",
        "| problem | kept for the pullback | argument arrays, by reference | read by the "
        "pullback | kept / read |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in [*problems, *array_problems]:
        m = results.memory.get(p.name)
        if m is None:
            continue
        read = "n/a" if m.read is None else f"{m.read:,}"
        ratio = f"{m.ratio:.2f}" if m.ratio is not None else (m.why or "n/a")
        lines.append(f"| {p.name} | {m.residual:,} | {m.arguments:,} | {read} | {ratio} |")
    return lines


COLD_START = {  # name -> (problem list, problem name, size for a scalar problem)
    "projectile (30-line scalar function)": ("SCALAR", "projectile", 1_000),
    "mlp": ("ARRAY_PROBLEMS", "mlp", 0),
    "gmm (loop form)": ("ARRAY_PROBLEMS", "gmm", 0),
}

_COLD_CODE = """
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, {here!r})
import numba
import s2s_ad as ad
import problems
imported = time.perf_counter()
numba.njit(lambda x: x + 1.0)(1.0)
numba_ready = time.perf_counter()
if {kind!r} == "SCALAR":
    fn, args, wrt = problems.projectile, (0.7, 15.0, 0.05, 1.0, {size}), None
else:
    p = next(p for p in problems.ARRAY_PROBLEMS if p.name == {name!r})
    fn, args, wrt = p.fn, p.args(), p.wrt
gradient = ad.gradient(ad.differentiable(fn, wrt=wrt, jit=True))
start = time.perf_counter()
gradient(*args)
done = time.perf_counter()
print(json.dumps({{"import": imported - started, "numba": numba_ready - imported,
                  "first": done - start}}))
"""


def cold_starts(selected: set[str] | None = None) -> dict[str, list[dict[str, float] | None]]:
    """{case: [cold process, second process]}: each a fresh Python process timing
    ``import s2s_ad``, Numba's own start-up (one trivial ``njit``), and the first
    gradient call; both processes share one new, empty ``S2S_AD_CACHE_DIR``.
    With ``selected`` (the run's ``--problems``), only the cases among them."""
    out: dict[str, list[dict[str, float] | None]] = {}
    for case, (kind, name, size) in COLD_START.items():
        if selected is not None and name not in selected:
            continue
        env = {**os.environ, "S2S_AD_CACHE_DIR": tempfile.mkdtemp(prefix="s2s_ad_cold_")}
        code = _COLD_CODE.format(here=str(HERE), kind=kind, name=name, size=size)
        runs: list[dict[str, float] | None] = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, env=env)
            if proc.returncode != 0:
                loud(f"cold start of {case} failed:\n{proc.stderr[-2000:]}")
                runs.append(None)
                continue
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        out[case] = runs
        print(f"  cold start of {case}: {runs}", flush=True)
    return out


_LOOP_COLD_CODE = """
import json, sys, time
sys.path.insert(0, {here!r})
import numba
import s2s_ad as ad
from loop_problems import LOOP_PROBLEMS
numba.njit(lambda x: x + 1.0)(1.0)
p = next(p for p in LOOP_PROBLEMS if p.name == {name!r})
args = p.args()
gradient = ad.gradient(ad.differentiable(p.fn, wrt=p.wrt, jit=True))
start = time.perf_counter()
gradient(*args)
print(json.dumps({{"first": time.perf_counter() - start}}))
"""

_JAX_COLD_CODE = """
import json, sys, time
sys.path.insert(0, {here!r})
import jax
from loop_peers import make_loop_jax
from loop_problems import LOOP_PROBLEMS
jax.jit(lambda x: x + 1.0)(1.0)
p = next(p for p in LOOP_PROBLEMS if p.name == {name!r})
args = p.args()
gradient = make_loop_jax()[p.name]
start = time.perf_counter()
gradient(*args)
first = time.perf_counter() - start
start = time.perf_counter()
gradient(*args)
print(json.dumps({{"first": first, "warm": time.perf_counter() - start}}))
"""


def _first_call_process(code: str, env: dict[str, str], what: str) -> dict | None:
    """Run ``code`` in a new Python process; its last line of output, as JSON."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    if proc.returncode != 0:
        loud(f"cold start of {what} failed:\n{proc.stderr[-2000:]}")
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def loop_cold_starts(loop_problems, with_jax: bool) -> dict[str, dict]:
    """{problem: {"s2s_ad": cold, "s2s_ad cached": second process, "jax": first call}}:
    s2s_ad's first gradient in a new process with a new, empty ``S2S_AD_CACHE_DIR``
    (after ``import`` and Numba's own start-up), again in a second process that
    finds the disk cache, and JAX's first ``jit(grad)`` call in a new process (after
    ``import jax`` and one trivial ``jit`` call): trace + compile + one run."""
    out: dict[str, dict] = {}
    for p in loop_problems:
        env = {**os.environ, "S2S_AD_CACHE_DIR": tempfile.mkdtemp(prefix="s2s_ad_cold_")}
        code = _LOOP_COLD_CODE.format(here=str(HERE), name=p.name)
        row = {"s2s_ad": _first_call_process(code, env, f"s2s_ad on {p.name}"),
               "s2s_ad cached": _first_call_process(code, env, f"s2s_ad on {p.name}")}
        if with_jax:
            row["jax"] = _first_call_process(_JAX_COLD_CODE.format(here=str(HERE), name=p.name),
                                             dict(os.environ), f"JAX on {p.name}")
        out[p.name] = row
        print(f"  cold start of {p.name}: {row}", flush=True)
    return out


def loop_cold_table(loop_cold: dict[str, dict]) -> list[str]:
    """The cold-start table of the array-statements-in-loops problems."""
    if not loop_cold:
        return []
    lines = [
        "",
        "Cold start of the array statements in loops (seconds; each a new process): "
        "s2s_ad's first gradient with a new, empty `S2S_AD_CACHE_DIR` (transform + Numba "
        "compile + one call), then in a second process that finds the disk cache; JAX's "
        "first `jit(grad)` call (trace + XLA compile + one call), then its second call. "
        "Imports and each tool's own start-up (one trivial `njit` / `jit` call) are not "
        "counted.",
        "",
        "| problem | s2s_ad first gradient, cold | s2s_ad, second process | JAX first call | "
        "JAX second call | s2s_ad cold / JAX first |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in loop_cold.items():
        cold, cached, jax = row.get("s2s_ad"), row.get("s2s_ad cached"), row.get("jax")
        cells = [fmt_seconds(cold["first"]) if cold else "failed",
                 fmt_seconds(cached["first"]) if cached else "failed",
                 fmt_seconds(jax["first"]) if jax else "n/a",
                 fmt_seconds(jax["warm"]) if jax else "n/a",
                 f"{cold['first'] / jax['first']:.3g}×" if cold and jax else "n/a"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def cold_start_table(cold: dict[str, list[dict[str, float] | None]]) -> list[str]:
    if not cold:
        return []
    lines = [
        "",
        "Cold start (seconds; a new process each, both with one new empty "
        "`S2S_AD_CACHE_DIR`): `import s2s_ad`, Numba's own start-up (its first trivial "
        "`njit` call), then the first `ad.gradient` call (transform + compile, or load "
        "from the disk cache in the second process).",
        "",
        "| function | import s2s_ad | Numba start-up | first gradient, cold | import, "
        "second process | Numba start-up, second process | first gradient, second process |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for case, runs in cold.items():
        cells = []
        for run in runs:
            cells += (["failed"] * 3 if run is None else
                      [fmt_seconds(run["import"]), fmt_seconds(run["numba"]),
                       fmt_seconds(run["first"])])
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    return lines


def cached_first_calls(names: list[str], sizes: list[int]) -> dict[str, float]:
    """s2s_ad's first gradient call per problem in a fresh process (disk cache warm)."""
    code = (
        "import json, sys, time\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import s2s_ad as ad\n"
        "from loop_problems import LOOP_PROBLEMS\n"
        "from problems import ARRAY_PROBLEMS, PROBLEMS\n"
        "out = {}\n"
        "for p in ARRAY_PROBLEMS + LOOP_PROBLEMS:\n"
        f"    if p.name not in {names!r}: continue\n"
        "    g = ad.gradient(ad.differentiable(p.fn, wrt=p.wrt, jit=True))\n"
        "    a = p.args()\n"
        "    t = time.perf_counter()\n"
        "    g(*a)\n"
        "    out[p.name] = time.perf_counter() - t\n"
        "for p in PROBLEMS:\n"
        f"    if p.name not in {names!r}: continue\n"
        "    g = ad.gradient(ad.differentiable(p.fn, jit=True))\n"
        "    t = time.perf_counter()\n"
        f"    g(*p.args({sizes[0]}))\n"
        "    out[p.name] = time.perf_counter() - t\n"
        "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=os.environ.copy())
    if proc.returncode != 0:
        loud(f"second-process timing failed:\n{proc.stderr[-2000:]}")
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def machine() -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    ram = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        pass
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return {"cpus": str(os.cpu_count()), "cpu": cpu, "ram": ram,
            "os": f"{platform.system()} {platform.release()}", "load": load}


def fmt_ratio(cell: Cell | None, ref: Cell | None) -> str:
    if cell is None:
        return "n/a"
    if cell.timing is None:
        return cell.note or "n/a"
    if ref is None or ref.timing is None:
        return "?"
    r = cell.timing.seconds / ref.timing.seconds
    text = f"{r:.3g}×" if r < 1000 else f"{r:,.0f}×"
    if cell.error is not None and cell.error > GRAD_RTOL:
        text += f" ✗ (err {cell.error:.0e})"
    if cell.timing.repeats < 5:
        text += f" ({cell.timing.repeats} run{'s' if cell.timing.repeats > 1 else ''})"
    return text


def fmt_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


ARRAY_INTRO = (
    "Array problems (float64 NumPy arrays; the gradient is w.r.t. the named arrays). "
    "Same ratios: time of one call divided by s2s_ad's Numba gradient call, **>1 means "
    "slower than s2s_ad**. s2s_ad differentiates the code as written (GMM: index loops; "
    "MLP: vectorised NumPy); JAX, PyTorch and autograd get a vectorised formulation "
    "(`peers.py`). Every tool runs on one thread.")
LOOP_INTRO = (
    "Array statements in loops (`loop_problems.py`: NumPy slices, small arrays, `@` and "
    "`inv` inside time-stepping and pair loops, written as a user writes them). Same "
    "ratios, to s2s_ad's Numba gradient, **>1 means slower than s2s_ad**; s2s_ad against "
    "the `numba.njit` primal of the same function is the primal column's inverse. JAX "
    "uses `lax.fori_loop`/`lax.scan` or a vectorised form, PyTorch eager the same loops "
    "or a vectorised form (`loop_peers.py`). Every tool runs on one thread.")


def array_tables(array_problems, tools, results: Results, intro: str = ARRAY_INTRO
                 ) -> list[str]:
    """The ratio table and raw times of the array problems (one size each)."""
    if not array_problems:
        return []
    cols = [t for t in ARRAY_TOOL_ORDER if t in tools]
    lines = [
        "",
        intro,
        "",
        "| problem | sizes | " + " | ".join(TOOL_TITLES[c] for c in cols) + " |",
        "|---|---|" + "---:|" * len(cols),
    ]
    for p in array_problems:
        ref = results.cells.get((p.name, 0, REFERENCE))
        row = [fmt_ratio(results.cells.get((p.name, 0, c)), ref) for c in cols]
        lines.append(f"| {p.name} | {p.size} | " + " | ".join(row) + " |")
    lines += [
        "",
        "Raw times of the array problems (this machine, this run only), and s2s_ad's "
        "gradient against central differences at 4 random entries of each array "
        "(max |error| / max |gradient|):",
        "",
        "| problem | " + " | ".join(TOOL_TITLES[c] for c in cols) + " | FD rel. error |",
        "|---|" + "---:|" * (len(cols) + 1),
    ]
    for p in array_problems:
        row = []
        for c in cols:
            cell = results.cells.get((p.name, 0, c))
            row.append(fmt_seconds(cell.timing.seconds) if cell and cell.timing
                       else (cell.note if cell and cell.note else "n/a"))
        fd = results.fd_error.get((p.name, 0))
        lines.append(f"| {p.name} | " + " | ".join(row)
                     + f" | {'n/a' if fd is None else f'{fd:.1e}'} |")
    return lines


GRADIENT_TOOLS = [REFERENCE, KERNEL, "s2s_ad-python", "hand-numba", "jax", "torch", "autograd"]


def loop_ratio_table(loop_problems, tools, results: Results) -> list[str]:
    """The loop family's gradients as multiples of the ``numba.njit`` primal (issue 22's
    measure: a gradient at <= 3x its primal), and s2s_ad against JAX."""
    if not loop_problems:
        return []
    cols = [t for t in GRADIENT_TOOLS if t in tools]
    lines = [
        "",
        "The same gradients as multiples of the `numba.njit` primal of the same function "
        "(time of one gradient call / time of one primal call, same run), and s2s_ad's "
        "gradient against JAX's (**>1 means s2s_ad is slower than JAX**):",
        "",
        "| problem | primal, `numba.njit` | " + " | ".join(TOOL_TITLES[c] for c in cols)
        + " | s2s_ad / JAX |",
        "|---|---:|" + "---:|" * (len(cols) + 1),
    ]
    for p in loop_problems:
        primal = results.cells.get((p.name, 0, "primal-numba"))
        row = [fmt_ratio(results.cells.get((p.name, 0, c)), primal) for c in cols]
        ours = results.cells.get((p.name, 0, REFERENCE))
        jax = results.cells.get((p.name, 0, "jax"))
        lines.append(f"| {p.name} | "
                     + (fmt_seconds(primal.timing.seconds) if primal and primal.timing
                        else "n/a")
                     + " | " + " | ".join(row) + f" | {fmt_ratio(ours, jax)} |")
    return lines


def report(problems, array_problems, sizes, tools, versions, skipped, results: Results,
           command: str,
           started: str, wall: float, mach: dict[str, str], loop_problems=()) -> str:
    cols = [t for t in TOOL_ORDER if t in tools]
    lines = [
        "# s2s_ad benchmark results",
        "",
        f"- date: {started}",
        f"- command: `{command}`",
        f"- machine: {mach['cpus']} CPUs, {mach['cpu']}, {mach['ram']} RAM, {mach['os']}; "
        f"load average at the end {mach['load']}",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()),
        f"- wall time of the run: {wall / 60:.1f} min",
    ]
    for name, why in skipped.items():
        lines.append(f"- skipped {name}: {why}")
    lines += [] if not problems else [
        "",
        f"Time of one gradient call divided by the time of s2s_ad's (Numba) gradient call "
        f"for the same problem and n: **>1 means slower than s2s_ad**. Warm calls, min over "
        f"5 to 20 repeats (fewer where marked). The primal columns compute only the value. "
        f"Every gradient agreed with s2s_ad's to {GRAD_RTOL:g} relative unless marked ✗.",
        "",
        "| problem | n | " + " | ".join(TOOL_TITLES[c] for c in cols) + " |",
        "|---|---:|" + "---:|" * len(cols),
    ]
    for p in problems:
        for n in sizes:
            ref = results.cells.get((p.name, n, REFERENCE))
            row = [fmt_ratio(results.cells.get((p.name, n, c)), ref) for c in cols]
            lines.append(f"| {p.name} | {n:,} | " + " | ".join(row) + " |")
    lines += array_tables(array_problems, tools, results)
    lines += array_tables(loop_problems, tools, results, LOOP_INTRO)
    lines += loop_ratio_table(loop_problems, tools, results)
    lines += memory_table(problems, [*array_problems, *loop_problems], memory_size(sizes),
                          results)
    lines += cold_start_table(results.cold)
    lines += loop_cold_table(results.loop_cold)
    lines += [
        "",
        "One-off costs (seconds, not ratios): s2s_ad's first gradient call in this process "
        "with an empty cache directory (transform + Numba compile), its first call in a "
        "second process that finds Numba's disk cache, JAX's first call minus its second "
        f"(trace + XLA compile, at n={sizes[0]}; JAX recompiles for each n, which is static "
        "for `fori_loop`), the hand-written Numba gradient's first call. \"path\" is what "
        "`ad.explain` reports for s2s_ad's gradient.",
        "",
        "| problem | features | path | s2s_ad cold | s2s_ad disk cache | JAX | hand Numba |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    def get(d: dict, name: str) -> str:
        return fmt_seconds(d[name]) if name in d else "n/a"

    for p in [*problems, *array_problems, *loop_problems]:
        lines.append(f"| {p.name} | {p.features} | {results.paths.get(p.name, 'n/a')} | "
                     f"{get(results.compile_s2s, p.name)} | "
                     f"{get(results.compile_s2s_cached, p.name)} | "
                     f"{get(results.compile_jax, p.name)} | "
                     f"{get(results.compile_hand, p.name)} |")
    lines += [] if not problems else [
        "",
        "Raw times of s2s_ad's Numba gradient (the denominators above; this machine, this "
        "run only) and its agreement with central finite differences:",
        "",
        "| problem | n | s2s_ad-numba time | primal Python time | FD rel. error |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in problems:
        for n in sizes:
            ref = results.cells.get((p.name, n, REFERENCE))
            prim = results.cells.get((p.name, n, "primal-python"))
            fd = results.fd_error.get((p.name, n))
            lines.append(
                f"| {p.name} | {n:,} | "
                f"{fmt_seconds(ref.timing.seconds) if ref and ref.timing else 'n/a'} | "
                f"{fmt_seconds(prim.timing.seconds) if prim and prim.timing else 'n/a'} | "
                f"{'n/a' if fd is None else f'{fd:.1e}'} |")
    disagreements = [(k, c) for k, c in results.cells.items()
                     if c.error is not None and c.error > GRAD_RTOL]
    lines += ["", "Gradient disagreements (> 1e-8 relative): "
              + ("none." if not disagreements and not results.problems_found else "")]
    for (pname, n, tool), c in disagreements:
        where = f" n={n}" if n else ""
        lines.append(f"- {tool} on {pname}{where}: relative error {c.error:.2e}")
    for msg in results.problems_found:
        lines.append(f"- {msg}")
    return "\n".join(lines) + "\n"


def memory_size(sizes: list[int]) -> int:
    """The size at which the scalar problems' tape memory is measured: the middle one
    (their Python pullbacks are run, so not the largest)."""
    return sorted(sizes)[len(sizes) // 2]


README_START, README_END = "<!-- results: start -->", "<!-- results: end -->"


def update_readme(readme: Path, results: str,
                  markers: tuple[str, str] = (README_START, README_END)) -> None:
    """Put ``results`` (without its title line) between the README's ``markers``."""
    start, end = markers
    text = readme.read_text()
    if start not in text or end not in text:
        print(f"{readme}: no {start} / {end} markers; not updated")
        return
    body = results.split("\n", 1)[1].strip()
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    readme.write_text(f"{head}{start}\n{body}\n{end}{tail}")
    print(f"tables copied into {readme}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 1_000, 100_000])
    parser.add_argument("--problems", nargs="+", help="names from problems.py (default all)")
    all_tools = [*TOOL_ORDER, "s2s_ad-primal"]
    parser.add_argument("--tools", nargs="+", default=all_tools, choices=all_tools)
    parser.add_argument("--no-arrays", action="store_true",
                        help="only the scalar problems (no GMM, no MLP)")
    parser.add_argument("--max-call-seconds", type=float, default=10.0,
                        help="skip a tool at a size where one call is projected to take longer")
    parser.add_argument("--cell-seconds", type=float, default=3.0,
                        help="time budget for the repeats of one tool at one size")
    parser.add_argument("--no-cold-start", action="store_true",
                        help="skip the cold-start processes (30-line scalar function, MLP, GMM)")
    parser.add_argument("--no-memory", action="store_true",
                        help="skip the tape-memory table (it runs each Python pullback once)")
    parser.add_argument("--output", type=Path, default=HERE / "results.md")
    parser.add_argument("--keep-cache", action="store_true",
                        help="use $S2S_AD_CACHE_DIR as is (default: a fresh empty one, "
                             "so compile times are cold)")
    args = parser.parse_args(argv)

    if not args.keep_cache:
        os.environ["S2S_AD_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2s_ad_bench_cache_")
    sys.path.insert(0, str(HERE))
    # One thread for every tool (BLAS inside NumPy, Numba and autograd; XLA; PyTorch
    # sets its own in peers.py): the machine has 2 shared cores, and s2s_ad's Numba code
    # is single-threaded.  Must be set before NumPy or JAX is imported.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false "
                                       "intra_op_parallelism_threads=1")
    from loop_problems import LOOP_PROBLEMS
    from problems import ARRAY_PROBLEMS, PROBLEMS

    problems = [p for p in PROBLEMS if not args.problems or p.name in args.problems]
    array_problems = [p for p in ARRAY_PROBLEMS
                      if (not args.problems or p.name in args.problems) and not args.no_arrays]
    loop_problems = [p for p in LOOP_PROBLEMS
                     if (not args.problems or p.name in args.problems) and not args.no_arrays]
    started = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    command = "python " + " ".join([os.path.relpath(__file__, HERE.parent)]
                                   + (argv if argv is not None else sys.argv[1:]))
    t0 = time.perf_counter()
    tools, versions, skipped = build_tools(problems, [*array_problems, *loop_problems],
                                           set(args.tools))
    for name, why in skipped.items():
        print(f"skipping {name}: {why}", file=sys.stderr)
    results = Results()
    for p in problems:
        run_problem(p, args.sizes, tools, results, args)
    for p in [*array_problems, *loop_problems]:
        run_array_problem(p, tools, results, args)
    if not args.no_memory:
        measure_memory(problems, [*array_problems, *loop_problems], memory_size(args.sizes),
                       results)
    if not args.no_cold_start:
        results.cold = cold_starts(None if not args.problems else set(args.problems))
        results.loop_cold = loop_cold_starts(loop_problems, "jax" in tools)
    results.compile_s2s_cached = cached_first_calls(
        [p.name for p in [*problems, *array_problems, *loop_problems]], args.sizes)
    text = report(problems, array_problems, args.sizes, tools, versions, skipped, results,
                  command, started, time.perf_counter() - t0, machine(), loop_problems)
    args.output.write_text(text)
    print("\n" + text)
    print(f"written to {args.output}")
    if argv is None and len(sys.argv) == 1:  # the full run: the README shows its tables
        update_readme(HERE / "README.md", text)
    bad = [c for c in results.cells.values() if c.error is not None and c.error > GRAD_RTOL]
    return 1 if bad or results.problems_found else 0


if __name__ == "__main__":
    sys.exit(main())
