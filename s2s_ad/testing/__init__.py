"""Checking gradients against references that do not use the compiler.

:func:`check_grads` compares what s2s_ad computes with central finite
differences of the original function, checks the dot-product identity
``<u, J v> = <J^T u, v>``, and checks that the compiled and the Python paths
agree.  The project's own tests use it; so can yours:

>>> import math
>>> import s2s_ad as ad
>>> from s2s_ad.testing import check_grads
>>> def f(x, y):
...     return math.sin(x) * y + x ** 2
>>> check_grads(f, 1.0, 2.0, paths=("python",))

The references it is built from are public too, and are the only finite
differences the project's tests use (``tests/api/test_testing.py`` checks that):
the stencils and their rounding bounds in :mod:`s2s_ad.testing.differences`
(:func:`central_difference`, :func:`five_point_difference`,
:func:`extrapolated_difference`, :func:`partial_derivatives`,
:func:`directional_difference`), and the assertions built on them in
:mod:`s2s_ad.testing.assertions` (:func:`assert_vjp_matches_fd`,
:func:`assert_dot_product_identity`, :func:`assert_close`):

>>> from s2s_ad.testing import assert_vjp_matches_fd
>>> assert_vjp_matches_fd(f, (1.0, 2.0), 1.0, ad.gradient(f)(1.0, 2.0))
"""

from .assertions import (
    FD_ATOL,
    FD_RTOL,
    as_tuple,
    assert_close,
    assert_dot_product_identity,
    assert_gradient_like_arguments,
    assert_vjp_matches_fd,
    differentiable_indices,
    in_float64,
    is_differentiable_argument,
    random_cotangent,
    relatively_close,
)
from .differences import (
    EPS,
    ROUNDOFF_ULPS,
    central_difference,
    directional_difference,
    extrapolated_difference,
    five_point_difference,
    fresh_copies,
    moving_entry,
    partial_derivatives,
    relative_step,
)
from .grads import check_grads, random_like

__all__ = [
    "EPS", "FD_ATOL", "FD_RTOL", "ROUNDOFF_ULPS", "as_tuple", "assert_close",
    "assert_dot_product_identity", "assert_gradient_like_arguments", "assert_vjp_matches_fd",
    "central_difference", "check_grads", "differentiable_indices", "directional_difference",
    "extrapolated_difference", "five_point_difference", "fresh_copies", "in_float64",
    "is_differentiable_argument", "moving_entry", "partial_derivatives", "random_cotangent",
    "random_like", "relative_step", "relatively_close",
]
