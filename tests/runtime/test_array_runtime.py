"""s2s_ad.runtime: NumPy helpers that run in Python and inside Numba.

Python results are checked against NumPy; VJPs by the dot-product identity
<g, J v> = <J^T g, v> with J v from central differences of the forward; the
Numba versions against the Python ones to 1e-12. Each group of helpers is
compiled once, with explicit 'A'-layout signatures, so C-contiguous,
Fortran-ordered, strided and empty inputs all run through the same compile.
"""

from __future__ import annotations

import functools
import itertools

import numba
import numpy as np
import pytest
from numba import types

from s2s_ad import runtime as ar
from s2s_ad.testing import central_difference

# NumPy warns on the mean of an empty axis (NaN), which these tests exercise on purpose.
pytestmark = [pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]

RTOL = 1e-12
ATOL = 1e-12

SHAPES = {
    1: [(5,), (1,), (0,)],
    2: [(3, 4), (1, 4), (4, 1), (3, 0)],
    3: [(2, 3, 4), (2, 1, 3), (0, 2, 3)],
    4: [(2, 3, 1, 2), (2, 2, 3, 2)],
}


def arrays(shape, seed, low=-1.0, high=1.0):
    """The same random values of ``shape`` as C-contiguous, strided and transposed arrays."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(low, high, shape)
    out = [("C", base)]
    if shape:
        big = np.zeros((2 * shape[0],) + shape[1:])
        big[::2] = base
        out.append(("strided", big[::2]))
        out.append(("transposed", np.ascontiguousarray(base.T).T))
    return out


def axes(ndim):
    return list(range(-ndim, ndim))


def close(got, want, what):
    assert np.shape(got) == np.shape(want), f"{what}: shape {np.shape(got)} != {np.shape(want)}"
    if isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray), f"{what}: expected an array, got {type(got)}"
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=what)


def A(ndim, dtype=types.float64):
    return types.Array(dtype, ndim, "A")


# --------------------------------------------------------------------------
# Groups of helpers, each compiled once per signature list.

FWD_AXIS = {
    "sum": (ar.sum_axis, ar.sum_axis_keepdims, np.sum),
    "mean": (ar.mean_axis, ar.mean_axis_keepdims, np.mean),
    "prod": (ar.prod_axis, ar.prod_axis_keepdims, np.prod),
    "max": (ar.max_axis, ar.max_axis_keepdims, np.max),
    "min": (ar.min_axis, ar.min_axis_keepdims, np.min),
    "norm": (ar.norm_axis, ar.norm_axis_keepdims, np.linalg.norm),
}
VJP_AXIS = {
    "sum": (ar.sum_vjp_axis, ar.sum_vjp_axis_keepdims),
    "mean": (ar.mean_vjp_axis, ar.mean_vjp_axis_keepdims),
    "prod": (ar.prod_vjp_axis, ar.prod_vjp_axis_keepdims),
    "max": (ar.max_vjp_axis, ar.max_vjp_axis_keepdims),
    "min": (ar.min_vjp_axis, ar.min_vjp_axis_keepdims),
    "norm": (ar.norm_vjp_axis, ar.norm_vjp_axis_keepdims),
}
FWD_ALL = {
    "sum": (ar.sum_all_keepdims, ar.sum_vjp_all, np.sum),
    "mean": (ar.mean_all_keepdims, ar.mean_vjp_all, np.mean),
    "prod": (ar.prod_all_keepdims, ar.prod_vjp_all, np.prod),
    "max": (ar.max_all_keepdims, ar.max_vjp_all, np.max),
    "min": (ar.min_all_keepdims, ar.min_vjp_all, np.min),
}
EXTREMES = ("max", "min")


def fwd_group(x, axis, extremes):
    """Every forward axis helper; max/min only when ``extremes`` (they raise on
    an empty axis), so the others still run there."""
    if extremes:
        mx, mxk = ar.max_axis(x, axis), ar.max_axis_keepdims(x, axis)
        mn, mnk = ar.min_axis(x, axis), ar.min_axis_keepdims(x, axis)
    else:
        mx = mn = ar.sum_axis(x, axis)
        mxk = mnk = ar.sum_axis_keepdims(x, axis)
    return (ar.sum_axis(x, axis), ar.sum_axis_keepdims(x, axis),
            ar.mean_axis(x, axis), ar.mean_axis_keepdims(x, axis),
            ar.prod_axis(x, axis), ar.prod_axis_keepdims(x, axis),
            mx, mxk, mn, mnk,
            ar.norm_axis(x, axis), ar.norm_axis_keepdims(x, axis))


FWD_GROUP_NAMES = [(n, k) for n in FWD_AXIS for k in (False, True)]


def vjp_group(g, gk, x, axis):
    return (ar.sum_vjp_axis(g, x, axis), ar.sum_vjp_axis_keepdims(gk, x, axis),
            ar.mean_vjp_axis(g, x, axis), ar.mean_vjp_axis_keepdims(gk, x, axis),
            ar.prod_vjp_axis(g, x, axis), ar.prod_vjp_axis_keepdims(gk, x, axis),
            ar.max_vjp_axis(g, x, axis), ar.max_vjp_axis_keepdims(gk, x, axis),
            ar.min_vjp_axis(g, x, axis), ar.min_vjp_axis_keepdims(gk, x, axis),
            ar.norm_vjp_axis(g, x, axis), ar.norm_vjp_axis_keepdims(gk, x, axis))


VJP_GROUP_NAMES = [(n, k) for n in VJP_AXIS for k in (False, True)]


def one_d_group(x, g, axis, extremes):
    """1-D input: reductions without keepdims give scalars; cotangents are scalars."""
    if extremes:
        mx, mn = ar.max_axis(x, axis), ar.min_axis(x, axis)
    else:
        mx = mn = ar.sum_axis(x, axis)
    return (ar.sum_axis(x, axis), ar.mean_axis(x, axis), ar.prod_axis(x, axis), mx, mn,
            ar.norm_axis(x, axis),
            ar.sum_vjp_axis(g, x, axis), ar.mean_vjp_axis(g, x, axis),
            ar.prod_vjp_axis(g, x, axis), ar.max_vjp_axis(g, x, axis),
            ar.min_vjp_axis(g, x, axis), ar.norm_vjp_axis(g, x, axis))


ONE_D_NAMES = ["sum", "mean", "prod", "max", "min", "norm"]


def other_ndim_group(x, axis, g, gk):
    """One helper of each kernel family, for the ndims the full groups skip."""
    return (ar.sum_axis(x, axis), ar.max_axis_keepdims(x, 0), ar.prod_vjp_axis(g, x, axis),
            ar.min_vjp_axis_keepdims(gk, x, axis), ar.slice_axis(x, axis, 0, 1))


def all_group(x, extremes):
    if extremes:
        mx, mn = ar.max_all_keepdims(x), ar.min_all_keepdims(x)
    else:
        mx = mn = ar.sum_all_keepdims(x)
    return (ar.sum_all_keepdims(x), ar.mean_all_keepdims(x), ar.prod_all_keepdims(x),
            mx, mn, ar.norm_all(x))


ALL_NAMES = ["sum", "mean", "prod", "max", "min", "norm"]


def vjp_all_group(g, x):
    return (ar.sum_vjp_all(g, x), ar.mean_vjp_all(g, x), ar.prod_vjp_all(g, x),
            ar.max_vjp_all(g, x), ar.min_vjp_all(g, x), ar.norm_vjp_all(g, x))


VJP_ALL_NAMES = ["sum", "mean", "prod", "max", "min", "norm"]


def unbroadcast_group(c, like):
    return ar.unbroadcast(c, like), ar.unbroadcast_to_shape(c, like.shape)


def shape_group(x, flat, axis, start, stop, i):
    return (ar.slice_axis(x, axis, start, stop), ar.index_axis(x, axis, i),
            ar.reshape(x, (-1,)), ar.reshape_like(flat, x))


def scalar_g_group(x):
    """0-d arrays, 0-d and keepdims-shaped cotangents, scalar results."""
    g0 = np.full((), 2.0)
    gk = np.full((1, 1), 3.0)
    return (ar.sum_vjp_all(g0, x), ar.max_vjp_all_keepdims(gk, x),
            ar.sum_vjp_axis(g0, x[0], 0), ar.mean_vjp_axis(1.5, x[0], -1),
            ar.index_axis(x[0], 0, -1), ar.unbroadcast(x, g0), ar.reshape(g0, (1, 1)),
            ar.sum_all_keepdims(g0), ar.norm_all(g0), ar.prod_vjp_all(g0, g0),
            ar.unbroadcast(g0, g0), ar.unbroadcast_scalar(x))


SCALAR_G_NAMES = ["sum_vjp_all 0-d g", "max_vjp_all_keepdims", "sum_vjp_axis 0-d g",
                  "mean_vjp_axis float g", "index_axis 1-d", "unbroadcast to 0-d",
                  "reshape 0-d", "sum_all_keepdims 0-d", "norm_all 0-d", "prod_vjp_all 0-d",
                  "unbroadcast 0-d to 0-d", "unbroadcast_scalar"]


def float32_group(x, g):
    return (ar.sum_axis_keepdims(x, 1), ar.max_axis(x, 0), ar.prod_vjp_axis(g, x, 0),
            ar.unbroadcast(x, x[0]), ar.norm_all(x))


# Numba signatures per group: the full groups run at ndim 3; ndim 1 has its own
# group; ndims 2 and 4 run one helper of each kernel family.
FULL_NDIM = 3
OTHER_NDIMS = (2, 4)


@functools.cache
def compiled(name):
    f64, intp, b1 = types.float64, types.intp, types.boolean
    n = FULL_NDIM
    sigs = {
        "fwd": (fwd_group, [(A(n), intp, b1)]),
        "vjp": (vjp_group, [(A(n - 1), A(n), A(n), intp)]),
        "one_d": (one_d_group, [(A(1), f64, intp, b1)]),
        "other": (other_ndim_group, [(A(k), intp, A(k - 1), A(k)) for k in OTHER_NDIMS]),
        "all": (all_group, [(A(n), b1)]),
        "vjp_all": (vjp_all_group, [(f64, A(n))]),
        "unbroadcast": (unbroadcast_group, [(A(c), A(lk)) for c, lk in UNBROADCAST_NDIMS]),
        "shape": (shape_group, [(A(n), A(1), intp, intp, intp, intp)]),
        "scalar_g": (scalar_g_group, [(A(2),)]),
        "float32": (float32_group, [(A(2, types.float32), A(1, types.float32))]),
    }
    fn, sig = sigs[name]
    return numba.njit(sig)(fn)


def check_group(name, pyfn, args, names):
    """The compiled group agrees with the Python one (to 1e-12), or both raise alike."""
    try:
        want = pyfn(*args)
    except (ValueError, IndexError) as e:
        with pytest.raises(type(e) if not isinstance(e, ValueError) else ValueError):
            compiled(name)(*args)
        return None
    got = compiled(name)(*args)
    for label, a, b in zip(names, got, want, strict=True):
        close(a, b, f"{name} {label} numba vs python")
    return want


# --------------------------------------------------------------------------
# Forward reductions along an axis.


def numba_forward_check(x, axis, what):
    """The compiled groups for x's ndim agree with Python and with NumPy."""
    ndim = x.ndim
    extremes = x.shape[axis] > 0  # else max/min raise (checked below)
    if ndim == FULL_NDIM:
        got = check_group("fwd", fwd_group, (x, axis, extremes), FWD_GROUP_NAMES)
        for (name, keepdims), r in zip(FWD_GROUP_NAMES, got, strict=True):
            if extremes or name not in EXTREMES:
                close(r, FWD_AXIS[name][2](x, axis=axis, keepdims=keepdims), what)
        if not extremes:
            with pytest.raises(ValueError):
                compiled("fwd")(x, axis, True)
    elif ndim == 1:
        g = 0.5
        got = check_group("one_d", one_d_group, (x, g, axis, extremes), ONE_D_NAMES * 2)
        for name, r in zip(ONE_D_NAMES, got, strict=False):
            if extremes or name not in EXTREMES:
                close(r, FWD_AXIS[name][2](x, axis=axis), what)
        if not extremes:
            with pytest.raises(ValueError):
                compiled("one_d")(x, g, axis, True)
    else:
        ax = axis % ndim
        g = np.full(x.shape[:ax] + x.shape[ax + 1:], 0.5)
        gk = np.full(x.shape[:ax] + (1,) + x.shape[ax + 1:], 0.25)
        check_group("other", other_ndim_group, (x, axis, g, gk),
                    ["sum_axis", "max_axis_keepdims", "prod_vjp_axis", "min_vjp_axis_keepdims",
                     "slice_axis"])


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_forward_axis_matches_numpy_in_python_and_numba(ndim):
    for shape in SHAPES[ndim]:
        for layout, x in arrays(shape, seed=ndim):
            for axis in axes(ndim):
                what = f"{shape} {layout} axis={axis}"
                for name, (plain, keep, ref) in FWD_AXIS.items():
                    for fn, keepdims in ((plain, False), (keep, True)):
                        try:
                            with np.errstate(invalid="ignore", divide="ignore"):
                                want = ref(x, axis=axis, keepdims=keepdims)
                        except ValueError:
                            assert name in EXTREMES and shape[axis] == 0
                            with pytest.raises(ValueError):
                                fn(x, axis)
                            continue
                        with np.errstate(invalid="ignore", divide="ignore"):
                            got = fn(x, axis)
                        close(got, want, f"{fn.__name__} {what}")
                        assert np.asarray(got).dtype == x.dtype
                with np.errstate(invalid="ignore", divide="ignore"):
                    numba_forward_check(x, axis, what)


def test_forward_axis_errors_and_nan():
    x = np.arange(24.0).reshape(2, 3, 4)
    for axis in (3, -4):
        for fn in (ar.sum_axis, ar.max_axis_keepdims):
            with pytest.raises(ValueError):
                fn(x, axis)
        with pytest.raises(ValueError):
            compiled("fwd")(x, axis, True)
    with pytest.raises(ValueError):
        compiled("one_d")(x[0, 0], 0.5, 1, True)
    y = x.copy()
    y[1, 1, 1] = np.nan
    for axis in (0, 1, 2):
        got = compiled("fwd")(y, axis, True)
        for a, b in zip(got, fwd_group(y, axis, True), strict=True):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ar.max_axis(y[1], 0), [20.0, np.nan, 22.0, 23.0])


def test_mean_of_empty_axis_is_nan_in_both_paths():
    x = np.zeros((2, 3, 0))
    with np.errstate(invalid="ignore", divide="ignore"), pytest.warns(RuntimeWarning):
        want = ar.mean_axis(x, 2)
    assert np.isnan(want).all() and want.shape == (2, 3)
    np.testing.assert_array_equal(compiled("fwd")(x, 2, False)[2], want)


# --------------------------------------------------------------------------
# Whole-array reductions with keepdims, and norm_all.


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_forward_all_keepdims_and_norm_all(ndim):
    for shape in SHAPES.get(ndim, [()]):
        for layout, x in arrays(shape, seed=10 + ndim):
            what = f"{shape} {layout}"
            for name, (keep, _, ref) in FWD_ALL.items():
                if name in EXTREMES and x.size == 0:
                    with pytest.raises(ValueError):
                        keep(x)
                    continue
                with np.errstate(invalid="ignore", divide="ignore"):
                    close(keep(x), ref(x, keepdims=True), f"{name}_all_keepdims {what}")
            close(ar.norm_all(x), np.sqrt(np.sum(x * x)), f"norm_all {what}")
            if ndim <= 2:
                close(ar.norm_all(x), np.linalg.norm(x), f"norm_all {what}")
            if ndim == FULL_NDIM:
                with np.errstate(invalid="ignore", divide="ignore"):
                    check_group("all", all_group, (x, x.size > 0), ALL_NAMES)
                if x.size == 0:
                    with pytest.raises(ValueError):
                        compiled("all")(x, True)


# --------------------------------------------------------------------------
# VJPs of the reductions: dot-product identity with finite differences.


def fd_identity(forward, x, g, v, h=1e-6):
    """(<g, J v> by central differences, and the scale to compare it at)."""
    jv = central_difference(lambda t: forward(x + t * v), h)[0]
    return float(np.sum(np.asarray(g) * jv)), float(np.sum(np.abs(g)) * np.max(np.abs(v)) + 1)


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_vjp_axis_dot_product_identity_and_numba(ndim):
    rng = np.random.default_rng(100 + ndim)
    for shape in SHAPES[ndim]:
        for layout, x in arrays(shape, seed=200 + ndim):
            x = np.where(np.abs(x) < 0.1, 0.5, x)  # away from 0 for norm
            v = rng.standard_normal(shape)
            for axis in axes(ndim):
                what = f"{shape} {layout} axis={axis}"
                red_shape = shape[:axis % ndim] + shape[axis % ndim + 1:]
                g = rng.standard_normal(red_shape)
                gk = np.expand_dims(g, axis)
                for name, (plain, keep) in VJP_AXIS.items():
                    ref = FWD_AXIS[name][2]
                    for fn, gg, keepdims in ((plain, g, False), (keep, gk, True)):
                        got = fn(gg if ndim > 1 or keepdims else float(gg), x, axis)
                        assert got.shape == x.shape and got.dtype == x.dtype
                        assert isinstance(got, np.ndarray) and not np.shares_memory(got, x)
                        if x.size == 0:
                            continue
                        want, scale = fd_identity(
                            lambda z, ref=ref, k=keepdims, a=axis: ref(z, axis=a, keepdims=k),
                            x, gg, v)
                        assert abs(np.sum(got * v) - want) <= 1e-6 * scale, (
                            f"{fn.__name__} {what}: {np.sum(got * v)} vs {want}")
                if ndim == FULL_NDIM:
                    check_group("vjp", vjp_group, (g, gk, x, axis), VJP_GROUP_NAMES)
                elif ndim == 1:
                    # forward max/min only where the axis is non-empty
                    check_group("one_d", one_d_group, (x, float(g), axis, x.size > 0),
                                ONE_D_NAMES * 2)


def test_expand_reduced_is_sum_vjp_axis():
    g = np.array([1.0, 2.0])
    np.testing.assert_array_equal(
        ar.expand_reduced(g, np.zeros((2, 3)), 1), [[1.0] * 3, [2.0] * 3])
    g2 = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(
        ar.expand_reduced(g2, np.zeros((2, 3, 2)), 1), np.broadcast_to(g2[:, None], (2, 3, 2)))
    assert ar.sum_vjp_axis is ar.expand_reduced


def test_vjp_cotangent_shape_errors():
    x = np.zeros((2, 3))
    for fn, g in ((ar.sum_vjp_axis, np.zeros(2)), (ar.max_vjp_axis_keepdims, np.zeros((2, 1)))):
        with pytest.raises(ValueError):
            fn(g, x, 0)
    x3 = np.zeros((1, 2, 3))
    with pytest.raises(ValueError):
        compiled("vjp")(np.zeros((1, 2)), np.zeros((1, 1, 3)), x3, 1)
    with pytest.raises(ValueError):
        compiled("vjp")(np.zeros((1, 3)), np.zeros((1, 2, 3)), x3, 1)
    with pytest.raises(ValueError):
        ar.sum_vjp_all(np.zeros(2), x)


def vjp3(g, x, axis):
    """The compiled vjp group on 2-D data lifted to 3-D; results back in 2-D."""
    return [r[0] for r in compiled("vjp")(g[None], np.expand_dims(g[None], axis + 1),
                                          x[None], axis + 1)]


def test_max_min_vjp_split_ties_equally():
    x = np.array([[5.0, 1.0, 5.0, 5.0], [0.0, -2.0, -2.0, 3.0]])
    g = np.array([6.0, 4.0])
    want_max = np.array([[2.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.0, 4.0]])
    want_min = np.array([[0.0, 6.0, 0.0, 0.0], [0.0, 2.0, 2.0, 0.0]])
    for path in (vjp_group(g, g[:, None], x, 1), vjp3(g, x, 1)):
        for (name, _), r in zip(VJP_GROUP_NAMES, path, strict=True):
            if name == "max":
                np.testing.assert_array_equal(r, want_max)
            elif name == "min":
                np.testing.assert_array_equal(r, want_min)
    want = [0.25, 0.25, 0.0, 0.25, 0.25]
    xs = np.array([2.0, 2.0, 1.0, 2.0, 2.0])
    np.testing.assert_array_equal(ar.max_vjp_all(1.0, xs), want)
    np.testing.assert_array_equal(compiled("one_d")(xs, 1.0, 0, True)[9], want)
    y = np.array([[1.0, np.nan, 3.0]])
    for path in (ar.max_vjp_axis(np.array([1.0]), y, 1), vjp3(np.array([1.0]), y, 1)[6]):
        np.testing.assert_array_equal(path, [[0.0, 1.0, 0.0]])


def test_prod_vjp_with_zeros_is_product_of_others():
    x = np.array([[0.0, 3.0, 2.0], [0.0, 0.0, 2.0], [1.5, -2.0, 4.0]])
    g = np.array([1.0, 1.0, 2.0])
    want = np.array([[6.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-16.0, 12.0, -6.0]])
    np.testing.assert_array_equal(ar.prod_vjp_axis(g, x, 1), want)
    np.testing.assert_array_equal(vjp3(g, x, 1)[4], want)
    np.testing.assert_array_equal(ar.prod_vjp_axis(g, x.T, 0), want.T)
    np.testing.assert_array_equal(compiled("other")(x.T, 0, g, g[None])[2], want.T)
    z = np.array([0.0, 2.0, 3.0])
    np.testing.assert_array_equal(ar.prod_vjp_all(1.0, z), [6.0, 0.0, 0.0])
    np.testing.assert_array_equal(compiled("vjp_all")(1.0, z.reshape(1, 3, 1))[2].ravel(),
                                  [6.0, 0.0, 0.0])
    np.testing.assert_array_equal(compiled("one_d")(z, 1.0, 0, True)[8], [6.0, 0.0, 0.0])
    # Finite differences agree at zeros too (prod is a polynomial).
    v = np.random.default_rng(7).standard_normal(x.shape)
    want_fd, scale = fd_identity(lambda z: np.prod(z, axis=1), x, g, v)
    assert abs(np.sum(ar.prod_vjp_axis(g, x, 1) * v) - want_fd) <= 1e-6 * scale


def test_norm_vjp_is_zero_at_zero():
    x = np.zeros((2, 3))
    x[1] = [3.0, 0.0, 4.0]
    want = [[0.0, 0.0, 0.0], [0.6, 0.0, 0.8]]
    np.testing.assert_allclose(ar.norm_vjp_axis(np.array([1.0, 1.0]), x, 1), want, rtol=1e-15)
    np.testing.assert_allclose(vjp3(np.array([1.0, 1.0]), x, 1)[10], want, rtol=1e-15)
    assert not ar.norm_vjp_all(1.0, np.zeros(3)).any()
    assert not compiled("vjp_all")(1.0, np.zeros((1, 3, 1)))[5].any()


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
def test_vjp_all_dot_product_identity_and_numba(ndim):
    rng = np.random.default_rng(300 + ndim)
    for shape in SHAPES.get(ndim, [()]):
        for layout, x in arrays(shape, seed=400 + ndim, low=0.6, high=1.4):
            v = rng.standard_normal(shape)
            g = float(rng.standard_normal())
            for name, got in zip(VJP_ALL_NAMES, vjp_all_group(g, x), strict=True):
                assert got.shape == x.shape and got.dtype == x.dtype
                if x.size == 0:
                    continue
                ref = FWD_ALL[name][2] if name != "norm" else ar.norm_all
                want, scale = fd_identity(ref, x, g, v)
                assert abs(np.sum(got * v) - want) <= 1e-6 * scale, f"{name} {shape} {layout}"
            if ndim == FULL_NDIM:
                check_group("vjp_all", vjp_all_group, (g, x), VJP_ALL_NAMES)
    # the *_keepdims names are the same functions, taking a size-1 cotangent
    x = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_array_equal(ar.mean_vjp_all_keepdims(np.full((1, 1), 6.0), x),
                                  np.ones((2, 3)))


def test_scalar_and_size_one_cotangents_in_both_paths():
    x = np.random.default_rng(5).uniform(-1, 1, (2, 3))
    want = scalar_g_group(x)
    for y in (x, x.T.copy().T, np.repeat(x, 2, axis=0)[::2]):
        got = compiled("scalar_g")(y)
        for label, a, b in zip(SCALAR_G_NAMES, got, want, strict=True):
            close(a, b, label)
    assert isinstance(want[4], float | np.floating) and isinstance(got[4], float)
    np.testing.assert_array_equal(want[0], np.full((2, 3), 2.0))
    np.testing.assert_array_equal(want[1], np.where(x == x.max(), 3.0, 0.0))
    close(want[5], np.sum(x, keepdims=True).reshape(()), "unbroadcast to 0-d")
    assert want[8] == 2.0 and want[9].shape == () and want[9] == 2.0


# --------------------------------------------------------------------------
# unbroadcast


UNBROADCAST_CASES = [
    ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (1, 1)), ((2, 3), (2, 3)),
    ((2, 3, 4), (3, 1)), ((2, 3, 4), (4,)), ((4, 1, 3), (1, 5, 1)),
    ((2, 3, 4, 5), (3, 1, 5)), ((2, 3, 4, 5), (1, 1)), ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((0, 3), (3,)), ((2, 0), (1, 0)), ((2, 0), (2, 1)), ((3,), ()), ((), ()),
    ((1, 3, 4), (1, 1, 4)), ((5, 1, 3), (5, 4, 1)),
]
# (c.ndim, like.ndim) pairs compiled for Numba; the other cases run in Python only.
UNBROADCAST_NDIMS = [(2, 1), (2, 2), (3, 2), (3, 3), (4, 3)]


def reference_unbroadcast(c, shape):
    """Sum c to shape by brute force over every element."""
    out = np.zeros(shape)
    lead = c.ndim - len(shape)
    for idx in np.ndindex(*c.shape):
        tgt = tuple(0 if s == 1 else i for i, s in zip(idx[lead:], shape, strict=True))
        out[tgt] += c[idx]
    return out


def test_unbroadcast_matches_reference_and_is_broadcasts_adjoint():
    rng = np.random.default_rng(11)
    compiled_pairs = 0
    for other, lshape in UNBROADCAST_CASES:
        cshape = np.broadcast_shapes(other, lshape)  # the result of like (op) other
        like = rng.standard_normal(lshape)
        for layout, c in arrays(cshape, seed=12):
            what = f"{cshape} -> {lshape} {layout}"
            got = ar.unbroadcast(c, like)
            close(got, reference_unbroadcast(c, lshape), what)
            assert isinstance(got, np.ndarray) and got.dtype == c.dtype
            assert not np.shares_memory(got, c)
            v = rng.standard_normal(lshape)
            lhs = np.sum(c * np.broadcast_to(v, cshape))
            assert abs(lhs - np.sum(got * v)) <= 1e-12 * (1 + np.sum(np.abs(c))), what
            close(ar.unbroadcast_to_shape(c, lshape), got, what)
            close(ar.unbroadcast_scalar(c), np.sum(c), what)
            if (c.ndim, like.ndim) in UNBROADCAST_NDIMS:
                compiled_pairs += 1
                check_group("unbroadcast", unbroadcast_group, (c, like),
                            ["unbroadcast", "unbroadcast_to_shape"])
    assert compiled_pairs >= 30


def test_unbroadcast_refuses_shapes_that_do_not_broadcast():
    c = np.ones((2, 3))
    for like in (np.ones(2), np.ones((3, 3)), np.ones((1, 2))):
        with pytest.raises(ValueError):
            ar.unbroadcast(c, like)
        with pytest.raises(ValueError):
            compiled("unbroadcast")(c, like)
    with pytest.raises(ValueError):
        ar.unbroadcast(np.ones(3), np.ones((1, 3)))


# --------------------------------------------------------------------------
# reshape, slice_axis, index_axis


@pytest.mark.parametrize("ndim", [1, 2, 3, 4])
def test_shape_helpers(ndim):
    for shape in SHAPES[ndim]:
        for layout, x in arrays(shape, seed=20 + ndim):
            flat = np.arange(x.size, dtype=float)
            for axis in axes(ndim):
                n = shape[axis]
                what = f"{shape} {layout} axis={axis}"
                cut = [slice(None)] * ndim
                for start, stop in itertools.combinations_with_replacement(range(n + 1), 2):
                    cut[axis] = slice(start, stop)
                    got = ar.slice_axis(x, axis, start, stop)
                    close(got, x[tuple(cut)], what)
                    assert got.flags.c_contiguous and not np.shares_memory(got, x)
                for i in range(-n, n):
                    close(ar.index_axis(x, axis, i), np.take(x, i, axis=axis), what)
                close(ar.reshape(x, (-1,)), x.reshape(-1), what)
                close(ar.reshape_like(flat, x), flat.reshape(shape), what)
                if ndim == FULL_NDIM:
                    start, stop = (1, n) if n else (0, 0)
                    i = -1 if n else 0
                    check_group("shape", shape_group, (x, flat, axis, start, stop, i),
                                ["slice_axis", "index_axis", "reshape", "reshape_like"])
    x = np.ones((2, 3))
    with pytest.raises(ValueError):
        ar.slice_axis(x, 1, 2, 4)
    with pytest.raises(IndexError):
        ar.index_axis(x, 0, 2)
    x3 = np.ones((2, 3, 1))
    with pytest.raises(ValueError):
        compiled("shape")(x3, np.ones(6), 1, 2, 4, 0)
    with pytest.raises(IndexError):
        compiled("shape")(x3, np.ones(6), 0, 0, 1, 2)


@numba.njit
def filled_group(x):
    return ar.filled((1,), x), ar.filled((1, 1), x), ar.filled((1, 1, 1), x)


def test_filled_takes_numbers_and_0d_arrays_in_both_paths():
    for x in (2.5, -3, True, np.array(2.5), np.array(-3), np.array(False)):
        want = [np.full(shape, x) for shape in ((1,), (1, 1), (1, 1, 1))]
        for got in ([ar.filled(shape, x) for shape in ((1,), (1, 1), (1, 1, 1))],
                    filled_group(x)):
            for a, b in zip(got, want, strict=True):
                assert a.shape == b.shape and a.dtype == b.dtype, (x, a, b)
                np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------
# float32 keeps its dtype in both paths


def test_float32():
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, (3, 4)).astype(np.float32)
    g = rng.standard_normal(4).astype(np.float32)
    want = float32_group(x, g)
    for y in (x, x.T.copy().T):
        got = compiled("float32")(y, g)
        for a, b in zip(got, want, strict=True):
            assert np.asarray(b).dtype == np.float32
            if isinstance(a, np.ndarray):  # Numba returns scalars as Python floats
                assert a.dtype == np.float32
            np.testing.assert_allclose(a, b, rtol=1e-5)


def test_docstring_examples():
    import doctest
    import importlib
    import pkgutil

    failed = attempted = 0
    for info in pkgutil.iter_modules(ar.__path__):
        module = importlib.import_module(f"{ar.__name__}.{info.name}")
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE,
                                 extraglobs={"np": np})
        failed += result.failed
        attempted += result.attempted
    assert failed == 0 and attempted >= 40
