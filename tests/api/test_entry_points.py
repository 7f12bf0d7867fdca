"""Every entry point takes a call the same way (s2s_ad/arguments.py): defaults are
constants, an argument written into may share no memory with another, the caller's
arrays are left as the function leaves them (once per call, or never for the entry
points that run it several times), nothing-to-differentiate and result kinds are
clear ArgumentErrors, float32 is kept.  Issue 34, items 2, 3, 6, 7, 8, 9, 12, 14;
both paths, derivatives against central differences."""

import numpy as np
import pytest

import s2s_ad as ad
from s2s_ad.errors import ArgumentError
from s2s_ad.testing.differences import central_difference, moving_entry

PATHS = pytest.mark.parametrize("jit", [False, True], ids=["python", "numba"])


def _ones_like(value):
    return np.ones_like(value) if isinstance(value, np.ndarray) else 1.0


def _tangents(args):
    return tuple(_ones_like(a) if isinstance(a, float | np.floating | np.ndarray)
                 else None for a in args)


ENTRY_POINTS = {  # name -> run(f, args): every entry point, as a user calls it
    "gradient": lambda f, args: ad.gradient(f)(*args),
    "value_and_gradient": lambda f, args: ad.value_and_gradient(f)(*args),
    "value_with_pullback": lambda f, args: ad.value_with_pullback(f, *args)[1](1.0),
    "jvp": lambda f, args: ad.jvp(f, args, _tangents(args)),
    "jacobian_forward": lambda f, args: ad.jacobian(f, mode="forward")(*args),
    "jacobian_reverse": lambda f, args: ad.jacobian(f, mode="reverse")(*args),
    "hessian": lambda f, args: ad.hessian(f)(*args),
    "hvp": lambda f, args: ad.hvp(f, args, _tangents(args)),
}
DIFFERENTIATING = [e for e in ENTRY_POINTS if e != "jvp"]  # jvp of constants: a zero tangent


def _central(fn, args, index, position, h=1e-5):
    """The central difference of ``fn`` in the entry ``position`` of ``args[index]``
    (every array copied for each call), entry by entry for an array result."""
    return central_difference(moving_entry(fn, args, index, position), h)[0]


# -- item 2: an argument written into shares memory with another -----------------------

def scale_into(weights, other):
    weights *= 2.0
    return np.sum(weights * other)


@PATHS
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_written_argument_sharing_memory_is_refused_by_every_entry_point(entry, jit):
    f = ad.differentiable(scale_into, jit=jit)
    run = ENTRY_POINTS[entry]
    run(f, (np.array([1.0, 2.0]), np.array([0.5, 3.0])))  # a plan for such calls, if any
    shared = np.array([1.0, 2.0])
    with pytest.raises(ArgumentError, match="writes into its argument 'weights', and "
                                            "argument 'other' shares memory with it"):
        run(f, (shared, shared))
    np.testing.assert_array_equal(shared, [1.0, 2.0])  # refused before anything ran


# -- item 3: a Hessian of a function writing into its argument --------------------------

def grow(levels, rate):
    levels *= rate
    return np.sum(levels * levels) * rate


@PATHS
def test_a_hessian_is_at_the_call_point_and_leaves_the_callers_array(jit):
    f = ad.differentiable(grow, jit=jit)
    levels, rate = np.array([1.0, 2.0]), 2.0
    blocks = ad.hessian(f)(levels, rate)
    np.testing.assert_array_equal(levels, [1.0, 2.0])
    (h_ll, h_lr), (h_rl, h_rr) = blocks
    full = np.block([[h_ll, h_lr[:, None]], [h_rl[None, :], np.array([[h_rr]])]])
    gradient = ad.gradient(ad.differentiable(grow, jit=False))

    def flat_gradient(*args):
        return np.concatenate([np.ravel(g) for g in gradient(*args)])

    for j, (index, position) in enumerate([(0, (0,)), (0, (1,)), (1, None)]):
        np.testing.assert_allclose(full[:, j], _central(flat_gradient, (levels, rate), index,
                                                        position), rtol=1e-7)


@PATHS
@pytest.mark.parametrize("entry", ["hvp", "jvp", "gradient"])
def test_a_single_run_changes_the_callers_array_once_as_python_does(entry, jit):
    f = ad.differentiable(grow, jit=jit)
    levels = np.array([1.0, 2.0])
    ENTRY_POINTS[entry](f, (levels, 2.0))
    np.testing.assert_array_equal(levels, [2.0, 4.0])


# -- item 6: nothing to differentiate ---------------------------------------------------

def constant_of_label(label):
    return 1.0


def switched(enabled):
    return 1.0 if enabled else 2.0


def product(mass, speed):
    return mass * speed


NOTHING = [
    (lambda: 1.0, (), None, "it takes no argument"),
    (constant_of_label, ("abc",), None, "label='abc' is a str"),
    (switched, (True,), None, "enabled=True is a bool"),
    (product, (2.0, 3.0), (), "wrt names no parameter"),
]


@PATHS
@pytest.mark.parametrize("entry", DIFFERENTIATING)
@pytest.mark.parametrize("case", range(len(NOTHING)), ids=["no_argument", "str", "bool",
                                                            "empty_wrt"])
def test_nothing_to_differentiate_is_an_argument_error(entry, case, jit):
    fn, args, wrt, said = NOTHING[case]
    f = ad.differentiable(fn, jit=jit, wrt=wrt)
    with pytest.raises(ArgumentError, match=f"nothing to differentiate: {said}"):
        ENTRY_POINTS[entry](f, args)


@PATHS
def test_a_jvp_of_constants_is_the_value_and_a_zero_tangent(jit):
    f = ad.differentiable(constant_of_label, jit=jit)
    assert ad.jvp(f, ("abc",), (None,)) == (1.0, 0.0)


# -- item 7: a parameter left to its default is a constant ------------------------------

def damped(position, rate=3.0):
    return np.sin(position) * rate


@PATHS
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_a_parameter_left_to_its_default_is_a_constant(entry, jit):
    f = ad.differentiable(damped, jit=jit)
    position = 0.5
    result = ENTRY_POINTS[entry](f, (position,))
    first = _central(damped, (position,), 0, None)
    second = _central(ad.gradient(ad.differentiable(damped, jit=False)), (position,), 0, None)
    expected = {"value_and_gradient": (damped(position), first),
                "jvp": (damped(position), first),
                "hessian": second, "hvp": second}.get(entry, first)
    np.testing.assert_allclose(np.asarray(result, dtype=float), expected, rtol=1e-7)


# -- item 8: a Jacobian of a tuple or a dict ---------------------------------------------

def paired(offsets):
    return offsets * 2.0, np.sum(offsets)


def named(offsets):
    return {"twice": offsets * 2.0, "total": np.sum(offsets)}


@PATHS
@pytest.mark.parametrize("mode", ["auto", "forward", "reverse"])
@pytest.mark.parametrize("fn, what", [(paired, "a tuple of 2"), (named, "a dict")],
                         ids=["tuple", "dict"])
def test_a_jacobian_of_a_tuple_or_dict_says_what_it_takes(fn, what, mode, jit):
    f = ad.differentiable(fn, jit=jit)
    with pytest.raises(ArgumentError, match=f"needs a function returning a number or an "
                                            f"array, but {fn.__name__} returns {what}"):
        ad.jacobian(f, mode=mode)(np.array([1.0, 2.0]))


# -- item 9: a second derivative of an array -----------------------------------------------

def squares(offsets):
    return offsets * offsets


@PATHS
@pytest.mark.parametrize("entry", ["hvp", "hessian", "gradient", "value_and_gradient"])
def test_a_second_derivative_of_an_array_result_says_so(entry, jit):
    f = ad.differentiable(squares, jit=jit)
    with pytest.raises(ArgumentError, match="needs a function returning a number, but "
                                            "squares returns an array of 1 dimension"):
        ENTRY_POINTS[entry](f, (np.array([1.0, 2.0]),))


# -- item 12: the Jacobian of a gradient -------------------------------------------------

def quartic(charges):
    return np.sum(charges ** 4) + charges[0] * charges[1]


@PATHS
def test_the_jacobian_of_a_gradient_is_the_hessian(jit):
    f = ad.differentiable(quartic, jit=jit)
    charges = np.array([1.0, 2.0])
    jac = ad.jacobian(ad.gradient(f))(charges)
    np.testing.assert_allclose(jac, ad.hessian(f)(charges), rtol=1e-14)
    gradient = ad.gradient(ad.differentiable(quartic, jit=False))
    for j in range(2):
        np.testing.assert_allclose(jac[:, j], _central(gradient, (charges,), 0, (j,)),
                                   rtol=1e-7)
    with pytest.raises(ArgumentError, match="third derivatives are not supported"):
        ad.hessian(ad.gradient(f))(charges)


# -- item 14: float32 ------------------------------------------------------------------------

def energy(charges):
    return np.sum(charges ** 4)


def energy_of_one(charge):
    return charge ** 4


@PATHS
@pytest.mark.parametrize("entry", ["hvp", "hessian", "gradient"])
@pytest.mark.parametrize("shaped", [True, False], ids=["array", "number"])
def test_float32_arguments_keep_float32(entry, shaped, jit):
    fn = energy if shaped else energy_of_one
    f = ad.differentiable(fn, jit=jit)
    charges = np.array([1.0, 2.0], np.float32) if shaped else np.float32(2.0)
    result = ENTRY_POINTS[entry](f, (charges,))
    for _ in range(2):  # the first call and the validated plan
        result = ENTRY_POINTS[entry](f, (charges,))
        assert np.asarray(result).dtype == np.float32
        assert isinstance(result, np.ndarray if shaped else np.float32)
    wide = ENTRY_POINTS[entry](ad.differentiable(fn, jit=jit),
                               (np.asarray(charges, np.float64),))
    np.testing.assert_allclose(result, wide, rtol=1e-6)


def field_of(charges, power=3):
    return charges ** power * 2.0


@PATHS
@pytest.mark.parametrize("entry", ["jacobian_forward", "jacobian_reverse"])
@pytest.mark.parametrize("fn", [energy, energy_of_one, field_of])
def test_float32_jacobians_keep_float32(entry, fn, jit):
    f = ad.differentiable(fn, jit=jit)
    charges = np.array([1.0, 2.0], np.float32) if fn is not energy_of_one else np.float32(2.0)
    for _ in range(3):  # the first call, the second (the compiled column driver) and later
        jac = ENTRY_POINTS[entry](f, (charges,))
        assert np.asarray(jac).dtype == np.float32
    wide = ENTRY_POINTS[entry](ad.differentiable(fn, jit=jit),
                               (np.asarray(charges, np.float64),))
    np.testing.assert_allclose(jac, wide, rtol=1e-6)


def summed_energy_of_one(charge):
    return np.sum(charge ** 4)  # a float32 number through np.sum: rt.number_as_float


@PATHS
@pytest.mark.parametrize("entry", ["hvp", "hessian"])
def test_second_derivatives_of_a_float32_number_through_a_reduction(entry, jit):
    f = ad.differentiable(summed_energy_of_one, jit=jit)
    result = ENTRY_POINTS[entry](f, (np.float32(2.0),))
    assert float(result) == 48.0  # d2/dq2 q^4 = 12 q^2, at q = 2
