"""Values crossing between the caller and the generated code.

Generated functions take numbers, arrays and tuples: a structure goes in as the
tuple of its leaves and comes back rebuilt, and a gradient is cast to the type
and dtype of its argument.

>>> import numpy as np
>>> cast_like(np.float64(2.0), np.float32(1.0)), type_key(np.zeros(3)) == type_key(np.ones(3))
(np.float32(2.0), True)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .compiler.pipeline import Transform
from .errors import ArgumentError
from .kinds import carries_derivative, is_structure, kind_of_value
from .structures import has_structure, leaves, rebuild


def is_differentiable_value(value: Any) -> bool:
    if isinstance(value, np.ndarray):
        return value.dtype.kind == "f"
    if isinstance(value, bool | np.bool_):
        return False
    if isinstance(value, float | np.floating):
        return True
    if is_structure(value):
        return carries_derivative(kind_of_value(value))
    if isinstance(value, tuple):
        return any(is_differentiable_value(v) for v in value)
    return False


def type_key(value: Any) -> Any:
    """What decides the generated code and its compiled specialisation for a value
    (cheap: it is computed for every argument of every call)."""
    cls = type(value)
    if cls is float or cls is int:
        return cls
    if cls is np.ndarray:
        return (cls, value.dtype, value.ndim, value.flags.num & 3)
    if isinstance(value, np.ndarray):  # dtype, rank and C/F contiguity (low flag bits)
        return (cls, value.dtype, value.ndim, value.flags.num & 3)
    if is_structure(value):  # its kind (fields, static values) and its leaves' types
        return (cls, kind_of_value(value), type_key(leaves(value)))
    if isinstance(value, tuple):
        return (cls, *(type_key(v) for v in value))
    return cls


def lowered_args(t: Transform, args: tuple) -> tuple:
    """``args`` as generated code takes them: structures as tuples of their leaves."""
    if not t.structured:
        return args
    return tuple(leaves(a) if has_structure(a) else a for a in args)


def raised(t: Transform, value: Any) -> Any:
    """A result of generated code as the user's function returns it (structures rebuilt)."""
    return rebuild(t.result_kind, value) if t.structured_result else value


def _array_like(grad: Any, arg: np.ndarray) -> np.ndarray:
    """An array cotangent shaped like ``arg``.  Generated code returns an array leaf of a
    tuple or structure argument as it holds it: an empty array when no cotangent
    reached it (see ``builders.zero``), which is a zero cotangent."""
    grad = np.asarray(grad, dtype=arg.dtype)
    if grad.size == 0 and arg.size:
        return np.zeros_like(arg)
    return grad.reshape(arg.shape)


def cast_like(grad: Any, arg: Any) -> Any:
    """The cotangent ``grad`` in the type (and dtype) of the argument ``arg``."""
    cls = type(arg)
    if cls is float:  # the common cases first: this runs for every gradient of every call
        return grad if type(grad) is float else float(grad)
    if cls is np.ndarray:
        if type(grad) is np.ndarray and (grad.dtype is arg.dtype or grad.dtype == arg.dtype) \
                and grad.shape == arg.shape:
            return grad
        return _array_like(grad, arg)
    if cls is not tuple and is_structure(arg):
        return rebuild(kind_of_value(arg), grad, like=arg, cast=_cast_field)
    if isinstance(arg, tuple):
        return tuple(cast_like(g, a) for g, a in zip(grad, arg, strict=True))
    if isinstance(arg, np.ndarray):
        return _array_like(grad, arg)
    if isinstance(arg, np.floating):
        return type(arg)(grad)
    if isinstance(arg, float):
        return float(grad)
    return grad


def cast_each(positions: list[int], raw: Any, args: tuple) -> Any:
    """The derivatives ``raw`` of the arguments at ``positions`` (in order), each cast
    like its argument: bare for one argument, else a tuple."""
    if len(positions) == 1:
        return cast_like(raw[0], args[positions[0]])
    return tuple([cast_like(raw[k], args[i]) for k, i in enumerate(positions)])


def _cast_field(grad: Any, arg: Any) -> Any:
    """A structure's field cotangent: an int or bool field's is a zero of its type."""
    if isinstance(arg, int | np.integer | np.bool_):
        return type(arg)(0)
    return cast_like(grad, arg)


def passed_globals(t: Transform, values: tuple) -> tuple:
    """Global ``values`` as the generated functions take them (structures as leaves)."""
    if not t.structured_globals:
        return values
    return tuple(leaves(v) for v in values)


def check_cotangent(name: str, value: Any, cotangent: Any) -> None:
    """A cotangent shaped like the result (an ArgumentError naming both otherwise)."""
    if has_structure(value):
        if type(cotangent) is not type(value) or \
                kind_of_value(cotangent).fields != kind_of_value(value).fields:
            raise ArgumentError(f"the pullback of {name} takes a cotangent shaped like "
                                f"its result (a {type(value).__name__} with the same fields), "
                                f"not {cotangent!r}")
        check_cotangent(name, leaves(value), leaves(cotangent))
        return
    if isinstance(value, tuple):
        ok = isinstance(cotangent, tuple) and len(cotangent) == len(value)
        if ok:
            for v, c in zip(value, cotangent, strict=True):
                check_cotangent(name, v, c)
            return
    elif isinstance(value, np.ndarray):
        ok = np.shape(cotangent) == value.shape and np.ndim(cotangent) > 0
    else:
        ok = np.ndim(cotangent) == 0 and not isinstance(cotangent, tuple)
    if not ok:
        shape = (f"a tuple of {len(value)}" if isinstance(value, tuple) else
                 f"an array of shape {value.shape}" if isinstance(value, np.ndarray)
                 else "a number")
        raise ArgumentError(f"the pullback of {name} takes a cotangent shaped like "
                            f"its result ({shape}), not {cotangent!r}")
