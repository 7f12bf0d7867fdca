"""Markers in user code: stop-gradient, derivative hooks and custom derivatives.

``without_derivative(v)`` and ``with_derivative(v, hook)`` return ``v``; the
compiler reads them as a cut and as a hook.  ``@derivative(of=f)`` registers a
derivative in Swift's form, a function returning ``(value, pullback)``, and
``@derivative(of=f, mode="forward")`` one returning ``(value, differential)``::

    @derivative(of=silly_exp)
    def silly_derivative(x):
        y = silly_exp(x)
        return y, lambda v: v * y

    @derivative(of=silly_exp, mode="forward")
    def silly_differential(x):
        y = silly_exp(x)
        return y, lambda dx: y * dx

This module only records what the user marked; the compiler
(:mod:`s2s_ad.compiler.custom`) splits registered derivatives into forward and
pullback (or differential) code.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from s2s_ad.registry import Table


def without_derivative(value: Any) -> Any:
    """Return ``value``; no derivative flows back through it (in forward mode its
    tangent is zero), and no warning is given.

    >>> without_derivative(3.0)
    3.0
    """
    return value


def with_derivative(value: Any, hook: Callable[[Any], Any]) -> Any:
    """Return ``value``; in the pullback ``hook(cotangent)`` runs on its cotangent.

    The hook runs once the cotangent of ``value`` is complete (hooks run in
    reverse program order).  If it returns something other than ``None``, that
    replaces the cotangent; array cotangents may also be changed in place.

    Forward mode (``jvp``, ``jacobian(mode="forward")``) has no cotangents, so it
    refuses a hook on a differentiated value with a located
    ``NonDifferentiableError`` rather than skip it: a hook that rewrites the
    cotangent (clipping, rescaling) would make the two modes disagree.

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
    mode: str = "reverse"  # "reverse": (value, pullback); "forward": (value, differential)

    def positions(self, nargs: int) -> list[int]:
        return list(self.wrt) if self.wrt is not None else list(range(nargs))


_registry = Table("derivatives")  # a function -> its CustomDerivative (a pullback)
_differentials = Table("differentials")  # a function -> its CustomDerivative (a differential)
_MODES = {"reverse": _registry, "forward": _differentials}


def _register(of: Any, entry: CustomDerivative) -> None:
    _MODES[entry.mode][of] = entry


def derivative(of: Any, wrt: Iterable[str] | None = None, mode: str = "reverse") -> Callable:
    """Register the decorated function as the derivative of ``of``.

    With ``mode="reverse"`` (the default) the derivative takes the same arguments
    and returns ``(value, pullback)``; ``pullback(cotangent)`` returns the
    cotangent of the differentiated parameter (a tuple when there are several).
    With ``mode="forward"`` it returns ``(value, differential)`` (Swift's
    ``differential:``); ``differential(*tangents)``, given one tangent per
    differentiated parameter, returns the tangent of the value: forward mode
    (``jvp``, ``jacobian(mode="forward")``) uses it.  A function may have one of
    each.  ``wrt`` names the parameters it differentiates (default: all).  A
    registration wins over differentiating ``of``'s source; registering again for
    the same mode replaces the old one with a warning.

    >>> import math
    >>> def cube(x):
    ...     return x ** 3
    >>> @derivative(of=cube)
    ... def cube_vjp(x):
    ...     return cube(x), lambda v: 3.0 * x * x * v
    """

    if mode not in _MODES:
        raise ValueError(f"@derivative(of={getattr(of, '__name__', of)}): mode must be "
                         f"'reverse' or 'forward', not {mode!r}")

    def register(fn: Callable) -> Callable:
        positions = None
        if wrt is not None:
            names = list(getattr(getattr(of, "__code__", None), "co_varnames", ()))
            unknown = [w for w in wrt if w not in names]
            if unknown:
                raise ValueError(f"@derivative(of={getattr(of, '__name__', of)}): wrt names "
                                 f"{unknown} that are not parameters")
            positions = tuple(names.index(w) for w in wrt)
        if of in _MODES[mode]:
            what = "derivative" if mode == "reverse" else "differential (forward mode)"
            warnings.warn(f"a {what} of {getattr(of, '__name__', of)!r} was already "
                          f"registered; {fn.__name__!r} replaces it", UserWarning, stacklevel=2)
        _register(of, CustomDerivative(of=of, derivative=fn, wrt=positions, mode=mode))
        return fn

    return register


def custom_derivative(obj: Any, mode: str = "reverse") -> CustomDerivative | None:
    """The registered derivative of ``obj`` for ``mode`` ("reverse": its pullback form,
    "forward": its differential form), if any."""
    return _MODES[mode].get(obj)


class FunctionWithVJP:
    """A function built by :func:`differentiable_function`: calling it runs the
    vector-Jacobian product and returns its value."""

    def __init__(self, vjp: Callable):
        self.vjp = vjp
        functools.update_wrapper(self, vjp)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.vjp(*args, **kwargs)[0]

    def __repr__(self) -> str:
        return f"<differentiable_function of {getattr(self.vjp, '__qualname__', self.vjp)}>"


def differentiable_function(vjp: Callable) -> FunctionWithVJP:
    """The differentiable function whose derivative is ``vjp`` (any arity).

    ``vjp(*args)`` returns ``(value, pullback)``, as a ``@derivative`` does;
    ``pullback(cotangent)`` returns the cotangent of the argument (a tuple for
    several).  Inside it, ``ad.pullback`` and the other transforms may be used.

    >>> import math
    >>> cube = differentiable_function(lambda x: (x ** 3, lambda v: 3.0 * x * x * v))
    >>> cube(2.0)
    8.0
    """
    fn = FunctionWithVJP(vjp)
    _register(fn, CustomDerivative(of=fn, derivative=vjp, wrt=None))
    return fn


class RecomputedFunction:
    """A function whose intermediates the pullback recomputes (see
    :func:`recompute_in_pullback`)."""

    def __init__(self, fn: Callable):
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<recompute_in_pullback of {getattr(self.fn, '__qualname__', self.fn)}>"


def recompute_in_pullback(fn: Callable) -> RecomputedFunction:
    """``fn``, differentiated so that its forward run keeps none of its intermediates:
    the pullback runs ``fn``'s forward again from its arguments (checkpointing,
    Swift's ``withRecomputationInPullbacks``).  Usable as a decorator; side effects
    in ``fn`` happen again in the pullback.

    >>> @recompute_in_pullback
    ... def layer(x):
    ...     return x * x
    >>> layer(3.0)
    9.0
    """
    if isinstance(fn, RecomputedFunction):
        return fn
    return RecomputedFunction(fn)


def source_function(fn: Any) -> Any:
    """The Python function whose source stands for ``fn`` (the VJP of a
    :func:`differentiable_function`, the function of a :func:`recompute_in_pullback`)."""
    if isinstance(fn, FunctionWithVJP):
        return fn.vjp
    if isinstance(fn, RecomputedFunction):
        return fn.fn
    return fn
