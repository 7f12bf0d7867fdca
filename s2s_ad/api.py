"""The public transforms: differentiable, gradient, value_and_gradient and pullbacks.

>>> import math
>>> import s2s_ad as ad
>>> def f(x, y):
...     return math.sin(x) * y + x ** 2
>>> ad.gradient(f)(1.0, 2.0)
(3.0806046117362795, 0.8414709848078965)
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from .argument_memory import copied, refuse_overlaps
from .arguments import checked, differentiated_positions
from .boundary import (
    cast_each,
    check_cotangent,
    lowered_args,
    passed_globals,
    raised,
    type_key,
)
from .compiler.custom import calling_wrapper
from .compiler.jit import signature_text
from .compiler.pipeline import Transform
from .compiler.transforms import parsed_function, transform
from .errors import ArgumentError, JitError, NonDifferentiableError
from .fast_path import MISS, FastPath, PlanParts, build_plan
from .gradient_object import GradientOf
from .integer_arguments import check_integers, integers_checked
from .kinds import kind_of_value
from .markers import RecomputedFunction, custom_derivative, source_function
from .structures import in_order_of, leaves, without_cut
from .tracebacks import add_location_note

JitOption = bool | str


class DifferentiableFunction:
    """A Python function with differentiation options; calling it runs the original.

    >>> @differentiable(wrt=("x",), jit=False)
    ... def f(x, y):
    ...     return x * y
    >>> f(2.0, 3.0)
    6.0
    """

    def __init__(self, fn: Callable, wrt: Iterable[str] | None = None,
                 jit: JitOption = "auto", parallel: bool = False):
        if isinstance(fn, DifferentiableFunction):
            fn = fn.fn
        if isinstance(fn, RecomputedFunction):  # at the top level there is nothing to keep
            fn = fn.fn
        if jit not in ("auto", True, False):
            raise ValueError(f"jit must be 'auto', True or False, not {jit!r}")
        self.fn = fn
        self.__s2s_ad_wraps__ = fn  # what differentiated code calling it differentiates
        wrt = (wrt,) if isinstance(wrt, str | int) else wrt  # one name or position
        self.wrt = tuple(wrt) if wrt is not None else None
        self.jit = jit
        self.parallel = bool(parallel)  # prange loops run in parallel
        self.status: dict[str, tuple[str, str]] = {}
        self.last: Transform | None = None
        # key -> (transform, callable, global types, its hold(), written positions,
        #         the plans made of it by entry point)
        self._entries: dict[tuple, tuple] = {}
        # per entry point, the plan its calls try first (see fast_path)
        self._fast = {kind: FastPath() for kind in _ENTRY_POINTS}
        functools.update_wrapper(self, fn)
        self.error: NonDifferentiableError | None = None
        self._arity = -1
        try:
            parsed = parsed_function(source_function(fn))
        except NonDifferentiableError as exc:  # raised at the first call, so that the
            self.error = exc                   # module defining the function imports
            return
        self._arity = len(parsed.params)
        if self.wrt is not None:
            self.wrt = tuple(parsed.params[w] if isinstance(w, int) and not isinstance(w, bool)
                             and -len(parsed.params) <= w < len(parsed.params) else w
                             for w in self.wrt)
            unknown = [w for w in self.wrt if w not in parsed.params]
            if unknown:
                problem = (f"wrt names {unknown} that are not parameters of "
                           f"{parsed.name}({', '.join(parsed.params)})")
                if not _defer_errors:
                    raise ArgumentError(problem)
                self.error = NonDifferentiableError(problem, parsed.location(parsed.node),
                                                    "name parameters of the function in wrt")

    def __repr__(self) -> str:
        return f"<differentiable {getattr(self.fn, '__qualname__', self.fn)}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not kwargs:
            result = self._fast["primal"].call(args)
            if result is not MISS:
                return result
        if self.error is not None:
            raise self.error
        bound, defaulted = self.bind(args, kwargs)
        t, primal, global_values = self.entry("primal", bound)
        result = raised(t, running(t, primal, *lowered_args(t, bound), *global_values))
        if not kwargs and not defaulted:
            self.install("primal", "primal", bound)
        return result

    def bind(self, args: tuple, kwargs: dict) -> tuple[tuple, frozenset[int]]:
        """The arguments of a call as the original accepts them (keywords,
        defaults), one per parameter in order, and the positions left to their
        defaults (never differentiated unless named in ``wrt``).

        >>> def f(x, y=2.0, *, scale=1.0):
        ...     return x * y * scale
        >>> differentiable(f).bind((1.0,), {"scale": 3.0})
        ((1.0, 2.0, 3.0), frozenset({1}))
        """
        if not kwargs and len(args) == self._arity:
            return args, _NONE_DEFAULTED
        params = parsed_function(source_function(self.fn)).params
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.__name__}(): {exc}") from None
        given = set(bound.arguments)
        bound.apply_defaults()
        return (tuple(bound.arguments[p] for p in params),
                frozenset(i for i, p in enumerate(params) if p not in given))

    # -- preparation and running ------------------------------------------------------
    def wrt_positions(self, args: tuple, defaulted: frozenset[int] = frozenset()) -> list[int]:
        """The positions of the arguments differentiated in a call with ``args`` (bound)."""
        params = parsed_function(source_function(self.fn)).params
        return differentiated_positions(self, params, args, defaulted)

    def prepare(self, args: tuple, defaulted: frozenset[int] = frozenset()) -> Transform:
        """The transform for arguments like ``args`` (built once per kind signature)."""
        if self.error is not None:
            raise self.error
        positions = self.wrt_positions(args, defaulted)
        kinds = [kind_of_value(a) for a in args]
        dtype = "np.longdouble" if any(isinstance(a, np.longdouble) for a in args) \
            else "np.float64"
        target = self.fn
        if custom_derivative(self.fn) is not None or \
                custom_derivative(self.fn, "forward") is not None:
            target = calling_wrapper(self.fn, parsed_function(source_function(self.fn)))
        t = transform(target, kinds, positions, dtype, self.parallel)
        t.warn_zero_derivatives()
        self.last = t
        return t

    def callable_for(self, t: Transform, name: str, args: tuple) -> Callable:
        """The generated function ``name`` for ``args``: compiled unless it cannot be."""
        if t.reverse_refusal is not None and name != t.generated.primal.name:
            raise t.reverse_refusal
        module = t.module
        if self.jit is False:
            self.status[name] = ("python", "jit=False")
            return module.python(name)
        fn, reason = module.compiled(name, args)
        if fn is None:
            if self.jit is True:
                raise JitError(f"Numba cannot compile {name} (generated from "
                               f"{t.parsed.filename}:{t.parsed.node.lineno}): {reason}")
            self.status[name] = ("python", reason)
            return module.python(name)
        self.status[name] = ("numba", f"Numba compiled it for ({signature_text(args)})")
        return fn

    def entry(self, role: str, args: tuple, defaulted: frozenset[int] = frozenset()
              ) -> tuple[Transform, Callable, tuple]:
        """(transform, callable, global values) of generated function ``role`` for
        ``args``; call it as ``callable(*args, *global_values)``.

        The global variables the function reads are read now, at every call, so it
        sees what the original would.  The hot path: after the first call with given
        argument types this is a dictionary lookup and one read per global;
        Numba's dispatcher then picks the compiled code.
        """
        key = (role, defaulted, *map(type_key, args))
        hit = self._entries.get(key)
        # a helper redefined, a global function rebound or a registration since: new code
        if hit is not None and hit[3]():
            if hit[4]:  # it writes into arguments: none may share memory with another
                refuse_overlaps(self.__name__, hit[0].parsed.params, hit[4], args)
            if not hit[2]:  # reads no global variable
                return hit[0], hit[1], ()
            values = hit[0].global_values()
            if tuple([type_key(v) for v in values]) == hit[2]:
                return hit[0], hit[1], passed_globals(hit[0], values)
        with _compiling:  # one first call at a time (threads)
            t = self.prepare(args, defaulted)
            if t.parsed.generated:
                raise NonDifferentiableError(
                    "reverse mode through generated gradient code (a gradient of a gradient "
                    "by reverse mode) is not supported", t.parsed.location(t.parsed.node),
                    "use ad.hessian, ad.hvp or ad.jvp of ad.gradient(f) (forward over reverse)")
            written = t.written_positions
            checked(self, _CHECKED_AS[role], t, args)
            values = t.global_values()
            fn = self.callable_for(t, getattr(t.generated, role).name,
                                   lowered_args(t, args) + passed_globals(t, values))
            self._entries[key] = (t, fn, tuple([type_key(v) for v in values]),
                                  t.dependencies.hold, written, {})
        return t, fn, passed_globals(t, values)

    def fast_path(self, kind: str) -> FastPath:
        """The plan entry point ``kind`` tries first (one of ``_ENTRY_POINTS``)."""
        return self._fast[kind]

    def install(self, kind: str, role: str, args: tuple) -> None:
        """Make the plan of a call just validated by the full path (``args`` bound, none
        defaulted) the one entry point ``kind`` tries first; made once per entry."""
        hit = self._entries.get((role, _NONE_DEFAULTED, *map(type_key, args)))
        if hit is None:
            return
        plan = hit[5].get(kind)
        if plan is None:
            plan = hit[5][kind] = build_plan(kind, self._plan_parts(hit, args))
        self._fast[kind].call = plan

    def _plan_parts(self, hit: tuple, args: tuple) -> PlanParts:
        """What a plan of the entry ``hit`` runs, as :meth:`entry` and the entry points
        run it (the same helpers, bound to its transform)."""
        t, fn, global_types, _, written = hit[:5]
        parts = PlanParts(tuple(map(type_key, args)), t.dependencies.condition("d_"), fn,
                          functools.partial(_note, t, fn))
        parts.globals = [(read.value, key)
                         for read, key in zip(t.generated.hidden, global_types, strict=True)]
        parts.wrt_positions = list(t.wrt_positions)
        if t.structured_globals:
            parts.pass_globals = functools.partial(passed_globals, t)
        if t.structured:
            parts.lower = functools.partial(lowered_args, t)
        if written:
            parts.refuse = functools.partial(refuse_overlaps, self.__name__,
                                             t.parsed.params, written)
        if t.structured_result:
            parts.result = functools.partial(raised, t)
        return parts


def running(t: Transform, fn: Callable, *args: Any) -> Any:
    """``fn(*args)``; an exception it raises gets a note naming the user's line."""
    try:
        return fn(*args)
    except Exception as exc:
        _note(t, fn, exc)
        raise


def _note(t: Transform, fn: Callable, exc: BaseException) -> None:
    """Add to ``exc``, raised by ``t``'s generated function ``fn``, the user's line."""
    add_location_note(exc, t.module.path.parent, t.name,
                      compiled=not isinstance(fn, types.FunctionType),
                      origin=f"{t.parsed.filename}:{t.parsed.node.lineno}")


_ENTRY_POINTS = ("primal", "value_and_gradient", "gradient")
_CHECKED_AS = {"primal": "primal", "fused": "gradient", "forward": "pullback"}  # roles
_wrappers: dict[Any, DifferentiableFunction] = {}
_NONE_DEFAULTED: frozenset[int] = frozenset()
_compiling = threading.RLock()
_defer_errors = False


@contextlib.contextmanager
def deferred_errors() -> Iterator[None]:
    """Within this block, ``@differentiable`` records a ``wrt`` naming no parameter
    instead of raising (a refused construct is always recorded at decoration and
    raised at the first call, so its module imports).

    Tools that import user files to inspect them (``s2s-ad check``) use it so
    one bad function does not stop the import of the rest.
    """
    global _defer_errors
    saved, _defer_errors = _defer_errors, True
    try:
        yield
    finally:
        _defer_errors = saved


def as_differentiable(f: Callable, wrt: Iterable[str | int] | str | int | None = None,
                      parallel: bool | None = None) -> DifferentiableFunction:
    """``f`` as a :class:`DifferentiableFunction`; with ``wrt`` (names or positions
    of parameters), one that differentiates those, with ``parallel``, one whose
    ``prange`` loops run in parallel or not (``f``'s other options kept)."""
    own = f.parallel if isinstance(f, DifferentiableFunction) else False
    if wrt is not None or (parallel is not None and parallel != own):
        wrt = (wrt,) if isinstance(wrt, str | int) else wrt
        wrt = tuple(wrt) if wrt is not None else getattr(f, "wrt", None)
        jit = f.jit if isinstance(f, DifferentiableFunction) else "auto"
        parallel = own if parallel is None else bool(parallel)
        key = (f, wrt, jit, parallel)
        if key not in _wrappers:
            _wrappers[key] = DifferentiableFunction(f, wrt=wrt, jit=jit, parallel=parallel)
        return _wrappers[key]
    if isinstance(f, DifferentiableFunction):
        return f
    if f not in _wrappers:
        _wrappers[f] = DifferentiableFunction(f)
    return _wrappers[f]


def differentiable(fn: Callable | None = None, *, wrt: Iterable[str] | None = None,
                   jit: JitOption = "auto", parallel: bool = False) -> Any:
    """Mark ``fn`` differentiable; usable bare, with options, or as a call.

    ``wrt`` names the differentiated parameters (default: every float
    argument); ``jit`` is ``"auto"`` (Numba where it can, Python otherwise),
    ``True`` (Numba or an error) or ``False`` (never compile); ``parallel=True``
    runs ``prange`` loops in parallel (Numba's ``parallel=True``).

    >>> @differentiable
    ... def square(x):
    ...     return x * x
    >>> gradient(square)(3.0)
    6.0
    """
    if fn is None:
        return lambda f: DifferentiableFunction(f, wrt=wrt, jit=jit, parallel=parallel)
    return DifferentiableFunction(fn, wrt=wrt, jit=jit, parallel=parallel)


def _grads(t: Transform, raw: tuple, args: tuple) -> Any:
    return cast_each(t.wrt_positions, raw, args)


Wrt = Iterable[str | int] | str | int | None


def value_and_gradient(f: Callable, wrt: Wrt = None, *, parallel: bool | None = None
                       ) -> Callable:
    """``f`` -> a function returning ``(value, gradient)`` in one fused call;
    ``wrt`` names the parameters (or their positions) to differentiate;
    ``parallel=True`` runs ``prange`` loops in parallel.

    >>> value_and_gradient(lambda x: x * x)(3.0)
    (9.0, 6.0)
    >>> value_and_gradient(lambda x, y: x * y, wrt="y")(3.0, 2.0)
    (6.0, 3.0)
    """
    df = as_differentiable(f, wrt, parallel)
    fast = df.fast_path("value_and_gradient")

    def value_and_gradient_of(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        if not kwargs:  # the plan validated by an earlier call (see fast_path)
            result = fast.call(args)
            if result is not MISS:
                return result
        return _value_and_gradient(df, "value_and_gradient", args, kwargs)

    return value_and_gradient_of


def _value_and_gradient(df: DifferentiableFunction, kind: str, args: tuple,
                        kwargs: dict) -> tuple[Any, Any]:
    """The full path of ``value_and_gradient`` (and ``gradient``): bind, look up or
    make the transform, check, run; then install its plan for entry point ``kind``."""
    bound, defaulted = df.bind(args, kwargs)
    t, fused, global_values = df.entry("fused", bound, defaulted)
    if not integers_checked(t):  # the first call with these argument types
        check_integers(df, t, bound, stacklevel=4)
    call_args = lowered_args(t, bound) if t.structured else bound
    value, raw = running(t, fused, *call_args, *global_values)
    result = value, _grads(t, raw, bound)
    if not kwargs and not defaulted:
        df.install(kind, "fused", bound)
    return result


def gradient(f: Callable, wrt: Wrt = None, *, parallel: bool | None = None) -> Callable:
    """``f`` -> its gradient: bare for one differentiated parameter, else a tuple;
    ``wrt`` and ``parallel`` as in :func:`value_and_gradient` (``wrt``: ``jax.grad``'s
    ``argnums``).

    >>> gradient(lambda x, y: x * y)(2.0, 3.0)
    (3.0, 2.0)
    >>> gradient(lambda x, y: x * y, wrt=(1,))(2.0, 3.0)
    2.0
    """
    if isinstance(f, GradientOf):  # a second derivative: forward over reverse
        return GradientOf.differentiated(f, wrt)
    df = as_differentiable(f, wrt, parallel)
    fast = df.fast_path("gradient")

    def gradient_of(*args: Any, **kwargs: Any) -> Any:
        if not kwargs:  # the plan validated by an earlier call (see fast_path)
            result = fast.call(args)
            if result is not MISS:
                return result
        return _value_and_gradient(df, "gradient", args, kwargs)[1]

    return GradientOf(df, gradient_of)


def value_with_pullback(f: Callable, *args: Any, wrt: Wrt = None,
                        parallel: bool | None = None, **kwargs: Any) -> tuple[Any, Callable]:
    """Run ``f`` forward once at ``args`` (and keyword arguments); return its value
    and its pullback, which differentiates ``wrt`` (default: every float argument).

    >>> value, pb = value_with_pullback(lambda x: x * x, 3.0)
    >>> pb(1.0)
    6.0
    """
    df = as_differentiable(f, wrt, parallel)
    args, defaulted = df.bind(args, kwargs)
    t, forward, global_values = df.entry("forward", args, defaulted)
    check_integers(df, t, args)
    # it runs on copies of the caller's arrays, which the caller may change before the
    # pullback runs (the arrays it writes into it copies itself)
    passed = copied((*lowered_args(t, args), *global_values), t.written_positions)
    value, residuals = running(t, forward, *passed)
    value = raised(t, value)
    compiled: list[Callable] = []

    def pullback_of(cotangent: Any) -> Any:
        cotangent = in_order_of(value, cotangent)  # a dict's cotangent matched by key
        check_cotangent(df.__name__, value, cotangent)
        if isinstance(cotangent, int | float | np.number):
            cotangent = float(cotangent)
        elif t.structured_result:  # nothing flows back through no_derivative fields
            cotangent = without_cut(t.result_kind, leaves(cotangent))
        pair = (residuals, cotangent)
        if not compiled:
            with _compiling:
                compiled.append(df.callable_for(t, t.generated.pullback.name, pair))
        return _grads(t, running(t, compiled[0], *pair), args)

    return value, pullback_of


def pullback(f: Callable, *args: Any, wrt: Wrt = None, parallel: bool | None = None,
             **kwargs: Any) -> Callable:
    """The pullback of ``f`` at ``args`` (``value_with_pullback`` without the value)."""
    return value_with_pullback(f, *args, wrt=wrt, parallel=parallel, **kwargs)[1]


