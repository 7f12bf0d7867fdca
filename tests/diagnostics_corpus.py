"""The zero-derivative diagnostics corpus (SPEC §3, issue 4).

Small functions, each added to the table ``CORPUS`` by the ``@entry(args...)``
decorator above it.  The expected warnings are declared by marker comments on
the lines they point at, never by numbers::

    @entry(2.3, 1.5, 0.5)
    def f(x, y, z):  # expect: unused z
        return round(x) * y  # expect: nondiff x at round(

``# expect: KIND PARAM [at TEXT]`` (several separated by ``;``):

``unused``   the parameter never reaches the result; located at the parameter
             in the ``def`` line (``at`` is not given);
``nondiff``  the result depends on the parameter only through a
             non-differentiable operation; located at the first character of
             ``TEXT`` (the call or operator expression) on the marker's line;
``control``  the result depends on the parameter only through a branch
             condition or loop bound; its derivative is zero and it is reported,
             either with the "does not affect the result" message at the
             parameter in the ``def`` line, or with a control-flow message at
             ``TEXT`` (the condition) on the marker's line.

Columns are 1-based: the index of the text in the line plus one.  A function
without markers expects no warning.  ``deliberate`` names parameters whose
derivative is zero on purpose (``ad.without_derivative``): they must not be
reported, and their gradient is zero although the plain function (where
``without_derivative`` is the identity) has a nonzero finite difference.
Example arguments are chosen away from jumps, so that every other float
parameter that is not expected to be reported has a nonzero derivative there.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import s2s_ad as ad

KINDS = {"unused": "unused", "nondiff": "non-differentiable", "control": "control"}
MARKER = re.compile(r"#\s*expect:\s*(.*)$")


@dataclass(frozen=True)
class Expect:
    """One expected warning: parameter, kind, 1-based line and column.

    For kind ``control`` the pair (``line``, ``col``) is the parameter in the
    ``def`` line and (``site_line``, ``site_col``) the branch condition or loop
    bound, where a control-flow message may point instead.
    """

    param: str
    kind: str
    line: int
    col: int
    site_line: int = 0
    site_col: int = 0


@dataclass
class Entry:
    """A corpus function, its example arguments and what it should warn."""

    fn: Callable
    args: tuple
    expected: frozenset[Expect]
    deliberate: frozenset[str] = field(default_factory=frozenset)

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def params(self) -> list[str]:
        return list(inspect.signature(self.fn).parameters)


def _column(code: str, text: str, where: str) -> int:
    """1-based column of the only occurrence of ``text`` in ``code``."""
    count = code.count(text)
    if count != 1:
        raise ValueError(f"{where}: marker text {text!r} occurs {count} times in {code!r}")
    return code.index(text) + 1


def _param_column(def_line: str, param: str, where: str) -> int:
    """1-based column of parameter ``param`` in a ``def`` line."""
    start = def_line.index("(")
    match = re.search(rf"\b{re.escape(param)}\b", def_line[start:])
    if match is None:
        raise ValueError(f"{where}: no parameter {param!r} in {def_line!r}")
    return start + match.start() + 1


def expectations(fn: Callable) -> frozenset[Expect]:
    """The warnings declared by the marker comments in ``fn``'s source."""
    lines, first = inspect.getsourcelines(fn)
    def_index = next(i for i, s in enumerate(lines) if s.lstrip().startswith("def "))
    def_line, def_lineno = lines[def_index], first + def_index
    found = set()
    for offset, text in enumerate(lines):
        match = MARKER.search(text)
        if match is None:
            continue
        lineno = first + offset
        code = text[: match.start()]
        where = f"{fn.__name__} line {lineno}"
        for item in match.group(1).split(";"):
            words = item.split(None, 2)
            kind, param = KINDS[words[0]], words[1]
            site = words[2].removeprefix("at ").strip() if len(words) > 2 else None
            def_col = _param_column(def_line, param, where)
            if kind == "unused":
                if lineno != def_lineno or site is not None:
                    raise ValueError(f"{where}: put 'unused' markers on the def line, without 'at'")
                found.add(Expect(param, kind, def_lineno, def_col))
            elif kind == "non-differentiable":
                found.add(Expect(param, kind, lineno, _column(code, site, where)))
            else:
                found.add(Expect(param, kind, def_lineno, def_col, lineno,
                                 _column(code, site, where)))
    return frozenset(found)


CORPUS: list[Entry] = []


def entry(*args: Any, deliberate: tuple[str, ...] = ()) -> Callable[[Callable], Callable]:
    """Add the decorated function to ``CORPUS`` with example ``args``."""

    def add(fn: Callable) -> Callable:
        CORPUS.append(Entry(fn, args, expectations(fn), frozenset(deliberate)))
        return fn

    return add


# --- a parameter that never reaches the result ------------------------------------------


@entry(1.5, 2.5)
def ignores_second(x, y):  # expect: unused y
    return x * 2.0


@entry(0.7)
def constant_result(x):  # expect: unused x
    return 3.0


@entry(1.5, 2.5, 0.5)
def ignores_two_of_three(a, b, c):  # expect: unused a; unused c
    return math.sin(b)


@entry(1.2, 0.4, 4)
def dead_store_in_loop(x, y, n):  # expect: unused y
    s = 0.0
    t = 0.0
    for i in range(n):
        t = t + y * i
        s = s + x * i
    return s


# --- dependence only through non-differentiable operations ----------------------------


@entry(2.3, 1.5)
def only_through_round(x, y):
    return round(x) * y  # expect: nondiff x at round(


@entry(2.3)
def only_through_int(x):
    return int(x) + 0.5  # expect: nondiff x at int(


@entry(2.3)
def only_through_floor(x):
    return math.floor(x) * 2.0  # expect: nondiff x at math.floor(


@entry(2.3)
def only_through_ceil(x):
    return math.ceil(x) - 1.0  # expect: nondiff x at math.ceil(


@entry(-2.3)
def only_through_trunc(x):
    return math.trunc(x) * 0.5  # expect: nondiff x at math.trunc(


@entry(2.5, 1.5)
def only_through_comparison(x, y):
    return y * (x > 1.0)  # expect: nondiff x at x > 1.0


@entry(2.5, 1.5)
def only_through_floordiv(x, y):
    q = x // 1.0  # expect: nondiff x at x // 1.0
    return q * y


@entry(2.5)
def only_through_bool(x):
    return 2.0 * bool(x)  # expect: nondiff x at bool(


@entry(2.3)
def round_on_an_earlier_line(x):
    k = round(x)  # expect: nondiff x at round(
    m = k * 3.0
    return m + 1.0


@entry(2.3, 3)
def floor_inside_a_loop(x, n):
    s = 0.0
    for _ in range(n):
        s = s + math.floor(x)  # expect: nondiff x at math.floor(
    return s


# --- dependence only through control: a branch condition or a loop bound --------------


@entry(0.5, 1.5)
def branch_condition_only(x, y):
    if x > 0.0:  # expect: control x at x > 0.0
        return y * 2.0
    return y * 3.0


@entry(0.5, 1.5)
def conditional_expression_condition_only(x, y):
    return y if x > 0.0 else 2.0 * y  # expect: control x at x > 0.0


@entry(3.5)
def while_loop_bound(x):
    t = 0.0
    while t < x:  # expect: control x at t < x
        t = t + 1.0
    return t


# --- nonzero somewhere: never reported --------------------------------------------------


@entry(1.5, 2.5)
def product_in_one_branch(x, y):
    return x * y if x > 0.0 else x


@entry(1.0, 2.0)
def used_in_one_branch(x, y):
    if x > 0.0:
        r = x + y
    else:
        r = x
    return r


@entry(6.0, 2.0)
def early_return_constant(x, y):
    if x > 5.0:
        return x * y
    return 1.0


@entry(1.3, 4)
def loop_accumulator(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    return s


@entry(1.3)
def loop_carried_product(x):
    p = 1.0
    for _ in range(3):
        p = p * x
    return p


def _square(v):
    return v * v


@entry(1.5, 2.5)
def through_a_callee(x, y):
    return _square(x) + y


@entry(-1.5)
def uses_abs(x):
    return abs(x)


@entry(1.0, 2.0)
def uses_max_and_min(x, y):
    return max(x, y) + min(x, y)


@entry(7.25)
def uses_mod(x):
    return x % 3.0


@entry(2.3)
def round_plus_smooth_path(x):
    return round(x) + x


@entry(1.5)
def branch_and_data(x):
    if x > 0.0:
        return x * 2.0
    return -x


# --- explicit without_derivative: a deliberate zero never warns -------------------------


@entry(1.5, deliberate=("x",))
def stopped_everywhere(x):
    return ad.without_derivative(x) * 2.0


@entry(2.0, 3.0, deliberate=("y",))
def spec_stop_example(x, y):
    return math.sin(math.sin(math.sin(x))) + ad.without_derivative(math.cos(math.cos(math.cos(y))))


@entry(1.5, 2.5, deliberate=("x",))
def stopped_and_unused(x, y):  # expect: unused y
    return ad.without_derivative(x) * 2.0


@entry(1.5, 2.5, deliberate=("y",))
def stopped_value_reused(x, y):
    s = ad.without_derivative(y * y)
    return x * s


# --- a value overwritten before it is read (needs a flow-sensitive analysis) ---------


@entry(1.5, 2.5)
def overwritten_before_use(x, y):  # expect: unused y
    y = 3.0
    return x * y


@entry(1.5, 2.5)
def temporary_reused_before_the_result(x, y):  # expect: unused x
    t = x * 2.0
    print(t)
    t = 3.0
    return y * t


# --- int parameters are never differentiated, so never reported -----------------------


@entry(1.5, 3)
def int_parameter_unused(x, n):
    return x * 2.0


@entry(1.5, 3)
def int_parameter_used(x, n):
    return x * n


@entry(2.3, 3)
def int_parameter_through_round(x, n):
    return round(x) * n + x


# --- several parameters, some reported --------------------------------------------------


@entry(1.5, 2.5, 3.25)
def one_of_three_through_round(a, b, c):
    return a * b + round(c)  # expect: nondiff c at round(


@entry(1.5, 2.5, 3.5)
def unused_and_floor(a, b, c):  # expect: unused c
    return math.sin(a) + math.floor(b)  # expect: nondiff b at math.floor(


# --- a tuple parameter is a structure: reported only when no field matters --------------


@entry((1.5, 2.5), 0.5)
def one_field_of_a_tuple(p, y):
    return p[0] * y


@entry((1.5, 2.5), 0.5)
def tuple_unused(p, y):  # expect: unused p
    return y * 3.0


# --- nested functions -------------------------------------------------------------------


@entry(1.5, 2.5)
def nested_reads_enclosing(x, y):
    def inner(t):
        return t * y

    return inner(x)


@entry(1.5, 2.5)
def nested_ignores_enclosing(x, y):  # expect: unused y
    def inner(t):
        return t * 2.0

    return inner(x)


# --- side effects are not the result ------------------------------------------------------


@entry(1.5, 2.5)
def printed_only(x, y):  # expect: unused y
    print(y)
    return x * 2.0


@entry(1.5, 2.5)
def asserted_only(x, y):  # expect: unused y
    assert y > 0.0
    return x * 3.0
