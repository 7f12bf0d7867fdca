"""The gradient registry (kernel name -> gradient) and ``custom_grad``.

A gradient is registered per kernel name, as in TensorFlow.js.  When the
transform meets ``run_kernel(name, *inputs, **attrs)``, the forward keeps the
inputs listed in ``inputs_to_save`` (and the output if ``outputs_to_save``), and
the pullback calls ``grad_fn(dy, saved, **attrs)``, which returns the
cotangent of each input (the cotangent itself when the kernel has one input)::

    >>> import numpy as np
    >>> from s2s_ad.kernels.registry import register_kernel, unregister_kernel
    >>> register_kernel("cube", "numpy", lambda x: x ** 3)
    >>> register_gradient("cube", lambda dy, saved: 3.0 * saved[0] ** 2 * dy)
    >>> gradient_of("cube").grad_fn(1.0, (2.0,))
    12.0
    >>> unregister_gradient("cube"); unregister_kernel("cube", "numpy")
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from s2s_ad.kernels.registry import fingerprint, list_kernels
from s2s_ad.kernels.tangents import Tangent, list_tangents
from s2s_ad.markers import derivative
from s2s_ad.registry import Table


@dataclass(frozen=True)
class Gradient:
    """A registered gradient: ``grad_fn`` and which values the forward keeps for it."""

    name: str
    grad_fn: Callable
    inputs_to_save: tuple[int, ...] | None  # input positions; None: every input
    outputs_to_save: bool

    def saved_positions(self, n_inputs: int) -> list[int]:
        """Positions of the inputs saved for the gradient, for a call with ``n_inputs``."""
        if self.inputs_to_save is None:
            return list(range(n_inputs))
        bad = [i for i in self.inputs_to_save if not -n_inputs <= i < n_inputs]
        if bad:
            raise ValueError(f"the gradient of kernel {self.name!r} saves input {bad[0]}, "
                             f"but the call passes {n_inputs} input(s)")
        return [i % n_inputs for i in self.inputs_to_save]

    def fingerprint(self) -> str:
        """Six hex digits naming ``grad_fn`` (see :func:`registry.fingerprint`)."""
        form = getattr(self.grad_fn, "numba_form", None)
        if form is not None:
            return self.grad_fn.fingerprint()
        return fingerprint(self.grad_fn)


_gradients = Table("kernel gradients")  # kernel name -> its Gradient


def register_gradient(name: str, grad_fn: Callable, inputs_to_save: Sequence[int] | None = None,
                      outputs_to_save: bool = False) -> None:
    """Register ``grad_fn(dy, saved, **attrs)`` as the gradient of kernel ``name``.

    ``saved`` is the tuple of the inputs at positions ``inputs_to_save``
    (default: all inputs, in order), followed by the kernel's output when
    ``outputs_to_save`` is true.  ``grad_fn`` returns one cotangent per input
    (just the cotangent for a one-input kernel); the cotangents of inputs that
    are not differentiated (integer labels) are ignored and may be ``None``.
    Registering again replaces the gradient, with a warning.  On the Numba path
    the pullback calls ``grad_fn`` compiled when it is a Numba dispatcher (or a
    :class:`~s2s_ad.kernels.registry.KernelOp` with a "numba" kernel).

    >>> register_gradient("id", lambda dy, saved: dy)
    >>> register_gradient("id", lambda dy, saved: 1.0 * dy)  # doctest: +SKIP
    UserWarning: a gradient of kernel 'id' was already registered; ...
    >>> unregister_gradient("id")
    """
    if not callable(grad_fn):
        raise TypeError(f"register_gradient({name!r}): grad_fn must be callable, "
                        f"got {type(grad_fn).__name__}")
    positions = None if inputs_to_save is None else tuple(inputs_to_save)
    if positions is not None and not all(isinstance(i, int) for i in positions):
        raise TypeError(f"register_gradient({name!r}): inputs_to_save holds input positions "
                        f"(ints), got {inputs_to_save!r}")
    if name in _gradients:
        warnings.warn(f"a gradient of kernel {name!r} was already registered; "
                      f"{getattr(grad_fn, '__name__', 'the new one')!r} replaces it",
                      UserWarning, stacklevel=2)
    _gradients[name] = Gradient(name, grad_fn, positions, bool(outputs_to_save))


def unregister_gradient(name: str) -> None:
    """Remove the gradient of kernel ``name`` (KeyError if none).

    >>> unregister_gradient("no such kernel")
    Traceback (most recent call last):
    KeyError: "no gradient is registered for kernel 'no such kernel'"
    """
    if name not in _gradients:
        raise KeyError(f"no gradient is registered for kernel {name!r}")
    del _gradients[name]


def gradient_of(name: str) -> Gradient | None:
    """The gradient registered for kernel ``name``, if any."""
    return _gradients.get(name)


def list_gradients() -> dict[str, Gradient]:
    """Every registered gradient, by kernel name."""
    return dict(sorted(_gradients))


class CustomGradFunction:
    """A function whose derivative is given by ``custom_grad`` (see there)."""

    def __init__(self, f: Callable):
        self.f = f
        self.__name__ = getattr(f, "__name__", "custom_grad_function")
        self.__doc__ = getattr(f, "__doc__", None)

    def __call__(self, *inputs: Any) -> Any:
        return self.f(*inputs, _discard)[0]

    def vjp(self, *inputs: Any) -> tuple[Any, Callable]:
        """``(value, pullback)``: ``pullback(dy)`` calls ``grad_fn(dy, saved)``."""
        saved: list[Any] = []
        value, grad_fn = self.f(*inputs, lambda *values: saved.extend(values))
        kept = tuple(saved)
        return value, lambda dy: grad_fn(dy, kept)


def _discard(*values: Any) -> None:
    """``save`` when no gradient will be taken."""


def custom_grad(f: Callable) -> CustomGradFunction:
    """A function differentiated through the gradient ``f`` gives, bypassing the registry.

    ``f(*inputs, save)`` calls ``save(...)`` with the values the gradient needs
    and returns ``(value, grad_fn)``; ``grad_fn(dy, saved)`` returns the input
    cotangents (just the cotangent for one input), ``saved`` being the tuple of
    saved values.  Differentiated code calls ``grad_fn`` in Python, and takes the
    value to be of the kind of the first input (a float for a float, an array
    of the same rank for an array).

    >>> import math, s2s_ad as ad
    >>> @custom_grad
    ... def log1pexp(x, save):
    ...     save(x)
    ...     value = x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))
    ...     return value, lambda dy, saved: dy / (1.0 + math.exp(-saved[0]))
    >>> ad.gradient(lambda x: log1pexp(x) * 2.0)(1000.0)
    2.0
    """
    wrapped = CustomGradFunction(f)

    def vjp(*inputs: Any) -> tuple[Any, Callable]:
        return wrapped.vjp(*inputs)

    vjp.__name__ = vjp.__qualname__ = f"{wrapped.__name__}_custom_grad"  # what explain names
    derivative(of=wrapped)(vjp)
    return wrapped


def kernel_table() -> list[str]:
    """One line per registered kernel: its name, its backends, its gradient and its
    tangent (forward mode)."""
    backends: dict[str, list[str]] = {}
    for name, backend in list_kernels():
        backends.setdefault(name, []).append(backend)
    gradients, tangents = list_gradients(), list_tangents()
    rows = [("kernel", "backends", "gradient", "tangent")]
    for name, have in backends.items():
        grad, tangent = gradients.get(name), tangents.get(name)
        rows.append((name, ", ".join(have),
                     getattr(grad.grad_fn, "__name__", repr(grad.grad_fn)) if grad else "-",
                     _tangent_label(tangent)))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c:<{widths[2]}}  {d}".rstrip()
            for a, b, c, d in rows]


def _tangent_label(tangent: Tangent | None) -> str:
    if tangent is None:
        return "-"
    if tangent.tangent_fn is None:
        return "linear in " + ", ".join(map(str, tangent.linear_in))
    return getattr(tangent.tangent_fn, "__name__", repr(tangent.tangent_fn))
