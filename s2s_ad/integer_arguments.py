"""Integer arguments are never differentiated: the warning (or, when nothing would be
left to differentiate, the error) that says so, once per argument types.

>>> import warnings
>>> import s2s_ad as ad
>>> def scaled(x, n):
...     return x * n
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     ad.gradient(scaled)(2.0, 3)
3.0
>>> print(caught[0].message)
scaled: the int argument n=3 is not differentiated; pass floats to differentiate them (n=3.0)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .compiler.pipeline import Transform
from .compiler.transforms import transform
from .errors import ArgumentError, IntegerArgumentWarning, NonDifferentiableError
from .kinds import kind_of_value


def integers_checked(t: Transform) -> bool:
    """Whether the integer arguments of calls of ``t`` were already checked."""
    return t in _checked


def check_integers(df: Any, t: Transform, args: tuple, stacklevel: int = 3) -> None:
    """Integer arguments (ints and int arrays) are never differentiated: an error when
    that leaves nothing to differentiate, else a warning (once per argument types) at
    the caller ``stacklevel`` frames up (the user's call of the entry point)."""
    if df.wrt is not None or t in _checked:
        return
    params = t.parsed.params
    ints = [i for i, a in enumerate(args) if _is_integer(a)]
    if t.wrt_positions:  # only those that would carry a derivative as floats
        ints = [i for i in ints if _would_carry(df, args, i)]
    if not ints:
        _checked.add(t)
        return
    what = ", ".join(_integer_text(params[i], args[i]) for i in ints)
    hint = f"pass floats to differentiate them ({_as_float_text(params[ints[0]], args[ints[0]])})"
    one = len(ints) == 1
    if not t.wrt_positions:
        raise ArgumentError(f"{df.__name__}: no argument is differentiated: {what} "
                            f"{_int_word(args[ints[0]]) if one else 'are ints'}, and ints "
                            f"never are; {hint}")
    _checked.add(t)  # warned once; an error above is raised at every call
    warnings.warn(f"{df.__name__}: the int argument{'s' * (not one)} {what} "
                  f"{'is' if one else 'are'} not differentiated; {hint}",
                  IntegerArgumentWarning, stacklevel=stacklevel)


_checked: set = set()


def _is_integer(value: Any) -> bool:
    """An int, or an array of ints (bools are not counted: they are not numbers meant)."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "iu"
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def _int_word(value: Any) -> str:
    return "holds ints" if isinstance(value, np.ndarray) else "is an int"


def _integer_text(name: str, value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{name} (an array of dtype {value.dtype})"
    return f"{name}={value!r}"


def _as_float_text(name: str, value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{name}.astype(float)"
    return f"{name}={float(value)!r}"


def _would_carry(df: Any, args: tuple, position: int) -> bool:
    """Whether the int argument at ``position`` would have a derivative that is not
    always zero were it a float (not a loop bound, an index or a count)."""
    kinds = [kind_of_value(a) for a in args]
    kinds[position] = kind_of_value(np.asarray(args[position], dtype=float)) \
        if isinstance(args[position], np.ndarray) else "float"
    try:
        t = transform(df.fn, kinds, [position])
    except (NonDifferentiableError, TypeError, ValueError):
        return False  # it only works as an int (range(n), an index)
    return not t.zero_derivatives
