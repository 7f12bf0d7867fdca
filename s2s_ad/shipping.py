"""Generated code shipped to another process: what :mod:`s2s_ad.distributed` sends to
Dask workers, which may not have the user's file.

A :class:`ShippedFunction` holds the generated modules of one transform (its own and
those of the functions it calls, dependencies first) as source text, with what
their free names are bound to (NumPy functions and the like, pickled by reference)
and how they link to each other.  A worker writes each module to its own cache
directory under the same content-addressed name (so Numba's disk cache is shared
where the filesystem is) and loads it once per process (:func:`loaded`); then
:func:`run_partition` calls the fused value-and-gradient function on one partition.

>>> import numpy as np
>>> def loss(weights, part):
...     return float(np.sum((part @ weights) ** 2))
>>> weights, part = np.ones(2), np.arange(6.0).reshape(3, 2)
>>> shipped = shipped_function(prepared(loss, weights, part), part, jit=False)
>>> run_partition(shipped, weights, part, (), 0)
(107.0, array([ 92., 122.]))
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .api import DifferentiableFunction, as_differentiable
from .argument_memory import copied
from .arguments import checked
from .boundary import cast_like
from .compiler.emit import digest
from .compiler.jit import GeneratedModule, write_module
from .compiler.pipeline import Transform
from .errors import ArgumentError, JitError, NonDifferentiableError
from .kinds import Kind, kind_of_value
from .structures import has_structure, leaves
from .tracebacks import add_location_note

_ROLES = ("primal", "forward", "pullback")


@dataclass(frozen=True)
class ShippedModule:
    """One generated module as text: ``stem`` is its file name (``<name>_<hash>``);
    ``links`` are ``(bound name, module stem, function name)`` of its callees."""

    stem: str
    source: str
    functions: tuple[str, ...]
    python_only: str
    externals: dict[str, Any]
    links: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class ShippedFunction:
    """The fused function ``name`` of the last of ``modules`` (dependencies first), as
    a worker runs it on ``(params, partition, *globals)``."""

    name: str
    modules: tuple[ShippedModule, ...]
    jit: bool | str
    origin: str  # the user's file:line of the loss
    structured: bool  # an argument holds a structure: pass its leaves
    written: tuple[int, ...]  # arguments the generated code writes into
    part_kind: Kind  # the kind every partition must have
    key: str = field(default="")  # the hash of every module's source


def prepared(loss: Any, params: Any, sample: Any) -> Transform:
    """The transform of ``loss(params, part)`` differentiated in ``params``, for
    partitions like ``sample`` (not compiled here: workers compile it)."""
    df = as_differentiable(loss, wrt=(0,))
    t = df.prepare((params, sample))
    if t.parsed.generated:
        raise NonDifferentiableError(
            "reverse mode through generated gradient code is not supported",
            t.parsed.location(t.parsed.node), "distribute a loss written by hand")
    if t.reverse_refusal is not None:
        raise t.reverse_refusal
    checked(df, "gradient", t, (params, sample))  # a number, params differentiated
    return t


def _modules(t: Transform, out: dict[str, ShippedModule]) -> None:
    """Add the modules of ``t``'s callees, then ``t``'s own, to ``out`` (by stem)."""
    stem = t.module.path.stem
    if stem in out:
        return
    links = []
    for link in t.generated.links:
        _modules(link.transform, out)
        callee = link.transform.module.path.stem
        links += [(getattr(link, role), callee, getattr(link.transform.generated, role).name)
                  for role in _ROLES]
    out[stem] = ShippedModule(stem, t.module.source, tuple(t.module.functions),
                              t.module.python_only, dict(t.generated.externals), tuple(links))


def shipped_function(t: Transform, sample: Any, jit: bool | str) -> ShippedFunction:
    """What a worker needs to run ``t``'s fused function on partitions like ``sample``."""
    found: dict[str, ShippedModule] = {}
    _modules(t, found)
    modules = tuple(found.values())
    return ShippedFunction(t.generated.fused.name, modules, jit,
                           f"{t.parsed.filename}:{t.parsed.node.lineno}", t.structured,
                           t.written_positions, kind_of_value(sample),
                           digest("".join(m.source for m in modules)))


def check_sendable(shipped: ShippedFunction, dumps: Callable[[Any], bytes]) -> None:
    """An ArgumentError naming what the generated code calls that ``dumps`` (the
    cluster's pickler) cannot send to another process (a ctypes function)."""
    for m in shipped.modules:
        for name, obj in m.externals.items():
            try:
                dumps(obj)
            except Exception as exc:  # whatever the pickler raises
                raise ArgumentError(
                    f"{m.stem.rsplit('_', 1)[0]} (called by {shipped.origin}) calls {name}, "
                    f"a {type(obj).__name__} that cannot be sent to another process "
                    f"({exc}); s2s_ad.distributed sends workers the generated code and "
                    "what it calls: keep such objects out of a distributed loss") from None


def jit_option(loss: Any) -> bool | str:
    """The ``jit`` option of ``loss`` (``"auto"`` for a plain function)."""
    return loss.jit if isinstance(loss, DifferentiableFunction) else "auto"


# -- on the worker ---------------------------------------------------------------------
_LOADED: dict[str, GeneratedModule] = {}  # per process, by stem (which holds the hash)
_loading = threading.Lock()


def _binder(shipped: ShippedModule, path: str):
    """The objects the module's free names are bound to on ``path`` (as in linking)."""
    def bind() -> dict[str, Any]:
        out = {name: _numba_form(obj) if path == "numba" else obj
               for name, obj in shipped.externals.items()}
        for bound, stem, fn in shipped.links:
            module = _LOADED[stem]
            out[bound] = module.python(fn) if path == "python" else module.numba(fn)
        return out
    return bind


def _numba_form(obj: Any) -> Any:
    form = getattr(obj, "numba_form", None)
    return obj if form is None else form()


def loaded(shipped: ShippedFunction) -> GeneratedModule:
    """The module of ``shipped``'s function in this process, written and bound once."""
    with _loading:
        for m in shipped.modules:
            if m.stem not in _LOADED:
                name, source_hash = m.stem.rsplit("_", 1)
                path = write_module(name, m.source, source_hash)
                _LOADED[m.stem] = GeneratedModule(
                    path, m.source, list(m.functions), _binder(m, "python"),
                    _binder(m, "numba"), python_only=m.python_only)
        return _LOADED[shipped.modules[-1].stem]


def _callable(shipped: ShippedFunction, module: GeneratedModule, args: tuple) -> Any:
    if shipped.jit is False:
        return module.python(shipped.name)
    with _loading:  # one compile at a time per process
        fn, reason = module.compiled(shipped.name, args)
    if fn is None:
        if shipped.jit is True:
            raise JitError(f"Numba cannot compile {shipped.name} (generated from "
                           f"{shipped.origin}) on this worker: {reason}")
        return module.python(shipped.name)
    return fn


def run_partition(shipped: ShippedFunction, params: Any, part: Any, global_values: tuple,
                  index: int) -> tuple[Any, Any]:
    """``(value, gradient)`` of the loss at ``params`` on partition number ``index``."""
    kind = kind_of_value(part)
    if kind != shipped.part_kind:
        raise ArgumentError(f"partition {index} holds a value of kind {kind!r}, but the "
                            f"first partition one of kind {shipped.part_kind!r}")
    module = loaded(shipped)
    args = (params, part)
    if shipped.structured:
        args = tuple(leaves(a) if has_structure(a) else a for a in args)
    args = copied(args, keep=set(range(2)) - set(shipped.written)) + tuple(global_values)
    fn = _callable(shipped, module, args)
    try:
        value, raw = fn(*args)
    except Exception as exc:
        _locate(exc, shipped, module, fn, args)
        exc.add_note(f"s2s_ad.distributed: raised on partition {index}")
        raise
    return value, cast_like(raw[0], params)


def _locate(exc: Exception, shipped: ShippedFunction, module: GeneratedModule, fn: Any,
            args: tuple) -> None:
    """Add the user's line to ``exc``; compiled code has no frames, so it runs the same
    partition again in Python to find the line (the error path only)."""
    note = "s2s_ad: raised by"
    if fn is module.python(shipped.name):
        add_location_note(exc, module.path.parent, shipped.name, False, shipped.origin)
        return
    try:
        module.python(shipped.name)(*copied(args))
    except Exception as again:
        add_location_note(again, module.path.parent, shipped.name, False, shipped.origin)
        found = [n for n in getattr(again, "__notes__", []) if n.startswith(note)]
        if found:
            exc.add_note(found[0])
            return
    add_location_note(exc, module.path.parent, shipped.name, True, shipped.origin)


def add_values(first: Any, second: Any) -> Any:
    """The sum of two values or gradients of the same structure (tuples item by item)."""
    if isinstance(first, tuple):
        return tuple(add_values(a, b) for a, b in zip(first, second, strict=True))
    return first + second

