"""Every array catalogue function through every path: generated Python and Numba.

References are independent of the compiler: central finite differences and the
dot-product identity both evaluate the original Python function on float64 copies.
A function with an array result is checked through its pullback at a random
cotangent u of the result's shape; one with a scalar result through `gradient` too.
"""

import functools
import zlib

import numpy as np
import pytest
from array_catalogue import CATALOGUE, Case
from numba_sample import numba_marks

import s2s_ad as ad
from s2s_ad.testing import (
    as_tuple,
    assert_close,
    assert_dot_product_identity,
    assert_gradient_like_arguments,
    assert_vjp_matches_fd,
    differentiable_indices,
    fresh_copies,
    in_float64,
    random_cotangent,
)


def _modes(case: Case):
    yield pytest.param(case, False, id=f"{case.name}-python")
    if case.numba:
        yield pytest.param(case, True, id=f"{case.name}-numba", marks=numba_marks(case.name))


CASES_BY_MODE = [param for case in CATALOGUE for param in _modes(case)]
JIT_MODES = [pytest.param(False, id="python"), pytest.param(True, id="numba")]


@functools.cache
def _differentiable(name: str, jit):
    return ad.differentiable(case_named(name).fn, jit=jit)


def differentiable(case: Case, jit):
    """One differentiable function per (case, jit mode) and test process, so Numba
    compiles once."""
    return _differentiable(case.name, jit)


def case_named(name: str) -> Case:
    return next(case for case in CATALOGUE if case.name == name)


def seed_of(case: Case) -> int:
    return zlib.crc32(case.name.encode())


def original_output(case: Case):
    return case.fn(*fresh_copies(case.args))


def is_float64_only(case: Case) -> bool:
    """True when no argument is a float32 array: then both paths compute in float64."""
    return all(not isinstance(a, np.ndarray) or a.dtype != np.float32 for a in case.args)


def agreement_rtol(case: Case) -> float:
    # Numba and NumPy order float32 sums and promotions differently.
    return 1e-12 if is_float64_only(case) else 1e-5


def assert_arguments_unchanged(case: Case, before) -> None:
    for arg, saved in zip(case.args, before, strict=True):
        if isinstance(arg, np.ndarray):
            assert np.array_equal(arg, saved), "the arguments were modified"


def check_vjp_matches_finite_differences(case: Case, jit, u):
    """The gradient for a scalar result (u = 1), else the pullback of a random u, against
    central differences. The arguments go in as they are (strided, transposed, 0-d,
    empty) and must come back unchanged."""
    before = fresh_copies(case.args)
    df = differentiable(case, jit)
    if np.ndim(u) == 0:
        u, cotangents = 1.0, ad.gradient(df)(*case.args)
    else:
        _, pb = ad.value_with_pullback(df, *case.args)
        cotangents = pb(u)
    assert_arguments_unchanged(case, before)
    assert_gradient_like_arguments(case.args, cotangents)
    assert_vjp_matches_fd(case.fn, case.args, u, cotangents, rtol=case.rtol, atol=case.atol)


def check_dot_product_identity(case: Case, jit, output):
    value, pb = ad.value_with_pullback(differentiable(case, jit), *case.args)
    assert_close(value, output, rtol=agreement_rtol(case), what="value_with_pullback value")
    assert_dot_product_identity(
        case.fn, case.args, pb, output, seed_of(case), rtol=case.rtol, atol=case.atol
    )


def check_pullback_is_linear_and_rerunnable(case: Case, jit, u):
    count = len(differentiable_indices(case.args))
    _, pb = ad.value_with_pullback(differentiable(case, jit), *case.args)
    first = pb(u)
    assert_gradient_like_arguments(case.args, first)
    assert_close(
        ad.pullback(differentiable(case, jit), *case.args)(u), first, what="ad.pullback"
    )
    once = as_tuple(first, count)
    scaled = as_tuple(pb(-4.0 * u), count)
    again = as_tuple(pb(u), count)
    # Scaling the cotangent by an exact power of two scales every entry exactly.
    for g1, g4, g1_again in zip(once, scaled, again, strict=True):
        assert np.array_equal(np.asarray(g4), -4.0 * np.asarray(g1)), (g4, g1)
        assert np.array_equal(np.asarray(g1_again), np.asarray(g1)), "pullback not re-runnable"


def check_calling_runs_the_original(case: Case, jit, output):
    value = differentiable(case, jit)(*case.args)
    assert_close(value, output, rtol=agreement_rtol(case), what="calling the function")


def check_explain(case: Case, jit):
    explanation = ad.explain(differentiable(case, jit), *case.args)
    if jit:
        assert explanation.path == "numba", f"not compiled: {explanation.reason}"
    else:
        assert explanation.path == "python"
        assert isinstance(explanation.reason, str) and explanation.reason


def check_numba_agrees_with_python(case: Case, u, output):
    rtol = agreement_rtol(case)
    value_py, pb_py = ad.value_with_pullback(differentiable(case, False), *case.args)
    value_nb, pb_nb = ad.value_with_pullback(differentiable(case, True), *case.args)
    assert_close(value_nb, value_py, rtol=rtol, what="value")
    assert_close(pb_nb(u), pb_py(u), rtol=rtol, what="pullback")
    if np.ndim(output) == 0:
        grad_py = ad.gradient(differentiable(case, False))(*case.args)
        grad_nb = ad.gradient(differentiable(case, True))(*case.args)
        assert_close(grad_nb, grad_py, rtol=rtol, what="gradient")


def run_checks(checks) -> None:
    """Run every check and report all failures together. An error other than a failed
    assertion (a refusal, a Numba compile error) stops the rest, which would only
    repeat it (and the compile attempt)."""
    failures = []
    for name, check in checks:
        try:
            check()
        except AssertionError as failure:
            failures.append(f"[{name}] {failure}")
        except Exception as error:
            failures.append(f"[{name}] {type(error).__name__}: {error}")
            break
    assert not failures, "\n".join(failures)


def test_catalogue_names_are_unique_and_cover_enough_functions():
    names = [case.name for case in CATALOGUE]
    assert len(names) == len(set(names))
    assert len({case.fn for case in CATALOGUE}) >= 60


@pytest.mark.parametrize(("case", "jit"), CASES_BY_MODE)
def test_case(case, jit):
    """All checks of one case in one path, in one test so that a Numba compile happens
    once per case in one worker: finite differences of every entry, the dot-product
    identity, gradient shape and dtype, linearity, the original's value, the path that
    `explain` reports, and (on the Numba path) agreement with the Python path."""
    output = original_output(case)
    u = random_cotangent(output, np.random.default_rng(seed_of(case)))
    checks = [
        ("finite differences", lambda: check_vjp_matches_finite_differences(case, jit, u)),
        ("dot-product identity", lambda: check_dot_product_identity(case, jit, output)),
        ("linear pullback", lambda: check_pullback_is_linear_and_rerunnable(case, jit, u)),
        ("calling runs the original", lambda: check_calling_runs_the_original(case, jit, output)),
        ("explain", lambda: check_explain(case, jit)),
    ]
    if jit:
        checks.append(
            ("Numba agrees with Python", lambda: check_numba_agrees_with_python(case, u, output))
        )
    run_checks(checks)


# --- dtypes Numba cannot take ---------------------------------------------------------------

LOW_AND_HIGH_PRECISION = [
    pytest.param(np.float16, 3e-2, id="float16"),
    pytest.param(np.longdouble, 1e-12, id="longdouble"),
]
DTYPE_CASES = [
    "ufunc_chain_to_scalar",
    "broadcast_vector_with_matrix",
    "reduction_methods_with_axis",
    "write_then_read_other_cells",
]


def _as_dtype(args, dtype):
    return tuple(
        a.astype(dtype) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args
    )


@pytest.mark.parametrize(("dtype", "rtol"), LOW_AND_HIGH_PRECISION)
@pytest.mark.parametrize("name", DTYPE_CASES)
def test_float16_and_longdouble_arrays_keep_their_dtype(name, dtype, rtol):
    case = case_named(name)
    args = _as_dtype(case.args, dtype)
    output = case.fn(*args)
    u = random_cotangent(output, np.random.default_rng(seed_of(case)))
    count = len(differentiable_indices(args))
    _, pb64 = ad.value_with_pullback(differentiable(case, False), *in_float64(args))
    u64 = u if np.ndim(u) == 0 else np.asarray(u, dtype=np.float64)
    reference = as_tuple(pb64(u64), count)
    for jit in (False, "auto"):
        _, pb = ad.value_with_pullback(differentiable(case, jit), *args)
        cotangents = pb(u)
        assert_gradient_like_arguments(args, cotangents)
        assert_close(
            as_tuple(cotangents, count), reference, rtol=rtol, what=f"{dtype.__name__} pullback"
        )


def cubic_minus_linear(x):
    return np.sum(x**3 - x)


@pytest.mark.parametrize("jit", JIT_MODES)
def test_one_function_many_shapes_layouts_and_dtypes(jit):
    """Each call specialises on its arguments: ranks, layouts and dtypes may change from
    call to call of the same differentiable function."""
    rng = np.random.default_rng(5)
    df = ad.differentiable(cubic_minus_linear, jit=jit)
    inputs = [
        rng.uniform(-1.0, 1.0, 4),
        rng.uniform(-1.0, 1.0, (2, 3)),
        rng.uniform(-1.0, 1.0, (3, 2)).astype(np.float32),
        rng.uniform(-1.0, 1.0, (4, 3)).T,
        rng.uniform(-1.0, 1.0, 8)[::3],
        rng.uniform(-1.0, 1.0, (2, 2, 2)),
        rng.uniform(-1.0, 1.0, 4),
    ]
    for x in inputs:
        gradient = ad.gradient(df)(x)
        assert_gradient_like_arguments((x,), gradient)
        # d/dx sum(x^3 - x) = 3 x^2 - 1
        expected = 3.0 * x.astype(np.float64) ** 2 - 1.0
        rtol = 1e-6 if x.dtype == np.float32 else 1e-15
        assert_close(gradient, expected, rtol=rtol, what=f"shape {x.shape} {x.dtype}")


# --- arguments --------------------------------------------------------------------------------


def weighted_sum(weights, values):
    return np.sum(weights * values)


@pytest.mark.parametrize("jit", JIT_MODES)
def test_int_array_for_a_wrt_parameter_is_an_argument_error_naming_it(jit):
    df = ad.differentiable(weighted_sum, wrt=("weights",), jit=jit)
    with pytest.raises(ad.ArgumentError, match="weights"):
        ad.gradient(df)(np.arange(3), np.ones(3))


@pytest.mark.parametrize("jit", JIT_MODES)
def test_int_array_is_not_differentiated_by_default(jit):
    values = np.array([3, -1, 2])
    gradient = ad.gradient(ad.differentiable(weighted_sum, jit=jit))(np.ones(3), values)
    assert isinstance(gradient, np.ndarray) and gradient.dtype == np.float64
    assert np.array_equal(gradient, values.astype(np.float64))


@pytest.mark.parametrize("wrt", [None, ("values",)])
def test_object_arrays_are_refused(wrt):
    df = ad.differentiable(weighted_sum, wrt=wrt, jit=False)
    with pytest.raises(ad.ArgumentError, match="values"):
        ad.gradient(df)(np.ones(2), np.array([1.0, 2.0], dtype=object))


@pytest.mark.parametrize("jit", JIT_MODES)
def test_wrt_selects_array_parameters(jit):
    case = case_named("dot_matrix_vector")
    u = random_cotangent(original_output(case), np.random.default_rng(0))
    _, pb_full = ad.value_with_pullback(differentiable(case, jit), *case.args)
    _, pb_x = ad.value_with_pullback(ad.differentiable(case.fn, wrt=("x",), jit=jit), *case.args)
    grad_x = pb_x(u)
    assert isinstance(grad_x, np.ndarray), "one wrt parameter gives a bare gradient"
    assert_close(grad_x, pb_full(u)[1], rtol=1e-15, what="wrt subset")


def add_mismatched(x, y):
    return np.sum(x + y)


def test_numpy_shape_errors_pass_through_unchanged():
    x, y = np.ones(3), np.ones(4)
    with pytest.raises(ValueError) as expected:
        add_mismatched(x, y)
    df = ad.differentiable(add_mismatched, jit=False)
    for call in (df, ad.gradient(df), ad.value_and_gradient(df)):
        with pytest.raises(ValueError) as raised:
            call(x, y)
        assert type(raised.value) is ValueError
        assert str(raised.value) == str(expected.value)


def test_numba_shape_errors_are_value_errors():
    df = ad.differentiable(add_mismatched, jit=True)
    for call in (df, ad.gradient(df)):
        with pytest.raises(ValueError):
            call(np.ones(3), np.ones(4))


# --- writes into argument arrays, and through aliases and views: correct or refused, never
# silently wrong


def scale_first_in_place(x):
    x[0] = x[0] * 3.0
    return np.sum(x * x)


def accumulate_in_place(x, w):
    for i in range(1, len(x)):
        x[i] += w * x[i - 1]
    return np.sum(x * x)


def read_then_overwrite_argument(x):
    old = x[1]
    x[1] = x[0] * x[2]
    return old * x[1] + np.sum(x)


def write_through_alias(x):
    y = x
    y[0] = y[0] * 3.0
    return np.sum(x * x)


def write_through_view_of_argument(x):
    tail = x[1:]
    tail[0] = tail[0] * x[0]
    return np.sum(x * x)


def write_through_view_of_local(x):
    y = x.copy()
    tail = y[1:]
    tail[0] = tail[0] * y[0]
    return np.sum(y * y)


def write_through_alias_of_local(x):
    y = np.zeros(3)
    z = y
    z[0] = x[0] * x[1]
    z[1] = z[0] * x[2]
    return np.sum(y * x)


def in_place_operator_through_alias(x):
    y = np.zeros(3)
    z = y
    y += x * x
    return np.sum(z * x)


def in_place_operator_on_argument(x):
    x *= 2.0
    return np.sum(x * x)


def chained_index_write(x):
    y = np.zeros((2, 3))
    y[1][2] = x[0] * x[1]
    return np.sum(y * y) + x[2]


def fill_first(y, x):
    y[0] = x[0] * x[1]


def callee_writes_into_callers_array(x):
    y = np.zeros(3)
    fill_first(y, x)
    return np.sum(y * y) + x[2]


ARGUMENT_WRITES = [
    pytest.param(scale_first_in_place, (np.array([0.7, -0.4, 1.2]),), id="element"),
    pytest.param(accumulate_in_place, (np.array([0.7, -0.4, 1.2, 0.3]), 0.6), id="loop"),
    pytest.param(read_then_overwrite_argument, (np.array([0.7, -0.4, 1.2]),), id="reuse"),
    pytest.param(write_through_alias, (np.array([0.7, -0.4, 1.2]),), id="alias"),
    pytest.param(write_through_view_of_argument, (np.array([0.7, -0.4, 1.2]),), id="view"),
    pytest.param(write_through_view_of_local, (np.array([0.7, -0.4, 1.2]),), id="local-view"),
    pytest.param(write_through_alias_of_local, (np.array([0.7, -0.4, 1.2]),), id="local-alias"),
    pytest.param(
        in_place_operator_through_alias, (np.array([0.7, -0.4, 1.2]),), id="in-place-alias"
    ),
    pytest.param(in_place_operator_on_argument, (np.array([0.7, -0.4, 1.2]),), id="in-place-arg"),
    pytest.param(chained_index_write, (np.array([0.7, -0.4, 1.2]),), id="chained-index"),
    pytest.param(
        callee_writes_into_callers_array, (np.array([0.7, -0.4, 1.2]),), id="callee-writes"
    ),
]


@pytest.mark.parametrize("jit", JIT_MODES)
@pytest.mark.parametrize(("fn", "args"), ARGUMENT_WRITES)
def test_writes_into_argument_arrays_are_refused_or_correct(fn, args, jit):
    df = ad.differentiable(fn, jit=jit)
    try:
        gradient = ad.gradient(df)(*fresh_copies(args))
    except ad.NonDifferentiableError as error:
        assert str(error), "a refusal must say why"
        return
    assert_vjp_matches_fd(fn, args, 1.0, gradient)
    value, pb = ad.value_with_pullback(df, *fresh_copies(args))
    assert_close(value, fn(*fresh_copies(args)), what="value")
    assert_vjp_matches_fd(fn, args, 1.0, pb(1.0))


# --- NumPy beyond the supported surface: a rule, or a clear refusal; never a wrong gradient --


def norm_along_axis(x):
    return np.sum(np.linalg.norm(x, axis=1))


def boolean_mask_read(x):
    return np.sum(x[x > 0.0] ** 2)


def tuple_axis_sum(x):
    return np.sum(np.sum(x**2, axis=(0, 1)))


def cumulative_sum(x):
    return np.sum(np.cumsum(x) ** 2)


def ravel_and_flatten(x):
    return np.sum(x.ravel() * x.flatten() ** 2)


def transpose_then_write(x):
    y = x.copy()
    y.T[0, 1] = 5.0
    return np.sum(y * x)


BEYOND_THE_SURFACE = [
    norm_along_axis,
    boolean_mask_read,
    tuple_axis_sum,
    cumulative_sum,
    ravel_and_flatten,
    transpose_then_write,
]


@pytest.mark.parametrize("jit", JIT_MODES)
@pytest.mark.parametrize("fn", BEYOND_THE_SURFACE, ids=lambda fn: fn.__name__)
def test_operations_beyond_the_surface_are_refused_or_correct(fn, jit):
    x = np.array([[1.7, -0.4, 0.9], [1.2, 1.3, -0.6]])
    try:
        gradient = ad.gradient(ad.differentiable(fn, jit=jit))(x.copy())
    except (ad.NonDifferentiableError, ad.JitError) as refusal:
        assert str(refusal), "a refusal must say why"
        return
    assert_vjp_matches_fd(fn, (x,), 1.0, gradient)
