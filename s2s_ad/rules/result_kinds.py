"""Result kinds of the rules: functions ``(argument kinds, operands) -> kind``.

A rule's ``kind`` is a constant (``"float"``, ``"int"``, ``"bool"``, ``"none"``) or
one of these.  Kinds inference calls a function once every argument kind is known,
except a function marked :func:`sees_unknown` (``None`` stands for an argument
whose kind is not known yet), which may answer early: ``joined`` of an int and
a not-yet-known value is not known yet, but ``power`` of an int to a constant
natural power is an int whatever else is.

>>> joined(["int", "float"], []), joined([ArrayKind(1), "float"], [])
('float', float array1)
>>> two = gast.Constant(value=2, kind=None)
>>> power(["int", None], [None, two]), power(["float", "int"], [None, two])
('int', 'float')
"""

from __future__ import annotations

from collections.abc import Callable

import gast

from ..kinds import NUMERIC, ArrayKind, Kind, broadcast


def sees_unknown(fn: Callable) -> Callable:
    """Mark ``fn`` as called while some argument kinds are still None."""
    fn.sees_unknown = True
    return fn


@sees_unknown
def joined(kinds: list, operands: list) -> Kind | None:
    """The join of the argument kinds (arrays broadcast): operators, ``abs``, ``max``."""
    return broadcast(kinds)


@sees_unknown
def power(kinds: list, operands: list) -> Kind | None:
    """``a ** b``: an int for an int base and a constant natural exponent, else a float
    (broadcast on arrays)."""
    a, b = kinds
    exponent = operands[1]
    int_exp = isinstance(exponent, gast.Constant) and isinstance(exponent.value, int) \
        and exponent.value >= 0
    if a in ("int", "bool") and int_exp:
        return "int"
    if None in kinds:
        return None
    if any(isinstance(k, ArrayKind) for k in kinds):
        return broadcast([a, b, "float"])
    return "float" if set(kinds) <= set(NUMERIC) else "unknown"


def ndim(kind) -> int | None:
    """The number of dimensions of a value of this kind (0 for a number)."""
    return kind.ndim if isinstance(kind, ArrayKind) else 0


def floats(kinds: list, operands: list):
    """Element-wise on floats: the arguments broadcast, as floats."""
    return broadcast(list(kinds) + ["float"])


def same(kinds: list, operands: list):
    """The kind of the first argument."""
    return kinds[0]


def like(kinds: list, operands: list):
    """An array like the first argument (a 0-d one for a number)."""
    return kinds[0] if isinstance(kinds[0], ArrayKind) else ArrayKind(0)


def ints(kinds: list, operands: list):
    return "int"


def int_array_or_int(kinds: list, operands: list):
    """Ints shaped like the first argument."""
    return ArrayKind(ndim(kinds[0]), floating=False) if isinstance(kinds[0], ArrayKind) \
        else "int"


def float_array_or_float(kinds: list, operands: list):
    """Floats shaped like the first argument (a conversion)."""
    return ArrayKind(ndim(kinds[0])) if isinstance(kinds[0], ArrayKind) else "float"
