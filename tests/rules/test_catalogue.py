"""Every catalogue function through every path: generated Python and Numba.

References are independent of the compiler: central finite differences and the
dot-product identity both evaluate the original Python function.
"""

import functools
import math
import zlib

import numpy as np
import pytest
from catalogue import CATALOGUE, Case, horner, polynomial
from numba_sample import numba_marks

import s2s_ad as ad
from s2s_ad.testing import (
    as_tuple,
    assert_close,
    assert_dot_product_identity,
    assert_vjp_matches_fd,
    differentiable_indices,
    in_float64,
)

CASES = [pytest.param(case, id=case.name) for case in CATALOGUE]
JIT_MODES = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


def _in_modes(*modes: tuple) -> list:
    """(case, jit) for each case in each mode; a compiled mode runs by default for the
    cases ``numba_sample`` picks (the slow tier runs the others)."""
    return [pytest.param(case, jit, id=f"{case.name}-{name}",
                         marks=() if jit is False else numba_marks(case.name))
            for case in CATALOGUE for jit, name in modes]


BOTH_PATHS = _in_modes((False, "python"), (True, "numba"))
COMPILED = [pytest.param(case, id=case.name, marks=numba_marks(case.name))
            for case in CATALOGUE]
FLOAT32_CASES = [pytest.param(case, id=case.name) for case in CATALOGUE if case.float32_ok]


@functools.cache
def differentiable(case: Case, jit):
    """One differentiable function per (case, jit mode) and test process, so Numba compiles once."""
    return ad.differentiable(case.fn, jit=jit)


def case_named(name: str) -> Case:
    return next(case for case in CATALOGUE if case.name == name)


def seed_of(case: Case) -> int:
    return zlib.crc32(case.name.encode())


def test_catalogue_names_are_unique_and_cover_enough_functions():
    names = [case.name for case in CATALOGUE]
    assert len(names) == len(set(names))
    assert len({case.fn for case in CATALOGUE}) >= 70


@pytest.mark.parametrize(("case", "jit"), BOTH_PATHS)
def test_gradient_matches_finite_differences(case, jit):
    gradient = ad.gradient(differentiable(case, jit))(*case.args)
    assert_vjp_matches_fd(case.fn, case.args, 1.0, gradient)


@pytest.mark.parametrize("case", COMPILED)
def test_numba_agrees_with_python(case):
    value_py, grad_py = ad.value_and_gradient(differentiable(case, False))(*case.args)
    value_nb, grad_nb = ad.value_and_gradient(differentiable(case, True))(*case.args)
    assert_close(value_nb, value_py, what="value")
    assert_close(grad_nb, grad_py, what="gradient")


@pytest.mark.parametrize(("case", "jit"), BOTH_PATHS)
def test_dot_product_identity(case, jit):
    value, pb = ad.value_with_pullback(differentiable(case, jit), *case.args)
    assert_close(value, case.fn(*case.args), what="value_with_pullback value")
    assert_dot_product_identity(case.fn, case.args, pb, value, seed=seed_of(case))


@pytest.mark.parametrize(("case", "jit"), BOTH_PATHS)
def test_pullback_is_linear_and_matches_value_with_pullback(case, jit):
    df = differentiable(case, jit)
    count = len(differentiable_indices(case.args))
    _, pb = ad.value_with_pullback(df, *case.args)
    one = as_tuple(pb(1.0), count)
    # Scaling the cotangent by an exact power of two scales every entry exactly.
    assert as_tuple(pb(-4.0), count) == tuple(-4.0 * g for g in one)
    assert_close(ad.pullback(df, *case.args)(1.0), pb(1.0), what="pullback")
    assert_close(ad.gradient(df)(*case.args), pb(1.0), what="gradient vs pullback")


@pytest.mark.parametrize("case", COMPILED)
def test_default_jit_compiles_with_numba(case):
    explanation = ad.explain(differentiable(case, "auto"), *case.args)
    assert explanation.path == "numba", f"fell back to Python: {explanation.reason}"


@pytest.mark.parametrize("case", CASES)
def test_jit_false_runs_python(case):
    explanation = ad.explain(differentiable(case, False), *case.args)
    assert explanation.path == "python"
    assert isinstance(explanation.reason, str) and explanation.reason


@pytest.mark.parametrize(("case", "jit"),
                         _in_modes((False, "python"), (True, "numba"), ("auto", "auto")))
def test_calling_differentiable_runs_the_original(case, jit):
    expected = case.fn(*case.args)
    actual = differentiable(case, jit)(*case.args)
    if jit is False:
        assert actual == expected
    else:
        assert_close(actual, expected, what="compiled value")
    value, _ = ad.value_and_gradient(differentiable(case, jit))(*case.args)
    assert_close(value, expected, what="value_and_gradient value")


@pytest.mark.parametrize("case", CASES)
def test_generated_source_is_python(case):
    source = ad.source(differentiable(case, False), *case.args)
    assert isinstance(source, str)
    compile(source, f"<generated for {case.name}>", "exec")


@pytest.mark.parametrize(("case", "jit"), BOTH_PATHS)
def test_python_float_gives_python_float_gradients(case, jit):
    gradient = ad.gradient(differentiable(case, jit))(*case.args)
    for g in as_tuple(gradient, len(differentiable_indices(case.args))):
        assert type(g) is float, f"gradient entry {g!r} is {type(g).__name__}, not float"


def _with_dtype(args, dtype):
    return tuple(dtype(a) if isinstance(a, float) else a for a in args)


@pytest.mark.parametrize("jit", JIT_MODES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", FLOAT32_CASES)
def test_numpy_scalar_gradient_keeps_dtype(case, dtype, jit):
    args = _with_dtype(case.args, dtype)
    gradient = ad.gradient(differentiable(case, jit))(*args)
    count = len(differentiable_indices(args))
    # The float64 gradient at the very same (rounded) point is the reference.
    reference = as_tuple(ad.gradient(differentiable(case, False))(*in_float64(args)), count)
    rtol = 1e-4 if dtype is np.float32 else 1e-12
    for g, r in zip(as_tuple(gradient, count), reference, strict=True):
        assert type(g) is dtype, f"gradient entry {g!r} is {type(g).__name__}, not {dtype.__name__}"
        assert abs(float(g) - r) <= rtol * max(1.0, abs(r)), f"{float(g)!r} vs float64 {r!r}"


# float16 rounds at about 1e-3, so a few chained operations may reach 1e-2.
PYTHON_ONLY_DTYPES = [
    pytest.param(np.float16, 2e-2, id="float16"),
    pytest.param(np.longdouble, 1e-12, id="longdouble"),
]


@pytest.mark.parametrize(("dtype", "rtol"), PYTHON_ONLY_DTYPES)
@pytest.mark.parametrize("case", FLOAT32_CASES)
def test_dtypes_numba_cannot_take_keep_dtype_on_python_path(case, dtype, rtol):
    args = _with_dtype(case.args, dtype)
    count = len(differentiable_indices(args))
    reference = as_tuple(ad.gradient(differentiable(case, False))(*in_float64(args)), count)
    for jit in (False, "auto"):
        gradient = as_tuple(ad.gradient(differentiable(case, jit))(*args), count)
        for g, r in zip(gradient, reference, strict=True):
            assert type(g) is dtype, f"gradient entry {g!r} is {type(g).__name__}"
            assert abs(float(g) - r) <= rtol * max(1.0, abs(r)), f"{float(g)!r} vs float64 {r!r}"
    explanation = ad.explain(differentiable(case, "auto"), *args)
    assert explanation.path == "python"
    assert explanation.reason, "a fallback must say why"
    with pytest.raises(ad.JitError):
        ad.gradient(differentiable(case, True))(*args)


@pytest.mark.parametrize("jit", JIT_MODES)
def test_mixed_dtypes_each_keep_their_own(jit):
    x, y = np.float32(1.3), -0.7
    gx, gy = ad.gradient(differentiable(case_named("polynomial"), jit))(x, y)
    assert type(gx) is np.float32 and type(gy) is float
    # polynomial: d/dx = 3x^2 - 2y, d/dy = -2x + 2y, at the float32-rounded x
    assert abs(gx - (3 * float(x) ** 2 - 2 * y)) <= 1e-5 * 6.5
    assert abs(gy - (-2 * float(x) + 2 * y)) <= 1e-6 * 4.0


@pytest.mark.parametrize("jit", JIT_MODES)
def test_numpy_int_and_bool_parameters_are_not_differentiated(jit):
    by_name = {case.name: case for case in CATALOGUE}
    horner_grad = ad.gradient(differentiable(by_name["horner"], jit))(0.7, np.int64(6))
    assert type(horner_grad) is float
    assert_close(
        horner_grad, ad.gradient(differentiable(by_name["horner"], jit))(0.7, 6)
    )
    branch = by_name["branch_on_bool_true"]
    gradient = ad.gradient(differentiable(branch, jit))(0.9, 1.7, np.bool_(True))
    # x * y: (y, x)
    assert gradient == (1.7, 0.9)


def test_single_parameter_gives_bare_gradient():
    gradient = ad.gradient(ad.differentiable(horner, jit=False))(0.7, 6)
    assert type(gradient) is float


def test_wrt_selects_parameters():
    args = (1.3, -0.7)
    full = ad.gradient(ad.differentiable(polynomial, jit=False))(*args)
    only_x = ad.gradient(ad.differentiable(polynomial, wrt=("x",), jit=False))(*args)
    only_y = ad.gradient(ad.differentiable(polynomial, wrt=("y",), jit=False))(*args)
    assert_close((only_x, only_y), full, rtol=1e-15, what="wrt subset")


def test_decorator_forms():
    @ad.differentiable
    def bare(x, y):
        return x * math.sin(y)

    @ad.differentiable(jit=False)
    def configured(x, y):
        return x * math.sin(y)

    for df in (bare, configured):
        gradient = ad.gradient(df)(1.5, 0.4)
        # d/dx x sin y = sin y; d/dy = x cos y
        assert_close(gradient, (math.sin(0.4), 1.5 * math.cos(0.4)), rtol=1e-15)


@pytest.mark.parametrize("jit", JIT_MODES)
def test_gradient_of_inline_lambda(jit):
    fn = lambda x: x * math.sin(x) + x**2
    gradient = ad.gradient(ad.differentiable(lambda x: x * math.sin(x) + x**2, jit=jit))(1.3)
    assert_vjp_matches_fd(fn, (1.3,), 1.0, gradient)
    plain = ad.gradient(lambda x, y: math.exp(x) * y)(0.4, 2.5)
    assert_vjp_matches_fd(lambda x, y: math.exp(x) * y, (0.4, 2.5), 1.0, plain)
