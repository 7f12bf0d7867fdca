"""The transform cache: each function parsed once, and run through the stages once
per argument-kind signature; calls between functions linked, recursion refused.

>>> def square(x):
...     return x * x
>>> t = transform(square, ["float"], [0])
>>> t.wrt, transform(square, ["float"], [0]) is t
(['x'], True)
"""

from __future__ import annotations

import threading
from typing import Any

from s2s_ad.compiler.dependencies import Reads, include, note_function, recording
from s2s_ad.compiler.ir import GlobalRead, LocalFunction, ParsedFunction
from s2s_ad.compiler.normalize import NormalFunction, normalize
from s2s_ad.compiler.parse import parse_function
from s2s_ad.compiler.pipeline import Transform, run_stages
from s2s_ad.errors import NonDifferentiableError
from s2s_ad.kinds import Kind, carries_derivative, kind_of_value


class _Recursion(Exception):
    """A function reached again while it is being transformed."""

    def __init__(self, parsed: ParsedFunction):
        super().__init__(parsed.name)
        self.parsed = parsed


_parsed: dict[Any, tuple[Any, Any, ParsedFunction]] = {}
_transforms: dict[tuple, list[Transform]] = {}
_KEPT = 4  # transforms kept per key (built under different helpers or registrations)
_in_progress: dict[Any, ParsedFunction] = {}


# one transform at a time (re-entrant: a transform links its callees): the caches
# and the recursion guard are shared by every thread
_lock = threading.RLock()


def parsed_function(target: Any) -> ParsedFunction:
    """Parse (once) a Python function or a lifted local function."""
    if isinstance(target, LocalFunction):
        return target.parsed
    key = (target, getattr(target, "__code__", None))
    defaults = (getattr(target, "__defaults__", None), getattr(target, "__kwdefaults__", None))
    hit = _parsed.get(key)
    if hit is None or hit[0] is not defaults[0] or hit[1] is not defaults[1]:
        with _lock:  # new, or its defaults were changed: parse again
            hit = _parsed[key] = (*defaults, parse_function(target))
    return hit[2]


def transform(target: Any, arg_kinds: list[Kind], wrt_positions: list[int],
              float_dtype: str = "np.float64", parallel: bool = False) -> Transform:
    """Run every stage on ``target`` for arguments of ``arg_kinds`` (cached); with
    ``parallel``, its ``prange`` loops run in parallel (the functions it calls do not)."""
    with _lock:
        return _transform(target, arg_kinds, wrt_positions, float_dtype, parallel)


def _transform(target: Any, arg_kinds: list[Kind], wrt_positions: list[int],
               float_dtype: str, parallel: bool = False) -> Transform:
    parsed = parsed_function(target)
    global_kinds, fresh = _global_kinds(parsed)
    key = (id(parsed), tuple(arg_kinds), tuple(wrt_positions), float_dtype, global_kinds,
           parallel)
    kept = _transforms.setdefault(key, [])
    for t in kept:
        if t.current():
            return t
    if parsed.key in _in_progress:
        raise _Recursion(parsed)
    if len(arg_kinds) != len(parsed.params):
        raise TypeError(f"{parsed.name}() takes {len(parsed.params)} arguments but "
                        f"{len(arg_kinds)} were given")
    _in_progress[parsed.key] = parsed
    try:
        with recording() as reads:
            note_function(target)
            normal = None
            if fresh is not None:  # normalized just now, for the key: its reads count too
                normal, normalize_reads = fresh
                reads.include(normalize_reads)
            result = run_stages(parsed, arg_kinds, wrt_positions, float_dtype,
                                _linker(parsed, float_dtype), normal, parallel)
    finally:
        del _in_progress[parsed.key]
    result.dependencies = reads.dependencies()
    transforms_made[0] += 1
    kept.insert(0, result)
    del kept[_KEPT:]
    return result


transforms_made = [0]  # how many transforms were made (tests check nothing is redone)


_reads: dict[int, tuple[ParsedFunction, list[GlobalRead]]] = {}

#: The modules of s2s_ad's entry points (ad.gradient, ad.jvp...): a call of one inside
#: differentiated code is refused at the call, never differentiated through its source.
ENTRY_MODULES = ("s2s_ad.api", "s2s_ad.forward_mode", "s2s_ad.higher_order",
                 "s2s_ad.distributed", "s2s_ad.introspect")


def _global_kinds(parsed: ParsedFunction
                  ) -> tuple[tuple, tuple[NormalFunction, Reads] | None]:
    """The kinds of the global variables ``parsed`` reads, now: the generated code
    depends on them (their values are arguments).  The first time, it normalizes
    ``parsed`` to find them, and returns that result with the reads it made, for the
    stages to go on from (normalizing is not done twice)."""
    hit = _reads.get(id(parsed))
    fresh = None
    if hit is None or hit[0] is not parsed:
        with recording() as reads:
            normal = normalize(parsed)
        fresh = (normal, reads)
        hit = (parsed, list(normal.hidden.values()))
        _reads[id(parsed)] = hit
    return tuple(kind_of_value(read.value()) for read in hit[1]), fresh


def _source_of(callee: Any, kinds: list[Kind], parsed: ParsedFunction, call: Any) -> Any:
    """The function differentiated for a call of ``callee``: itself, or for a gradient
    (``ad.gradient(g)`` called in differentiated code) the generated function computing
    it, whose making the caller depends on (see ``gradient_calls``)."""
    made = getattr(callee, "__s2s_ad_callee__", None)
    if getattr(callee, "__module__", None) in ENTRY_MODULES:
        name = getattr(callee, "__name__", "an entry point")
        raise NonDifferentiableError(
            f"'ad.{name}(...)' made inside a differentiated function is not supported yet",
            parsed.location(call) if call is not None else None,
            f"make it outside (at module level: d = ad.{name}(...)) and call it inside")
    if made is None:
        return callee
    try:
        function, inner = made(kinds)
    except NonDifferentiableError as exc:
        if exc.location is not None or call is None:
            raise
        raise NonDifferentiableError(exc.problem, parsed.location(call), exc.hint) from None
    include(inner.dependencies)
    return function


def _linker(parsed: ParsedFunction, float_dtype: str):
    """How the stages of ``parsed`` transform the functions it calls."""
    def link(callee: Any, kinds: list[Kind], primal_only: bool = False,
             call: Any = None) -> Transform:
        positions = [] if primal_only else [i for i, k in enumerate(kinds)
                                            if carries_derivative(k)]
        callee = _source_of(callee, kinds, parsed, call)
        try:
            linked = transform(callee, kinds, positions, float_dtype)
            include(linked.dependencies)  # the caller's code is built on the callee's
        except _Recursion as rec:
            name = rec.parsed.name
            raise NonDifferentiableError(
                f"recursive call to '{name}' cannot be differentiated",
                parsed.location(call) if call is not None else None,
                f"rewrite '{name}' as a loop, or give it a derivative with "
                f"@ad.derivative(of={name})") from None
        if linked.normal.written_params:  # the caller's arrays change behind its back
            name, param = linked.parsed.name, linked.normal.written_params[0]
            raise NonDifferentiableError(
                f"'{name}' writes into its argument '{param}': calls to functions that "
                "change their arguments are not differentiable yet",
                parsed.location(call) if call is not None else None,
                f"return the new values from '{name}' instead")
        return linked
    return link
