"""The kernel registry: ``(kernel name, backend) -> implementation``, and the active backend.

As in TensorFlow.js, an *op* is a Python function on arrays, and a *kernel* is
one backend's implementation of it.  ``run_kernel`` calls the active backend's
kernel::

    >>> import numpy as np
    >>> register_kernel("twice", "numpy", lambda x: 2.0 * x)
    >>> with backend("numpy"):
    ...     run_kernel("twice", np.ones(2))
    array([2., 2.])
    >>> unregister_kernel("twice", "numpy")

``run_kernel`` is a callable object rather than a function so that the compiler
treats its calls as primitives (differentiated with the registered gradient),
never as Python source to differentiate.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import marshal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from s2s_ad.registry import Table

BACKENDS = ("numpy", "numba")

_kernels = Table("kernels")  # (name, backend) -> the kernel function
_output_ndim: dict[str, int | None] = {}
_state = threading.local()
_default = {"backend": "numba"}


def _check_backend(backend: str) -> str:
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    return backend


def register_kernel(name: str, backend: str, fn: Callable, output_ndim: int | None = None) -> None:
    """Register ``fn`` as the ``backend`` implementation of kernel ``name``.

    ``fn(*inputs, **attrs)`` returns the kernel's output and must not change its
    inputs (differentiated code keeps them for the gradient).  ``output_ndim`` is the
    number of dimensions of that output (0 for a number); ``None`` means "as
    the first input", which suits element-wise kernels.  The compiler needs it
    to know what a call returns before running it.

    >>> register_kernel("negate", "numpy", lambda x: -x)
    >>> ("negate", "numpy") in list_kernels()
    True
    >>> unregister_kernel("negate", "numpy")
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_kernel: the kernel name must be a non-empty str, got {name!r}")
    _check_backend(backend)
    if not callable(fn):
        raise TypeError(f"register_kernel({name!r}, {backend!r}): fn must be callable, "
                        f"got {type(fn).__name__}")
    _kernels[(name, backend)] = fn
    if output_ndim is not None or name not in _output_ndim:
        _output_ndim[name] = output_ndim


def unregister_kernel(name: str, backend: str) -> None:
    """Remove the ``backend`` implementation of kernel ``name`` (KeyError if none).

    >>> unregister_kernel("no such kernel", "numpy")
    Traceback (most recent call last):
    KeyError: "no kernel 'no such kernel' is registered for backend 'numpy'"
    """
    if (name, _check_backend(backend)) not in _kernels:
        raise KeyError(f"no kernel {name!r} is registered for backend {backend!r}")
    del _kernels[(name, backend)]
    if not backends_of(name):
        _output_ndim.pop(name, None)


def backends_of(name: str) -> list[str]:
    """The backends that have a kernel ``name``, in :data:`BACKENDS` order."""
    return [b for b in BACKENDS if (name, b) in _kernels]


def output_ndim(name: str) -> int | None:
    """The declared output rank of kernel ``name`` (None: as its first input)."""
    return _output_ndim.get(name)


def list_kernels() -> dict[tuple[str, str], Callable]:
    """Every registered kernel: ``{(name, backend): fn}``, by name, then backends in
    :data:`BACKENDS` order."""
    return dict(sorted(_kernels, key=lambda item: (item[0][0], BACKENDS.index(item[0][1]))))


def get_backend() -> str:
    """The active backend ("numba" unless :func:`set_backend` or :func:`backend` chose
    another).

    >>> get_backend() in BACKENDS
    True
    """
    return getattr(_state, "backend", None) or _default["backend"]


def set_backend(name: str) -> None:
    """Make ``name`` ("numpy" or "numba") the active backend (for this process; a
    :func:`backend` block overrides it in its thread)."""
    _default["backend"] = _check_backend(name)


@contextlib.contextmanager
def backend(name: str) -> Iterator[str]:
    """Run a block with ``name`` as the active backend (in this thread).

    >>> with backend("numpy"):
    ...     get_backend()
    'numpy'
    """
    previous = getattr(_state, "backend", None)
    _state.backend = _check_backend(name)
    try:
        yield name
    finally:
        _state.backend = previous


def kernel_for(name: str, backend_name: str | None = None) -> Callable:
    """The kernel ``name`` of ``backend_name`` (default: the active backend), or a
    LookupError naming the kernel, the backend and the backends that have it."""
    chosen = backend_name or get_backend()
    fn = _kernels.get((name, chosen))
    if fn is not None:
        return fn
    have = backends_of(name)
    where = (f"it is registered for: {', '.join(have)}" if have
             else "no backend has it (register it with ad.register_kernel)")
    raise LookupError(f"no kernel {name!r} for the active backend {chosen!r}; {where}")


class KernelRunner:
    """The type of :data:`run_kernel`."""

    __name__ = "run_kernel"

    def __call__(self, name: str, *inputs: Any, **attrs: Any) -> Any:
        """Run kernel ``name`` of the active backend on ``inputs`` with ``attrs``.

        >>> import numpy as np
        >>> float(run_kernel("matmul", np.eye(2), np.ones((2, 1)))[1, 0])
        1.0
        """
        return kernel_for(name)(*inputs, **attrs)

    def __repr__(self) -> str:
        return "<s2s_ad.run_kernel>"


run_kernel = KernelRunner()


@dataclass(frozen=True)
class KernelOp:
    """The op that runs kernel ``name``: in Python on the active backend; in code
    compiled by Numba, the "numba" backend's kernel (the compiler binds it).

    >>> import numpy as np
    >>> KernelOp("matmul")(np.eye(2), np.eye(2)).shape
    (2, 2)
    """

    name: str

    @property
    def __name__(self) -> str:
        return self.name

    def __call__(self, *inputs: Any, **attrs: Any) -> Any:
        return kernel_for(self.name)(*inputs, **attrs)

    def numba_form(self) -> Any:
        """The object compiled code calls: the "numba" kernel, if Numba can call it."""
        fn = _kernels.get((self.name, "numba"))
        return fn if fn is not None and hasattr(fn, "py_func") else None

    def why_not_numba(self) -> str:
        """Why compiled code cannot run this kernel ("" when it can)."""
        if self.numba_form() is not None:
            return ""
        if (self.name, "numba") in _kernels:
            return (f"the 'numba' kernel {self.name!r} is not a Numba-compiled function "
                    "(decorate it with @numba.njit)")
        return (f"kernel {self.name!r} has no 'numba' implementation (registered for: "
                f"{', '.join(backends_of(self.name)) or 'none'})")

    def fingerprint(self) -> str:
        """A short hash of the "numba" kernel's identity and source, so generated code
        that binds another kernel gets another name (and Numba's disk cache no stale hit)."""
        return fingerprint(_kernels.get((self.name, "numba")))


_ops: dict[str, KernelOp] = {}


def kernel_op(name: str) -> KernelOp:
    """The :class:`KernelOp` of kernel ``name`` (one object per name)."""
    if name not in _ops:
        _ops[name] = KernelOp(name)
    return _ops[name]


def fingerprint(fn: Any) -> str:
    """Six hex digits identifying ``fn`` by module, qualified name, code and source: the
    source of its whole module where there is one, so a change in a helper it calls
    (which compiled code holds too) changes the fingerprint."""
    if fn is None:
        return "none"
    target = getattr(fn, "py_func", fn)
    module = inspect.getmodule(target)
    try:
        text = inspect.getsource(module if module is not None else target)
    except (OSError, TypeError):
        try:
            text = inspect.getsource(target)
        except (OSError, TypeError):
            text = repr(target)
    ident = f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', '')}"
    code = _code_bytes(target)
    return hashlib.sha256(f"{ident}\n{text}".encode() + code).hexdigest()[:6]


def _code_bytes(fn: Any) -> bytes:
    """``fn``'s code with its constants and position (two lambdas of one module differ),
    the same in every process; empty for objects without code."""
    code = getattr(fn, "__code__", None)
    try:
        return marshal.dumps(code) if code is not None else b""
    except ValueError:
        return repr(code).encode()
