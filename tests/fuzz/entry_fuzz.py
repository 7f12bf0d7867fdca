"""The entry-point fuzzer (issue 34): the base fuzzer's programs, wrapped the ways users
call the forward and second-order entry points (``entry_cases.py``: defaults, markers,
aliased and written arguments, float32, structured results, out-of-range indices,
gradients called inside), run through one of ``ad.jvp``, ``ad.jacobian`` (forward or
reverse), ``ad.hvp``, ``ad.hessian`` and the gradient of a gradient
(``ad.jvp(ad.gradient(f), ...)``), on the Python path or with Numba.

    python tests/fuzz/entry_fuzz.py --seed 1 --count 2000 [--jit]

Each case is checked against its reference: values to 1e-10, first derivatives against
finite differences of the reference, second derivatives against finite differences of
the reference's gradient (reverse mode, on the Python path); an out-of-range index
must raise ``IndexError`` naming the program's file; an aliased argument that the
function writes must be refused; a refusal must be located in the program's file (an
``ArgumentError`` names the argument). Outcomes: pass, refused, skip (the program
itself fails at its point), WRONG, CRASH and UNLOCATED (a refusal or an IndexError that
does not name the user's file); jit-refused: Numba cannot compile the generated code
(``JitError``, as the other fuzzers count it).
"""

from __future__ import annotations

import argparse
import collections
import random
import signal
import sys
import tempfile
import traceback
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from entry_cases import VARIATIONS, applicable, build  # noqa: E402
from oracle import Unreliable, choose_point, instrumented_module  # noqa: E402
from programs import load_source, program_from_seed, unload  # noqa: E402

import s2s_ad as ad  # noqa: E402
from s2s_ad.errors import ArgumentError, JitError, NonDifferentiableError  # noqa: E402
from s2s_ad.testing.differences import extrapolated_difference, relative_step  # noqa: E402

MODES = ("jvp", "jacfwd", "jacrev", "hvp", "hessian", "gradgrad")
SECOND_ORDER = {"hvp", "hessian", "gradgrad"}
FAILURES = ("WRONG", "CRASH", "UNLOCATED")


class Wrong(Exception):
    """The entry point returned an answer that its reference contradicts."""


class Skip(Exception):
    """The case cannot be checked (the program or its reference fails at the point)."""


def leaves(value) -> list:
    """The float leaves of a result, in order (dict values by key)."""
    if isinstance(value, dict):
        return [leaf for k in sorted(value) for leaf in leaves(value[k])]
    if isinstance(value, tuple | list):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


def flat(value) -> np.ndarray:
    parts = [np.ravel(np.asarray(leaf, dtype=np.float64)) for leaf in leaves(value)]
    return np.concatenate(parts) if parts else np.zeros(0)


def differentiated(args: tuple) -> list[int]:
    return [i for i, a in enumerate(args)
            if type(a) in (float, np.float32, np.float64)
            or (isinstance(a, np.ndarray) and a.dtype.kind == "f")]


def copies(args: tuple, alias_of=None) -> tuple:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    if alias_of is not None:
        out[alias_of[1]] = out[alias_of[0]]
    return tuple(out)


def moved(args: tuple, v: dict, t: float) -> tuple:
    out = list(copies(args))
    for i, d in v.items():
        out[i] = args[i] + t * d
    return tuple(out)


def close(got, want, error, what: str, rtol: float = 1e-6) -> None:
    got, want = flat(got), flat(want)
    if got.shape != want.shape:
        raise Wrong(f"{what}: {got.size} entries, the reference has {want.size}")
    scale = np.max(np.abs(want), initial=0.0) + np.max(np.abs(got), initial=0.0) + 1.0
    worst = float(np.max(np.abs(got - want), initial=0.0))
    if not worst <= rtol * scale + 10 * float(np.max(error, initial=0.0)):
        raise Wrong(f"{what}: got {got!r}, reference {want!r}")


class Checker:
    """The checks of one case in one mode, on one path."""

    def __init__(self, case, module, jit: bool, rng: np.random.Generator):
        self.case, self.module, self.jit, self.rng = case, module, jit, rng
        self.wrapper = getattr(module, case.wrapper)
        reference = getattr(module, case.reference)
        self.reference = lambda *a: reference(*a, *case.extra)
        self.args = tuple(case.args)
        self.positions = differentiated(self.args)
        self.path = Path(module.__file__).name

    def direction(self) -> tuple:
        out = []
        for i, a in enumerate(self.args):
            if i not in self.positions:
                out.append(None)
            elif isinstance(a, np.ndarray):
                out.append(self.rng.uniform(-1.0, 1.0, a.shape).astype(a.dtype))
            else:
                out.append(float(self.rng.uniform(-1.0, 1.0)))
        return tuple(out)

    def step(self) -> float:
        return max(relative_step(self.args[i], 1e-4) for i in self.positions)

    def first(self, v: tuple):
        """J v of the reference, by finite differences."""
        along = {i: np.asarray(v[i], np.float64) if isinstance(v[i], np.ndarray) else v[i]
                 for i in self.positions}
        base = self.float64(self.args)
        return extrapolated_difference(lambda t: flat(self.reference(*moved(base, along, t))),
                                       self.step())

    def second(self, v: tuple):
        """H v of the reference, by finite differences of its gradient (reverse mode)."""
        gradient = ad.gradient(ad.differentiable(self.reference_source(), jit=False),
                               wrt=tuple(self.positions))
        along = {i: np.asarray(v[i], np.float64) if isinstance(v[i], np.ndarray) else v[i]
                 for i in self.positions}
        base = self.float64(self.args)
        extra = self.case.extra
        try:
            return extrapolated_difference(
                lambda t: flat(gradient(*moved(base, along, t), *extra)), 1e-2 * self.step())
        except NonDifferentiableError as exc:
            raise Skip(f"the reference's gradient is refused: {exc}") from exc

    def reference_source(self):
        return getattr(self.module, self.case.reference)

    @staticmethod
    def float64(args: tuple) -> tuple:
        return tuple(float(a) if type(a) in (np.float32, np.float64) else
                     a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                     else a for a in args)

    def call_args(self) -> tuple:
        return copies(self.args, self.case.alias_of)

    def run(self, mode: str, args: tuple, v: tuple):
        df = ad.differentiable(self.wrapper, jit=self.jit)
        if mode == "jvp":
            return ad.jvp(df, args, v)
        if mode in ("jacfwd", "jacrev"):
            return ad.jacobian(df, mode="forward" if mode == "jacfwd" else "reverse")(*args)
        if mode == "hvp":
            return ad.hvp(df, args, v)
        if mode == "hessian":
            return ad.hessian(df)(*args)
        return ad.jvp(ad.gradient(df), args, v)

    def check(self, mode: str, got, v: tuple) -> None:
        if mode == "jvp":
            value, tangent = got
            close(value, self.reference(*copies(self.float64(self.args))), 0.0, "value", 1e-10)
            estimate, error = self.first(v)
            close(tangent, estimate, error, "jvp tangent")
        elif mode in ("jacfwd", "jacrev"):
            self.check_jacobian(got)
        elif mode == "hvp":
            estimate, error = self.second(v)
            close(got, estimate, error, "H v")
        elif mode == "hessian":
            estimate, error = self.second(v)
            close(self.contract(got, v), estimate, error, "H v from the Hessian")
        else:
            estimate, error = self.second(v)
            close(got[1], estimate, error, "tangent of the gradient")

    def check_jacobian(self, got) -> None:
        blocks = got if len(self.positions) > 1 else (got,)
        if len(blocks) != len(self.positions):
            raise Wrong(f"{len(blocks)} Jacobian blocks for {len(self.positions)} arguments")
        for block, i in zip(blocks, self.positions, strict=True):
            size = int(np.size(self.args[i]))
            columns = np.reshape(flat(block), (-1, size))
            for e in range(size):
                unit = [None] * len(self.args)
                u = np.zeros(size)
                u[e] = 1.0
                unit[i] = u.reshape(np.shape(self.args[i])) if size > 1 or np.ndim(
                    self.args[i]) else 1.0
                for j in self.positions:
                    if unit[j] is None:
                        unit[j] = np.zeros(np.shape(self.args[j])) if np.ndim(
                            self.args[j]) else 0.0
                estimate, error = self.first(tuple(unit))
                close(columns[:, e], estimate, error, f"Jacobian column {e} of argument {i}")

    def contract(self, hessian, v: tuple) -> np.ndarray:
        """sum_j H[i][j] v_j, for every differentiated argument i, flattened."""
        k = len(self.positions)
        rows = hessian if k > 1 else ((hessian,),)
        out = []
        for i, row in zip(self.positions, rows, strict=True):
            size_i = int(np.size(self.args[i]))
            total = np.zeros(size_i)
            for j, block in zip(self.positions, row, strict=True):
                size_j = int(np.size(self.args[j]))
                total += np.reshape(np.asarray(block, np.float64), (size_i, size_j)) @ \
                    np.ravel(np.asarray(v[j], np.float64))
            out.append(total)
        return np.concatenate(out)


def outcome_of_exception(exc: BaseException, checker: Checker) -> tuple[str, str]:
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, NonDifferentiableError):
        location = exc.location
        if location is None or Path(location.filename).name != checker.path:
            return "UNLOCATED", text.splitlines()[0]
        return "refused", text.splitlines()[0]
    if isinstance(exc, ArgumentError):
        return "refused", text.splitlines()[0]
    if isinstance(exc, JitError):  # Numba cannot compile it (jit=True): the other fuzzers'
        return "jit-refused", text.splitlines()[0]  # JIT_REFUSED
    return "CRASH", text + "\n" + "".join(traceback.format_tb(exc.__traceback__)[-4:])


def check_case(case, module, mode: str, jit: bool, seed: int) -> tuple[str, str]:
    """(outcome, detail) of ``case`` in ``mode``."""
    rng = np.random.default_rng(seed)
    checker = Checker(case, module, jit, rng)
    if not checker.positions:
        return "skip", "nothing to differentiate"
    v = checker.direction()
    args = checker.call_args()
    before = copies(args)
    try:
        got = checker.run(mode, args, v)
    except IndexError as exc:
        if case.expect != "IndexError":
            return outcome_of_exception(exc, checker)
        said = str(exc) + " ".join(getattr(exc, "__notes__", []))
        return ("pass", "") if checker.path in said else ("UNLOCATED", f"IndexError: {said}")
    except (NonDifferentiableError, ArgumentError, JitError) as exc:
        return outcome_of_exception(exc, checker)
    except Exception as exc:  # noqa: BLE001 -- every other error is a crash
        return outcome_of_exception(exc, checker)
    if case.expect == "IndexError":
        return "WRONG", f"an index out of range gave {got!r} (Python raises IndexError)"
    if case.expect == "refusal":
        return "WRONG", f"an aliased argument written by the function gave {got!r}"
    if not case.scalar_result and mode in SECOND_ORDER:
        return "WRONG", f"{mode} of a function returning {type(case).__name__} gave {got!r}"
    try:
        check_caller_arrays(checker, before, args)
        checker.check(mode, got, v)
    except Wrong as exc:
        return "WRONG", str(exc)
    return "pass", ""


def check_caller_arrays(checker: Checker, before: tuple, after: tuple) -> None:
    """The caller's arrays are unchanged, or changed as one call of the function
    changes them."""
    once = copies(before, checker.case.alias_of)
    checker.wrapper(*once)
    for b, a, o in zip(before, after, once, strict=True):
        if isinstance(a, np.ndarray) and not (np.array_equal(a, b) or np.array_equal(a, o)):
            raise Wrong(f"the caller's array changed from {b!r} to {a!r} "
                        f"(one call of the function leaves {o!r})")


def check_float32(case, module, mode: str, jit: bool, seed: int) -> tuple[str, str]:
    """float32 arguments: the same answer as float64 to single precision, in float32."""
    wide = check_case(case, module, mode, jit, seed)
    if wide[0] != "pass":
        return wide
    single = tuple(np.float32(a) if type(a) is float else
                   a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                   else a for a in case.args)
    checker = Checker(case, module, jit, np.random.default_rng(seed))
    v64 = checker.direction()
    v32 = tuple(None if t is None else np.float32(t) if isinstance(t, float)
                else t.astype(np.float32) for t in v64)
    try:
        got64 = checker.run(mode, copies(case.args), v64)
        got32 = checker.run(mode, copies(single), v32)
    except Exception as exc:  # noqa: BLE001
        return outcome_of_exception(exc, checker)
    # the precision s2s_ad's own value has (a list of float32 numbers is a float64 array)
    value32 = ad.differentiable(checker.wrapper, jit=jit)(*copies(single))
    derivative = got32[1] if mode in ("jvp", "gradgrad") else got32
    want32 = mode in ("hvp", "hessian", "gradgrad") or np.asarray(value32).dtype == np.float32
    for leaf in leaves(derivative):
        dtype = getattr(leaf, "dtype", None)
        if want32 and dtype is not None and dtype != np.float32:
            return "WRONG", f"float32 arguments gave a {dtype} {mode} result"
    try:
        close(flat(got32), flat(got64), 0.0, "float32 against float64", 2e-3)
    except Wrong as exc:
        return "WRONG", str(exc)
    return "pass", ""


def run_one(seed: int, directory: Path, jit: bool, variation: str | None = None,
            mode: str | None = None):
    """(outcome, detail, case, mode) of program ``seed``."""
    rng = random.Random(seed)
    program = program_from_seed(seed, max_statements=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            base = load_source(program.source, directory)
            namespace, holder = instrumented_module(program.source)
            fn = getattr(base, program.fname)
            args, value, _, _ = choose_point(fn, namespace, holder, program.fname,
                                             program.points)
        except Unreliable:
            return "skip", "no reliable point", None, None
        except Exception as exc:  # noqa: BLE001
            return "skip", f"invalid program: {exc}", None, None
        finally:
            if "base" in locals():
                unload(base)
        scalar = np.ndim(value) == 0
        choices = [x for x in VARIATIONS if applicable(x, args, scalar)]
        variation = variation or rng.choice(choices)
        if variation not in choices:
            return "skip", f"{variation} does not apply", None, None
        mode = mode or rng.choice(MODES)
        case = build(program, args, value, variation, rng)
        module = load_source(case.source, directory, stem="entry_case")
        try:
            try:
                if case.expect == "derivative":
                    with np.errstate(all="raise"):
                        getattr(module, case.wrapper)(*copies(case.args, case.alias_of))
            except Exception as exc:  # noqa: BLE001
                return "skip", f"the wrapper fails: {type(exc).__name__}", case, mode
            check = check_float32 if variation == "float32" else check_case
            return (*check(case, module, mode, jit, seed), case, mode)
        finally:
            unload(module)


def _alarm(signum, frame):
    raise TimeoutError("no answer in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--jit", action="store_true", help="the Numba path")
    parser.add_argument("--variation", choices=VARIATIONS)
    parser.add_argument("--mode", choices=MODES)
    parser.add_argument("--only", type=int, help="run program number ONLY of the seed")
    parser.add_argument("--timeout", type=int, default=300)
    options = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="s2s_entry_fuzz_"))
    counts: collections.Counter = collections.Counter()
    by_kind: collections.Counter = collections.Counter()
    refusals: collections.Counter = collections.Counter()
    numbers = [options.only] if options.only is not None else range(options.count)
    signal.signal(signal.SIGALRM, _alarm)
    for k in numbers:
        seed = options.seed * 1_000_000 + k
        signal.alarm(options.timeout)
        try:
            status, detail, case, mode = run_one(seed, directory, options.jit,
                                                 options.variation, options.mode)
        except TimeoutError:
            status, detail, case, mode = "CRASH", "timeout", None, None
        finally:
            signal.alarm(0)
        counts[status] += 1
        if (k + 1) % 250 == 0:
            print(f"after {k + 1} programs: {dict(counts)}", flush=True)
        if case is not None:
            by_kind[(case.variation, mode, status)] += 1
        if status == "refused":
            refusals[detail[:100]] += 1
        if status in FAILURES:
            source = case.source if case else ""
            print(f"### program {k} (seed {seed}) {status}: "
                  f"{case.variation if case else ''} / {mode}\n{source}\n{detail}\n",
                  flush=True)
    print(dict(counts))
    table = collections.defaultdict(collections.Counter)
    for (variation, _mode, status), n in by_kind.items():
        table[variation][status] += n
    for variation in sorted(table):
        print(f"  {variation:14s} {dict(table[variation])}")
    for reason, n in refusals.most_common(12):
        print(f"{n:5d}  {reason}")
    bad = sum(counts[s] for s in FAILURES)
    print(f"failures: {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
