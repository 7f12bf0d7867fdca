"""Parallel loops on the fuzzer's random programs: each top-level ``for v in range(...)``
loop of the function under test becomes ``numba.prange`` (one loop at a time, then all
of them), and ``parallel=True`` must be right or refuse at a line of the program.

    python tests/fuzz/parallel_fuzz.py --seed 1 --count 3000 [--jit] [--adversarial]

Per variant, at the point the base oracle chooses (``oracle.choose_point``):

* accepted: the value equals the plain program's, the pullback of a random cotangent
  equals the serial one (``parallel=False``, same program) to ``TOLERANCE`` relative
  (the iterations' sums are added in another order), and ``check_grads(...,
  parallel=True)`` holds (finite differences); with ``--jit`` the Numba path
  (``jit=True, parallel=True``) equals the Python path to ``TOLERANCE``;
* refused: a ``NonDifferentiableError`` located in the program's file (one without a
  location, or any other exception, is a CRASH);
* an accepted loop must be independent: the plain program with the loop's iterations
  run in reverse (and rotated) order gives the same value; accepted and dependent is
  WRONG.

A variant whose gradient disagrees with finite differences while the serial gradient
does too is counted as ``fd-disagrees`` (a point where finite differences are not
reliable, or a bug of the serial path: not of parallel loops).  ``--adversarial`` runs
the hand-made programs of ``ADVERSARIAL`` instead (loop-carried values through
branches, aliases, lists, nested prange, ...).  Prints progress every 100 programs and
a summary: pass / refused (by reason) / wrong / crash.
"""

from __future__ import annotations

import argparse
import ast
import collections
import re
import signal
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle import Unreliable, choose_point, instrumented_module, load_source, unload  # noqa: E402
from programs import Generator, RandomChooser, Scope, program_from_seed  # noqa: E402

import s2s_ad as ad  # noqa: E402
from s2s_ad.errors import JitError, NonDifferentiableError  # noqa: E402
from s2s_ad.testing import check_grads, random_cotangent  # noqa: E402

TOLERANCE = 1e-10  # parallel against serial, Numba against Python: sums in another order
ORDER_TOLERANCE = 1e-9  # a reordered plain run differing more: the iterations depend
TIMEOUT = 120


# ---------------------------------------------------------------------------
# Programs: the base generator's, and loops written to be parallel
# ---------------------------------------------------------------------------


class ParallelGenerator(Generator):
    """The base generator, whose top-level ``for`` loops are mostly written the way
    parallel loops are: temporaries of the iteration, sums (``acc = acc + e``,
    ``acc += e``, ``acc -= e``) and writes at the loop's index, mixed with the base
    generator's statements (which may carry values: refused, or wrong if accepted)."""

    def statement(self, scope: Scope, indent: int) -> list[str]:
        if scope.depth == 0 and scope.loop_depth == 0 and self.ch.boolean(0.3):
            return self.stmt_for(scope, indent)
        return super().statement(scope, indent)

    def stmt_for(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        if scope.depth > 0 or not ch.boolean(0.7):
            return super().stmt_for(scope, indent)
        pad = self._pad(indent)
        counter = self.names.fresh("int")
        k = ch.integer(2, min(4, self.array_len))
        header = ch.choice((f"range({k})", f"range(1, {k})", f"range({k} - 1, -1, -1)",
                            f"range(0, {k}, 2)"))
        sums = [self.names.fresh("float") for _ in range(ch.integer(1, 2))]
        lines = [f"{pad}{acc} = {self.leaf(scope)}" for acc in sums]
        lines.append(f"{pad}for {counter} in {header}:")
        inner = scope.nested(loop_depth=0, ints=scope.ints + [(counter, k - 1)])
        body = []
        if ch.boolean(0.15):
            body += [f"{pad}    if {self.condition(inner)}:", f"{pad}        continue"]
        for _ in range(ch.integer(0, 3)):
            body += self.statement(inner, indent + 1)
        if scope.arrays and ch.boolean(0.3):
            body += self.scratch_sum(inner, indent + 1, counter, sums[0])
        for acc in sums:
            op = ch.choice((" = {0} + ", " = {0} - ", " += ", " -= "))
            body.append(f"{pad}    {acc}{op.format(acc)}{self.bounded(inner, 2)}")
        if scope.writable and ch.boolean(0.4):
            body.append(f"{pad}    {ch.choice(scope.writable)}[{counter}] = "
                        f"{self.bounded(inner, 2)}")
        scope.floats.extend(sums)
        return lines + body


    def scratch_sum(self, scope: Scope, indent: int, counter: str, acc: str) -> list[str]:
        """An array built in the iteration and read item by item in an inner loop (issue
        34, item 5: Numba's parfor lost the pullback's error here)."""
        ch, pad = self.ch, self._pad(indent)
        scratch, part, j = (self.names.fresh("array"), self.names.fresh("float"),
                            self.names.fresh("int"))
        source = ch.choice(scope.arrays)
        return [f"{pad}{scratch} = {source} * {self.bounded(scope, 1)}",
                f"{pad}{part} = 0.0",
                f"{pad}for {j} in range({scratch}.shape[0]):",
                f"{pad}    {part} += {scratch}[{j}] * {ch.choice((scratch, source))}[{j}]",
                f"{pad}{acc} += {part} * ({counter} * 0.5 + 1.0)"]


def parallel_program_from_seed(seed: int):
    """The program number ``seed`` of :class:`ParallelGenerator`."""
    program = ParallelGenerator(RandomChooser(seed)).program()
    program.seed = seed
    return program


# ---------------------------------------------------------------------------
# Variants
# ---------------------------------------------------------------------------


def top_level_range_loops(source: str, first_line: int) -> list[ast.For]:
    """The ``for v in range(...)`` statements at the top of the function defined at
    ``first_line`` of ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.lineno == first_line:
            return [s for s in node.body if isinstance(s, ast.For)
                    and isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call)
                    and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range"]
    return []


def with_prange(source: str, loops: list[ast.For]) -> str:
    """``source`` with ``range`` of each of ``loops`` replaced by ``numba.prange`` (and
    ``import numba`` first)."""
    lines = source.split("\n")
    for s in sorted(loops, key=lambda s: (s.iter.func.lineno, -s.iter.func.col_offset)):
        f = s.iter.func
        text = lines[f.lineno - 1]
        lines[f.lineno - 1] = text[:f.col_offset] + "numba.prange" + text[f.end_col_offset:]
    return "import numba\n" + "\n".join(lines)


def variants(source: str, first_line: int) -> list[tuple[str, str]]:
    """(label, source) per top-level range loop made a prange loop, and all of them."""
    loops = top_level_range_loops(source, first_line)
    out = [(f"loop@{s.lineno}", with_prange(source, [s])) for s in loops]
    if len(loops) > 1:
        out.append(("all", with_prange(source, loops)))
    return out


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------


class Wrong(Exception):
    """A wrong value, gradient or acceptance."""


def _leaves(value) -> list[np.ndarray]:
    if isinstance(value, tuple | list):
        return [x for v in value for x in _leaves(v)]
    return [np.asarray(value, dtype=float)]


def close(a, b, rtol: float = TOLERANCE) -> bool:
    """Whether ``a`` and ``b`` (numbers, arrays, tuples) agree to ``rtol`` relative to
    ``max(1, |b|)``."""
    left, right = _leaves(a), _leaves(b)
    if len(left) != len(right):
        return False
    for u, v in zip(left, right, strict=True):
        if u.shape != v.shape:
            return False
        if not np.array_equal(np.isfinite(u), np.isfinite(v)):
            return False
        scale = max(1.0, float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0)))
        if np.max(np.abs(np.where(np.isfinite(v), u - v, 0.0)), initial=0.0) > rtol * scale:
            return False
    return True


def _copies(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


class _Reordered:
    """A stand-in for the module ``numba`` whose ``prange`` runs the iterations in
    another order (``reverse``, or rotated by one)."""

    def __init__(self, how: str) -> None:
        self.how = how

    def prange(self, *bounds):
        items = list(range(*bounds))
        return items[::-1] if self.how == "reverse" else items[1:] + items[:1]


def order_matters(module, fn, args: tuple, value) -> str:
    """How the plain program's value changes when its prange loops run in another order
    ('' when it does not: the iterations look independent)."""
    real = module.numba
    try:
        for how in ("reverse", "rotate"):
            module.numba = _Reordered(how)
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    other = fn(*_copies(args))
            except Exception as exc:  # noqa: BLE001
                return f"{how}d order raises {type(exc).__name__}: {exc}"
            if not close(other, value, ORDER_TOLERANCE):
                return f"{how}d order gives {other!r} instead of {value!r}"
    finally:
        module.numba = real
    return ""


def _pullback(fn, args: tuple, u, *, parallel: bool, jit: bool = False):
    df = ad.differentiable(fn, jit=jit, parallel=parallel)
    value, pullback = ad.value_with_pullback(df, *_copies(args))
    return value, pullback(u)


def refusal_reason(error: NonDifferentiableError) -> str:
    """The first line of the refusal, its names replaced by ``'_'`` (to count by reason)."""
    text = str(error).splitlines()[0].split("error: ", 1)[-1]
    return re.sub(r"'[A-Za-z_][\w.]*'", "'_'", text)[:110]


def check_variant(module, fn, args: tuple, value, jit: bool) -> tuple[str, str]:
    """(status, detail) of the prange variant ``fn`` (in ``module``) at ``args``, where
    the plain program's value is ``value``."""
    u = random_cotangent(value, np.random.default_rng(0))
    serial, serial_error = None, ""
    try:
        serial = _pullback(fn, args, u, parallel=False)
    except Exception as error:  # noqa: BLE001  (the serial path is not under test)
        serial_error = f"{type(error).__name__}: {error}"
    try:
        got = _pullback(fn, args, u, parallel=True)
    except NonDifferentiableError as refusal:
        where = refusal.location
        if where is None or Path(where.filename).resolve() != Path(module.__file__).resolve():
            return "crash", f"refused without a location in the program: {refusal}"
        return "refused", refusal_reason(refusal)
    except Exception as error:  # noqa: BLE001
        detail = f"{type(error).__name__}: {error}"
        if detail == serial_error:  # not a bug of parallel loops
            return "serial-crash", detail[:100]
        return "crash", f"{detail}\n{traceback.format_exc()}"
    dependent = order_matters(module, fn, args, value)
    if dependent:
        return "wrong", f"accepted, but the iterations depend on each other: {dependent}"
    if not close(got[0], value):
        return "wrong", f"value {got[0]!r}, the plain program gives {value!r}"
    if serial is not None and not close(got[1], serial[1]):
        return "wrong", f"pullback {got[1]!r}, serially {serial[1]!r}"
    try:
        check_grads(fn, *args, paths=("python",), parallel=True)
    except AssertionError as failure:
        try:
            check_grads(fn, *args, paths=("python",))
        except Exception:  # noqa: BLE001
            return "fd-disagrees", str(failure).splitlines()[0][:200]
        return "wrong", f"finite differences: {failure}"
    if jit:
        try:
            compiled = _pullback(fn, args, u, parallel=True, jit=True)
        except JitError as error:
            return "jit-refused", str(error).splitlines()[0][:100]
        except Exception as error:  # noqa: BLE001
            return "crash", f"jit: {type(error).__name__}: {error}"
        if not (close(compiled[0], got[0]) and close(compiled[1], got[1])):
            return "wrong", f"jit: {compiled!r}, Python path {got!r}"
    return "pass", ""


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def check_source(source: str, fname: str, args: tuple, value, directory: Path,
                 jit: bool) -> tuple[str, str]:
    """Load ``source`` and check its function ``fname`` (with a timeout)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = load_source(source, directory, "parallel_variant")
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return check_variant(module, getattr(module, fname), args, value, jit)
    except _Timeout:
        return "crash", f"no answer within {TIMEOUT} s"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
        unload(module)


def check_program(program, directory: Path, jit: bool) -> list[tuple[str, str, str, str]]:
    """(label, status, detail, source) per prange variant of ``program``; [] when its
    function has no top-level range loop."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            module = load_source(program.source, directory)
            namespace, holder = instrumented_module(program.source)
        except Exception as exc:  # noqa: BLE001
            return [("program", "invalid", str(exc), program.source)]
    try:
        fn = getattr(module, program.fname)
        made = variants(program.source, fn.__code__.co_firstlineno)
        if not made:
            return []
        try:
            args, value = choose_point(fn, namespace, holder, program.fname,
                                       program.points)[:2]
        except Unreliable:
            return [(label, "skip", "", source) for label, source in made]
        except Exception as exc:  # noqa: BLE001
            return [("program", "invalid", str(exc), program.source)]
    finally:
        unload(module)
    # the variant's function: the same name (a closure's is the factory's result)
    return [(label, *check_source(source, program.fname, args, value, directory, jit),
             source) for label, source in made]


def check_numbers(seed: int, numbers, directory: Path, jit: bool):
    """(number, program seed, :func:`check_program` of it) for each program number: two
    of three from :class:`ParallelGenerator`, the third from the base generator."""
    for k in numbers:
        program_seed = seed * 1_000_000 + k
        make = program_from_seed if k % 3 == 2 else parallel_program_from_seed
        yield k, program_seed, check_program(make(program_seed), directory, jit)


FAILURES = ("wrong", "crash", "invalid")  # the other statuses are fine


# ---------------------------------------------------------------------------
# Hand-made adversarial programs: each right or refused at a line
# ---------------------------------------------------------------------------

ADVERSARIAL: list[tuple[str, str, tuple]] = []  # (name, source defining f, arguments)


def _adversarial(name: str, source: str, *args) -> None:
    ADVERSARIAL.append((name, "import math\nimport numba\nimport numpy as np\n\n" + source,
                        args))


_X = np.array([0.3, -0.7, 1.1, 0.4, -0.2])
_A = np.array([[0.5, -1.2], [0.8, 0.1], [-0.3, 0.9], [1.4, -0.6], [0.2, 0.7]])

_adversarial("carried_through_a_branch", """
def f(x):
    total = 0.0
    last = 0.0
    for i in numba.prange(x.shape[0]):
        if i > 0:
            total += last * x[i]
        last = x[i]
    return total
""", _X)
_adversarial("bound_in_one_branch", """
def f(x):
    total = 0.0
    t = 1.0
    for i in numba.prange(x.shape[0]):
        if x[i] > 0.0:
            t = x[i] * 2.0
        total += t
    return total
""", _X)
_adversarial("written_at_i_read_at_i_minus_1", """
def f(x):
    out = np.zeros(x.shape[0])
    total = 0.0
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * 2.0
        if i > 0:
            total += out[i - 1] * x[i]
    return total
""", _X)
_adversarial("alias_before_the_loop", """
def f(x):
    a = np.zeros(x.shape[0])
    b = a
    total = 0.0
    for i in numba.prange(x.shape[0]):
        a[i] = x[i] * x[i]
        total += b[(i + 1) % 5]
    return total + np.sum(a)
""", _X)
_adversarial("alias_written_other_read", """
def f(x):
    y = x * 1.0
    out = y
    for i in numba.prange(x.shape[0]):
        out[i] = y[(i + 1) % 5] * 2.0
    return np.sum(out * y)
""", _X)
_adversarial("alias_of_the_argument", """
def f(x):
    out = x
    for i in numba.prange(x.shape[0]):
        out[i] = x[(i + 1) % 5] * 2.0
    return np.sum(out * out)
""", _X)
_adversarial("row_view_of_another_iteration", """
def f(x):
    out = np.zeros((5, 2))
    for i in numba.prange(5):
        row = out[(i + 1) % 5]
        row[0] = x[i] * 3.0
    return np.sum(out * out)
""", _X)
_adversarial("row_view_read_after", """
def f(x):
    out = np.zeros((5, 2))
    for i in numba.prange(5):
        row = out[i]
        row[1] = x[i] * 3.0
    return np.sum(out * out) + out[2, 1]
""", _X)
_adversarial("nested_item_write", """
def f(x):
    out = np.zeros((5, 2))
    for i in numba.prange(5):
        out[(i + 1) % 5][0] = x[i] * 3.0
    return np.sum(out * out) * x[0]
""", _X)
_adversarial("index_rebound", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        v = x[i] * x[i]
        i = 0
        out[i] = v
    return np.sum(out * out)
""", _X)
_adversarial("index_shifted", """
def f(x):
    out = np.zeros(x.shape[0] + 1)
    for i in numba.prange(x.shape[0]):
        i = i + 1
        out[i] = x[i - 1] * 2.0
        out[i - 1] = x[i - 1]
    return np.sum(out * out)
""", _X)
_adversarial("list_appended", """
def f(x):
    items = []
    for i in numba.prange(x.shape[0]):
        items.append(x[i] * 2.0)
    return items[0] + 2.0 * items[-1]
""", _X)
_adversarial("sum_read_inside", """
def f(x):
    total = 0.0
    acc = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i]
        acc += total * x[i]
    return acc
""", _X)
_adversarial("sum_read_in_a_test", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        if total < 0.5:
            total += x[i] * x[i]
    return total
""", _X)
_adversarial("sum_in_a_nested_loop_read_by_the_range", """
def f(x):
    count = 0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        for j in range(count % 3):
            total += x[j] * x[i]
        count += 1
    return total
""", _X)
_adversarial("sum_then_rebound", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i]
        total = total * 0.5
    return total
""", _X)
_adversarial("two_sums_one_reading_the_other", """
def f(x):
    s = 0.0
    t = 0.0
    for i in numba.prange(x.shape[0]):
        s = s + x[i]
        t = t + s * 0.5
    return s + t
""", _X)
_adversarial("nested_prange", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        for j in numba.prange(x.shape[0]):
            total += x[i] * math.sin(x[j])
    return total
""", _X)
_adversarial("outer_array_rebound_after", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i]) * x[i]
    out = out * 2.0 + x
    return np.sum(out * out)
""", _X)
_adversarial("two_loops_second_reads_first", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i])
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += out[(i + 1) % 5] * x[i]
    return total
""", _X)
_adversarial("written_twice_by_two_loops", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i])
    for i in numba.prange(x.shape[0]):
        out[i] = out[i] * x[i]
    return np.sum(out)
""", _X)
_adversarial("tuples", """
def f(x):
    pair = (x[0], x[1] * 2.0)
    total = 0.0
    for i in numba.prange(x.shape[0]):
        t = (x[i], x[i] * pair[1])
        a, b = t
        total += a * b + pair[0]
    return total
""", _X)
_adversarial("tuple_carried", """
def f(x):
    t = (0.0, 1.0)
    for i in numba.prange(x.shape[0]):
        t = (t[0] + x[i], t[1] * x[i])
    return t[0] + t[1]
""", _X)
_adversarial("swap_carried", """
def f(x):
    a = 0.5
    b = 1.5
    total = 0.0
    for i in numba.prange(x.shape[0]):
        a, b = b, a * x[i]
        total += a
    return total
""", _X)
_adversarial("continue_with_sum", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        if x[i] < 0.0:
            continue
        v = x[i] * x[i]
        total += v
    return total
""", _X)
_adversarial("continue_value_read_after", """
def f(x):
    total = 0.0
    v = 0.0
    for i in numba.prange(x.shape[0]):
        if x[i] < 0.0:
            continue
        v = x[i] * x[i]
        total += v
    return total + v
""", _X)
_adversarial("index_read_after", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i]
    return total * i
""", _X)
_adversarial("helper_reads_a_global", """
SCALE = 2.0
W = np.array([0.5, 1.5, -1.0, 2.0, 0.25])


def term(a, k):
    return SCALE * a * a * W[k]


def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += term(x[i], i)
    return total
""", _X)
_adversarial("helper_writes_its_argument", """
def bump(a, k):
    a[k] = a[k] + 1.0
    return a[k]


def f(x):
    y = x * 1.0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += bump(y, (i + 1) % 5) * x[i]
    return total
""", _X)
_adversarial("scratch_shared", """
def f(x):
    scratch = np.zeros(2)
    total = 0.0
    for i in numba.prange(x.shape[0]):
        scratch[0] = x[i]
        total += scratch[0] * scratch[0]
    return total
""", _X)
_adversarial("in_place_on_an_outer_array", """
def f(x):
    y = x * 1.0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        y += x[i]
        total += y[i]
    return total
""", _X)
_adversarial("item_sum_on_an_outer_array", """
def f(x):
    acc = np.zeros(2)
    for i in numba.prange(x.shape[0]):
        acc[0] += x[i]
    return acc[0] * acc[0]
""", _X)
_adversarial("rows_of_a_matrix", """
def f(a, w):
    out = np.zeros(a.shape[0])
    total = 0.0
    for i in numba.prange(a.shape[0]):
        out[i] = np.sum(a[i] * w) ** 2
        total -= math.tanh(out[i - 1] if i > 10 else a[i, 0] * w)
    return np.sum(out) + total
""", _A, 0.7)
_adversarial("private_array_per_iteration", """
def f(a, w):
    total = 0.0
    for i in numba.prange(a.shape[0]):
        local = a[i] * w
        local[0] = local[1] * w
        total += np.sum(local * local)
    return total
""", _A, 0.7)
_adversarial("private_view_written", """
def f(a, w):
    b = a * 1.0
    total = 0.0
    for i in numba.prange(b.shape[0]):
        row = b[i]
        row[0] = row[1] * w
        total += np.sum(row * row)
    return total + np.sum(b)
""", _A, 0.7)
_adversarial("reversed_range_writes", """
def f(x, w):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0] - 1, -1, -1):
        out[i] = x[i] * w + math.cos(w * i)
    return np.sum(out * out)
""", _X, 0.4)
_adversarial("strided_with_sum_of_two", """
def f(x, w):
    a = 0.0
    b = 0.0
    for i in numba.prange(1, x.shape[0], 2):
        a = a + x[i] * w
        b -= x[i - 1] * a
    return a * b
""", _X, 0.4)
_adversarial("dict_argument", """
def f(x, p):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += p["w"] * x[i] * x[i]
    return total
""", _X, {"w": 0.5})
_adversarial("while_inside", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        k = 0
        v = x[i]
        while k < 2:
            v = math.sin(v) + x[i]
            k += 1
        total += v
    return total
""", _X)
_adversarial("array_result_written_rows", """
def f(x, w):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.exp(x[i] * w)
    return out
""", _X, 0.4)
_adversarial("returns_inside", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        if x[i] > 1.0:
            return total
        total += x[i]
    return total
""", _X)
_adversarial("max_carried", """
def f(x):
    best = -1e9
    for i in numba.prange(x.shape[0]):
        best = max(best, x[i] * 2.0)
    return best
""", _X)
_adversarial("closure_array", """
def make(weights):
    def f(x):
        total = 0.0
        for i in numba.prange(x.shape[0]):
            total += weights[i] * x[i] ** 2
        return total
    return f


f = make(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
""", _X)
_adversarial("private_read_in_inner_loop_first", """
def f(x):
    total = 0.0
    t = 0.5
    for i in numba.prange(x.shape[0]):
        for j in range(2):
            if j == 0:
                total += t * x[i]
            t = x[i] * j
    return total
""", _X)
_adversarial("sum_subtracted_from_itself", """
def f(x):
    total = 1.0
    for i in numba.prange(x.shape[0]):
        total = total - x[i] * total
    return total
""", _X)
_adversarial("count_as_index_after", """
def f(x):
    count = 0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        if x[i] > 0.0:
            count += 1
        total += x[i] * x[i]
    return total * x[count - 1]
""", _X)
_adversarial("parameter_rebound_in_the_loop", """
def f(x, w):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        w = w * 0.5
        total += w * x[i]
    return total
""", _X, 0.4)
_adversarial("writes_column", """
def f(a, w):
    out = np.zeros((2, a.shape[0]))
    for i in numba.prange(a.shape[0]):
        out[0, i] = a[i, 0] * w
        out[1, i] = a[i, 1] * w
    return np.sum(out * out)
""", _A, 0.7)

_adversarial("alias_made_in_the_loop", """
def f(x):
    out = np.zeros(x.shape[0])
    total = 0.0
    for i in numba.prange(x.shape[0]):
        b = out
        b[i] = x[i] * 2.0
        total += out[(i + 1) % 5] * x[i]
    return total + np.sum(out)
""", _X)
_adversarial("written_twice_at_the_index", """
def f(x, w):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] * w
        if x[i] > 0.0:
            out[i] = math.sin(x[i]) * w * w
    return np.sum(out * out)
""", _X, 0.4)
_adversarial("whole_rows_written", """
def f(a, w):
    out = np.zeros((a.shape[0], 2))
    for i in numba.prange(a.shape[0]):
        out[i] = np.tanh(a[i] * w)
    return np.sum(out * out) + out[1, 0]
""", _A, 0.7)
_adversarial("view_of_a_base_written", """
def f(x):
    base = np.zeros((5, 2))
    out = base[:, 0]
    for i in numba.prange(5):
        out[i] = x[i] * x[i]
    return np.sum(base * base)
""", _X)
_adversarial("sum_started_as_an_int", """
def f(x):
    total = 0
    for i in numba.prange(x.shape[0]):
        total += x[i] * x[i]
    return total * 2.0
""", _X)
_adversarial("read_array_changed_after", """
def f(x):
    y = x * 2.0
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += y[i] * y[i]
    y[0] = 5.0
    return total + np.sum(y * x)
""", _X)
_adversarial("read_number_rebound_after", """
def f(x, w):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += math.sin(w * x[i])
    w = w * total
    return total + w
""", _X, 0.4)
_adversarial("same_array_two_loops_other_names", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i])
    first = np.sum(out * x)
    for j in numba.prange(x.shape[0]):
        out[j] = x[j] * x[j]
    return first + np.sum(out * out)
""", _X)
_adversarial("private_name_read_before", """
def f(x):
    v = x[0] * 3.0
    first = v * v
    total = 0.0
    for i in numba.prange(x.shape[0]):
        v = x[i] * 2.0
        total += v * v
    return total + first
""", _X)
_adversarial("private_rebound_after_then_read", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        v = x[i] * 2.0
        total += v * v
    v = total * 0.5
    return total + v
""", _X)
_adversarial("private_rebound_in_one_branch_after", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        v = x[i] * 2.0
        total += v * v
    if total > 100.0:
        v = 1.0
    return total + v
""", _X)
_adversarial("index_read_in_a_later_loop_before_bound", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i]
    for j in range(2):
        total = total + x[i] * j
    return total
""", _X)
_adversarial("loop_after_a_serial_loop_same_index", """
def f(x, w):
    acc = 1.0
    for i in range(x.shape[0]):
        acc = acc * math.cos(x[i] * w)
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i] * acc
    return total + acc * w
""", _X, 0.4)
_adversarial("written_then_rewritten_after", """
def f(x):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.sin(x[i]) * x[i]
    out[2] = out[3] * x[0]
    return np.sum(out * out)
""", _X)


_adversarial("two_loops_sum_into_one_total", """
def f(x, w):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += math.sin(x[i] * w)
    half = total * 0.5
    for j in numba.prange(1, x.shape[0]):
        total -= x[j] * half * w
    return total * total
""", _X, 0.4)
_adversarial("range_bounds_rebound_after", """
def f(x, w):
    start = 1
    step = 2
    total = 0.0
    for i in numba.prange(start, x.shape[0], step):
        total += x[i] * x[i - 1] * w
    start = 0
    step = 1
    for j in range(start, 3, step):
        total = total + x[j] * w
    return total
""", _X, 0.4)
_adversarial("gathered_rows_with_int_indices", """
INDEX = np.array([2, 0, 4, 1, 3, 3])


def f(a, w):
    total = 0.0
    for k in numba.prange(INDEX.shape[0]):
        row = a[INDEX[k]]
        total += np.sum(row * row) * w + row[0] * a[k % 5, 1]
    return total
""", _A, 0.7)
_adversarial("helper_returning_a_tuple", """
def parts(a, b):
    return a * b, a - b


def f(x, w):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        p, q = parts(x[i], w)
        total += p * q
    return total
""", _X, 0.4)
_adversarial("sum_read_after_and_in_a_second_loop", """
def f(x):
    total = 0.0
    for i in numba.prange(x.shape[0]):
        total += x[i] ** 2
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = x[i] / (1.0 + total)
    return np.sum(out * out) + total
""", _X)
_adversarial("written_array_returned_then_changed", """
def f(x, w):
    out = np.zeros(x.shape[0])
    for i in numba.prange(x.shape[0]):
        out[i] = math.exp(x[i] * w)
    out[2] = out[3] * w
    return out
""", _X, 0.4)


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def _summary(counts, reasons, failures, programs_with_loops, total, seconds) -> str:
    lines = [f"{total} programs, {programs_with_loops} with top-level range loops, "
             f"{sum(counts.values())} variants in {seconds:.0f} s: {dict(counts)}"]
    for reason, n in reasons.most_common():
        lines.append(f"{n:6d}  {'' if ': ' in reason[:14] else 'refused: '}{reason}")
    for label, status, detail, source in failures:
        lines.append(f"\n### {label}: {status.upper()}\n{source}\n{detail}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--start", type=int, default=0, help="the first program's number")
    parser.add_argument("--jit", action="store_true", help="also the Numba path")
    parser.add_argument("--adversarial", action="store_true",
                        help="the hand-made programs instead of generated ones")
    options = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="s2s_parallel_fuzz_"))
    counts: collections.Counter = collections.Counter()
    reasons: collections.Counter = collections.Counter()
    failures: list = []
    start, with_loops, total = time.time(), 0, 0

    def note(label: str, status: str, detail: str, source: str) -> None:
        counts[status] += 1
        if status in ("refused", "jit-refused", "serial-crash", "fd-disagrees"):
            reasons[f"{status}: {detail}" if status != "refused" else detail] += 1
        if status in FAILURES:
            failures.append((label, status, detail, source))
            print(f"### {label}: {status.upper()}\n{source}\n{detail}\n", flush=True)

    if options.adversarial:
        for name, source, args in ADVERSARIAL:
            total += 1
            with_loops += 1
            status, detail = check_adversarial(source, args, directory, options.jit)
            note(name, status, detail, source)
            print(f"{name}: {status} {detail[:150]}", flush=True)
    else:
        numbers = range(options.start, options.start + options.count)
        for k, seed, made in check_numbers(options.seed, numbers, directory, options.jit):
            total += 1
            with_loops += bool(made)
            for label, status, detail, source in made:
                note(f"program {k} (seed {seed}) {label}", status, detail, source)
            if (k + 1 - options.start) % 100 == 0:
                print(f"[{k + 1 - options.start}/{options.count}] {time.time() - start:.0f} s "
                      f"{dict(counts)}", flush=True)
    print(_summary(counts, reasons, [], with_loops, total, time.time() - start))
    print(f"WRONG: {counts['wrong']}, CRASH: {counts['crash']}")


def check_adversarial(source: str, args: tuple, directory: Path,
                      jit: bool) -> tuple[str, str]:
    """The checks of :func:`check_variant` on a hand-made program defining ``f``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = load_source(source, directory, "parallel_adversarial")
    try:
        value = module.f(*_copies(args))
    finally:
        unload(module)
    return check_source(source, "f", args, value, directory, jit)


if __name__ == "__main__":
    main()

