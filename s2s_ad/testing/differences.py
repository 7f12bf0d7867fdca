"""Finite differences: the reference every gradient is checked against.

Each function runs only the function it is given (the original Python code,
never anything s2s_ad produced) and returns an estimate with a bound on, or an
estimate of, its error, so that a caller compares a derivative ``g`` with
``|g - estimate| <= atol + rtol * |estimate| + bound``.

The stencils take ``along(t)``: the function's value at the point moved by
``t`` along some direction, so one stencil serves a single entry, a whole
argument or every argument at once:

>>> import math
>>> estimate, bound = central_difference(lambda t: math.exp(1.0 + t), 1e-6)
>>> abs(estimate - math.e) < 1e-9 and bound < 1e-8
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

EPS = float(np.finfo(np.float64).eps)
# Rounding in f itself: each evaluation is trusted to ROUNDOFF_ULPS * eps * |f|, and a
# difference quotient divides that error by its step, so the bounds below add it.
ROUNDOFF_ULPS = 16.0


def relative_step(x: Any, relative: float = 1e-6) -> float:
    """``relative * max(1, |x|)`` (``|x|`` the largest magnitude of an array): a step
    that is small next to ``x`` but not lost in its rounding.

    >>> relative_step(3.0)
    3e-06
    >>> relative_step(np.array([0.5, -2.0]), 1e-4)
    0.0002
    """
    size = float(np.max(np.abs(x), initial=0.0)) if np.ndim(x) else abs(float(x))
    return relative * max(1.0, size)


def central_difference(along: Callable[[float], Any], h: float,
                       cotangent: Any = None) -> tuple[Any, Any]:
    """``(along(h) - along(-h)) / 2h`` and the bound on its rounding error.

    Without ``cotangent`` both are taken entry by entry (floats for a scalar
    ``along``, arrays shaped like its value otherwise).  With a ``cotangent`` u
    (shaped like ``along``'s value) the estimate is the derivative of ``<u, along>``
    and the bound scales with ``sum |u_i along_i|``: the error of the terms, not of
    their (possibly cancelling) sum.  The truncation error is ``O(h^2)``.

    >>> round(central_difference(lambda t: (2.0 + t) ** 2, 1e-3)[0], 9)
    4.0
    >>> central_difference(lambda t: np.array([t, 3.0 * t]), 0.5, np.array([1.0, 2.0]))[0]
    7.0
    """
    plus, minus = along(h), along(-h)
    if cotangent is None and np.ndim(plus) == 0 and np.ndim(minus) == 0:  # the common case
        plus, minus = float(plus), float(minus)
        return (plus - minus) / (2.0 * h), _rounding(max(abs(plus), abs(minus)), 2.0 * h)
    plus = np.asarray(plus, dtype=np.float64)
    minus = np.asarray(minus, dtype=np.float64)
    if cotangent is None:
        estimate = (plus - minus) / (2.0 * h)
        size = np.maximum(np.abs(plus), np.abs(minus))
        return _plain(estimate), _plain(_rounding(size, 2.0 * h))
    u = np.asarray(cotangent, dtype=np.float64)
    estimate = math.fsum((u * (plus - minus)).ravel()) / (2.0 * h)
    size = max(math.fsum(np.abs(u * plus).ravel()), math.fsum(np.abs(u * minus).ravel()))
    return estimate, _rounding(size, 2.0 * h)


def five_point_difference(along: Callable[[float], Any], h: float) -> tuple[Any, Any]:
    """The fourth-order stencil ``(f(-2h) - 8 f(-h) + 8 f(h) - f(2h)) / 12h`` of
    ``f = along`` and the bound on its rounding error, entry by entry.

    The truncation error is ``h^4 |f^(5)| / 30``, so a step big enough to keep
    rounding small (a sum over many data points) still gives a sharp estimate.

    >>> estimate, bound = five_point_difference(lambda t: math.sin(0.5 + t), 1e-3)
    >>> abs(estimate - math.cos(0.5)) < 1e-13 and bound < 1e-11
    True
    """
    values = [np.asarray(along(m * h), dtype=np.float64) for m in (-2, -1, 1, 2)]
    estimate = (values[0] - 8.0 * values[1] + 8.0 * values[2] - values[3]) / (12.0 * h)
    size = np.max(np.abs(values), axis=0)
    return _plain(estimate), _plain(_rounding(18.0 * size, 12.0 * h))


def extrapolated_difference(along: Callable[[float], Any], h: float) -> tuple[Any, Any]:
    """:func:`five_point_difference` at ``h`` and ``h / 2`` combined by Richardson
    extrapolation, and the gap between the two as the error estimate (it flags the
    rare function whose truncation error is not negligible at ``h``).

    >>> estimate, error = extrapolated_difference(lambda t: math.exp(t), 1e-4)
    >>> abs(estimate - 1.0) < 1e-10 and error < 1e-10
    True
    """
    coarse = five_point_difference(along, h)[0]
    fine = five_point_difference(along, h / 2)[0]
    return fine + (fine - coarse) / 15.0, abs(fine - coarse)


def partial_derivatives(fn: Callable, args: Sequence, index: int, *, relative: float = 1e-6,
                        cotangent: Any = None) -> tuple[Any, Any]:
    """The central difference of ``fn`` in each entry of ``args[index]`` (a float or
    a float array, moved in float64), with step ``relative_step(entry, relative)``:
    the estimates and their rounding bounds, shaped like the argument.

    ``fn`` returns a scalar, or an array reduced with ``cotangent`` (see
    :func:`central_difference`).  The other arguments are passed as they are, each
    array copied for every call, so a function that writes into its arguments is
    measured from the same point every time.

    >>> round(partial_derivatives(lambda x, y: x * y, (2.0, 5.0), 0)[0], 6)
    5.0
    >>> partial_derivatives(lambda w: float(np.sum(w ** 2)), (np.array([1.0, -3.0]),), 0)[0]
    array([ 2., -6.])
    """
    x = args[index]
    if not isinstance(x, np.ndarray):
        return central_difference(moving_entry(fn, args, index), relative_step(x, relative),
                                  cotangent)
    estimate, bound = np.zeros(np.shape(x)), np.zeros(np.shape(x))
    for position in np.ndindex(np.shape(x)):
        h = relative_step(x[position], relative)
        estimate[position], bound[position] = central_difference(
            moving_entry(fn, args, index, position), h, cotangent)
    return estimate, bound


def moving_entry(fn: Callable, args: Sequence, index: int,
                 position: tuple | None = None) -> Callable[[float], Any]:
    """``t -> fn(*args)`` with ``t`` added to ``args[index]`` (to its entry at
    ``position`` for an array), the moved argument in float64 and every array
    copied for each call: the ``along`` of the stencils for one entry.

    >>> along = moving_entry(lambda w, c: float(np.sum(w * c)), (np.ones(2), 3.0), 0, (1,))
    >>> along(0.5)
    7.5
    >>> round(five_point_difference(along, 1e-3)[0], 9)
    3.0
    """
    x = args[index]
    if not isinstance(x, np.ndarray):
        return lambda t: fn(*_replaced(args, index, float(x) + t))
    base = np.asarray(x, dtype=np.float64)  # copied for every call below

    def along(t: float) -> Any:
        moved = base.copy()
        moved[position] += t
        return fn(*_replaced(args, index, moved))

    return along


def directional_difference(fn: Callable, args: Sequence, direction: dict[int, Any], h: float,
                           cotangent: Any = None) -> tuple[Any, Any]:
    """The central difference of ``fn`` along ``direction`` (argument position ->
    tangent shaped like that argument) with step ``h``: ``J v`` (or ``<u, J v>``
    with a ``cotangent`` u) and its rounding bound.

    >>> round(directional_difference(lambda x, y: x * y, (2.0, 5.0), {0: 1.0, 1: -1.0},
    ...                              1e-6)[0], 6)
    3.0
    """
    def along(t: float) -> Any:
        moved = list(args)
        for i, v in direction.items():
            moved[i] = args[i] + t * v
        return fn(*fresh_copies(moved))

    return central_difference(along, h, cotangent)


def fresh_copies(args: Sequence) -> tuple:
    """The arguments with every array copied (dtype and memory order kept), so a
    function that writes into its arguments cannot spoil the next call.

    >>> w = np.zeros(2)
    >>> fresh_copies((w, 1.0))[0] is w
    False
    """
    return tuple(a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args)


def _replaced(args: Sequence, index: int, value: Any) -> tuple:
    """``args`` with ``value`` (a fresh float or array) at ``index``, the others copied."""
    return (*fresh_copies(args[:index]), value, *fresh_copies(args[index + 1:]))


def _rounding(size: Any, denominator: float) -> Any:
    """``ROUNDOFF_ULPS * eps * size / denominator``; a bound that underflows is 0 (also
    under ``np.errstate(all="raise")``, which a caller may use to catch its own
    overflows)."""
    if np.ndim(size) == 0:  # Python floats round to subnormals and 0 without raising
        return ROUNDOFF_ULPS * EPS * float(size) / denominator
    with np.errstate(under="ignore"):
        return ROUNDOFF_ULPS * EPS * size / denominator


def _plain(value: np.ndarray) -> Any:
    """A 0-d result as a Python float, anything else as it is."""
    return float(value) if np.ndim(value) == 0 else value
