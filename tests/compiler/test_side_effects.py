"""Side effects of the original run exactly once per forward run; pullbacks never repeat them.

The generated Python path prints through sys.stdout (capsys); Numba's print may write
below Python (capfd captures both the file descriptor and sys.stdout).
"""

import pytest

import s2s_ad as ad

ARGS = (0.8, 3)


def stepping(x, n):
    s = x
    for i in range(n):
        print("step", i, s)
        s = s * x + 1.0
    return s


def _one_run_output() -> str:
    """What a single call of the original prints, computed without the compiler."""
    lines = []
    s = ARGS[0]
    for i in range(ARGS[1]):
        lines.append(f"step {i} {s}")
        s = s * ARGS[0] + 1.0
    return "".join(line + "\n" for line in lines)


ONE_RUN = _one_run_output()


@pytest.fixture(params=[pytest.param(False, id="python"), pytest.param(True, id="numba")])
def jit(request):
    return request.param


@pytest.fixture
def captured(jit, request):
    """capsys for the Python path, capfd for Numba."""
    return request.getfixturevalue("capfd" if jit else "capsys")


@pytest.fixture
def df(jit, captured):
    """The differentiable function, already transformed (and compiled) so that
    anything printed while transforming is not counted."""
    function = ad.differentiable(stepping, jit=jit)
    ad.explain(function, *ARGS)
    captured.readouterr()
    return function


def test_reference_output_is_what_the_original_prints(capsys):
    stepping(*ARGS)
    assert capsys.readouterr().out == ONE_RUN


def test_calling_prints_once(df, captured):
    df(*ARGS)
    assert captured.readouterr().out == ONE_RUN


def test_gradient_prints_once(df, captured):
    ad.gradient(df)(*ARGS)
    assert captured.readouterr().out == ONE_RUN


def test_value_and_gradient_prints_once(df, captured):
    ad.value_and_gradient(df)(*ARGS)
    assert captured.readouterr().out == ONE_RUN


def test_value_with_pullback_prints_only_in_forward(df, captured):
    _, pb = ad.value_with_pullback(df, *ARGS)
    assert captured.readouterr().out == ONE_RUN
    first = pb(1.0)
    second = pb(1.0)
    assert captured.readouterr().out == ""
    assert first == second


def test_pullback_prints_only_when_built(df, captured):
    pb = ad.pullback(df, *ARGS)
    assert captured.readouterr().out == ONE_RUN
    pb(1.0)
    pb(2.0)
    assert captured.readouterr().out == ""


def test_repeated_gradients_print_once_each(df, captured):
    gradient = ad.gradient(df)
    gradient(*ARGS)
    gradient(*ARGS)
    assert captured.readouterr().out == ONE_RUN * 2
