"""Every refused construct: its error names file:line:col, shows the line with a
caret under the construct, and says what to do instead (SPEC section 1).

The expected line is the one marked ``# <- here`` in refused_constructs.py;
the expected column is where the marker substring starts on that line.
"""

import inspect
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import refused_constructs as rc

import s2s_ad as ad

LINE_MARKER = "# <- here"


@dataclass(frozen=True)
class Refusal:
    fn: Any
    column_marker: str  # the text the caret must point at, on the marked line
    message: str  # a substring of the problem statement
    args: tuple = (1.0,)


REFUSALS = [
    Refusal(rc.uses_try, "try", "'try' statements are not differentiable"),
    Refusal(rc.uses_try_finally, "try", "'try' statements are not differentiable"),
    Refusal(rc.uses_with, "with", "'with' statements are not differentiable", (1.0, None)),
    Refusal(rc.uses_yield, "yield", "generators ('yield')"),
    Refusal(rc.uses_yield_from, "yield from", "generators ('yield from')"),
    Refusal(rc.uses_global_write, "global", "'global' declarations"),
    Refusal(rc.uses_nonlocal, "nonlocal", "'nonlocal' declarations"),
    Refusal(rc.uses_nested_async_def, "async def", "async functions"),
    Refusal(rc.uses_await, "async def", "async functions"),
    Refusal(rc.uses_class, "class", "class definitions"),
    Refusal(rc.uses_del, "del", "'del' statements"),
    Refusal(rc.uses_match, "match", "'match' statements", (1.0, 0)),
    Refusal(rc.uses_starred_call, "*pair", "starred arguments"),
    Refusal(rc.uses_starred_assignment, "*b", "starred arguments and targets"),
    Refusal(rc.uses_double_star_call, "**options", "'**' arguments", (1.0, None)),
    Refusal(rc.uses_import, "import", "imports inside a differentiated function"),
    Refusal(rc.uses_import_from, "from", "imports inside a differentiated function"),
    Refusal(rc.uses_list_pop, "v.pop", "the list method 'pop' is not supported"),
    Refusal(rc.uses_set_comprehension, "{x * k", "set comprehensions"),
    Refusal(rc.uses_dict_comprehension, "{k: x", "dict comprehensions"),
    Refusal(rc.uses_list_item_write, "v[0]", "writing an item of a list"),
    Refusal(rc.uses_walrus, "y :=", "assignment expressions (':=')"),
    Refusal(rc.uses_dict_literal, "1: x", "a dict's keys must be string constants"),
    Refusal(rc.uses_set_literal, "{x}", "set values"),
    Refusal(rc.uses_list_returned, "return", "the list 'v' can only grow"),
    Refusal(rc.uses_for_else, "for", "'for ... else'", (1.0, 3)),
    Refusal(rc.uses_while_else, "while", "'while ... else'"),
    Refusal(rc.uses_decorated_nested_def, "def", "decorated functions"),
    Refusal(rc.uses_variadic_params, "args", "variadic"),
    Refusal(rc.uses_keyword_arguments_dict, "options", "variadic parameters"),
    Refusal(rc.uses_c_function_without_rule, "math.gamma", "'gamma' has no derivative rule"),
    Refusal(rc.uses_c_function_as_the_result, "math.gamma", "'gamma' has no derivative rule"),
    Refusal(rc.uses_c_function_in_an_assignment, "math.gamma", "'gamma' has no derivative rule"),
    Refusal(
        rc.uses_c_function_inside_an_expression, "math.gamma", "'gamma' has no derivative rule"
    ),
    Refusal(rc.fact, "fact(x, n - 1)", "recursive call to 'fact'", (1.0, 3)),
    Refusal(rc.dict_in_a_lambda, "0: x", "a dict's keys must be string constants"),
    Refusal(
        rc.uses_undefined_name, "undefined_function", "name 'undefined_function' is not defined"
    ),
    Refusal(rc.returns_a_number_or_an_array, "return",
            "this returns an array of 1 dimensions, another return a number",
            (1.0, np.ones(2))),
    Refusal(rc.writes_into_a_nested_list, "first[-1]",
            "writing an item of 'first', which is not an array", (0.7,)),
]


def marked_position(refusal: Refusal) -> tuple[int, int]:
    """(1-based line, 1-based column) of the marked construct in ``refusal.fn``."""
    lines, first = inspect.getsourcelines(refusal.fn)
    marked = [i for i, text in enumerate(lines) if LINE_MARKER in text]
    assert len(marked) == 1, f"{refusal.fn.__name__} needs exactly one '{LINE_MARKER}'"
    text = lines[marked[0]]
    assert refusal.column_marker in text
    return first + marked[0], text.index(refusal.column_marker) + 1


def refusal_error(refusal: Refusal) -> ad.NonDifferentiableError:
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(refusal.fn)(*refusal.args)
    return info.value


CASES = [pytest.param(r, id=r.fn.__name__) for r in REFUSALS]


@pytest.mark.parametrize("refusal", CASES)
def test_refusal_names_file_line_and_column(refusal):
    line, col = marked_position(refusal)
    err = refusal_error(refusal)
    first = str(err).splitlines()[0]
    assert first.startswith(f"{rc.__file__}:{line}:{col}: error: "), first
    assert refusal.message in first
    assert (err.location.filename, err.location.lineno, err.location.col) == (
        rc.__file__,
        line,
        col,
    )
    assert refusal.message in err.problem
    assert err.one_line == first


@pytest.mark.parametrize("refusal", CASES)
def test_refusal_shows_the_line_a_caret_and_a_hint(refusal):
    line, col = marked_position(refusal)
    err = refusal_error(refusal)
    lines = str(err).splitlines()
    assert len(lines) == 4, str(err)
    source_line = inspect.getsourcelines(refusal.fn)[0][line - refusal.fn.__code__.co_firstlineno]
    assert lines[1] == "    " + source_line.rstrip("\n")
    assert lines[2] == "    " + " " * (col - 1) + "^"
    assert lines[3] == err.hint
    assert err.hint.strip()


@pytest.mark.parametrize("refusal", CASES)
def test_refusal_is_raised_by_the_decorator_or_at_the_first_gradient(refusal):
    """Every transform refuses the same way, whichever entry point runs first."""
    line, col = marked_position(refusal)
    with pytest.raises(ad.NonDifferentiableError) as info:
        df = ad.differentiable(refusal.fn, jit=False)
        ad.value_with_pullback(df, *refusal.args)
    assert (info.value.location.lineno, info.value.location.col) == (line, col)


def test_a_call_without_rule_or_source_suggests_both_ways_out():
    err = refusal_error(Refusal(rc.uses_c_function_without_rule, "math.gamma", ""))
    assert "@ad.derivative(of=gamma)" in err.hint
    assert "ad.without_derivative(" in err.hint


def test_a_c_function_without_rule_is_refused_even_when_called_directly():
    """``math.gamma`` itself has no Python source: refused, never a silent zero."""
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(math.gamma)(1.5)
    assert "gamma" in str(info.value)
    assert "@ad.derivative" in str(info.value)


def test_a_refusal_in_a_callee_points_into_the_callee():
    line, col = marked_position(Refusal(rc.uses_try, "try", ""))
    err = refusal_error(Refusal(rc.calls_a_function_with_try, "", ""))
    assert err.one_line.startswith(f"{rc.__file__}:{line}:{col}: error: 'try' statements")


def test_mutual_recursion_points_at_the_call_that_closes_the_cycle():
    """ping -> pong -> ping: the caret goes under pong's call of ping."""
    line, col = marked_position(Refusal(rc.pong, "ping(x, n)", ""))
    err = refusal_error(Refusal(rc.ping, "", "", (1.0, 2)))
    assert "recursive" in err.problem
    assert (err.location.lineno, err.location.col) == (line, col), err.one_line


def test_recursion_hint_suggests_a_loop_or_a_custom_derivative():
    err = refusal_error(Refusal(rc.fact, "", "", (1.0, 3)))
    assert "loop" in err.hint
    assert "@ad.derivative(of=fact)" in err.hint


async def top_level_coroutine(x):
    return x * 2.0


def test_a_top_level_async_def_is_refused_at_its_def():
    _, first = inspect.getsourcelines(top_level_coroutine)
    with pytest.raises(ad.NonDifferentiableError) as info:
        ad.gradient(top_level_coroutine)(1.0)
    assert info.value.location is not None, str(info.value)
    assert (info.value.location.lineno, info.value.location.col) == (first, 1)
    assert "async functions are not differentiable" in info.value.problem
