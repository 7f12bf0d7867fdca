"""The tangent registry (kernel name -> tangent), forward mode's twin of the gradient registry.

A tangent is registered per kernel name, as a gradient is (JAX's ``defjvp``,
TensorFlow.js's registries).  When forward mode meets ``run_kernel(name,
*inputs, **attrs)``, it runs the kernel, then ``tangent_fn(inputs, tangents,
**attrs)``, which returns the tangent of the output: ``inputs`` is the tuple of
the kernel's inputs and ``tangents`` the tuple of their tangents, a zero array
(or 0.0) for a float input that carries none and ``None`` for an integer input
(labels, indices)::

    >>> import numpy as np
    >>> from s2s_ad.kernels.registry import register_kernel, unregister_kernel
    >>> register_kernel("cube", "numpy", lambda x: x ** 3)
    >>> register_tangent("cube", lambda inputs, tangents: 3.0 * inputs[0] ** 2 * tangents[0])
    >>> tangent_of("cube").tangent_fn((2.0,), (1.0,))
    12.0
    >>> unregister_tangent("cube"); unregister_kernel("cube", "numpy")

A kernel linear in each of some inputs (``matmul``, ``conv2d``: bilinear) needs
no function: ``register_tangent("matmul", linear_in=(0, 1))`` makes the tangent
the sum of the kernel applied with one input replaced by its tangent,
``matmul(t_a, b) + matmul(a, t_b)``, with a term only for the inputs that carry one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from s2s_ad.kernels.registry import fingerprint
from s2s_ad.registry import Table


@dataclass(frozen=True)
class Tangent:
    """A registered tangent: ``tangent_fn``, or the inputs the kernel is linear in."""

    name: str
    tangent_fn: Callable | None
    linear_in: tuple[int, ...] | None = None

    def linear_positions(self, n_inputs: int) -> list[int]:
        """The input positions the kernel is linear in, for a call with ``n_inputs``."""
        positions = self.linear_in or ()
        bad = [i for i in positions if not -n_inputs <= i < n_inputs]
        if bad:
            raise ValueError(f"the tangent of kernel {self.name!r} is linear in input "
                             f"{bad[0]}, but the call passes {n_inputs} input(s)")
        return sorted({i % n_inputs for i in positions})

    def fingerprint(self) -> str:
        """Six hex digits naming ``tangent_fn`` (see :func:`registry.fingerprint`)."""
        if getattr(self.tangent_fn, "numba_form", None) is not None:
            return self.tangent_fn.fingerprint()
        return fingerprint(self.tangent_fn)


_tangents = Table("kernel tangents")  # kernel name -> its Tangent


def register_tangent(name: str, tangent_fn: Callable | None = None, *,
                     linear_in: Sequence[int] | None = None) -> None:
    """Register the tangent of kernel ``name`` for forward mode (``ad.jvp``,
    ``ad.jacobian(mode="forward")``).

    Either ``tangent_fn(inputs, tangents, **attrs)``, returning the output's tangent
    (see the module docstring for what ``tangents`` holds), or ``linear_in``, the
    positions of the inputs the kernel is linear in (each separately: the tangent is
    the sum over them of the kernel with that input replaced by its tangent; a tangent
    reaching another input is then refused).  Registering again replaces the
    tangent, with a warning.  On the Numba path the tangent code calls ``tangent_fn``
    compiled when it is a Numba dispatcher (or a
    :class:`~s2s_ad.kernels.registry.KernelOp` with a "numba" kernel), and the
    kernel itself for ``linear_in``.

    >>> register_tangent("scale", linear_in=(0,))
    >>> tangent_of("scale").linear_in
    (0,)
    >>> unregister_tangent("scale")
    """
    if (tangent_fn is None) == (linear_in is None):
        raise TypeError(f"register_tangent({name!r}): give either tangent_fn or linear_in")
    if tangent_fn is not None and not callable(tangent_fn):
        raise TypeError(f"register_tangent({name!r}): tangent_fn must be callable, "
                        f"got {type(tangent_fn).__name__}")
    positions = None if linear_in is None else tuple(linear_in)
    if positions is not None and not (positions and all(isinstance(i, int) for i in positions)):
        raise TypeError(f"register_tangent({name!r}): linear_in holds input positions "
                        f"(ints), got {linear_in!r}")
    if name in _tangents:
        warnings.warn(f"a tangent of kernel {name!r} was already registered; the new one "
                      "replaces it", UserWarning, stacklevel=2)
    _tangents[name] = Tangent(name, tangent_fn, positions)


def unregister_tangent(name: str) -> None:
    """Remove the tangent of kernel ``name`` (KeyError if none).

    >>> unregister_tangent("no such kernel")
    Traceback (most recent call last):
    KeyError: "no tangent is registered for kernel 'no such kernel'"
    """
    if name not in _tangents:
        raise KeyError(f"no tangent is registered for kernel {name!r}")
    del _tangents[name]


def tangent_of(name: str) -> Tangent | None:
    """The tangent registered for kernel ``name``, if any."""
    return _tangents.get(name)


def list_tangents() -> dict[str, Tangent]:
    """Every registered tangent, by kernel name."""
    return dict(sorted(_tangents))
