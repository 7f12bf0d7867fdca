"""The oracle for round 5 (issue 20): is s2s_ad right about one
:class:`round5_programs.Round5Program`?

The program's module is loaded from a real file; then, for each of its steps
(the first has no code; the others run their code in the module's namespace
from a file of their own, as a notebook cell would: a helper redefined, a
global rebound, a derivative registered), with the *same* decorated objects
(``ad.differentiable(f, jit=False)`` and, with ``jit``, ``jit=True``) made
before the first step:

(a) the decorated value equals plain Python's (1e-12), with the arguments
    fresh copies and aliased where the program says so (``f(c, c)``);
(b) ``ad.value_and_gradient`` (scalar results; for programs with steps also
    ``ad.gradient`` of the plain function, given afresh at each step) or the
    pullback of a random cotangent (array results) matches central finite
    differences of the
    plain function (a fourth-order stencil cross-checked with a second-order
    one; rtol 1e-4, atol 1e-6), times the step's ``scale`` (``register``);
    for an aliased write the sum of the aliased cotangents is compared with
    the total derivative, else each cotangent with its partial derivative;
(c) ``ad.value_with_pullback``: the pullback, called twice, gives the
    gradient of (b); for ``pullback-mutation`` the argument is changed in
    place between the forward and the pullback, and the pullback must give
    what it gave without the change;
(d) with Numba: value and gradient agree with the Python path (rtol 1e-10,
    atol 1e-12), and (c) is repeated on the Numba path; ``JitError`` is
    ``JIT_REFUSED`` (not a failure);
(e) ``harness`` programs: ``run(p)`` (``ad.gradient`` of a lambda, called
    inside another lambda) equals finite differences of ``target``.

Outcomes (:class:`oracle.Outcome`): ``OK``; ``REFUSED`` (a
``NonDifferentiableError`` or ``ArgumentError``; ``error_type`` says which;
check ``must-work:...`` when the family does not allow a refusal, e.g. a
read-only alias or a redefined helper); ``WRONG``; ``CRASH`` (any other
exception; a hard crash in a forked child through ``oracle.check_isolated``);
``SKIP`` (finite differences unreliable at the point); ``INVALID`` (the plain
program fails: a generator bug).
"""

from __future__ import annotations

import copy
import signal
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from oracle import JIT_ATOL, JIT_RTOL, RTOL, Outcome, _alarm, _close, _Timeout, as_list
from programs import load_source, unload
from round5_programs import Round5Program

VALUE_TOL = 1e-12


class Unreliable(Exception):
    """Finite differences cannot judge this point."""


# ---------------------------------------------------------------------------
# Arguments and finite differences
# ---------------------------------------------------------------------------


def is_diff(a: Any) -> bool:
    """Differentiated: a float or a float array (0-d included); not ints or bools."""
    if isinstance(a, np.ndarray):
        return a.dtype.kind == "f"
    return isinstance(a, float)


def fresh(values: tuple, alias: dict[int, int]) -> tuple:
    """Copies of ``values``, argument ``j`` the same object as argument ``alias[j]``."""
    out = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]
    for j, i in alias.items():
        out[j] = out[i]
    return tuple(out)


def _inputs(values: tuple, alias: dict[int, int]) -> list[tuple[int, int | None]]:
    """(argument, flat element or None) of every independent differentiated input."""
    out: list[tuple[int, int | None]] = []
    for i, v in enumerate(values):
        if i in alias or not is_diff(v):
            continue
        out += [(i, k) for k in range(v.size)] if isinstance(v, np.ndarray) else [(i, None)]
    return out


def _moved(values: tuple, where: tuple[int, int | None], step: float) -> tuple:
    out = list(values)
    i, k = where
    if k is None:
        out[i] = out[i] + step
    else:
        arr = np.array(out[i], copy=True)
        arr.reshape(-1)[k] += step
        out[i] = arr
    return tuple(out)


def fd_gradient(scalar_fn, values: tuple, alias: dict[int, int]) -> list:
    """Central finite differences of ``scalar_fn(*fresh(values, alias))``, one entry per
    independent differentiated argument (shaped like it)."""
    from s2s_ad.testing import central_difference, five_point_difference

    flat = []
    for where in _inputs(values, alias):
        i, k = where
        x = values[i] if k is None else np.asarray(values[i]).reshape(-1)[k]
        scale = max(1.0, abs(float(x)))

        def along(t: float, where=where) -> float:
            return float(scalar_fn(*fresh(_moved(values, where, t), alias)))

        fourth = five_point_difference(along, 1e-5 * scale)[0]
        second = central_difference(along, 1e-6 * scale)[0]
        if not abs(fourth - second) <= 0.1 * (1e-6 + RTOL * abs(fourth)):
            raise Unreliable(f"finite differences disagree: {fourth} vs {second}")
        flat.append(fourth)
    out, pos = [], 0
    for i, v in enumerate(values):
        if i in alias or not is_diff(v):
            continue
        if isinstance(v, np.ndarray):
            out.append(np.array(flat[pos:pos + v.size]).reshape(v.shape))
            pos += v.size
        else:
            out.append(flat[pos])
            pos += 1
    return out


def combine(grads: list, values: tuple, alias: dict[int, int]) -> list:
    """Per-argument cotangents (one per differentiated argument) summed over aliases,
    dropping the aliased positions: comparable with :func:`fd_gradient` of ``alias``."""
    positions = [i for i, v in enumerate(values) if is_diff(v)]
    by_pos = dict(zip(positions, grads, strict=True))
    for j, i in alias.items():
        if j in by_pos and i in by_pos:
            by_pos[i] = by_pos[i] + by_pos.pop(j)
    return [by_pos[i] for i in positions if i in by_pos]


def _all_close(got: list, expected: list, rtol: float, atol: float) -> bool:
    return len(got) == len(expected) and all(
        _close(g, e, rtol, atol) for g, e in zip(got, expected, strict=True))


def _same(got: list, expected: list) -> bool:
    return len(got) == len(expected) and all(
        np.array_equal(np.asarray(g, dtype=float), np.asarray(e, dtype=float), equal_nan=True)
        for g, e in zip(got, expected, strict=True))


# ---------------------------------------------------------------------------
# Running s2s_ad
# ---------------------------------------------------------------------------


def _run(ad, what: str, thunk) -> tuple[Any, Outcome | None]:
    """Run ``thunk``; a refusal or another exception becomes an outcome."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return thunk(), None
    except _Timeout:
        raise
    except (ad.NonDifferentiableError, ad.ArgumentError) as exc:
        text = str(exc)
        return None, Outcome("REFUSED", what, text.splitlines()[0] if text else "",
                             error_type=type(exc).__name__, notes=[text])
    except ad.JitError as exc:
        return None, Outcome("JIT_REFUSED", what, str(exc).splitlines()[0][:300],
                             error_type="JitError")
    except Exception as exc:
        return None, Outcome("CRASH", what, f"{type(exc).__name__}: {exc}",
                             error_type=type(exc).__name__,
                             notes=[traceback.format_exc(limit=-4)])


def _mutate(args: tuple, mutation: tuple) -> None:
    index, how, value = mutation
    arr = args[index]
    if how == "fill":
        arr[...] = value
    elif how == "item":
        arr.reshape(-1)[0] = value
    elif how == "scale":
        arr *= value
    else:
        arr[...] = 0.0


def _gradients(ad, dfn, program: Round5Program, cotangent, mutate: bool) -> tuple:
    """(value, pullback result, second pullback result) of ``dfn`` on fresh arguments;
    with ``mutate``, the program's mutation runs between the forward and the pullback."""
    n = sum(1 for a in program.args if is_diff(a))
    args = fresh(program.args, program.alias)
    value, pb = ad.value_with_pullback(dfn, *args)
    if mutate and program.mutation is not None:
        _mutate(args, program.mutation)
    first = [np.copy(g) if isinstance(g, np.ndarray) else g
             for g in as_list(pb(copy.deepcopy(cotangent)), n)]
    second = as_list(pb(copy.deepcopy(cotangent)), n)
    return value, first, second


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------


def check_round5_program(program: Round5Program, directory: Path, jit: bool = False,
                         timeout: int = 120, seed: int = 0) -> Outcome:
    """Every check of the module docstring; the first failing one decides."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return _check(program, Path(directory), jit, seed)
    except _Timeout:
        return Outcome("CRASH", "timeout", f"no answer within {timeout} s", error_type="Timeout")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _refusal(outcome: Outcome, program: Round5Program) -> Outcome:
    if outcome.status == "REFUSED" and not program.refusal_ok:
        outcome.check = f"must-work:{outcome.check}"
    return outcome


def _check(program: Round5Program, directory: Path, jit: bool, seed: int) -> Outcome:
    import s2s_ad as ad

    try:
        with warnings.catch_warnings():  # also a registration replacing another
            warnings.simplefilter("ignore")
            module = load_source(program.source, directory, stem="fuzz_r5")
    except Exception as exc:
        return Outcome("INVALID", "load", f"{type(exc).__name__}: {exc}")
    try:
        if program.harness:
            return _check_harness(ad, program, module)
        fn = getattr(module, program.fname)
        pair, bad = _run(ad, "prepare", lambda: (
            ad.differentiable(fn, jit=False), ad.differentiable(fn, jit=True) if jit else None))
        if bad:
            return _refusal(bad, program)
        df, dj = pair
        rng = np.random.default_rng(seed)
        outcome = Outcome("OK")
        for k, step in enumerate(program.steps):
            if step.code is not None:
                try:
                    _exec_step(module, step.code, directory, k)
                except Exception as exc:
                    return Outcome("INVALID", f"step{k}", f"{type(exc).__name__}: {exc}")
            outcome = _check_step(ad, program, fn, df, dj, step, rng)
            if k and outcome.status != "OK":
                outcome.check = f"{outcome.check}@step{k}"
            if outcome.status != "OK":
                return _refusal(outcome, program)
        return outcome
    finally:
        unload(module)


def _exec_step(module, code: str, directory: Path, k: int) -> None:
    """Run ``code`` in the module's namespace from a file of its own (functions it defines
    have readable source, as a notebook cell's have)."""
    path = directory / f"{module.__name__}_step{k}.py"
    path.write_text(code)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, str(path), "exec"), module.__dict__)


def _check_harness(ad, program: Round5Program, module) -> Outcome:
    target = module.target
    try:
        expected = fd_gradient(target, program.args, {})
    except Unreliable as exc:
        return Outcome("SKIP", "fd", str(exc))
    got, bad = _run(ad, "gradient", lambda: module.run(*program.args))
    if bad:
        bad.args = program.args
        return _refusal(bad, program)
    if not _close(got, expected[0], RTOL, 1e-6):
        return Outcome("WRONG", "gradient", "run(p) vs finite differences of target",
                       args=program.args, expected=expected[0], got=got)
    return Outcome("OK", args=program.args, reference=[got])


def _check_step(ad, program: Round5Program, fn, df, dj, step, rng) -> Outcome:
    args_text = program.args

    def wrong(check: str, expected, got, detail: str = "") -> Outcome:
        return Outcome("WRONG", check, detail, args=args_text, expected=expected, got=got)

    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn(*fresh(program.args, program.alias))
    except Exception as exc:
        return Outcome("INVALID", "plain", f"{type(exc).__name__}: {exc}")
    got, bad = _run(ad, "value", lambda: df(*fresh(program.args, program.alias)))
    if bad:
        bad.args = args_text
        return bad
    if not _close(got, value, VALUE_TOL, VALUE_TOL):
        return wrong("value", value, got, "decorated function's value vs plain Python")
    if program.array_result:
        cotangent = rng.uniform(-1.0, 1.0, size=np.shape(value))

        def scalar(*a):
            return float(np.sum(cotangent * fn(*a)))
    else:
        cotangent = 1.0
        scalar = fn
    fd_alias = program.alias if program.alias_total else {}
    try:
        with np.errstate(all="raise"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fd = [step.scale * g for g in fd_gradient(scalar, program.args, fd_alias)]
    except (Unreliable, ArithmeticError, FloatingPointError) as exc:
        return Outcome("SKIP", "fd", str(exc), args=args_text)
    n = sum(1 for a in program.args if is_diff(a))
    if not program.array_result:
        pair, bad = _run(ad, "gradient", lambda: ad.value_and_gradient(df)(
            *fresh(program.args, program.alias)))
        if bad:
            bad.args = args_text
            return bad
        vg_value, grads = pair
        grads = as_list(grads, n)
        if not _close(vg_value, value, VALUE_TOL, VALUE_TOL):
            return wrong("value_and_gradient-value", value, vg_value)
        if not _all_close(combine(grads, program.args, fd_alias), fd, RTOL, 1e-6):
            return wrong("gradient", fd, grads, "ad.gradient vs finite differences")
        if len(program.steps) > 1:  # the plain function, given afresh, after a change
            fresh_grads, bad = _run(ad, "fresh-gradient", lambda: as_list(ad.gradient(fn)(
                *fresh(program.args, program.alias)), n))
            if bad:
                bad.args = args_text
                return bad
            if not _all_close(combine(fresh_grads, program.args, fd_alias), fd, RTOL, 1e-6):
                return wrong("fresh-gradient", fd, fresh_grads,
                             "ad.gradient(f) of the plain f vs finite differences")
    triple, bad = _run(ad, "pullback", lambda: _gradients(ad, df, program, cotangent, True))
    if bad:
        bad.args = args_text
        return bad
    pb_value, first, second = triple
    what = "pullback after an in-place change of the argument" if program.mutation else \
        "pullback"
    if not _close(pb_value, value, VALUE_TOL, VALUE_TOL):
        return wrong("pullback-value", value, pb_value)
    if not _all_close(combine(first, program.args, fd_alias), fd, RTOL, 1e-6):
        return wrong("pullback" + ("-mutation" if program.mutation else ""), fd, first,
                     f"{what} vs finite differences")
    if not _same(second, first):
        return wrong("pullback-twice", first, second)
    outcome = Outcome("OK", args=args_text, reference=first, fd=fd)
    if dj is not None:
        _check_jit(ad, program, dj, value, first, cotangent, outcome)
    return outcome


def _check_jit(ad, program: Round5Program, dj, value, reference: list, cotangent,
               outcome: Outcome) -> None:
    """Numba's value and pullback (with the mutation) agree with the Python path's."""
    def run():
        primal = dj(*fresh(program.args, program.alias))
        return primal, _gradients(ad, dj, program, cotangent, True)

    pair, bad = _run(ad, "numba", run)
    if bad is not None:
        if bad.status == "JIT_REFUSED":
            outcome.jit, outcome.jit_detail = "JIT_REFUSED", bad.detail
            return
        outcome.status, outcome.check, outcome.detail = bad.status, "numba", bad.detail
        outcome.error_type, outcome.notes = bad.error_type, bad.notes
        outcome.jit = bad.status
        return
    primal, (jv, jg, jg2) = pair
    if not _close(primal, value, JIT_RTOL, JIT_ATOL) or not _close(jv, value, JIT_RTOL,
                                                                     JIT_ATOL):
        outcome.status, outcome.check, outcome.jit = "WRONG", "numba-value", "WRONG"
        outcome.expected, outcome.got = value, (primal, jv)
        return
    if not _all_close(jg, reference, JIT_RTOL, JIT_ATOL) or not _same(jg2, jg):
        outcome.status, outcome.check, outcome.jit = "WRONG", "numba-gradient", "WRONG"
        outcome.expected, outcome.got = reference, jg
        outcome.detail = "Numba pullback vs Python pullback"
        return
    outcome.jit = "OK"
