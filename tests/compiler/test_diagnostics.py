"""Zero-derivative diagnostics against the corpus in ``diagnostics_corpus.py``.

For every corpus function: ``ad.diagnose`` reports exactly the expected
warnings (parameter, kind, line, column); ``ad.gradient`` issues the same ones
as ``ad.ZeroDerivativeWarning`` at the user's file and line, once; the
``error`` filter turns them into exceptions; and central finite differences
confirm that every reported parameter's derivative is zero at the example point
while every other float parameter's is not (unless deliberately cut).
Precision and recall over the whole corpus must both be 100%.
"""

from __future__ import annotations

import inspect
import math
import re
import types
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from diagnostics_corpus import CORPUS, Entry, Expect

import s2s_ad as ad
from s2s_ad.testing import central_difference, relative_step

PARAM = re.compile(r"parameter '(\w+)'")
LOCATION = re.compile(r"^(.*):(\d+):(\d+): ")
CONTROL_WORDS = ("branch", "condition", "loop", "control")
STEP = 1e-6


# --- reading findings -------------------------------------------------------------------


def kind_of(message: str) -> str:
    """The family of a zero-derivative message: unused, non-differentiable or control."""
    if "does not affect the result" in message:
        return "unused"
    if "only through" in message:
        # What follows "only through" names the cut; the function name (which may
        # contain any word) comes before it.
        cause = message.split("only through", 1)[1].split(";", 1)[0]
        return "control" if any(w in cause for w in CONTROL_WORDS) else "non-differentiable"
    return "unknown"


def finding(message: str, line: int, col: int) -> tuple[str, str, int, int]:
    """(parameter, kind, line, col) of one warning."""
    match = PARAM.search(message)
    return (match.group(1) if match else "?", kind_of(message), line, col)


def diagnosed(e: Entry) -> set[tuple[str, str, int, int]]:
    """The warnings ``ad.diagnose`` reports for ``e`` (errors fail the test)."""
    found = ad.diagnose(fresh(e.fn), *e.args)
    errors = [str(d) for d in found if d.severity != "warning"]
    assert not errors, f"{e.name}: diagnose reported errors:\n" + "\n".join(errors)
    for d in found:
        assert d.path == e.fn.__code__.co_filename, str(d)
    return {finding(d.message, d.line, d.col) for d in found}


def matches(found: tuple[str, str, int, int], want: Expect) -> bool:
    """Whether a reported warning is the expected one (control: either family)."""
    param, kind, line, col = found
    if param != want.param:
        return False
    if want.kind != "control":
        return (kind, line, col) == (want.kind, want.line, want.col)
    if kind == "unused":
        return (line, col) == (want.line, want.col)
    return kind == "control" and (line, col) == (want.site_line, want.site_col)


def compare(found: set, expected: frozenset[Expect]) -> tuple[set, set]:
    """(unexpected findings, missed expectations)."""
    false_positives = {f for f in found if not any(matches(f, w) for w in expected)}
    missed = {w for w in expected if not any(matches(f, w) for f in found)}
    return false_positives, missed


def describe(want: Expect) -> str:
    where = f"{want.line}:{want.col}"
    if want.kind == "control":
        where += f" (or a control-flow message at {want.site_line}:{want.site_col})"
    return f"{want.param} {want.kind} at {where}"


# --- helpers -------------------------------------------------------------------------------


def fresh(fn: Callable) -> Callable:
    """A new function object with ``fn``'s code, so compiler caches start empty.

    Warnings are issued once per function and argument kinds; each test wants
    to see the first issue.
    """
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__qualname__ = fn.__qualname__
    copy.__module__ = fn.__module__
    return copy


def leaves(value: Any) -> list[float]:
    if isinstance(value, tuple):
        return [x for v in value for x in leaves(v)]
    return [value]


def replace_leaf(value: Any, index: int, new: float) -> tuple[Any, int]:
    """``value`` with its ``index``-th float leaf replaced; also the leaves used."""
    if isinstance(value, tuple):
        out, used = [], 0
        for v in value:
            v2, n = replace_leaf(v, index - used, new)
            out.append(v2)
            used += n
        return tuple(out), used
    return (new if index == 0 else value), 1


def float_params(e: Entry) -> list[tuple[int, str]]:
    def is_float(v: Any) -> bool:
        return isinstance(v, float) or (isinstance(v, tuple) and any(map(is_float, v)))

    return [(i, p) for i, (p, a) in enumerate(zip(e.params, e.args, strict=True)) if is_float(a)]


def finite_differences(e: Entry, position: int) -> list[float]:
    """Central differences of ``e.fn`` in each float leaf of argument ``position``."""
    out = []
    for k, x in enumerate(leaves(e.args[position])):
        if not isinstance(x, float):
            continue

        def along(t: float, k: int = k, x: float = x) -> float:
            args = list(e.args)
            args[position], _ = replace_leaf(e.args[position], k, x + t)
            return float(e.fn(*args))

        out.append(central_difference(along, relative_step(x, STEP))[0])
    return out


def reported_params(e: Entry) -> set[str]:
    return {w.param for w in e.expected}


def gradient_warnings(e: Entry) -> tuple[Any, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gradient = ad.gradient(fresh(e.fn))(*e.args)
    return gradient, [w for w in caught if issubclass(w.category, ad.ZeroDerivativeWarning)]


# --- the corpus itself ---------------------------------------------------------------------


def test_corpus_is_large_and_covers_every_kind():
    assert len(CORPUS) >= 30
    kinds = {w.kind for e in CORPUS for w in e.expected}
    assert kinds == {"unused", "non-differentiable", "control"}
    assert sum(1 for e in CORPUS if not e.expected) >= 10, "too few precision cases"
    assert len({e.name for e in CORPUS}) == len(CORPUS)


def test_markers_point_at_the_declared_text():
    e = next(e for e in CORPUS if e.name == "unused_and_floor")
    lines, first = inspect.getsourcelines(e.fn)
    def_lineno = first + next(i for i, s in enumerate(lines) if s.startswith("def "))
    by_param = {w.param: w for w in e.expected}
    assert (by_param["c"].line, by_param["c"].col) == (
        def_lineno, len("def unused_and_floor(a, b, ") + 1)
    assert (by_param["b"].line, by_param["b"].col) == (
        def_lineno + 1, len("    return math.sin(a) + ") + 1)


# --- precision and recall over the corpus --------------------------------------------------


def test_precision_and_recall_over_the_corpus():
    true_positives = false_positives = missed = 0
    report = []
    for e in CORPUS:
        try:
            found = diagnosed(e)
        except Exception as exc:  # noqa: BLE001 - a crash counts as missing everything
            missed += len(e.expected)
            report.append(f"{e.name}: diagnose failed: {type(exc).__name__}: {exc}")
            continue
        extra, lost = compare(found, e.expected)
        true_positives += len(found) - len(extra)
        false_positives += len(extra)
        missed += len(lost)
        report += [f"{e.name}: unexpected {f}" for f in sorted(extra)]
        report += [f"{e.name}: missed {describe(w)}" for w in lost]
    reported = true_positives + false_positives
    expected = true_positives + missed
    precision = true_positives / reported if reported else 1.0
    recall = true_positives / expected if expected else 1.0
    summary = (f"precision {precision:.1%} ({true_positives}/{reported}), "
               f"recall {recall:.1%} ({true_positives}/{expected}) over {len(CORPUS)} functions")
    print(summary)
    assert (precision, recall) == (1.0, 1.0), summary + "\n" + "\n".join(report)


# --- per function -------------------------------------------------------------------------


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_diagnose_reports_exactly_the_expected_warnings(e: Entry):
    found = diagnosed(e)
    extra, lost = compare(found, e.expected)
    assert not extra and not lost, (
        f"unexpected: {sorted(extra)}\nmissed: {[describe(w) for w in lost]}")


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_gradient_issues_the_same_warnings_at_the_users_file_and_line(e: Entry):
    _, caught = gradient_warnings(e)
    found = set()
    for w in caught:
        message = str(w.message)
        assert w.filename == e.fn.__code__.co_filename, message
        located = LOCATION.match(message)
        col = int(located.group(3)) if located else 0
        if located:
            assert int(located.group(2)) == w.lineno, message
        found.add(finding(message, w.lineno, col))
    assert len(found) == len(caught), f"duplicate warnings: {[str(w.message) for w in caught]}"
    extra, lost = compare(found, e.expected)
    assert not extra and not lost, (
        f"unexpected: {sorted(extra)}\nmissed: {[describe(w) for w in lost]}")
    for w in caught:
        assert "without_derivative" in str(w.message), "the warning should suggest the fix"


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_warnings_are_issued_once_per_function_and_argument_kinds(e: Entry):
    fn = ad.differentiable(fresh(e.fn))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ad.gradient(fn)(*e.args)
        first = len(caught)
        ad.gradient(fn)(*e.args)
    zero = [w for w in caught if w.category is ad.ZeroDerivativeWarning]
    assert len(zero) == len(e.expected)  # (an int argument is said apart: api/test_first_use)
    assert len(caught) == first, "warned again for the same argument kinds"


def test_diagnose_does_not_use_up_the_warnings_of_the_transform():
    e = next(e for e in CORPUS if e.name == "ignores_second")
    fn = ad.differentiable(fresh(e.fn))
    assert len(ad.diagnose(fn, *e.args)) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ad.gradient(fn)(*e.args)
    assert [w.category for w in caught] == [ad.ZeroDerivativeWarning]


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_the_error_filter_turns_warnings_into_exceptions(e: Entry):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ad.ZeroDerivativeWarning)
        if e.expected:
            with pytest.raises(ad.ZeroDerivativeWarning, match=r"parameter '\w+'"):
                ad.gradient(fresh(e.fn))(*e.args)
        else:
            ad.gradient(fresh(e.fn))(*e.args)


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_finite_differences_confirm_which_derivatives_are_zero(e: Entry):
    """Reported: zero slope.  Not reported: a nonzero slope at the example point.

    Deliberate cuts are skipped: ``without_derivative`` is the identity in the
    plain function, so its slope is nonzero while its gradient is zero by design.
    """
    for position, name in float_params(e):
        if name in e.deliberate:
            continue
        slopes = finite_differences(e, position)
        if name in reported_params(e):
            assert all(abs(s) <= 1e-9 for s in slopes), f"d/d{name} = {slopes}, not zero"
        else:
            assert any(abs(s) > 1e-6 for s in slopes), (
                f"d/d{name} = {slopes}: choose example arguments where it is nonzero")


@pytest.mark.parametrize("e", CORPUS, ids=lambda e: e.name)
def test_gradient_agrees_with_finite_differences(e: Entry):
    """The gradient is zero for deliberate cuts and matches finite differences elsewhere."""
    gradient, _ = gradient_warnings(e)
    params = float_params(e)
    values = gradient if len(params) > 1 else (gradient,)
    for (position, name), value in zip(params, values, strict=True):
        got = leaves(value)
        if name in e.deliberate:
            assert all(g == 0.0 for g in got), f"d/d{name} = {value}, cut by without_derivative"
            continue
        want = finite_differences(e, position)
        assert len(got) == len(want), f"d/d{name}: {value}"
        for g, w in zip(got, want, strict=True):
            assert math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-7), f"d/d{name}: {g} vs {w}"
