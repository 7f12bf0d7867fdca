"""Emit and bind a generated module: its source with the callees it links to, and
the objects its free names are bound to on the Python and the Numba path.

Also decides what must stay in Python even where Numba would compile it (the
policy ``explain`` reports): f-strings, which Numba prints differently, ints
that can grow without bound (``int_growth``), which Numba's int64 would
overflow, and calls of Python objects Numba cannot call.
"""

from __future__ import annotations

import ctypes
import dataclasses
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from s2s_ad.compiler.emit import digest, module_source
from s2s_ad.compiler.int_growth import growing_int
from s2s_ad.compiler.ir import ParsedFunction
from s2s_ad.compiler.jit import GeneratedModule, write_module
from s2s_ad.compiler.normalize import NormalFunction
from s2s_ad.compiler.primitives import is_library
from s2s_ad.compiler.reverse import Generated
from s2s_ad.compiler.tangent import tangent_function
from s2s_ad.kinds import Kind

_ROLES = ("primal", "forward", "pullback")


def load_module(name: str, parsed: ParsedFunction, normal: NormalFunction,
                kinds: dict[str, Kind], gen: Generated) -> GeneratedModule:
    """Write the generated module of ``name`` and prepare its two loaded forms."""
    fname = parsed.filename
    functions = [(gen.primal, False), (gen.forward, False), (gen.pullback, True),
                 (gen.fused, True)]
    bound = ["List"] + list(gen.externals)
    deps = []
    for link in gen.links:
        bound += [link.primal, link.forward, link.pullback]
        deps.append(link.transform.module.path.stem)
    origin = f"{fname}:{parsed.node.lineno}"
    source = module_source(name, origin, fname, functions, bound, deps)
    path = write_module(name, source, digest(source))
    names = [f.name for f, _ in functions]
    return GeneratedModule(path, source, names, _binder(gen, "python"), _binder(gen, "numba"),
                           python_only=_python_only_reason(name, normal, kinds, gen),
                           bind_nothrow=_binder(gen, "nothrow"))


def _binder(gen: Generated, path: str) -> Callable[[], dict[str, Any]]:
    """The objects the module's free names are bound to on ``path`` ("python", "numba",
    or "nothrow": Numba, the callees' forms that never raise)."""
    def bind() -> dict[str, Any]:
        out: dict[str, Any] = {name: obj if path == "python" else _numba_form(obj)
                               for name, obj in gen.externals.items()}
        for link in gen.links:
            mod = link.transform.module
            for role in _ROLES:
                fn_name = getattr(link.transform.generated, role).name
                obj = mod.python(fn_name) if path == "python" else \
                    mod.numba(fn_name, nothrow=path == "nothrow")
                out[getattr(link, role)] = obj
        return out
    return bind


def _python_only_reason(name: str, normal: NormalFunction, kinds: dict[str, Kind],
                        gen: Generated) -> str:
    """Why this code must not be compiled even where Numba would accept it ("" if none)."""
    for node in gast.walk(normal.node):
        if isinstance(node, gast.JoinedStr):
            return (f"{name} formats an f-string (line {getattr(node, 'lineno', '?')}), "
                    "which Numba would print differently")
    growth = growing_int(normal.node, kinds)
    if growth is not None:
        return (f"{name} computes an int that can grow without bound at "
                f"{normal.parsed.filename}:{growth.lineno}:{growth.col} ({growth.message}): "
                "Numba's int64 would overflow where Python's int does not")
    for link in gen.links:
        reason = link.transform.module.python_only
        if reason:
            return reason
    for external, obj in gen.externals.items():
        why_not = getattr(obj, "why_not_numba", None)  # kernel ops
        if why_not is not None and why_not():
            return f"{name} runs {external}, but {why_not()}"
        if why_not is None and callable(obj) and not numba_callable(obj):
            return (f"{name} calls {getattr(obj, '__qualname__', external)}, a Python "
                    "object Numba cannot call")
    return ""


def _numba_form(obj: Any) -> Any:
    """What compiled code calls for ``obj``: a kernel op's "numba" kernel, else ``obj``."""
    form = getattr(obj, "numba_form", None)
    return obj if form is None else form()


def numba_callable(obj: Any) -> bool:
    """Whether Numba can call ``obj`` from compiled code: ctypes functions with declared
    types, dispatchers, and library functions (NumPy, math, ...) it implements."""
    return isinstance(obj, ctypes._CFuncPtr | np.ufunc) or hasattr(obj, "py_func") or \
        is_library(obj)


def load_tangent_module(name: str, parsed: ParsedFunction, normal: NormalFunction,
                        kinds: dict[str, Kind], gen: Generated,
                        directions: bool = False) -> GeneratedModule:
    """Write the forward-mode module of ``name`` (its ``<name>_jvp`` function, built
    now by the tangent stage; with ``directions`` its ``<name>_jvp_directions``) and
    prepare its two loaded forms."""
    fdef, callees = tangent_function(gen.context, directions)
    # the tangent stage may link more callees (a registered differential's parts)
    gen = dataclasses.replace(gen, links=list(gen.context.links.values()))
    bound = ["List"] + list(gen.externals) + list(callees)
    deps = [_callee_module(t, directions).path.stem for t in callees.values()]
    for link in gen.links:
        bound += [link.primal, link.forward, link.pullback]
        deps.append(link.transform.module.path.stem)
    origin = f"{parsed.filename}:{parsed.node.lineno}"
    source = module_source(f"{name} (forward mode)", origin, parsed.filename, [(fdef, False)],
                           bound, deps)
    path = write_module(fdef.name, source, digest(source))
    # only what the jvp function calls decides whether it compiles (not a kernel's gradient)
    read = {node.id for node in gast.walk(fdef) if isinstance(node, gast.Name)}
    called = dataclasses.replace(gen, externals={k: v for k, v in gen.externals.items()
                                                 if k in read})
    return GeneratedModule(path, source, [fdef.name],
                           _tangent_binder(gen, callees, "python", directions),
                           _tangent_binder(gen, callees, "numba", directions),
                           python_only=_python_only_reason(name, normal, kinds, called))


def _callee_module(t: Any, directions: bool) -> GeneratedModule:
    return t.directions_module if directions else t.tangent_module


def _tangent_binder(gen: Generated, callees: dict, path: str,
                    directions: bool = False) -> Callable[[], dict[str, Any]]:
    """The module's bindings, with the jvp functions of the functions it calls."""
    base = _binder(gen, path)

    def bind() -> dict[str, Any]:
        out = base()
        for bound, callee in callees.items():
            module = _callee_module(callee, directions)
            fn = module.functions[0]
            out[bound] = module.python(fn) if path == "python" else module.numba(fn)
        return out
    return bind
