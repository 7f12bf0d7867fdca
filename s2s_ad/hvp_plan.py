"""The steady-state call of ``ad.hvp``: one generated function per validated call.

The full path of :func:`s2s_ad.higher_order.value_gradient_and_hvp` finds the
transform of the user's function, the transform of its gradient code and the
compiled jvp of that code.  What it found is baked into a *plan*, as for ``jvp``
(:func:`s2s_ad.fast_path.build_jvp_plan`, whose guards it shares): it checks that
the call is of the same kind (each primal and tangent of the type seen), that
both transforms still hold (no helper redefined, no global function rebound,
nothing registered since), reads the globals (of the types seen), and calls the
kernel with the tangents it takes: the user's, and a zero for every other float
value the gradient code takes (forward mode over it differentiates them all).
Anything else answers :data:`~s2s_ad.fast_path.MISS`, and the full path runs.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .argument_memory import refuse_overlaps
from .boundary import type_key
from .compiler.pipeline import Transform
from .fast_path import PlanParts, called, cast_expression, jvp_lines, made_plan, plan_names
from .forward_mode import note_location, tangent_of

_plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> its last plan
_made: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> its plans


def steady_plan(df: Any) -> Callable[[Any, Any], Any] | None:
    """The plan of ``df``'s last validated Hessian-vector product, or None."""
    return _plans.get(df)


def install(df: Any, t: Transform, inner_t: Transform, fn: Callable,
            passed: tuple, carried: list) -> None:
    """Make the plan of a call just validated the one ``df`` tries first: ``t`` the
    transform of ``df``, ``inner_t`` of its gradient code, ``fn`` the jvp of that code,
    ``passed`` the primals then the globals, ``carried`` the tangents ``fn`` took.
    Plans are made once per transforms and types, and hold nothing keeping ``df``
    alive."""
    n = len(t.parsed.params)
    inner_wrt = list(inner_t.wrt_positions)
    if not set(t.wrt_positions) <= set(inner_wrt) or len(passed) < n:
        return  # (no such call reaches here; the full path serves it anyway)
    arg_keys = tuple(map(type_key, passed[:n]))
    global_keys = tuple(map(type_key, passed[n:]))
    tangent_keys = tuple(type_key(carried[inner_wrt.index(p)]) for p in t.wrt_positions)
    made = _made.setdefault(df, {})
    key = (arg_keys, global_keys, tangent_keys)
    hit = made.get(key)
    if hit is None or hit[0] is not t or hit[1] is not inner_t or hit[2] is not fn:
        plan = _build(t, inner_t, fn, arg_keys, global_keys, tangent_keys, df.__name__)
        hit = made[key] = (t, inner_t, fn, plan)
    _plans[df] = hit[3]


def _holds(*transforms: Transform) -> tuple[str, dict[str, Any]]:
    """The condition that every one of ``transforms`` still holds, as one expression."""
    tests, names = [], {}
    for k, t in enumerate(transforms):
        if t.dependencies is not None:
            test, bound = t.dependencies.condition(f"d{k}_")
            tests.append(f"({test})")
            names.update(bound)
    return " and ".join(tests) or "True", names


def _build(t: Transform, inner_t: Transform, fn: Callable, arg_keys: tuple,
           global_keys: tuple, tangent_keys: tuple, owner: str) -> Callable:
    """The plan ``plan(primals, tangents)`` returning ``(value, gradient, H @ tangents)``
    as the full path does (bare for one differentiated parameter, else tuples)."""
    parts = PlanParts(arg_keys, _holds(t, inner_t), fn,
                      functools.partial(note_location, inner_t, fn))
    parts.globals = [(read.value, k)
                     for read, k in zip(t.generated.hidden, global_keys, strict=True)]
    parts.wrt_positions = list(t.wrt_positions)
    if t.written_positions:  # it writes into arguments: none may share memory
        parts.refuse = functools.partial(refuse_overlaps, owner, t.parsed.params,
                                         t.written_positions)
    params = inner_t.parsed.params  # the user's parameters, then the globals read

    def convert(position: int, primal: Any, tangent: Any) -> Any:
        return tangent_of(owner, params[position], primal, tangent)

    bound = plan_names(parts, convert=convert)
    zeros = frozenset(inner_t.wrt_positions) - frozenset(t.wrt_positions)
    lines, arguments = jvp_lines(parts, tangent_keys, bound, zeros)
    lines += called(f"(value, grads), (_, products) = kernel({', '.join(arguments)})")
    grads = _cast_each("grads", t.wrt_positions, arg_keys, bound)
    products = _cast_each("products", t.wrt_positions, arg_keys, bound)
    lines.append(f"return value, {grads}, {products}")
    return made_plan("primals, tangents", lines, bound)


def _cast_each(name: str, positions: list[int], arg_keys: tuple, bound: dict[str, Any]
               ) -> str:
    """The expression of the derivatives ``name`` (one per position), each cast like its
    argument as :func:`s2s_ad.boundary.cast_each` does: bare for one, else a tuple.  A
    float64 array is as the kernel returns it (no test at each call)."""
    items = []
    for k, p in enumerate(positions):
        key, item = arg_keys[p], f"{name}[{k}]"
        if not (type(key) is tuple and key[0] is np.ndarray and key[1] == np.float64):
            item = cast_expression(item, f"a{p}", key, bound)
        items.append(item)
    return items[0] if len(items) == 1 else f"({', '.join(items)},)"
