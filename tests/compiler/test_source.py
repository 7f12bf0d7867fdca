"""Golden-text tests of the generated source, stage by stage (DESIGN: "per-stage
tests compare printed source with expected text").

Every expected pullback below was read line by line and checked to be the
reverse-mode derivative of its function; the comments next to each derive the
adjoints by hand.  Line numbers in the expected text are found in this file's
own source, so adding lines above a function does not break its test.
"""

import inspect
import math
import re
import textwrap

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad import runtime as rt

# --- the functions under test --------------------------------------------------------


def straight_line(x, y):
    return math.sin(x) * y + x ** 2


def branch(x, y):
    if x > 0.0:
        z = x * y
    else:
        z = math.cos(y)
    return z


def accumulate(x, n):
    s = 0.0
    for i in range(n):
        s = s + x * i
    return s


def helper(a, b):
    return a * b + math.exp(a)


def calls_helper(x, y):
    return helper(x, y) * 2.0


def product_of_sines(x, n):
    s = 1.0
    for i in range(n):
        s = s * math.sin(x + i)
    return s


def grow_until_large(x):
    s = 1.0
    while s < 100.0:
        s = s * x
    return s


EXAMPLES = [
    (straight_line, (1.0, 2.0)),
    (branch, (1.0, 2.0)),
    (branch, (-1.0, 2.0)),
    (accumulate, (1.5, 4)),
    (helper, (0.5, 2.0)),
    (calls_helper, (0.5, 2.0)),
    (product_of_sines, (0.3, 4)),
    (grow_until_large, (2.0,)),
]
EXAMPLE_IDS = [f"{fn.__name__}{args}" for fn, args in EXAMPLES]


# --- helpers -------------------------------------------------------------------------


def line_of(fn, text: str) -> int:
    """The line number, in this file, of the one line of ``fn`` that contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (fn.__name__, text, hits)
    return hits[0]


def file_line(n: int) -> str:
    return inspect.getsourcelines(inspect.getmodule(line_of))[0][n - 1].strip()


def expect(template: str, **lines: int) -> str:
    return textwrap.dedent(template).strip("\n").format(**lines)


def assert_same_text(actual: str, expected: str) -> None:
    assert actual.strip("\n") == expected, "\n--- actual ---\n" + actual


# --- golden text ---------------------------------------------------------------------


def test_anf_of_straight_line_code_has_one_operation_per_statement():
    expected = expect(
        """
        def straight_line(x, y):
            # line {ret}: return math.sin(x) * y + x ** 2
            sin_x = math.sin(x)
            sin_x_mul_y = sin_x * y
            x_pow_2 = x ** 2
            result = sin_x_mul_y + x_pow_2
            return result
        """,
        ret=line_of(straight_line, "return"),
    )
    assert_same_text(ad.source(straight_line, 1.0, 2.0, stage="anf"), expected)


def test_pullback_of_straight_line_code():
    # f = sin(x) * y + x ** 2, walked backwards from result (cotangent g):
    #   result = sin_x_mul_y + x_pow_2   d_sin_x_mul_y = g,  d_x_pow_2 = g
    #   x_pow_2 = x ** 2                 d_x += d_x_pow_2 * 2 * x
    #   sin_x_mul_y = sin_x * y          d_sin_x = d_sin_x_mul_y * y,  d_y = d_sin_x_mul_y * sin_x
    #   sin_x = sin(x)                   d_x += d_sin_x * cos(x)
    # so d_x = g * (2x + y cos x), d_y = g * sin x: the analytic gradient.
    expected = expect(
        """
        def straight_line_pullback(residuals, d_value):
            x, sin_x, y = residuals
            # cotangents start at zero
            d_sin_x = 0.0
            d_x = 0.0
            d_sin_x_mul_y = 0.0
            d_y = 0.0
            d_x_pow_2 = 0.0
            d_result = 0.0
            # the cotangent of the result seeds the pullback
            d_result += d_value
            # adjoint of line {ret}: return math.sin(x) * y + x ** 2
            d_sin_x_mul_y += d_result
            d_x_pow_2 += d_result
            d_x += d_x_pow_2 * 2 * x
            d_sin_x += d_sin_x_mul_y * y
            d_y += d_sin_x_mul_y * sin_x
            d_x += d_sin_x * math.cos(x)
            return (d_x, d_y)
        """,
        ret=line_of(straight_line, "return"),
    )
    assert_same_text(ad.source(straight_line, 1.0, 2.0, stage="pullback"), expected)


def test_pullback_of_a_branch_replays_the_decision():
    # The pullback decides x > 0.0 again, from x (a comparison of numbers bound once
    # is cheap to recompute: it is not saved), and takes the same branch.
    #   then: z = x * y       d_x = d_z * y,  d_y = d_z * x
    #   else: z = cos(y)      d_y = -d_z * sin(y)   (x gets nothing)
    # Each branch zeroes d_z afterwards: z was assigned there, so its old value
    # (unbound here) receives no cotangent.
    expected = expect(
        """
        def branch_pullback(residuals, d_value):
            x, y = residuals
            # values recomputed, not saved for the pullback
            x_gt_0_re = x > 0.0
            # cotangents start at zero
            d_z = 0.0
            d_x = 0.0
            d_y = 0.0
            # the cotangent of the result seeds the pullback
            d_z += d_value
            if x_gt_0_re:
                # adjoint of line {then}: z = x * y
                d_x += d_z * y
                d_y += d_z * x
                d_z = 0.0
            else:
                # adjoint of line {orelse}: z = math.cos(y)
                d_y += -d_z * math.sin(y)
                d_z = 0.0
            return (d_x, d_y)
        """,
        then=line_of(branch, "z = x * y"),
        orelse=line_of(branch, "z = math.cos(y)"),
    )
    assert_same_text(ad.source(branch, 1.0, 2.0, stage="pullback"), expected)


def test_forward_of_a_range_loop_keeps_nothing_it_can_recompute():
    # Only i is needed backwards (d_x += d_x_mul_i * i): the pullback recomputes it
    # from the iteration number, so the forward sweep tapes nothing and keeps only
    # the trip count.
    lines = dict(
        init=line_of(accumulate, "s = 0.0"),
        loop=line_of(accumulate, "for i"),
        body=line_of(accumulate, "s = s + x * i"),
    )
    expected = expect(
        """
        def accumulate_forward(x, n):
            # line {init}: s = 0.0
            s = 0.0
            # line {loop}: for i in range(n):
            n_iter = 0
            for i in range(n):
                # line {loop}: for i in range(n):
                n_iter += 1
                # line {body}: s = s + x * i
                x_mul_i = x * i
                s = s + x_mul_i
            return (s, (n_iter,))
        """,
        **lines,
    )
    assert_same_text(ad.source(accumulate, 1.5, 4, stage="forward"), expected)


def test_pullback_of_a_range_loop_recomputes_the_loop_variable():
    # Per iteration, last first (k counts down from n_iter - 1; range(n) starts at
    # 0 with step 1, so the k-th value of i is k):
    #   s = s + x_mul_i      d_s (old) = d_s (new),  d_x_mul_i = d_s (new)
    #   x_mul_i = x * i      d_x += d_x_mul_i * i     (i recomputed, not taped)
    # so d_x = g * sum(i for i in range(n)), as f = x * sum(i).
    # Before the loop, s = 0.0 is a constant: its cotangent is dropped.
    lines = dict(init=line_of(accumulate, "s = 0.0"), body=line_of(accumulate, "s = s + x * i"),
                 loop=line_of(accumulate, "for i"))
    expected = expect(
        """
        def accumulate_pullback(residuals, d_value):
            n_iter, = residuals
            # cotangents start at zero
            d_s = 0.0
            d_x_mul_i = 0.0
            d_x = 0.0
            # the cotangent of the result seeds the pullback
            d_s += d_value
            for k in range(n_iter - 1, -1, -1):
                # values of this iteration, recomputed (not taped): for i in range(n):
                i_re = k
                # adjoint of line {body}: s = s + x * i
                d_s_in = d_s
                d_s = 0.0
                d_s += d_s_in
                d_x_mul_i += d_s_in
                d_x += d_x_mul_i * i_re
                d_x_mul_i = 0.0
            # adjoint of line {init}: s = 0.0
            d_s = 0.0
            return (d_x,)
        """,
        **lines,
    )
    assert_same_text(ad.source(accumulate, 1.5, 4, stage="pullback"), expected)


def test_pullback_of_a_call_runs_the_callees_pullback():
    # result = helper_1 * 2.0   d_helper_1 = g * 2.0
    # helper_1 = helper(x, y)   (d_x, d_y) += helper_pullback(its residuals, d_helper_1)
    expected = expect(
        """
        def calls_helper_pullback(residuals, d_value):
            helper_2_residuals_saved, = residuals
            # cotangents start at zero
            d_helper_1 = 0.0
            d_x = 0.0
            d_y = 0.0
            d_result = 0.0
            # the cotangent of the result seeds the pullback
            d_result += d_value
            # adjoint of line {ret}: return helper(x, y) * 2.0
            d_helper_1 += d_result * 2.0
            helper_2_grads = helper_pullback(helper_2_residuals_saved, d_helper_1)
            d_x += helper_2_grads[0]
            d_y += helper_2_grads[1]
            return (d_x, d_y)
        """,
        ret=line_of(calls_helper, "return"),
    )
    assert_same_text(ad.source(calls_helper, 0.5, 2.0, stage="pullback"), expected)


def test_pullback_of_the_callee():
    # helper = a * b + exp(a):
    #   result = a_mul_b + exp_a   d_a_mul_b = g,  d_exp_a = g
    #   exp_a = exp(a)             d_a += d_exp_a * exp_a   (exp' = exp, saved)
    #   a_mul_b = a * b            d_a += d_a_mul_b * b,  d_b += d_a_mul_b * a
    # so d_a = g * (b + e^a), d_b = g * a.
    expected = expect(
        """
        def helper_pullback(residuals, d_value):
            a, b, exp_a = residuals
            # cotangents start at zero
            d_a_mul_b = 0.0
            d_a = 0.0
            d_b = 0.0
            d_exp_a = 0.0
            d_result = 0.0
            # the cotangent of the result seeds the pullback
            d_result += d_value
            # adjoint of line {ret}: return a * b + math.exp(a)
            d_a_mul_b += d_result
            d_exp_a += d_result
            d_a += d_exp_a * exp_a
            d_a += d_a_mul_b * b
            d_b += d_a_mul_b * a
            return (d_a, d_b)
        """,
        ret=line_of(helper, "return"),
    )
    assert_same_text(ad.source(helper, 0.5, 2.0, stage="pullback"), expected)


# --- the golden functions compute the analytic derivatives ---------------------------


ANALYTIC = {
    straight_line: lambda x, y: (2 * x + y * math.cos(x), math.sin(x)),
    branch: lambda x, y: (y, x) if x > 0.0 else (0.0, -math.sin(y)),
    accumulate: lambda x, n: sum(range(n)),
    helper: lambda a, b: (b + math.exp(a), a),
    calls_helper: lambda x, y: (2.0 * (y + math.exp(x)), 2.0 * x),
    # s = prod_i sin(x + i): ds/dx = s * sum_i cot(x + i)
    product_of_sines: lambda x, n: (
        math.prod(math.sin(x + i) for i in range(n))
        * sum(math.cos(x + i) / math.sin(x + i) for i in range(n))
    ),
    # at x = 2 the loop runs 7 times (2**7 = 128 >= 100): s = x**7, ds/dx = 7 x**6
    grow_until_large: lambda x: 7 * x**6,
}


@pytest.mark.parametrize(("fn", "args"), EXAMPLES, ids=EXAMPLE_IDS)
def test_generated_code_computes_the_analytic_gradient(fn, args):
    df = ad.differentiable(fn, jit=False)
    value, pb = ad.value_with_pullback(df, *args)
    assert value == pytest.approx(fn(*args), rel=1e-14)
    expected = ANALYTIC[fn](*args)
    assert np.allclose(pb(1.0), expected, rtol=1e-12, atol=1e-14)
    assert np.allclose(pb(-2.5), np.multiply(-2.5, expected), rtol=1e-12, atol=1e-14)


# --- properties of the text ----------------------------------------------------------


@pytest.mark.parametrize(("fn", "args"), EXAMPLES, ids=EXAMPLE_IDS)
def test_module_source_compiles(fn, args):
    src = ad.source(fn, *args, stage="module")
    compile(src, "x", "exec")
    for stage in ("anf", "forward", "pullback", "fused"):
        compile(ad.source(fn, *args, stage=stage), "x", "exec")


@pytest.mark.parametrize(("fn", "args"), EXAMPLES, ids=EXAMPLE_IDS)
def test_module_holds_every_stage(fn, args):
    module = ad.source(fn, *args, stage="module")
    for stage in ("forward", "pullback", "fused"):
        assert ad.source(fn, *args, stage=stage).strip() in module


def test_names_derive_from_source_variables():
    pullback = ad.source(straight_line, 1.0, 2.0, stage="pullback")
    forward = ad.source(straight_line, 1.0, 2.0, stage="forward")
    for name in ("d_x", "d_y", "sin_x", "d_sin_x"):
        assert re.search(rf"\b{name}\b", pullback), name
    assert re.search(r"\bsin_x = math\.sin\(x\)", forward)
    helper_pullback = ad.source(helper, 0.5, 2.0, stage="pullback")
    assert re.search(r"\bd_a\b", helper_pullback) and re.search(r"\bd_b\b", helper_pullback)


@pytest.mark.parametrize(("fn", "args"), EXAMPLES, ids=EXAMPLE_IDS)
def test_every_adjoint_comment_quotes_the_right_line(fn, args):
    pullback = ad.source(fn, *args, stage="pullback")
    comments = re.findall(r"# adjoint of line (\d+): (.*)", pullback)
    assert comments, pullback
    for number, text in comments:
        assert file_line(int(number)) == text


@pytest.mark.parametrize(("fn", "args"), EXAMPLES, ids=EXAMPLE_IDS)
def test_every_forward_comment_quotes_the_right_line(fn, args):
    forward = ad.source(fn, *args, stage="forward")
    comments = re.findall(r"# line (\d+): (.*)", forward)
    assert comments, forward
    for number, text in comments:
        assert file_line(int(number)) == text


def test_every_assignment_with_a_derivative_has_an_adjoint_block():
    pullback = ad.source(product_of_sines, 0.3, 4, stage="pullback")
    body = line_of(product_of_sines, "s = s * math.sin(x + i)")
    assert f"# adjoint of line {body}: s = s * math.sin(x + i)" in pullback


def test_range_loop_tapes_are_preallocated_to_the_trip_count():
    forward = ad.source(product_of_sines, 0.3, 4, stage="forward")
    assert "trip_count = len(range(n))" in forward
    tapes = re.findall(r"(\w+_tape) = np\.empty\(trip_count, np\.float64\)", forward)
    # the loop needs sin(x + i) and s (for the product rule); x + i (for cos) is
    # recomputed from x and i in the pullback
    assert sorted(tapes) == ["s_tape", "sin_x_add_i_tape"]
    assert "rt.grow" not in forward
    # preallocation happens once, before the loop
    assert forward.index("np.empty(trip_count") < forward.index("    for i in range(n):\n")


def test_while_loop_tapes_grow_on_demand():
    forward = ad.source(grow_until_large, 2.0, stage="forward")
    assert "trip_count" not in forward
    assert re.search(r"s_tape = np\.empty\(\d+, np\.float64\)", forward)
    assert "s_tape = rt.grow(s_tape, position)" in forward
    # the grow comes before the write at the same position, inside the loop
    loop = forward[forward.index("while loop_cond:") :]
    assert loop.index("rt.grow(s_tape, position)") < loop.index("s_tape[position] = s")


def test_grow_makes_a_full_tape_half_as_long_again_and_keeps_its_contents():
    tape = np.arange(8.0)
    assert rt.grow(tape, 7) is tape
    bigger = rt.grow(tape, 8)
    assert bigger.shape == (12,) and bigger.dtype == tape.dtype
    assert np.array_equal(bigger[:8], tape)
    assert rt.grow(np.empty(0), 0).shape[0] >= 1


def test_a_while_loop_longer_than_the_initial_tape_differentiates_correctly():
    # x = 1.01: s = 1.01**k first reaches 100 at k = ceil(log(100) / log(1.01)) = 463,
    # many growths past the initial tape; ds/dx = k x**(k - 1).
    k = math.ceil(math.log(100.0) / math.log(1.01))
    assert 1.01 ** (k - 1) < 100.0 <= 1.01**k
    df = ad.differentiable(grow_until_large, jit=False)
    value, grad = ad.value_and_gradient(df)(1.01)
    assert value == pytest.approx(grow_until_large(1.01), rel=1e-14)
    assert grad == pytest.approx(k * 1.01 ** (k - 1), rel=1e-10)
