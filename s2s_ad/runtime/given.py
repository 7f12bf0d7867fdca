"""Cotangents given by user code: registered kernel gradients and custom derivatives
(and the tangents registered differentials give, ``given_tangent``).

A gradient function returns one cotangent per input: a tuple or a list (for one
input also the cotangent itself), ``None`` for "no cotangent" (zero), a number
for a number input, an array shaped like an array input.  ``given_cotangents``
checks the count and makes a tuple of them; ``given_cotangent`` checks one
against its input and makes it a float (or a float64 array).  Both name the
kernel (or function) whose gradient returned a wrong value.

>>> given_cotangents((1.0, None), 2, "kernel 'blend'")
(1.0, None)
>>> given_cotangent(None, np.ones(2), "kernel 'blend'", 1)
array([0., 0.])
>>> given_cotangents(np.ones(2), 3, "'blend'")
Traceback (most recent call last):
ValueError: the gradient of 'blend' returns an array, not a tuple of 3 cotangents (one per input)
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.core.errors import TypingError

from .axes import numba_impl

__all__ = ["given_cotangent", "given_cotangents", "given_tangent"]


def given_cotangents(result, count, name):
    """The ``count`` cotangents ``result`` gives, as a tuple (one input: the cotangent
    itself, or a one-item tuple or list, is accepted)."""
    if isinstance(result, tuple | list):
        items = tuple(result)
    elif count == 1:
        items = (result,)
    else:
        what = "an array" if isinstance(result, np.ndarray) else f"a {type(result).__name__}"
        raise ValueError(f"the gradient of {name} returns {what}, not a tuple of {count} "
                         "cotangents (one per input)")
    if len(items) != count:
        raise ValueError(f"the gradient of {name} returns {len(items)} cotangents for "
                         f"{count} inputs (one per input, None for no cotangent)")
    return items


def given_cotangent(part, like, name, position):
    """Cotangent ``part`` of input ``position`` (of value ``like``) as a float or a float64
    array of ``like``'s shape; ``None`` is zero."""
    if part is None:
        return np.zeros(np.shape(like)) if isinstance(like, np.ndarray) else 0.0
    shape, wanted = np.shape(part), np.shape(like)
    if shape != wanted:
        raise ValueError(f"the gradient of {name} returns a cotangent of shape {shape} for "
                         f"input {position}, which has shape {wanted}")
    if isinstance(like, np.ndarray):
        return np.asarray(part, dtype=np.float64)
    return float(part)


def given_tangent(part, like, name):
    """Tangent ``part`` a registered differential of ``name`` returned for its value
    ``like``: a float, or an array of ``like``'s shape and float dtype; ``None`` is zero.

    >>> given_tangent(2, 3.0, "'scaled_exp'")
    2.0
    """
    dtype = like.dtype if isinstance(like, np.ndarray) and like.dtype.kind == "f" \
        else np.float64
    if part is None:
        return np.zeros(np.shape(like), dtype) if isinstance(like, np.ndarray) else 0.0
    shape, wanted = np.shape(part), np.shape(like)
    if shape != wanted:
        raise ValueError(f"the differential of {name} returns a tangent of shape {shape} "
                         f"for a value of shape {wanted}")
    if isinstance(like, np.ndarray):
        return np.asarray(part, dtype=dtype)
    return float(part)


def _literal(value):
    """The constant of a literal type (None: Numba then retries with literal types)."""
    return getattr(value, "literal_value", None)


@numba_impl(given_cotangents)
def _ol_given_cotangents(result, count, name):
    n, label = _literal(count), _literal(name)
    if n is None or label is None:
        return None
    if isinstance(result, types.BaseTuple):
        if len(result) != n:
            raise TypingError(f"s2s_ad: the gradient of {label} returns {len(result)} cotangents "
                              f"for {n} inputs (one per input, None for no cotangent)")
        return lambda result, count, name: result
    if n != 1:
        raise TypingError(f"s2s_ad: the gradient of {label} returns {result}, not a tuple of {n} "
                          "cotangents (one per input)")
    return lambda result, count, name: (result,)


@numba_impl(given_cotangent)
def _ol_given_cotangent(part, like, name, position):
    label, at = _literal(name), _literal(position)
    if label is None or at is None:
        return None
    array = isinstance(like, types.Array)
    if isinstance(part, types.NoneType | types.Omitted):
        if array:
            return lambda part, like, name, position: np.zeros(like.shape)
        return lambda part, like, name, position: 0.0
    if isinstance(part, types.Number) and not array:
        return lambda part, like, name, position: float(part)
    if isinstance(part, types.Array) and array and part.ndim == like.ndim:
        message = (f"the gradient of {label} returns a cotangent for input {at} whose "
                   "shape is not the input's")

        def impl(part, like, name, position):
            if part.shape != like.shape:
                raise ValueError(message)
            return part.astype(np.float64)

        return impl
    raise TypingError(f"s2s_ad: the gradient of {label} returns {part} as the cotangent of input "
                      f"{at}, which is {like}")


@numba_impl(given_tangent)
def _ol_given_tangent(part, like, name):
    label = _literal(name)
    if label is None:
        return None
    array = isinstance(like, types.Array)
    dtype = like.dtype if array and isinstance(like.dtype, types.Float) else types.float64
    if isinstance(part, types.NoneType | types.Omitted):
        if array:
            return lambda part, like, name: np.zeros(like.shape, dtype)
        return lambda part, like, name: 0.0
    if isinstance(part, types.Number) and not array:
        return lambda part, like, name: float(part)
    if isinstance(part, types.Array) and array and part.ndim == like.ndim:
        message = (f"the differential of {label} returns a tangent whose shape is not its "
                   "value's")

        def impl(part, like, name):
            if part.shape != like.shape:
                raise ValueError(message)
            return part.astype(dtype)

        return impl
    raise TypingError(f"s2s_ad: the differential of {label} returns {part} as the tangent of "
                      f"its value, which is {like}")
