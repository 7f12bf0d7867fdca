"""The compiler, stage by stage.

    parse      -> ParsedFunction   (gast FunctionDef, names resolved, refusals raised)
    normalize  -> NormalFunction   (single exit, flags for break/continue, ANF)
    kinds      -> kind of every variable
    activity   -> varied / useful / active variables
    reverse    -> primal, forward, pullback, fused value-and-gradient trees
    emit       -> one commented Python module
    jit        -> callables: Numba where it types, Python otherwise

Each stage's output prints as Python: ``stage_source(f, "anf", *args)``.
"""

from __future__ import annotations

import ctypes
import warnings
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from s2s_ad.compiler.activity import Activity, ZeroDerivative, analyze_activity, zero_derivatives
from s2s_ad.compiler.emit import digest, function_source, module_source
from s2s_ad.compiler.infer_kinds import infer_kinds, result_kind
from s2s_ad.compiler.ir import LocalFunction, ParsedFunction
from s2s_ad.compiler.jit import GeneratedModule, write_module
from s2s_ad.compiler.normalize import NormalFunction, normalize
from s2s_ad.compiler.parse import parse_function
from s2s_ad.compiler.reverse import Generated, reverse
from s2s_ad.errors import NonDifferentiableError, ZeroDerivativeWarning
from s2s_ad.kinds import Kind, carries_derivative, kind_of_value

STAGES = ("parse", "anf", "forward", "pullback", "fused", "module")


@dataclass(eq=False)
class Transform:
    """Everything the compiler made of one function for one kind signature."""

    name: str
    parsed: ParsedFunction
    normal: NormalFunction
    kinds: dict[str, Kind]
    activity: Activity
    wrt_positions: list[int]
    generated: Generated | None = None
    module: GeneratedModule | None = None
    result_kind: Kind = "unknown"
    callees: list[Transform] = field(default_factory=list)
    zero_derivatives: list[ZeroDerivative] = field(default_factory=list)
    warned: bool = False

    def warn_zero_derivatives(self) -> None:
        """Issue each ZeroDerivativeWarning once, at the user's file and line."""
        if self.warned:
            return
        self.warned = True
        for z in self.zero_derivatives:
            warnings.warn_explicit(f"{self.parsed.filename}:{z.lineno}:{z.col}: {z.message}",
                                   ZeroDerivativeWarning, self.parsed.filename, z.lineno)

    @property
    def wrt(self) -> list[str]:
        return [self.parsed.params[i] for i in self.wrt_positions]

    @property
    def source(self) -> str:
        return self.module.source


class _Recursion(Exception):
    """A function reached again while it is being transformed."""

    def __init__(self, parsed: ParsedFunction):
        super().__init__(parsed.name)
        self.parsed = parsed


_parsed: dict[Any, ParsedFunction] = {}
_transforms: dict[tuple, Transform] = {}
_in_progress: dict[Any, ParsedFunction] = {}


def parsed_function(target: Any) -> ParsedFunction:
    """Parse (once) a Python function or a lifted local function."""
    if isinstance(target, LocalFunction):
        return target.parsed
    key = (target, getattr(target, "__code__", None))
    if key not in _parsed:
        _parsed[key] = parse_function(target)
    return _parsed[key]


def transform(target: Any, arg_kinds: list[Kind], wrt_positions: list[int],
              float_dtype: str = "np.float64") -> Transform:
    """Run every stage on ``target`` for arguments of ``arg_kinds`` (cached)."""
    parsed = parsed_function(target)
    key = (id(parsed), tuple(arg_kinds), tuple(wrt_positions), float_dtype)
    if key in _transforms:
        return _transforms[key]
    if parsed.key in _in_progress:
        raise _Recursion(parsed)
    if len(arg_kinds) != len(parsed.params):
        raise TypeError(f"{parsed.name}() takes {len(parsed.params)} arguments but "
                        f"{len(arg_kinds)} were given")
    _in_progress[parsed.key] = parsed
    try:
        result = _run_stages(parsed, arg_kinds, wrt_positions, float_dtype)
    finally:
        del _in_progress[parsed.key]
    _transforms[key] = result
    return result


def _run_stages(parsed: ParsedFunction, arg_kinds: list[Kind], wrt_positions: list[int],
                float_dtype: str) -> Transform:
    callees: list[Transform] = []

    def link(callee: Any, kinds: list[Kind], primal_only: bool = False,
             call: Any = None) -> Transform:
        positions = [] if primal_only else [i for i, k in enumerate(kinds)
                                            if carries_derivative(k)]
        try:
            t = transform(callee, kinds, positions, float_dtype)
        except _Recursion as rec:
            name = rec.parsed.name
            raise NonDifferentiableError(
                f"recursive call to '{name}' cannot be differentiated",
                parsed.location(call) if call is not None else None,
                f"rewrite '{name}' as a loop, or give it a derivative with "
                f"@ad.derivative(of={name})") from None
        if t not in callees:
            callees.append(t)
        return t

    def callee_kind(callee: Any, kinds: list[Kind], call: Any) -> Kind:
        return link(callee, kinds, primal_only=True, call=call).result_kind

    normal = normalize(parsed)
    env = dict(zip(parsed.params, arg_kinds, strict=True))
    env.update({name: kind_of_value(value) for name, value in normal.externals.items()})
    kinds = infer_kinds(normal.node, env, callee_kind)
    wrt = [parsed.params[i] for i in wrt_positions]
    activity = analyze_activity(normal.node, wrt, kinds)
    t = Transform(name=parsed.name, parsed=parsed, normal=normal, kinds=kinds,
                  activity=activity, wrt_positions=wrt_positions,
                  result_kind=result_kind(normal.node, kinds), callees=callees)
    t.zero_derivatives = zero_derivatives(normal.node, wrt, kinds, parsed.name)
    t.generated = reverse(normal, kinds, activity, wrt, float_dtype, link)
    t.module = _load(t)
    return t


def _load(t: Transform) -> GeneratedModule:
    gen = t.generated
    fname = t.parsed.filename
    functions = [(gen.primal, False), (gen.forward, False), (gen.pullback, True),
                 (gen.fused, True)]
    roles = {"primal": "primal", "forward": "forward", "pullback": "pullback"}
    bound = ["List"] + list(gen.externals)
    deps = []
    for link in gen.links:
        bound += [link.primal, link.forward, link.pullback]
        deps.append(link.transform.module.path.stem)
    origin = f"{fname}:{t.parsed.node.lineno}"
    source = module_source(t.name, origin, fname, functions, bound, deps)
    path = write_module(t.name, source, digest(source))

    def binder(kind: str):
        def bind() -> dict[str, Any]:
            out: dict[str, Any] = dict(gen.externals)
            for link in gen.links:
                mod = link.transform.module
                for role in roles:
                    fn_name = getattr(link.transform.generated, role).name
                    obj = mod.python(fn_name) if kind == "python" else mod.numba(fn_name)
                    out[getattr(link, role)] = obj
            return out
        return bind

    names = [f.name for f, _ in functions]
    return GeneratedModule(path, source, names, binder("python"), binder("numba"),
                           python_only=_python_only_reason(t))


def _python_only_reason(t: Transform) -> str:
    """Why ``t``'s code must not be compiled even where Numba would accept it."""
    for node in gast.walk(t.normal.node):
        if isinstance(node, gast.JoinedStr):
            return (f"{t.name} formats an f-string (line {getattr(node, 'lineno', '?')}), "
                    "which Numba would print differently")
    for link in t.generated.links:
        reason = link.transform.module.python_only
        if reason:
            return reason
    for name, obj in t.generated.externals.items():
        if callable(obj) and not _numba_callable(obj):
            return f"{t.name} calls {name}, a Python object Numba cannot call"
    return ""


def _numba_callable(obj: Any) -> bool:
    """Whether Numba can call ``obj`` from compiled code: ctypes functions with declared
    types, dispatchers, and the functions of ``math`` and NumPy Numba implements."""
    module = getattr(obj, "__module__", None) or ""
    return isinstance(obj, ctypes._CFuncPtr | np.ufunc) or hasattr(obj, "py_func") or \
        module == "math" or module.startswith("numpy")


def stage_source(t: Transform, stage: str) -> str:
    """The printable output of one stage of ``t`` (see ``STAGES``)."""
    fname = t.parsed.filename
    gen = t.generated
    if stage == "parse":
        return function_source(t.parsed.node, fname)
    if stage == "anf":
        return function_source(t.normal.node, fname)
    if stage in ("forward", "pullback", "fused"):
        return function_source(getattr(gen, stage), fname, adjoint=stage != "forward")
    if stage == "module":
        return t.module.source
    raise ValueError(f"unknown stage {stage!r}; choose one of {', '.join(STAGES)}")
