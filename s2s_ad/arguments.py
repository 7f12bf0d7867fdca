"""The arguments of every entry point, checked in one place.

``gradient``, ``value_and_gradient``, the pullbacks, ``jvp``, ``jacobian``, ``hvp``,
``hessian`` and the distributed sums all take a call of the user's function the same
way (:func:`prepared`, or :func:`checked` where the entry point finds its transform
itself):

* the arguments are bound as the function binds them; a parameter left to its
  default is a constant, never differentiated unless named in ``wrt``
  (:meth:`s2s_ad.api.DifferentiableFunction.bind`), and carries no tangent
  (:func:`tangents_for`);
* what is differentiated is chosen by ``wrt`` or the argument values
  (:func:`differentiated_positions`), and an entry point that differentiates finds
  something to differentiate, or says which argument is not differentiable;
* the result is of a kind the entry point takes (a number for gradients and
  Hessians; a number or an array for a Jacobian);
* an argument the function writes into shares no memory with another argument
  (:func:`s2s_ad.argument_memory.refuse_overlaps`), and an entry point that runs
  the function several times at one point runs each on copies of those arrays
  (:func:`fresh`).

Each check is made when a call's transform is found, not at every call: the
steady-state plans (:mod:`s2s_ad.fast_path`, :mod:`s2s_ad.hvp_plan`) repeat only
the memory check, and only for functions that write into their arguments.

>>> import s2s_ad as ad
>>> def tagged(tag):
...     return 1.0
>>> ad.gradient(tagged)("abc")
Traceback (most recent call last):
s2s_ad.errors.ArgumentError: gradient of tagged: nothing to differentiate: tag='abc' is a str...
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .argument_memory import copied, refuse_overlaps
from .boundary import is_differentiable_value
from .compiler.pipeline import Transform
from .errors import ArgumentError
from .integer_arguments import check_integers
from .kinds import NUMERIC, ArrayKind, StructKind

#: What each entry point asks of a call: (differentiates something, result kinds).
NUMBER, NUMBER_OR_ARRAY, ANY = "a number", "a number or an array", ""
_ENTRIES = {
    "primal": (False, ANY),
    "gradient": (True, NUMBER),
    "pullback": (True, ANY),
    "jvp": (False, ANY),
    "jacobian": (True, NUMBER_OR_ARRAY),
    "hvp": (True, NUMBER),
    "hessian": (True, NUMBER),
}
_ADVICE = {  # what to use instead for another result
    "gradient": "use ad.jacobian for an array result, ad.value_with_pullback for others",
    "hvp": "for an array result, ad.jacobian gives its first derivative, and a "
           "function returning one of its entries has a Hessian",
    "jacobian": "take the Jacobian of each part (a function returning one of them), "
                "or use ad.jvp / ad.value_with_pullback, which take any result",
}


class Call(NamedTuple):
    """A call of a user's function as an entry point runs it."""

    t: Transform  # the transform for these arguments
    args: tuple  # one per parameter, defaults applied
    defaulted: frozenset[int]  # the positions left to their defaults


def prepared(df: Any, entry: str, args: tuple, kwargs: dict | None = None) -> Call:
    """The call of ``df`` (a :class:`~s2s_ad.api.DifferentiableFunction`) with
    ``args`` for entry point ``entry``: bound, transformed and checked."""
    bound, defaulted = df.bind(args, kwargs or {})
    t = df.prepare(bound, defaulted)
    checked(df, entry, t, bound)
    return Call(t, bound, defaulted)


def checked(df: Any, entry: str, t: Transform, args: tuple) -> None:
    """An :class:`ArgumentError` unless ``args`` (bound) suit entry point ``entry``:
    something differentiated, a result it takes, no argument written into that
    shares memory with another."""
    differentiates, result = _ENTRIES[entry]
    if result:
        check_result(df, entry, t, result)
    if differentiates and not t.wrt_positions:
        check_integers(df, t, args)  # ints alone: its own words
        raise ArgumentError(nothing_differentiated(df, entry, t, args))
    if t.written_positions:
        refuse_overlaps(df.__name__, t.parsed.params, t.written_positions, args)


def check_result(df: Any, entry: str, t: Transform, wanted: str) -> None:
    """An :class:`ArgumentError` unless ``t``'s result is of a kind ``wanted``."""
    kind = t.result_kind
    if kind in NUMERIC or (wanted == NUMBER_OR_ARRAY and
                           (isinstance(kind, ArrayKind) or kind == "unknown")):
        return
    what = kind_text(kind)
    advice = _ADVICE.get("hvp" if entry == "hessian" else entry, "")
    raise ArgumentError(f"{entry} of {df.__name__} needs a function returning {wanted}, "
                        f"but {df.__name__} returns {what}; {advice}")


def kind_text(kind: Any) -> str:
    """A result kind in words (``a tuple``, ``an array of 1 dimension``)."""
    if isinstance(kind, ArrayKind):
        return f"an array of {kind.ndim} dimension{'s' * (kind.ndim != 1)}" \
            if kind.ndim is not None else "an array"
    if type(kind) is tuple:
        return f"a tuple of {len(kind)}"
    if isinstance(kind, StructKind):  # a dict, a dataclass, a named tuple
        return f"a {getattr(kind.cls, '__name__', 'structure')}"
    return f"a value of kind {kind!r}"


def nothing_differentiated(df: Any, entry: str, t: Transform, args: tuple) -> str:
    """Why no argument of the call is differentiated, naming them."""
    head = f"{entry} of {df.__name__}: nothing to differentiate"
    if df.wrt is not None and not df.wrt:
        return f"{head}: wrt names no parameter"
    if not args:
        return f"{head}: it takes no argument"
    values = [f"{name}={_short(value)} is a {type(value).__name__}"
              for name, value in zip(t.parsed.params, args, strict=True)]
    return (f"{head}: {', '.join(values)}, not a float or a float array (pass floats, "
            "or arrays of floats, for the arguments to differentiate)")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def differentiated_positions(df: Any, params: Sequence[str], args: tuple,
                             defaulted: frozenset[int]) -> list[int]:
    """The positions of the differentiated arguments: those ``wrt`` names, or every
    float argument not left to its default; an :class:`ArgumentError` naming an
    argument whose value generated code cannot take, or one named in ``wrt`` that
    is not a float."""
    if len(args) != len(params):
        raise TypeError(f"{df.__name__}() takes {len(params)} arguments but "
                        f"{len(args)} were given")
    for name, value in zip(params, args, strict=True):
        problem = unsupported(value)
        if problem:
            raise ArgumentError(f"argument '{name}' of {df.__name__} is {problem}")
    if df.wrt is None:
        return [i for i, a in enumerate(args)
                if is_differentiable_value(a) and i not in defaulted]
    positions = [params.index(w) for w in df.wrt]
    for i in positions:
        if not is_differentiable_value(args[i]):
            raise ArgumentError(
                f"argument '{params[i]}' of {df.__name__} is differentiated but its "
                f"value {args[i]!r} is a {type(args[i]).__name__}, not a float")
    return positions


def unsupported(value: Any) -> str:
    """What is wrong with an argument value generated code cannot take ('' if nothing)."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "fiub":
        return f"an array of dtype {value.dtype}; only real numeric arrays are supported"
    if isinstance(value, complex | np.complexfloating):
        return f"a complex number ({value!r}); only real numbers are supported"
    if isinstance(value, list):
        return "a list; pass a NumPy array (np.asarray(...)) or a tuple"
    if isinstance(value, tuple):
        return next((f"a tuple holding {p}" for p in map(unsupported, value) if p), "")
    return ""


def tangents_for(df: Any, entry: str, primals: tuple, tangents: tuple, bound: tuple
                 ) -> tuple:
    """One tangent per parameter: those given with ``primals``, ``None`` (a constant)
    for the parameters left to their defaults."""
    if len(tangents) != len(primals):
        raise ArgumentError(f"{entry} of {df.__name__}: {len(primals)} primals but "
                            f"{len(tangents)} tangents (give one per argument)")
    return tangents + (None,) * (len(bound) - len(tangents))


def fresh(t: Transform, args: tuple) -> tuple:
    """``args`` with a copy of each array the function writes into: for an entry point
    that runs it several times at one point (a Jacobian, a Hessian), each run starts
    from the caller's values, which it leaves as they are."""
    if not t.written_positions:
        return args
    return copied(args, keep=set(range(len(args))) - set(t.written_positions))
