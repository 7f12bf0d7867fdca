"""Shared data of the pipeline: parsed functions and lifted local functions.

Every stage imports it; it imports no stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from s2s_ad.errors import Location


@dataclass(eq=False)
class ParsedFunction:
    """A user function as a gast ``FunctionDef`` with its names resolved.

    ``node`` positions are those of the user's file.  ``namespace`` maps every
    free name (closure cells, then globals, then builtins) to its object.
    ``key`` identifies the function for caching (its code object, or the
    enclosing function and position for a lifted local function).  ``generated``
    marks s2s_ad's own generated code, which forward mode transforms again (second
    derivatives) and reverse mode does not.
    """

    name: str
    node: gast.FunctionDef
    filename: str
    namespace: Mapping[str, Any]
    key: Any
    params: list[str] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)
    generated: bool = False  # s2s_ad's own gradient code: forward mode only (higher_order)

    def location(self, node: gast.AST) -> Location:
        """The file location of ``node`` (1-based column)."""
        return Location(self.filename, getattr(node, "lineno", self.node.lineno),
                        getattr(node, "col_offset", 0) + 1)


@dataclass(frozen=True, eq=False)
class GlobalRead:
    """A module global or closure variable a function reads by name: its value is read
    at every call and passed to the generated code as an argument, so rebinding it,
    or changing an array it holds in place, is seen as the original function sees it.
    """

    namespace: Mapping[str, Any]
    name: str

    @property
    def key(self) -> tuple[int, str]:
        return id(self.namespace), self.name

    def value(self) -> Any:
        """The variable's value now; a list of numbers as a tuple (Numba types a
        tuple of numbers; the list's items are read again at every call)."""
        try:
            value = self.namespace[self.name]
        except KeyError:
            raise NameError(f"name '{self.name}' is not defined (it was when the "
                            "function was differentiated)") from None
        return tuple(value) if type(value) is list and numbers_sequence(value) else value


def numbers_sequence(value: Any) -> bool:
    """Whether ``value`` is a tuple or list of plain numbers (module constants such
    as ``GAINS = [1.0, 2.0]``), read like a number global."""
    return (type(value) in (tuple, list) and len(value) > 0
            and all(isinstance(v, bool | int | float | np.integer | np.floating)
                    for v in value))


@dataclass(frozen=True)
class LocalFunction:
    """A ``def`` or lambda inside a differentiated function, lifted to the top.

    Calls pass the free variables it reads from the enclosing function as extra
    arguments, after the declared ones.  ``defaults`` pairs a parameter with the
    atom (a constant, or a variable set where the ``def`` runs) a call that
    leaves it out passes.
    """

    parsed: ParsedFunction
    free: tuple[str, ...]
    defaults: tuple[tuple[str, Any], ...] = ()
