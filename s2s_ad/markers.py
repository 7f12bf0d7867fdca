"""Markers in user code: stop-gradient, derivative hooks and custom derivatives.

``without_derivative(v)`` and ``with_derivative(v, hook)`` return ``v``; the
compiler reads them as a cut and as a hook.  ``@derivative(of=f)`` registers a
derivative in Swift's form, a function returning ``(value, pullback)``::

    @derivative(of=silly_exp)
    def silly_derivative(x):
        y = silly_exp(x)
        return y, lambda v: v * y

This module only records what the user marked; the compiler
(:mod:`s2s_ad.compiler.custom`) splits registered derivatives into forward and
pullback code.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


def without_derivative(value: Any) -> Any:
    """Return ``value``; no derivative flows back through it, and no warning is given.

    >>> without_derivative(3.0)
    3.0
    """
    return value


def with_derivative(value: Any, hook: Callable[[Any], Any]) -> Any:
    """Return ``value``; in the pullback ``hook(cotangent)`` runs on its cotangent.

    The hook runs once the cotangent of ``value`` is complete (hooks run in
    reverse program order).  If it returns something other than ``None``, that
    replaces the cotangent; array cotangents may also be changed in place.

    >>> with_derivative(2.0, print)
    2.0
    """
    return value


@dataclass
class CustomDerivative:
    """A registered derivative: the function, its derivative, and the parameters."""

    of: Any
    derivative: Callable
    wrt: tuple[int, ...] | None  # positions differentiated; None: all

    def positions(self, nargs: int) -> list[int]:
        return list(self.wrt) if self.wrt is not None else list(range(nargs))


_registry: dict[int, CustomDerivative] = {}


def derivative(of: Any, wrt: Iterable[str] | None = None) -> Callable:
    """Register the decorated function as the derivative of ``of``.

    The derivative takes the same arguments and returns ``(value, pullback)``;
    ``pullback(cotangent)`` returns the cotangent of the differentiated
    parameter (a tuple when there are several).  ``wrt`` names the parameters
    it differentiates (default: all).  A registration wins over differentiating
    ``of``'s source; registering again replaces the old one with a warning.

    >>> import math
    >>> def cube(x):
    ...     return x ** 3
    >>> @derivative(of=cube)
    ... def cube_vjp(x):
    ...     return cube(x), lambda v: 3.0 * x * x * v
    """

    def register(fn: Callable) -> Callable:
        positions = None
        if wrt is not None:
            names = list(getattr(getattr(of, "__code__", None), "co_varnames", ()))
            unknown = [w for w in wrt if w not in names]
            if unknown:
                raise ValueError(f"@derivative(of={getattr(of, '__name__', of)}): wrt names "
                                 f"{unknown} that are not parameters")
            positions = tuple(names.index(w) for w in wrt)
        if id(of) in _registry and _registry[id(of)].of is of:
            warnings.warn(f"a derivative of {getattr(of, '__name__', of)!r} was already "
                          f"registered; {fn.__name__!r} replaces it", UserWarning, stacklevel=2)
        entry = CustomDerivative(of=of, derivative=fn, wrt=positions)
        _registry[id(of)] = entry
        return fn

    return register


def custom_derivative(obj: Any) -> CustomDerivative | None:
    """The registered derivative of ``obj``, if any."""
    entry = _registry.get(id(obj))
    return entry if entry is not None and entry.of is obj else None
