"""The fuzzer's oracle: is s2s_ad right about one generated program?

For a program and an evaluation point it checks

(a) the decorated function's value (``jit=False``) equals the plain Python value;
(b) for a scalar result, ``ad.gradient`` (``jit=False``) matches finite
    differences of the plain function (rtol 1e-4, atol 1e-6), and
    ``ad.value_and_gradient`` returns the same value and gradient;
(c) for an array result, the dot-product identity ``<u, J v> == <J^T u, v>``
    with the pullback of ``ad.value_with_pullback``;
(d) calling the pullback twice gives the same answer (and, for a scalar
    result, the answer ``ad.gradient`` gave);
(e) optionally, the Numba path (``jit=True``) agrees with the Python path to
    1e-10 (relative; 1e-12 absolute);
(f) globals changed between calls: after the checks, each step of
    ``program.updates`` rebinds globals of the program's module (or changes
    global arrays in place), and (a)-(e) run again, with the same decorated
    functions, against finite differences of the plain function at the new
    values (check names get ``@update1``, ...);
(g) a closure's twin: the second closure made by the same factory with
    another array is checked like the first (``@twin``), then the first one
    again (``@first-again``): it must give the same gradient as before,
    bit for bit.

Int and bool array arguments are not differentiated (``ad.gradient`` leaves
them out of the gradient), so finite differences skip them too.

Outcomes: ``OK``; ``WRONG`` (a value or derivative mismatch: the important
class); ``CRASH`` (an exception from s2s_ad other than
``NonDifferentiableError``); ``REFUSED`` (a ``NonDifferentiableError``:
acceptable, counted); ``SKIP`` (no evaluation point where the program is
smooth and finite differences are trustworthy); ``INVALID`` (the plain
program itself fails: a generator bug). The Numba check adds ``JIT_REFUSED``
(``JitError``: Numba could not compile) to the ``OK`` cases.

Smoothness comes from an instrumented copy of the module: every comparison
(element by element for arrays), ``max``/``min`` (of two values, or of one
tuple or list: the gap between its two largest items), ``%``, ``atan2`` and
``hypot`` reports how far it is from flipping (or from its kink) and which way
it went. A point is used only if
every margin exceeds ``MARGIN`` (1e-3) and every finite-difference stencil
point takes the same branches as the point itself.

Finite differences: a fourth-order central stencil with step
``h = 1e-5 * max(1, |x|)`` (the estimate), cross-checked against a
second-order central difference with step ``1e-6 * max(1, |x|)``; when the two
disagree by more than a tenth of the tolerance the point is skipped as
untrustworthy.
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import signal
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from programs import Program, load_source, unload

RTOL = 1e-4
ATOL = 1e-6
JIT_RTOL = 1e-10
JIT_ATOL = 1e-12
MARGIN = 1e-3
MAGNITUDE = 1e6


# ---------------------------------------------------------------------------
# Instrumentation
# ---------------------------------------------------------------------------


class Trace:
    """What one instrumented run saw: per comparison or kink, its outcome and its
    signed distance from flipping."""

    def __init__(self) -> None:
        self.outcomes: list = []
        self.distances: list[float] = []
        self.always: list[bool] = []

    def note(self, outcome, distance: float, always: bool = False) -> None:
        self.outcomes.append(outcome)
        self.distances.append(float(distance))
        self.always.append(always)

    def margin(self, moved: Trace) -> float:
        """The smallest distance among the events whose distance changes between this run
        and ``moved`` (a run at a slightly moved point): the others do not depend on the
        inputs, so they cannot flip. Singular points (``atan2``/``hypot`` at the origin)
        count even when they do not move: the chain rule multiplies 0 by an infinite
        partial derivative there, and finite differences cannot judge that."""
        out = math.inf
        for d, e, always in zip(self.distances, moved.distances, self.always, strict=True):
            if d != e or always:
                out = min(out, abs(d))
        return out


_OPS = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b,
        ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
_OP_TEXT = {ast.Lt: "<", ast.Gt: ">", ast.LtE: "<=", ast.GtE: ">=", ast.Eq: "==",
            ast.NotEq: "!="}


class _Instrument(ast.NodeTransformer):
    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) != 1 or type(node.ops[0]) not in _OP_TEXT:
            return node
        return ast.copy_location(ast.Call(
            func=ast.Name("_fz_cmp", ast.Load()),
            args=[node.left, ast.Constant(_OP_TEXT[type(node.ops[0])]), node.comparators[0]],
            keywords=[]), node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Mod):
            return ast.copy_location(ast.Call(func=ast.Name("_fz_mod", ast.Load()),
                                              args=[node.left, node.right], keywords=[]), node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) else None)
        if name in ("max", "min") and isinstance(func, ast.Name) and len(node.args) == 1 \
                and not node.keywords and not isinstance(node.args[0], ast.Starred):
            # max/min of one tuple or list
            return ast.copy_location(ast.Call(func=ast.Name(f"_fz_{name}", ast.Load()),
                                              args=node.args, keywords=[]), node)
        if name in ("max", "min", "atan2", "hypot") and len(node.args) == 2 \
                and not node.keywords:
            if isinstance(func, ast.Name) and name in ("max", "min") or name in ("atan2",
                                                                                 "hypot"):
                return ast.copy_location(ast.Call(func=ast.Name(f"_fz_{name}", ast.Load()),
                                                  args=node.args, keywords=[]), node)
        return node


def instrumented_module(source: str) -> tuple[dict, Trace]:
    """Exec an instrumented copy of ``source``; returns its namespace and a trace holder."""
    tree = _Instrument().visit(ast.parse(source))
    ast.fix_missing_locations(tree)
    holder = {"trace": Trace()}

    def cmp(a, op, b):
        out = _OPS[op](a, b)
        if np.ndim(out):  # element-wise: one event per element
            diff = np.broadcast_to(np.asarray(a, dtype=float) - np.asarray(b, dtype=float),
                                   np.shape(out))
            for o, d in zip(np.ravel(out).tolist(), np.ravel(diff).tolist(), strict=True):
                holder["trace"].note(o, d)
        else:
            holder["trace"].note(bool(out), a - b)
        return out

    def top_two(items, sign):
        """max/min of one tuple or list: which item wins and by how much."""
        values = [sign * float(v) for v in items]
        order = sorted(range(len(values)), key=lambda i: -values[i])
        if len(values) > 1:
            holder["trace"].note(order[0], values[order[0]] - values[order[1]])

    def mx(a, *rest):
        if not rest:
            a = list(a)  # a generator expression can be iterated once
            top_two(a, 1.0)
            return max(a)
        b, = rest
        holder["trace"].note(a >= b, a - b)
        return max(a, b)

    def mn(a, *rest):
        if not rest:
            a = list(a)  # a generator expression can be iterated once
            top_two(a, -1.0)
            return min(a)
        b, = rest
        holder["trace"].note(a <= b, a - b)
        return min(a, b)

    def mod(a, b):
        q = a / b
        holder["trace"].note(math.floor(q), abs(b) * abs(q - round(q)))
        return a % b

    def atan2(y, x):
        holder["trace"].note((x < 0, y >= 0), y if x < 0 else math.hypot(x, y))
        holder["trace"].note(None, math.hypot(x, y), always=True)
        return math.atan2(y, x)

    def hypot(a, b):
        holder["trace"].note(None, math.hypot(a, b), always=True)
        return math.hypot(a, b)

    namespace: dict[str, Any] = {"__name__": "fuzz_instrumented", "_fz_cmp": cmp,
                                 "_fz_max": mx, "_fz_min": mn, "_fz_mod": mod,
                                 "_fz_atan2": atan2, "_fz_hypot": hypot}
    exec(compile(tree, "<instrumented>", "exec"), namespace)
    return namespace, holder


# ---------------------------------------------------------------------------
# Finite differences
# ---------------------------------------------------------------------------


def differentiable(a) -> bool:
    """Is this argument differentiated (a float or a float array; int and bool arrays
    are not, and ``ad.gradient`` leaves them out)?"""
    if isinstance(a, np.ndarray):
        return a.dtype.kind == "f"
    return isinstance(a, float | np.floating)


def diff_args(args: tuple) -> list:
    return [a for a in args if differentiable(a)]


def _flat_inputs(args: tuple) -> list[tuple[int, int | None]]:
    """(argument position, element or None) of every differentiated scalar input."""
    out = []
    for i, a in enumerate(args):
        if not differentiable(a):
            continue
        if isinstance(a, np.ndarray):
            out += [(i, k) for k in range(a.size)]
        else:
            out.append((i, None))
    return out


def _shift(args: tuple, direction: list[float], step: float) -> tuple:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for (i, k), d in zip(_flat_inputs(args), direction, strict=True):
        if d == 0.0:
            continue
        if k is None:
            out[i] = out[i] + step * d
        else:
            out[i][k] = out[i][k] + step * d
    return tuple(out)


class Unreliable(Exception):
    """Finite differences cannot judge this point."""


def directional_derivative(fn, args: tuple, direction: list[float], scale: float,
                           check) -> Any:
    """d/dt fn(args + t * direction) at 0; ``check(point)`` runs on every stencil point."""
    from s2s_ad.testing import central_difference, five_point_difference

    def along(t: float) -> Any:
        point = _shift(args, direction, t)
        check(point)
        return fn(*point)

    fourth = five_point_difference(along, 1e-5 * scale)[0]
    second = central_difference(along, 1e-6 * scale)[0]
    if not np.all(np.abs(fourth - second) <= 0.1 * (ATOL + RTOL * np.abs(fourth))):
        raise Unreliable(f"finite differences disagree: {fourth} vs {second}")
    return fourth


def fd_gradient(fn, args: tuple, check) -> list:
    """Finite-difference gradient, shaped like the differentiated arguments."""
    inputs = _flat_inputs(args)
    flat = []
    for j, (i, k) in enumerate(inputs):
        direction = [0.0] * len(inputs)
        direction[j] = 1.0
        x = args[i] if k is None else args[i][k]
        flat.append(float(directional_derivative(fn, args, direction, max(1.0, abs(x)),
                                                 check)))
    return _split_like(flat, args)


# ---------------------------------------------------------------------------
# Outcomes
# ---------------------------------------------------------------------------


@dataclass
class Outcome:
    status: str  # OK WRONG CRASH REFUSED SKIP INVALID
    check: str = ""  # which check failed (value, gradient, pullback-twice, dot, numba-...)
    detail: str = ""
    args: tuple | None = None
    expected: Any = None
    got: Any = None
    jit: str = ""  # "", "OK", "WRONG", "CRASH", "JIT_REFUSED", "REFUSED"
    jit_detail: str = ""
    error_type: str = ""
    notes: list[str] = field(default_factory=list)
    reference: Any = None  # the gradient (or pullback) of the Python path, when OK
    jit_reference: Any = None  # the same on the Numba path
    fd: Any = None  # the finite-difference gradient (scalar results)

    @property
    def signature(self) -> str:
        if self.status == "CRASH":
            return f"CRASH {self.check} {self.error_type}: {_squash(self.detail)}"
        return f"{self.status} {self.check}"


def _squash(text: str) -> str:
    """An error message without the program-specific parts (for grouping)."""
    import re

    first = text.strip().splitlines()[0] if text.strip() else ""
    first = re.sub(r"/\S+", "<path>", first)
    first = re.sub(r"_[0-9a-f]{16}\b", "_<hash>", first)
    first = re.sub(r"\b\d+(\.\d+)?\b", "N", first)
    first = re.sub(r"\bbut \w+ returns\b", "but <function> returns", first)
    return first[:140]


def refusal_reason(detail: str) -> str:
    """A refusal message without its location and names (for counting)."""
    import re

    text = re.sub(r"^\S+:\d+:\d+: error: ", "", detail.strip())
    text = re.sub(r"'[^']*'", "'_'", text)
    return text[:120]


def as_list(gradient, count: int) -> list:
    if count == 1:
        return [gradient]
    return list(gradient)


def _close(got, expected, rtol: float, atol: float) -> bool:
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    if got.shape != expected.shape:
        return False
    return bool(np.all(np.abs(got - expected) <= atol + rtol * np.abs(expected)))


def _all_close(gots: list, expecteds: list, rtol: float, atol: float) -> bool:
    return len(gots) == len(expecteds) and all(
        _close(g, e, rtol, atol) for g, e in zip(gots, expecteds, strict=True))


def _all_same(gots: list, expecteds: list) -> bool:
    """Bit-for-bit the same numbers (NaN equals NaN)."""
    return len(gots) == len(expecteds) and all(
        np.array_equal(np.asarray(g, dtype=float), np.asarray(e, dtype=float), equal_nan=True)
        for g, e in zip(gots, expecteds, strict=True))


def _fmt(value) -> str:
    if isinstance(value, list | tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=10, separator=", ")
    if isinstance(value, float | np.floating):
        return repr(float(value))
    return repr(value)


class _Timeout(Exception):
    pass


def _alarm(signum, frame):  # pragma: no cover - only on a hang
    raise _Timeout("timed out")


# ---------------------------------------------------------------------------
# Checking one program
# ---------------------------------------------------------------------------


def choose_point(fn, namespace: dict, holder: dict, fname: str, points: list[tuple]):
    """The first point where the program is finite, smooth and FD is reliable.

    Returns (args, value, fd_gradient) or raises Unreliable with the last reason.
    """
    inst = namespace[fname]
    reason = "no points"
    for args in points:
        try:
            with np.errstate(all="raise"):
                value = fn(*_copy_args(args))
                holder["trace"] = Trace()
                inst(*_copy_args(args))
            base = holder["trace"]
            arr = np.asarray(value, dtype=float)
            if not np.all(np.isfinite(arr)) or np.max(np.abs(arr)) > MAGNITUDE:
                reason = f"value {value!r} is not finite or too large"
                continue
            nudge = [1e-7 * (1 + 0.37 * j) for j in range(len(_flat_inputs(args)))]
            holder["trace"] = Trace()
            inst(*_shift(args, nudge, max(1.0, *(float(np.max(np.abs(a))) for a in args))))
            moved = holder["trace"]
            if moved.outcomes != base.outcomes:
                reason = "a branch flips within 1e-7 of the point"
                continue
            margin = base.margin(moved)
            if margin <= MARGIN:
                reason = f"a branch or kink is within {margin:.2e} of flipping"
                continue

            def check(point, base=base):
                holder["trace"] = Trace()
                inst(*point)
                if holder["trace"].outcomes != base.outcomes:
                    raise Unreliable("a finite-difference stencil point takes another branch")

            with np.errstate(all="raise"):
                if isinstance(value, np.ndarray):
                    fd = None
                else:
                    fd = fd_gradient(fn, args, check)
            return args, value, fd, check
        except Unreliable as exc:
            reason = str(exc)
        except (ArithmeticError, FloatingPointError, ValueError, OverflowError) as exc:
            reason = f"plain program raised {type(exc).__name__}: {exc}"
    raise Unreliable(reason)


def _copy_args(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def check_program(program: Program, directory: Path, jit: bool = False,
                  timeout: int = 120, seed: int = 0) -> Outcome:
    """Run every check on ``program``; the first failing check decides the outcome."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return _check_program(program, directory, jit, seed)
    except _Timeout:
        return Outcome("CRASH", "timeout", f"no answer within {timeout} s",
                       error_type="Timeout")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _warm_lists(x, v):
    """Lists of floats and of arrays, read the ways generated programs read them."""
    floats = [x * w for w in v]
    arrays = []
    for k in range(2):
        arrays.append(v * (x + k))
    return (sum(floats) + max(floats) + min(floats) + floats[-1] + len(floats)
            + np.sum(np.array(floats)) + np.mean(floats) + np.sum(np.stack(arrays))
            + np.sum(np.concatenate(arrays)) + np.sum(sum(arrays)) + np.sum(arrays[0]))


_warmed: list[bool] = []


def warm_numba() -> None:
    """Compile Numba's typed-list operations (and s2s_ad's list runtime) once in this
    process, before :func:`check_isolated` forks: each child inherits them compiled,
    where a program with lists would otherwise spend seconds compiling them again."""
    if _warmed:
        return
    _warmed.append(True)
    import s2s_ad as ad

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = ad.differentiable(_warm_lists, jit=True)
            ad.value_and_gradient(df)(0.5, np.array([0.5, -1.0, 2.0]))
    except Exception:  # noqa: BLE001 - only a warm-up: the checks report any error
        pass


def check_isolated(program: Program, directory: Path, jit: bool = False, timeout: int = 120,
                   seed: int = 0, check=None) -> Outcome:
    """:func:`check_program` (or ``check``, of the same arguments) in a forked child
    process, so that a hard crash (a signal raised in compiled code) becomes a CRASH
    outcome instead of ending the run. With ``jit``, list operations are compiled first
    in this process (:func:`warm_numba`)."""
    import os
    import pickle

    if jit:
        warm_numba()

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_end)
        try:
            outcome = (check or check_program)(program, directory, jit=jit, timeout=timeout,
                                               seed=seed)
        except BaseException as exc:  # noqa: BLE001 - report anything
            outcome = Outcome("CRASH", "child", f"{type(exc).__name__}: {exc}",
                              error_type=type(exc).__name__)
        try:
            data = pickle.dumps(outcome)
        except Exception as exc:
            data = pickle.dumps(Outcome("CRASH", "child", f"unpicklable outcome: {exc}"))
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        data = inp.read()
    _, status = os.waitpid(pid, 0)
    if data:
        return pickle.loads(data)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return Outcome("CRASH", "numba" if jit else "process",
                       f"the process was killed by {name}", error_type=name,
                       args=_point_of(program))
    return Outcome("CRASH", "process", f"the child exited with status {status} and no answer",
                   error_type="exit")


def _point_of(program: Program) -> tuple | None:
    """The evaluation point the checks would use (plain Python only: safe to run)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            module = load_source(program.source, Path(tempfile.mkdtemp(prefix="s2s_point_")))
            namespace, holder = instrumented_module(program.source)
        try:
            return choose_point(getattr(module, program.fname), namespace, holder,
                                program.fname, program.points)[0]
        finally:
            unload(module)
    except Exception:
        return None


def _check_program(program: Program, directory: Path, jit: bool, seed: int) -> Outcome:
    import s2s_ad as ad

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            module = load_source(program.source, directory)
            namespace, holder = instrumented_module(program.source)
    except Exception as exc:  # the generator wrote something Python rejects
        return Outcome("INVALID", "load", f"{type(exc).__name__}: {exc}")
    try:
        fn = getattr(module, program.fname)
        try:
            point = choose_point(fn, namespace, holder, program.fname, program.points)
        except Unreliable as exc:
            return Outcome("SKIP", "point", str(exc))
        except Exception as exc:
            return Outcome("INVALID", "plain", f"{type(exc).__name__}: {exc}")
        pair, bad = _run(ad, "prepare", lambda: _decorated(ad, fn, jit))
        if bad:
            return bad
        df, dj = pair
        first = check_at(ad, df, dj, fn, *point, program.array_result, seed)
        if first.status != "OK":
            return first
        if program.twin is not None:
            outcome = _check_twin(ad, program, module, namespace, holder, df, dj, fn, point,
                                  first, jit, seed)
            if outcome.status != "OK":
                return outcome
        for number, step in enumerate(program.updates, 1):
            what = f"after update {number} ({program.describe_step(step)})"
            _apply_update(step, vars(module), namespace)
            try:
                point = choose_point(fn, namespace, holder, program.fname,
                                     [first.args, *program.points])
            except Unreliable as exc:
                first.notes.append(f"{what}: not checked, {exc}")
                continue
            except Exception as exc:
                return Outcome("INVALID", f"plain@update{number}",
                               f"{what}: {type(exc).__name__}: {exc}")
            outcome = check_at(ad, df, dj, fn, *point, program.array_result, seed)
            if outcome.status != "OK":
                return _relabel(outcome, f"@update{number}", what)
            if dj is not None and outcome.jit != first.jit:
                first.notes.append(f"{what}: numba {outcome.jit} {outcome.jit_detail}")
        return first
    finally:
        unload(module)


def _decorated(ad, fn, jit: bool):
    """The function decorated for the Python path and, with ``jit``, for Numba (one object
    each, kept across global updates: it must read the new values itself)."""
    return ad.differentiable(fn, jit=False), ad.differentiable(fn, jit=True) if jit else None


def _relabel(outcome: Outcome, suffix: str, what: str) -> Outcome:
    outcome.check = f"{outcome.check}{suffix}"
    outcome.detail = f"{what}: {outcome.detail}" if outcome.detail else what
    return outcome


def _apply_update(step: list, module_namespace: dict, instrumented: dict) -> None:
    """Rebind or change in place the globals of ``step`` in the program's module and in
    its instrumented copy (which has its own arrays)."""
    for name, how, value in step:
        for namespace in (module_namespace, instrumented):
            new = np.array(value) if isinstance(value, list) else value
            if how == "rebind":
                namespace[name] = new
            else:
                namespace[name][:] = new


def _check_twin(ad, program: Program, module, namespace: dict, holder: dict, df, dj, fn,
                point: tuple, first: Outcome, jit: bool, seed: int) -> Outcome:
    """The second closure of the factory (another array) gets its own gradient, and the
    first one, checked again after it, still gets its own."""
    twin = getattr(module, program.twin)
    what = f"the second closure {program.twin}"
    try:
        twin_point = choose_point(twin, namespace, holder, program.twin,
                                  [first.args, *program.points])
    except Unreliable as exc:
        first.notes.append(f"{what}: not checked, {exc}")
        return first
    except Exception as exc:
        return Outcome("INVALID", "plain@twin", f"{what}: {type(exc).__name__}: {exc}")
    pair, bad = _run(ad, "prepare", lambda: _decorated(ad, twin, jit))
    if bad:
        return _relabel(bad, "@twin", what)
    df2, dj2 = pair
    outcome = check_at(ad, df2, dj2, twin, *twin_point, program.array_result, seed)
    if outcome.status != "OK":
        return _relabel(outcome, "@twin", what)
    again = check_at(ad, df, dj, fn, *point, program.array_result, seed)
    what = f"{program.fname} again, after {program.twin}"
    if again.status != "OK":
        return _relabel(again, "@first-again", what)
    if not _all_same(again.reference, first.reference):
        return Outcome("WRONG", "first-again", f"{what}: another gradient than before",
                       args=first.args, expected=first.reference, got=again.reference)
    if jit and first.jit_reference is not None and again.jit_reference is not None and \
            not _all_same(again.jit_reference, first.jit_reference):
        return Outcome("WRONG", "numba-first-again", f"{what}: another Numba gradient",
                       args=first.args, expected=first.jit_reference, got=again.jit_reference)
    if twin_point[0] is first.args or _same_args(twin_point[0], first.args):
        # at the same point: do the two closures' gradients differ as they should?
        differ = not _all_close(outcome.fd or [], first.fd or [], RTOL, ATOL)
        first.notes.append(f"{what}: checked at the same point, finite differences "
                           f"{'differ' if differ else 'agree'}")
    return first


def _same_args(a: tuple, b: tuple) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def _run(ad, what: str, thunk) -> tuple[Any, Outcome | None]:
    """Run ``thunk``; an exception becomes a REFUSED or CRASH outcome."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return thunk(), None
    except _Timeout:
        raise
    except ad.NonDifferentiableError as exc:
        return None, Outcome("REFUSED", what, str(exc).splitlines()[0] if str(exc) else "",
                             error_type=type(exc).__name__)
    except Exception as exc:
        tb = traceback.format_exc(limit=-3)
        return None, Outcome("CRASH", what, f"{type(exc).__name__}: {exc}",
                             error_type=type(exc).__name__, notes=[tb])


def check_at(ad, df, dj, fn, args: tuple, value, fd, check, array_result: bool,
             seed: int = 0) -> Outcome:
    """The checks (a)-(e) at ``args`` (value and FD gradient of the plain program given):
    ``df`` is ``fn`` decorated for the Python path, ``dj`` for Numba (or None)."""
    n = len(diff_args(args))
    rng = np.random.default_rng(seed)

    def wrong(check_name: str, expected, got, detail: str = "") -> Outcome:
        return Outcome("WRONG", check_name, detail, args=args, expected=expected, got=got)

    got_value, bad = _run(ad, "value", lambda: df(*_copy_args(args)))
    if bad:
        bad.args = args
        return bad
    if not _close(got_value, value, 1e-12, 1e-12):
        return wrong("value", value, got_value, "decorated function's value")
    if not array_result:
        pair, bad = _run(ad, "gradient", lambda: ad.value_and_gradient(df)(*_copy_args(args)))
        if bad:
            bad.args = args
            return bad
        vg_value, grads = pair
        grads = as_list(grads, n)
        if not _close(vg_value, value, 1e-12, 1e-12):
            return wrong("value_and_gradient-value", value, vg_value)
        if not _all_close(grads, fd, RTOL, ATOL):
            return wrong("gradient", fd, grads, "ad.gradient vs finite differences")
        pair, bad = _run(ad, "pullback", lambda: _pullback_twice(ad, df, args, 1.0))
        if bad:
            bad.args = args
            return bad
        pb_value, first, second = pair
        if not _all_close(first, grads, 1e-12, 1e-14):
            return wrong("pullback-vs-gradient", grads, first)
        if not _all_same(second, first):
            return wrong("pullback-twice", first, second)
        reference = grads
    else:
        u = rng.uniform(-1.0, 1.0, size=np.shape(value))
        pair, bad = _run(ad, "pullback", lambda: _pullback_twice(ad, df, args, u))
        if bad:
            bad.args = args
            return bad
        pb_value, first, second = pair
        if not _close(pb_value, value, 1e-12, 1e-12):
            return wrong("pullback-value", value, pb_value)
        if not _all_same(second, first):
            return wrong("pullback-twice", first, second)
        inputs = _flat_inputs(args)
        v = list(rng.uniform(-1.0, 1.0, size=len(inputs)))
        scale = max([1.0] + [float(np.max(np.abs(a))) for a in args])
        try:
            with np.errstate(all="raise"):
                jv = directional_derivative(fn, args, v, scale, check)
        except (Unreliable, ArithmeticError, FloatingPointError) as exc:
            return Outcome("SKIP", "dot", str(exc), args=args)
        lhs = float(np.sum(u * jv))
        terms = [float(np.sum(np.asarray(c) * np.asarray(d))) for c, d in
                 zip(first, _split_like(v, args), strict=True)]
        rhs = math.fsum(terms)
        allowed = ATOL + RTOL * (math.fsum(abs(t) for t in terms) + abs(lhs))
        if not abs(lhs - rhs) <= allowed:
            return wrong("dot", lhs, rhs, "<u, J v> by FD vs <J^T u, v> by the pullback")
        reference = first
    outcome = Outcome("OK", args=args, reference=reference, fd=fd)
    if dj is not None:
        _check_jit(ad, dj, args, value, array_result, reference, outcome,
                   u if array_result else 1.0)
    return outcome


def _split_like(flat: list, args: tuple) -> list:
    """``flat`` (one number per differentiated scalar input) shaped like the
    differentiated arguments."""
    out, pos = [], 0
    for a in diff_args(args):
        if isinstance(a, np.ndarray):
            out.append(np.array(flat[pos:pos + a.size]).reshape(a.shape))
            pos += a.size
        else:
            out.append(flat[pos])
            pos += 1
    return out


def _pullback_twice(ad, df, args: tuple, cotangent):
    value, pb = ad.value_with_pullback(df, *_copy_args(args))
    n = len(diff_args(args))
    first = as_list(pb(copy.deepcopy(cotangent)), n)
    first = [np.copy(g) if isinstance(g, np.ndarray) else g for g in first]
    second = as_list(pb(copy.deepcopy(cotangent)), n)
    return value, first, second


def _check_jit(ad, dj, args, value, array_result, reference, outcome: Outcome,
               cotangent) -> None:
    n = len(diff_args(args))

    def run():
        if array_result:
            v, pb = ad.value_with_pullback(dj, *_copy_args(args))
            return v, as_list(pb(copy.deepcopy(cotangent)), n)
        v, g = ad.value_and_gradient(dj)(*_copy_args(args))
        return v, as_list(g, n)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jv, jg = run()
            primal = dj(*_copy_args(args))
    except _Timeout:
        raise
    except ad.JitError as exc:
        outcome.jit = "JIT_REFUSED"
        outcome.jit_detail = str(exc).splitlines()[0][:300]
        return
    except ad.NonDifferentiableError as exc:
        outcome.jit = "REFUSED"
        outcome.jit_detail = str(exc)[:300]
        return
    except Exception as exc:
        outcome.status = "CRASH"
        outcome.check = "numba"
        outcome.error_type = type(exc).__name__
        outcome.detail = f"{type(exc).__name__}: {exc}"
        outcome.jit = "CRASH"
        outcome.notes.append(traceback.format_exc(limit=-3))
        return
    if not _close(primal, value, JIT_RTOL, JIT_ATOL) or not _close(jv, value, JIT_RTOL,
                                                                     JIT_ATOL):
        outcome.status, outcome.check = "WRONG", "numba-value"
        outcome.expected, outcome.got = value, (primal, jv)
        outcome.jit = "WRONG"
        return
    if not _all_close(jg, reference, JIT_RTOL, JIT_ATOL):
        outcome.status, outcome.check = "WRONG", "numba-gradient"
        outcome.expected, outcome.got = reference, jg
        outcome.detail = "Numba gradient vs Python gradient"
        outcome.jit = "WRONG"
        return
    outcome.jit = "OK"
    outcome.jit_reference = jg


# ---------------------------------------------------------------------------
# Renaming (does the failure depend on the names?)
# ---------------------------------------------------------------------------


def rename_maps(source: str) -> tuple[str, dict[str, str]]:
    """``source`` with every user-chosen name replaced by a neutral one: function locals
    and parameters (nested functions included) ``v0, v1, ...`` (per top-level function),
    module globals ``G0, ...``, functions ``fn0, ...``; and the map of module-level names.
    Imported names are kept."""
    tree = ast.parse(source)
    imported: set[str] = set()
    module_names: dict[str, str] = {}
    functions = itertools.count()
    constants = itertools.count()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                imported.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.FunctionDef):
            module_names[node.name] = f"fn{next(functions)}"
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    module_names[t.id] = f"G{next(constants)}"

    def module_level(sub: ast.AST) -> None:
        if isinstance(sub, ast.Name) and sub.id in module_names and sub.id not in imported:
            sub.id = module_names[sub.id]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            local: list[str] = []
            for sub in ast.walk(node):
                if isinstance(sub, ast.arg) or isinstance(sub, ast.Name) and isinstance(
                        sub.ctx, ast.Store):
                    name = sub.arg if isinstance(sub, ast.arg) else sub.id
                elif isinstance(sub, ast.FunctionDef) and sub is not node:
                    name = sub.name
                else:
                    continue
                if name not in local:
                    local.append(name)
            mapping = {name: f"v{k}" for k, name in enumerate(local)}
            for sub in ast.walk(node):
                if isinstance(sub, ast.arg):
                    sub.arg = mapping[sub.arg]
                elif isinstance(sub, ast.FunctionDef) and sub is not node:
                    sub.name = mapping[sub.name]
                elif isinstance(sub, ast.Name):
                    if sub.id in mapping:
                        sub.id = mapping[sub.id]
                    else:
                        module_level(sub)
            node.name = module_names[node.name]
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    t.id = module_names[t.id]
            for sub in ast.walk(node.value):
                module_level(sub)
    return ast.unparse(tree) + "\n", module_names


def renamed_source(source: str) -> str:
    """``source`` with neutral names (see :func:`rename_maps`)."""
    return rename_maps(source)[0]


def renamed_function_name(source: str, fname: str) -> str:
    """The neutral name of the module-level function (or closure) ``fname``."""
    return rename_maps(source)[1][fname]


def renamed_program(program: Program) -> Program:
    """``program`` with neutral names (same arguments, updates and twin)."""
    source, names = rename_maps(program.source)
    return Program(source=source, fname=names[program.fname], params=program.params,
                   array_param=program.array_param, array_result=program.array_result,
                   points=program.points, features=program.features, seed=program.seed,
                   updates=[[(names.get(g, g), how, value) for g, how, value in step]
                            for step in program.updates],
                   twin=names[program.twin] if program.twin else None)


def check_source_at(source: str, fname: str, args: tuple, array_result: bool,
                    directory: Path, jit: bool = False, seed: int = 0,
                    updates: list | None = None, twin: str | None = None) -> Outcome:
    """The checks for ``source`` at exactly ``args`` (no point search): for renaming
    and shrinking. SKIP if the program is not smooth or finite there. ``updates`` and
    ``twin`` as in :class:`Program`."""
    program = Program(source=source, fname=fname, params=[], array_param=None,
                      array_result=array_result, points=[args], updates=list(updates or []),
                      twin=twin)
    if jit:
        return check_isolated(program, directory, jit=True, seed=seed)
    return check_program(program, directory, jit=False, seed=seed)


def describe(outcome: Outcome) -> str:
    lines = [f"outcome: {outcome.status} ({outcome.check})"]
    if outcome.detail:
        lines.append(f"detail: {outcome.detail}")
    if outcome.expected is not None or outcome.got is not None:
        lines.append(f"expected: {_fmt(outcome.expected)}")
        lines.append(f"got:      {_fmt(outcome.got)}")
    if outcome.jit:
        lines.append(f"numba: {outcome.jit} {outcome.jit_detail}")
    return "\n".join(lines)
