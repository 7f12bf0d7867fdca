"""Forward mode: ``jvp``, the value of a function and its directional derivative, and
``jacobian`` (built by forward or reverse mode).

The tangent code is generated from the same normalized function as the pullback
(:mod:`s2s_ad.compiler.tangent`), runs the control flow as written, keeps no tape,
and compiles with Numba like the rest (``jit`` as the function's).

>>> import numpy as np
>>> def f(x, y):
...     return np.sin(x) * y
>>> value, tangent = jvp(f, (0.5, 2.0), (1.0, 0.0))   # d/dx at (0.5, 2.0)
>>> bool(np.isclose(tangent, 2.0 * np.cos(0.5)))
True
"""

from __future__ import annotations

import functools
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .api import (
    DifferentiableFunction,
    as_differentiable,
    running,
    value_with_pullback,
)
from .argument_memory import refuse_overlaps
from .arguments import checked, fresh, prepared, tangents_for
from .boundary import lowered_args, passed_globals, raised, type_key
from .compiler.jit import signature_text
from .compiler.pipeline import Transform
from .errors import ArgumentError, JitError, NonDifferentiableError
from .fast_path import MISS, PlanParts, build_jvp_plan
from .forward_columns import compiled_driver
from .gradient_object import GradientOf
from .kinds import kind_of_value
from .structures import has_structure, leaves, without_cut
from .tracebacks import add_location_note

_compiled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_made: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> its plans
_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> its last plan
_drivers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> Jacobian drivers
_driver_code: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # transform -> drivers
_LISTS = (tuple, list)  # the primals and tangents a plan takes (the full path: any iterable)
_LATER = object()  # in _drivers: the first call was seen, the second compiles a driver


def jvp(f: Callable, primals: Sequence, tangents: Sequence, *,
        wrt: Sequence[str] | str | None = None) -> tuple[Any, Any]:
    """``(f(*primals), J @ tangents)``: the value and the derivative of ``f`` at
    ``primals`` along ``tangents`` (JAX's convention: one tangent per argument, of its
    shape; ``None`` or zero for an argument not differentiated).

    ``wrt`` names the parameters that carry tangents (default: every float argument).
    After one call with given argument types, later calls like it run a plan that
    skips binding and preparing (:func:`s2s_ad.fast_path.build_jvp_plan`); a
    redefined helper, a rebound global function or other argument types miss it.

    >>> value, tangent = jvp(lambda a, b: a * b + a, (3.0, 4.0), (1.0, 0.5))
    >>> value, tangent   # 1 * (4 + 1) + 0.5 * 3
    (15.0, 6.5)
    """
    if isinstance(f, GradientOf):  # forward over reverse: see s2s_ad.higher_order
        return GradientOf.jvp_of(f, primals, tangents)
    df = as_differentiable(f, wrt)
    plan = _plans.get(df)
    if plan is not None and type(primals) in _LISTS and type(tangents) in _LISTS:
        result = plan(primals, tangents)
        if result is not MISS:
            return result
    return _full_jvp(df, tuple(primals), tuple(tangents))


def _full_jvp(df: DifferentiableFunction, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    """The full path of :func:`jvp`: bind, prepare, check, run; then install the plan
    of this call (when every argument was given)."""
    t, fn, passed = _validated(df, primals, tangents)
    value, tangent = running(t, fn, *passed)
    return raised(t, value), raised(t, tangent)


def _validated(df: DifferentiableFunction, primals: tuple, tangents: tuple
               ) -> tuple[Transform, Callable, tuple]:
    """(transform, tangent kernel, its arguments) of a jvp call, checked; installs the
    plan of calls like it."""
    t, args, defaulted = prepared(df, "jvp", primals)
    carried = tangents_in(df, t, args, tangents_for(df, "jvp", primals, tangents, args))
    values = t.global_values()
    passed = (*lowered_args(t, args), *passed_globals(t, values), *carried)
    fn = jvp_callable(df, t, passed)
    if not defaulted and not (t.structured or t.structured_result or t.structured_globals):
        _plans[df] = _plan(df, t, fn, args, values, carried)  # (structures: the full path)
    return t, fn, passed


def _plan(df: DifferentiableFunction, t: Transform, fn: Callable, args: tuple,
          values: tuple, carried: list) -> Callable:
    """The plan of a call just validated (made once per transform and types; kept by
    the function, and holding nothing that keeps the function alive)."""
    arg_keys = tuple(map(type_key, args))
    global_keys = tuple(map(type_key, values))
    tangent_keys = tuple(map(type_key, carried))
    made = _made.setdefault(df, {})
    key = (arg_keys, global_keys, tangent_keys)
    hit = made.get(key)
    if hit is None or hit[0] is not t or hit[1] is not fn:
        holds = ("True", {}) if t.dependencies is None else t.dependencies.condition("d_")
        parts = PlanParts(arg_keys, holds, fn,
                          functools.partial(note_location, t, fn))
        parts.globals = [(read.value, k)
                         for read, k in zip(t.generated.hidden, global_keys, strict=True)]
        parts.wrt_positions = list(t.wrt_positions)
        params, owner = t.parsed.params, df.__name__
        if t.written_positions:  # it writes into arguments: none may share memory
            parts.refuse = functools.partial(refuse_overlaps, owner, params,
                                             t.written_positions)

        def convert(position: int, primal: Any, tangent: Any) -> Any:
            return tangent_of(owner, params[position], primal, tangent)

        hit = made[key] = (t, fn, build_jvp_plan(parts, tangent_keys, convert))
    return hit[2]


def note_location(t: Transform, fn: Callable, exc: BaseException) -> None:
    """Add to ``exc``, raised by the tangent kernel ``fn`` of ``t``, the user's line
    (as :func:`s2s_ad.api.running` does)."""
    add_location_note(exc, t.module.path.parent, t.name,
                      compiled=not isinstance(fn, types.FunctionType),
                      origin=f"{t.parsed.filename}:{t.parsed.node.lineno}")


def tangents_in(df: DifferentiableFunction, t: Transform, args: tuple,
                 tangents: tuple) -> list:
    """The tangents of the differentiated arguments, checked against their primals."""
    params = t.parsed.params
    carried = []
    for pos, (name, primal, tangent) in enumerate(zip(params, args, tangents, strict=True)):
        if pos in t.wrt_positions:
            carried.append(tangent_of(df.__name__, name, primal, tangent))
        elif tangent is not None and np.any(np.asarray(tangent) != 0):
            raise ArgumentError(f"argument '{name}' of {df.__name__} is not differentiated, "
                                "so its tangent must be None or zero")
    return carried


def tangent_of(owner: str, name: str, primal: Any, tangent: Any) -> Any:
    """The tangent of argument ``name`` of function ``owner`` as the kernel takes it
    (a structure or tuple as the tuple of its leaves' tangents)."""
    if has_structure(primal) or type(primal) is tuple:
        return _leaf_tangents(owner, name, primal, tangent)
    if tangent is None:
        return np.zeros_like(primal) if isinstance(primal, np.ndarray) else 0.0
    if isinstance(primal, np.ndarray):  # of the primal's float dtype, as JAX asks
        value = np.asarray(tangent, dtype=primal.dtype)
        if value.shape != primal.shape:
            raise ArgumentError(f"the tangent of argument '{name}' of {owner} has shape "
                                f"{value.shape}, its value {primal.shape}")
        return value
    if np.ndim(tangent) != 0:
        raise ArgumentError(f"the tangent of argument '{name}' of {owner} must be a "
                            f"number, like its value (got shape {np.shape(tangent)})")
    return float(tangent)


def _leaf_tangents(owner: str, name: str, primal: Any, tangent: Any) -> tuple:
    """The tangents of the leaves of a structure (or tuple) ``primal``, from a
    ``tangent`` of the same kind (JAX's pytrees): zeros for None and for the fields
    marked ``no_derivative``."""
    flat = leaves(primal)
    if tangent is None:
        return _zeros_like(flat)
    if type(tangent) is not type(primal) or (
            has_structure(primal) and kind_of_value(tangent) != kind_of_value(primal)):
        raise ArgumentError(f"the tangent of argument '{name}' of {owner} must be a "
                            f"{type(primal).__name__} like its value (the same fields), "
                            f"not {type(tangent).__name__}")
    given = leaves(tangent)
    if len(given) != len(flat):
        raise ArgumentError(f"the tangent of argument '{name}' of {owner} has "
                            f"{len(given)} items, its value {len(flat)}")
    cut = without_cut(kind_of_value(primal), given) if has_structure(primal) else given
    if any(_nonzero(g) and not _nonzero(c) for g, c in zip(given, cut, strict=True)):
        raise ArgumentError(f"the tangent of argument '{name}' of {owner} moves a field "
                            "marked no_derivative: give it a zero tangent")
    return tuple(tangent_of(owner, f"{name}[{k}]", p, t)
                 for k, (p, t) in enumerate(zip(flat, cut, strict=True)))


def _nonzero(leaf: Any) -> bool:
    if type(leaf) is tuple:
        return any(_nonzero(v) for v in leaf)
    return leaf is not None and bool(np.any(np.asarray(leaf) != 0))


def _zeros_like(flat: Any) -> Any:
    if type(flat) is tuple:
        return tuple(_zeros_like(v) for v in flat)
    return np.zeros_like(flat) if isinstance(flat, np.ndarray) else 0.0


def jvp_callable(df: DifferentiableFunction, t: Transform, passed: tuple,
                 directions: bool = False) -> Callable:
    """The jvp function for these arguments (with ``directions``, its form carrying
    several directions per run): compiled unless it cannot be (as ``jit``)."""
    module = t.directions_module if directions else t.tangent_module
    name = module.functions[0]
    cache = _compiled.setdefault(t, {})
    key = (directions, df.jit, *map(type_key, passed))  # a transform serves every jit
    if key in cache:
        return cache[key]
    if df.jit is False:
        df.status[name] = ("python", "jit=False")
        fn = module.python(name)
    else:
        fn, reason = module.compiled(name, passed)
        if fn is None:
            if df.jit is True:
                raise JitError(f"Numba cannot compile {name} (generated from "
                               f"{t.parsed.filename}:{t.parsed.node.lineno}): {reason}")
            df.status[name] = ("python", reason)
            fn = module.python(name)
        else:
            df.status[name] = ("numba", f"Numba compiled it for ({signature_text(passed)})")
    cache[key] = fn
    return fn


def jacobian(f: Callable, wrt: Sequence[str] | str | None = None,
             mode: str = "auto", parallel: bool | None = None) -> Callable:
    """A function of ``f``'s arguments returning the Jacobian of ``f``'s result with
    respect to ``wrt`` (default: every float argument): an array of shape
    ``result.shape + argument.shape`` per argument (a tuple of them for several).

    ``mode="forward"`` builds it a column at a time (one tangent run per input
    entry; under Numba, from the second call with given argument types, all of them
    in one compiled call, see :mod:`s2s_ad.forward_columns`), ``"reverse"`` a row at
    a time with the pullback
    (one forward run, one pullback per output entry), ``"auto"`` picks the one with
    fewer runs.  The arrays the function writes into are copied for each run: the
    Jacobian is taken at the caller's values, which it leaves as they are.  With
    ``parallel=True`` the pullbacks run ``prange`` loops in parallel (forward mode
    runs them serially).

    >>> import numpy as np
    >>> def polar(r, phi):
    ...     return np.array([r * np.cos(phi), r * np.sin(phi)])
    >>> jacobian(polar, mode="forward")(2.0, 0.0)
    (array([1., 0.]), array([0., 2.]))
    >>> jacobian(polar, wrt="phi", mode="reverse")(2.0, 0.0)
    array([0., 2.])
    """
    if mode not in ("auto", "forward", "reverse"):
        raise ValueError(f"mode must be 'auto', 'forward' or 'reverse', not {mode!r}")
    if isinstance(f, GradientOf):  # the Jacobian of a gradient: its Hessian
        return GradientOf.jacobian_of(f, wrt)
    df = as_differentiable(f, wrt, parallel)

    def jacobian_of(*args: Any) -> Any:
        bound, defaulted = df.bind(args, {})
        t = _transform(df, bound, defaulted)
        for name, value in zip(t.parsed.params, bound, strict=True):
            if has_structure(value):
                raise ArgumentError(f"jacobian of {df.__name__}: argument '{name}' is a "
                                    "structure; a Jacobian takes numbers and arrays (use "
                                    "ad.jvp per direction, or pass the arrays)")
        checked(df, "jacobian", t, bound)
        blocks = _driven_columns(df, bound, defaulted) if mode == "forward" else None
        if blocks is None:
            positions = t.wrt_positions
            value = df(*fresh(t, bound))
            sizes = [int(np.size(bound[p])) for p in positions]
            if mode == "reverse" or (mode == "auto" and sum(sizes) > np.size(value)):
                blocks = _rows(df, args, bound, positions, value)
            else:
                if mode == "auto":  # (in forward mode, the driver was tried above)
                    blocks = _driven_columns(df, bound, defaulted)
                if blocks is None:
                    blocks = _columns(df, t, bound, value)
            blocks = _in_dtype(blocks, value, bound, positions)
        return blocks[0] if len(blocks) == 1 else tuple(blocks)

    return jacobian_of


def _transform(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int]
               ) -> Transform:
    """The transform for ``args``: the current driver's (no preparing) or prepared."""
    hit = _drivers.get(df, {}).get((defaulted, *map(type_key, args)))
    if _current_values(hit) is not None:
        return hit[0]
    return df.prepare(args, defaulted)


def _driven_columns(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int]
                    ) -> list[np.ndarray] | None:
    """The forward-mode Jacobian blocks from one call of a compiled driver
    (:mod:`s2s_ad.forward_columns`), or ``None`` where none applies (then the columns
    are built one :func:`jvp` at a time).  The driver is compiled at the second call
    with given argument types (compiling takes ~0.5 s, a one-off Jacobian builds its
    columns by jvp), and used while what it was built from holds: the same argument
    and global types, :meth:`Transform.current`."""
    drivers = _drivers.setdefault(df, {})
    key = (defaulted, *map(type_key, args))
    hit = drivers.get(key)
    values = _current_values(hit)
    if values is None:  # the first call with these types (or since a change): no driver
        drivers[key] = _first_sight(df, args, defaulted)
        return None
    if hit[1] is _LATER:  # the second: compile one (a one-off Jacobian does not pay for it)
        hit = drivers[key] = _new_driver(df, args, defaulted)
        values = _current_values(hit)
    t, driver, _ = hit
    if driver is None or values is None:
        return None
    value, out = running(t, driver, *args, *values)
    shape, start, blocks = np.shape(value), 0, []
    for p in t.wrt_positions:
        size = int(np.size(args[p]))
        blocks.append(out[:, start:start + size].reshape(shape + np.shape(args[p])))
        start += size
    return _in_dtype(blocks, value, args, t.wrt_positions)


def _in_dtype(blocks: list[np.ndarray], value: Any, args: tuple, positions: list[int]
              ) -> list[np.ndarray]:
    """Each block in the precision of its result and argument, as JAX keeps it: float32
    entries of float32 functions of float32 arguments.  (Numba returns a float32 number
    as a Python float: a number result's precision is then that of the arguments.)

    >>> [b.dtype for b in _in_dtype([np.zeros(2)], 1.0, (np.zeros(2, np.float32),), [0])]
    [dtype('float32')]
    """
    if isinstance(value, np.ndarray | np.floating):
        out = value.dtype
    else:
        out = np.result_type(*[np.asarray(args[p]).dtype for p in positions])
    if out.kind != "f":
        return blocks
    return [block.astype(np.result_type(out, np.asarray(args[p]).dtype), copy=False)
            for block, p in zip(blocks, positions, strict=True)]


def _current_values(hit: tuple | None) -> tuple | None:
    """The global values to pass the driver ``hit``, or ``None`` if it is stale."""
    if hit is None or hit[0] is None or not hit[0].current():
        return None
    values = hit[0].global_values()
    return values if tuple(map(type_key, values)) == hit[2] else None


def _first_sight(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int]
                 ) -> tuple[Transform | None, Any, tuple]:
    """What the first call with ``args``'s types records: a driver for the next."""
    if defaulted or df.jit is False:
        return None, None, ()
    t = df.prepare(args, defaulted)
    return t, _LATER, tuple(map(type_key, t.global_values()))


def _new_driver(df: DifferentiableFunction, args: tuple, defaulted: frozenset[int]
                ) -> tuple[Transform | None, Callable | None, tuple]:
    """(transform, compiled driver or None, global types) for arguments like ``args``:
    a driver for float64 arguments and results under Numba."""
    if defaulted or df.jit is False:
        return None, None, ()
    t = df.prepare(args, defaulted)
    tangents: list[Any] = [None] * len(args)
    wrt = []
    for p in t.wrt_positions:
        arg = args[p]
        if isinstance(arg, float):
            tangents[p], ndim = 0.0, 0
        elif type(arg) is np.ndarray and arg.dtype == np.float64 and arg.size:
            tangents[p], ndim = np.zeros(arg.shape), arg.ndim
        else:
            return t, None, ()
        wrt.append((p, ndim))
    t, fn, passed = _validated(df, fresh(t, args), tuple(tangents))
    if not wrt or isinstance(fn, types.FunctionType):
        return t, None, ()
    value, tangent = running(t, fn, *fresh(t, passed))
    arrays = type(value) is np.ndarray and type(tangent) is np.ndarray \
        and value.dtype == tangent.dtype == np.float64 and value.shape == tangent.shape
    if not (arrays or type(value) is type(tangent) is float):
        return t, None, ()
    head = passed[:len(passed) - len(wrt)]
    made = _driver_code.setdefault(t, {})  # shared by the functions of one transform
    key = (fn, tuple(map(type_key, head)), tuple(wrt), arrays)
    if key not in made:
        made[key] = compiled_driver(fn, head, len(args), wrt, arrays, t.written_positions)
    return t, made[key], tuple(map(type_key, head[len(args):]))


def _basis(like: Any, flat: int) -> Any:
    """The ``flat``-th unit vector shaped like ``like`` (1.0 for a number)."""
    if np.ndim(like) == 0:
        return 1.0
    unit = np.zeros(np.shape(like))
    unit.flat[flat] = 1.0
    return unit


def jvp_directions(df: DifferentiableFunction, primals: tuple, directions: tuple
                   ) -> tuple[Any, Any]:
    """``(f(*primals), tangents)`` for several directions in one run: ``directions``
    holds, per argument, ``k`` tangents along a new leading axis (None for an argument
    not differentiated, or for zeros); the result's tangents come the same way.  The
    generated function prints with ``ad.source(f, *args, mode="directions")``.

    >>> import numpy as np
    >>> def f(x, y):
    ...     return x * y
    >>> jvp_directions(as_differentiable(f), (2.0, 3.0), (np.array([1.0, 0.0]), None))
    (6.0, array([3., 0.]))
    """
    t, args, _ = prepared(df, "jvp", primals)
    if t.structured or t.structured_result or t.structured_globals or \
            not t.wrt_positions:
        raise NonDifferentiableError("several tangent directions in one run take numbers "
                                     "and arrays, one differentiated at least",
                                     t.parsed.location(t.parsed.node), "use ad.jvp")
    k = next(int(np.shape(d)[0]) for d in directions if d is not None)
    carried = []
    for p in t.wrt_positions:
        like = np.asarray(args[p])
        dtype = like.dtype if like.dtype.kind == "f" else np.float64
        given = directions[p]
        block = np.zeros((k,) + like.shape, dtype) if given is None else \
            np.asarray(given, dtype)
        if block.shape != (k,) + like.shape:
            raise ArgumentError(f"the directions of argument {p + 1} of {df.__name__} have "
                                f"shape {block.shape}, not {(k,) + like.shape}")
        carried.append(block)
    passed = (*args, *passed_globals(t, t.global_values()), *carried)
    fn = jvp_callable(df, t, passed, directions=True)
    return running(t, fn, *passed)


def _columns(df: DifferentiableFunction, t: Transform, args: tuple,
             value: Any) -> list[np.ndarray]:
    """The forward-mode Jacobian blocks, one :func:`jvp` per column (the compiled
    driver takes over from the second call: it is faster than :func:`jvp_directions`
    for loops of numbers, and the directions form compiles several times slower)."""
    blocks = []
    for p in t.wrt_positions:
        shape = np.shape(args[p])
        columns = []
        for j in range(int(np.prod(shape, dtype=int))):
            tangents = [None] * len(args)
            tangents[p] = _basis(args[p], j)
            columns.append(np.asarray(jvp(df, fresh(t, args), tangents)[1],
                                      dtype=np.float64))
        block = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(value) + (0,))
        blocks.append(block.reshape(np.shape(value) + shape))
    return blocks


def _rows(df: DifferentiableFunction, given: tuple, args: tuple, positions: list[int],
          value: Any) -> list[np.ndarray]:
    """The reverse-mode Jacobian blocks, one pullback per entry of the result, of the
    call with the arguments ``given`` (``args`` bound: its defaults are constants)."""
    _, pullback = value_with_pullback(df, *given)
    rows: list[list[np.ndarray]] = [[] for _ in positions]
    for i in range(int(np.size(value))):
        cotangents = pullback(_basis(value, i))
        cotangents = cotangents if len(positions) > 1 else (cotangents,)
        for k, c in enumerate(cotangents):
            rows[k].append(np.asarray(c, dtype=np.float64))
    return [np.stack(r).reshape(np.shape(value) + np.shape(args[p]))
            for r, p in zip(rows, positions, strict=True)]
