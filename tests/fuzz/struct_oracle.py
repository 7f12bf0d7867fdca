"""The oracle for structure programs (round 4): is s2s_ad right about one
:class:`struct_programs.StructProgram`?

At the first of the program's argument tuples where the plain function is
finite, every comparison is more than ``MARGIN`` from flipping (the instrumented
copy of :mod:`oracle` reports the margins) and nothing raises:

(a) the decorated function's value (``jit=False``) equals the plain value, leaf
    by leaf (1e-12);
(b) ``s2s_ad.testing.check_grads`` on the Python path: the pullback of a random
    cotangent against central finite differences of every float leaf of every
    structure argument, and the dot-product identity (a structure result is
    compared leaf by leaf);
(c) the gradient (for a scalar result; else the pullback of a fixed random
    cotangent) of the *same* decorated object equals that of a fresh one
    (1e-12), and a second call of the pullback gives the same numbers bit for
    bit;
(d) each structure argument's cotangent has the argument's class (a dict for a
    dict, nested structures too, the same keys in the same order), and its
    ``no_derivative`` and static fields are the argument's own;
(e) with Numba, ``check_grads`` on both paths (which also requires the paths to
    agree to 1e-12); ``JitError`` is JIT_REFUSED;
(f) globals changed between calls: the program's ``updates`` run in the module
    (and its instrumented copy), and (a)-(e) run again with the same decorated
    object (``@update1``, ...);
(g) a closure's twin (another captured structure) is checked like the first
    (``@twin``), then the first again, whose gradient must be bit-identical.

A refusal (``NonDifferentiableError``) must name a line of the program
(``path:line:col``); one that does not is reported as ``REFUSED`` with check
``unlocated`` (a finding).
"""

from __future__ import annotations

import copy
import dataclasses
import re
import signal
import sys
import traceback
import types
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from oracle import MARGIN, Outcome, Trace, _alarm, _Timeout, instrumented_module
from programs import load_source, unload
from struct_programs import StructProgram

VALUE_TOL = 1e-12


class Unusable(Exception):
    """No argument tuple where the program is smooth and finite."""


def _flat(value: Any) -> list:
    """The numeric leaves of ``value`` (structures, tuples, numbers, arrays)."""
    from s2s_ad.kinds import is_structure
    from s2s_ad.structures import leaves

    if is_structure(value) or isinstance(value, tuple):
        out: list = []
        for v in leaves(value) if is_structure(value) else value:
            out += _flat(v)
        return out
    return [value]


def _same(a: Any, b: Any, tol: float) -> bool:
    fa, fb = _flat(a), _flat(b)
    if len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb, strict=True):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        if x.shape != y.shape or not np.all(np.abs(x - y) <= tol + tol * np.abs(y)):
            return False
    return True


def _bitwise(a: Any, b: Any) -> bool:
    fa, fb = _flat(a), _flat(b)
    return len(fa) == len(fb) and all(
        np.array_equal(np.asarray(x, float), np.asarray(y, float), equal_nan=True)
        for x, y in zip(fa, fb, strict=True))


def _finite(value: Any) -> bool:
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) and
               np.max(np.abs(np.asarray(v, dtype=float)), initial=0.0) < 1e6
               for v in _flat(value))


def _margin(trace: Trace) -> float:
    return min((abs(d) for d in trace.distances), default=np.inf)


def choose_point(fn, module, namespace: dict, holder: dict, fname: str,
                 points: list[str]) -> tuple[str, Any]:
    """The first argument text where the plain program is finite and smooth."""
    reason = "no points"
    for text in points:
        try:
            with np.errstate(all="raise"):
                value = fn(*eval(text, vars(module)))
                holder["trace"] = Trace()
                namespace[fname](*eval(text, namespace))
        except (ArithmeticError, FloatingPointError, ValueError, OverflowError) as exc:
            reason = f"plain program raised {type(exc).__name__}: {exc}"
            continue
        if not _finite(value):
            reason = f"value {value!r} is not finite or too large"
            continue
        margin = _margin(holder["trace"])
        if margin <= MARGIN:
            reason = f"a branch is within {margin:.2e} of flipping"
            continue
        return text, value
    raise Unusable(reason)


_LOCATED = re.compile(r"^\S+:\d+:\d+: error: ")


def _run(ad, what: str, thunk) -> tuple[Any, Outcome | None]:
    """Run ``thunk``; an exception becomes an outcome (AssertionError: WRONG)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return thunk(), None
    except _Timeout:
        raise
    except ad.NonDifferentiableError as exc:
        text = str(exc)
        check = what if _LOCATED.match(text) and "fuzz_struct" in text.splitlines()[0] \
            else "unlocated"
        return None, Outcome("REFUSED", check, text.splitlines()[0] if text else "",
                             error_type=type(exc).__name__, notes=[text])
    except AssertionError as exc:
        return None, Outcome("WRONG", what, str(exc)[:2000])
    except Exception as exc:
        return None, Outcome("CRASH", what, f"{type(exc).__name__}: {exc}",
                             error_type=type(exc).__name__,
                             notes=[traceback.format_exc(limit=-4)])


def check_struct_program(program: StructProgram, directory: Path, jit: bool = False,
                         timeout: int = 180, seed: int = 0) -> Outcome:
    """Every check of the module docstring; the first failing one decides."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return _picklable(_check(program, directory, jit, seed))
    except _Timeout:
        return Outcome("CRASH", "timeout", f"no answer within {timeout} s", error_type="Timeout")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _picklable(outcome: Outcome) -> Outcome:
    """``outcome`` with its values as leaves (the program's classes cannot be pickled
    back from the child process :func:`oracle.check_isolated` runs)."""
    outcome.reference = _flat(outcome.reference)
    outcome.expected, outcome.got = _flat(outcome.expected), _flat(outcome.got)
    return outcome


def _check(program: StructProgram, directory: Path, jit: bool, seed: int) -> Outcome:
    import s2s_ad as ad

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            module = load_source(program.source, directory, stem="fuzz_struct")
            # dataclasses look the class's module up in sys.modules
            sys.modules.setdefault("fuzz_instrumented", types.ModuleType("fuzz_instrumented"))
            namespace, holder = instrumented_module(program.source)
    except Exception as exc:
        return Outcome("INVALID", "load", f"{type(exc).__name__}: {exc}")
    try:
        return _check_loaded(ad, program, module, namespace, holder, jit, seed)
    finally:
        unload(module)


def _check_loaded(ad, program, module, namespace, holder, jit, seed) -> Outcome:
    fn = getattr(module, program.fname)
    try:
        point = choose_point(fn, module, namespace, holder, program.fname, program.points)
    except Unusable as exc:
        return Outcome("SKIP", "point", str(exc))
    except Exception as exc:
        return Outcome("INVALID", "plain", f"{type(exc).__name__}: {exc}")
    df = ad.differentiable(fn, jit=False)
    first = check_at(ad, df, fn, module, *point, jit, seed)
    if first.status != "OK":
        return first
    if program.twin is not None:
        twin = getattr(module, program.twin)
        try:
            twin_point = choose_point(twin, module, namespace, holder, program.twin,
                                      program.points)
        except (Unusable, Exception) as exc:
            first.notes.append(f"twin not checked: {exc}")
        else:
            other = check_at(ad, ad.differentiable(twin, jit=False), twin, module,
                             *twin_point, jit, seed)
            if other.status != "OK":
                return _relabel(other, "@twin")
            again = check_at(ad, df, fn, module, *point, jit, seed)
            if again.status != "OK":
                return _relabel(again, "@first-again")
            if not _bitwise(again.reference, first.reference):
                return Outcome("WRONG", "first-again", "another gradient than before",
                               args=point[0], expected=first.reference, got=again.reference)
    for number, step in enumerate(program.updates, 1):
        for statement in step:
            exec(statement, vars(module))
            exec(statement, namespace)
        try:
            point = choose_point(fn, module, namespace, holder, program.fname, program.points)
        except (Unusable, Exception) as exc:
            first.notes.append(f"after update {number}: not checked, {exc}")
            continue
        outcome = check_at(ad, df, fn, module, *point, jit, seed)
        if outcome.status != "OK":
            return _relabel(outcome, f"@update{number}", f"after {'; '.join(step)}")
    return first


def _relabel(outcome: Outcome, suffix: str, what: str = "") -> Outcome:
    outcome.check += suffix
    if what:
        outcome.detail = f"{what}: {outcome.detail}"
    return outcome


def check_at(ad, df, fn, module, args_text: str, value, jit: bool, seed: int) -> Outcome:
    """Checks (a)-(e) at the arguments ``args_text`` (the plain ``value`` given)."""
    from s2s_ad.testing import check_grads, random_like

    def args() -> tuple:
        return eval(args_text, vars(module))

    def failed(outcome: Outcome) -> Outcome:
        outcome.args = args_text
        return outcome

    got, bad = _run(ad, "value", lambda: df(*args()))
    if bad:
        return failed(bad)
    if not _same(got, value, VALUE_TOL) or type(got) is not type(value) and not (
            isinstance(value, float | np.floating) and isinstance(got, float | np.floating)):
        return failed(Outcome("WRONG", "value", "decorated function's value",
                              expected=value, got=got))
    _, bad = _run(ad, "gradient", lambda: check_grads(fn, *args(), paths=("python",),
                                                      seed=seed))
    if bad:
        return failed(bad)
    cotangent = 1.0 if isinstance(value, float | np.floating) else \
        random_like(value, np.random.default_rng(seed))
    pair, bad = _run(ad, "pullback", lambda: _pullbacks(ad, df, fn, args, cotangent))
    if bad:
        return failed(bad)
    same_first, same_second, fresh = pair
    if not _same(same_first, fresh, VALUE_TOL):
        return failed(Outcome("WRONG", "same-object", "the decorated object's pullback vs a "
                              "fresh decoration's", expected=fresh, got=same_first))
    if not _bitwise(same_second, same_first):
        return failed(Outcome("WRONG", "pullback-twice", "", expected=same_first,
                              got=same_second))
    problem = _class_problem(df, args(), same_first)
    if problem:
        return failed(Outcome("WRONG", "gradient-class", problem))
    outcome = Outcome("OK", args=args_text, reference=same_first)
    if jit:
        _check_jit(ad, fn, args, seed, outcome)
    return outcome


def _pullbacks(ad, df, fn, args, cotangent) -> tuple:
    _, pb = ad.value_with_pullback(df, *args())
    first = copy.deepcopy(pb(copy.deepcopy(cotangent)))
    second = pb(copy.deepcopy(cotangent))
    _, fresh_pb = ad.value_with_pullback(ad.differentiable(fn, jit=False), *args())
    return first, second, fresh_pb(copy.deepcopy(cotangent))


def _class_problem(df, args: tuple, grads: Any) -> str:
    """Why the cotangents ``grads`` are not shaped like the arguments ('' if they are)."""
    positions = df.wrt_positions(args)
    grads = (grads,) if len(positions) == 1 else tuple(grads)
    for pos, grad in zip(positions, grads, strict=True):
        problem = _shaped_like(grad, args[pos], f"argument {pos}")
        if problem:
            return problem
    return ""


def _shaped_like(grad: Any, arg: Any, where: str) -> str:
    from s2s_ad.kinds import NO_DERIVATIVE, is_dynamic, is_structure

    if not is_structure(arg):
        if isinstance(arg, np.ndarray) and np.shape(grad) != arg.shape:
            return f"{where}: a cotangent of shape {np.shape(grad)} for shape {arg.shape}"
        return ""
    if type(grad) is not type(arg):
        return f"{where}: a {type(grad).__name__} for a {type(arg).__name__}"
    if isinstance(arg, dict):
        if list(grad) != list(arg):
            return f"{where}: keys {list(grad)} for {list(arg)}"
        items = [(k, arg[k], grad[k], False) for k in arg]
    elif isinstance(arg, tuple):
        items = [(k, a, g, False) for k, a, g in zip(arg._fields, arg, grad, strict=True)]
    else:
        items = [(f.name, getattr(arg, f.name), getattr(grad, f.name),
                  bool(f.metadata.get(NO_DERIVATIVE))) for f in dataclasses.fields(arg)]
    for name, a, g, cut in items:
        if (cut or not is_dynamic(a)) and not (g is a or _bitwise(g, a)):
            return f"{where}.{name}: {g!r} instead of the argument's {a!r} (not differentiated)"
        problem = _shaped_like(g, a, f"{where}.{name}")
        if problem:
            return problem
    return ""


def _check_jit(ad, fn, args, seed: int, outcome: Outcome) -> None:
    from s2s_ad.testing import check_grads

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_grads(fn, *args(), paths=("python", "numba"), seed=seed)
    except _Timeout:
        raise
    except ad.JitError as exc:
        outcome.jit, outcome.jit_detail = "JIT_REFUSED", str(exc).splitlines()[0][:300]
        return
    except ad.NonDifferentiableError as exc:
        outcome.jit, outcome.jit_detail = "REFUSED", str(exc)[:300]
        return
    except AssertionError as exc:
        outcome.status, outcome.check, outcome.jit = "WRONG", "numba", "WRONG"
        outcome.detail = str(exc)[:2000]
        return
    except Exception as exc:
        outcome.status, outcome.check, outcome.jit = "CRASH", "numba", "CRASH"
        outcome.error_type = type(exc).__name__
        outcome.detail = f"{type(exc).__name__}: {exc}"
        outcome.notes.append(traceback.format_exc(limit=-4))
        return
    outcome.jit = "OK"
