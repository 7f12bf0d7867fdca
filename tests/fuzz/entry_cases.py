"""The cases of the entry-point fuzzer: a base fuzzer program wrapped by a function
written the ways users call the forward and second-order entry points.

A :class:`Case` is the program's module with two functions appended: the wrapper
``W`` (what the entry point differentiates) and a plain reference ``R`` (the same
mathematics written so that finite differences give the derivative the wrapper's
semantics promise: a stop-gradient marker becomes a constant argument, a gradient
called inside becomes its formula). The variations:

- ``plain``: the program's own function;
- ``defaults``: parameters with defaults the call leaves out;
- ``marker``: ``without_derivative`` of a value the result also depends on;
- ``alias``: the array argument passed twice, neither written; ``alias_write``:
  passed twice and one of them written (every entry point must refuse);
- ``writes``: the wrapper writes into its array argument before the program reads it
  (the derivative is at the caller's point, and the caller's array is changed at most
  as one call of the function changes it);
- ``float32``: every float argument in single precision (results keep it);
- ``tuple``, ``dict``, ``array``: structured results;
- ``out_of_range``: an index past either end, read or written (must raise
  ``IndexError``), and ``in_range`` its negative-index twin that must not;
- ``nested``: ``s2s_ad.gradient`` / ``s2s_ad.jvp`` of a helper called inside.

Names of the wrapper, its extra parameters and the helpers are drawn from a pool
that collides with the names generated code uses.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import numpy as np

VARIATIONS = ("plain", "defaults", "marker", "alias", "alias_write", "writes", "float32",
              "tuple", "dict", "array", "out_of_range", "in_range", "nested")
SCALAR_ONLY = {"marker"}  # variations whose wrapper needs a number from the program
NEEDS_FLOAT_ARRAY = {"alias", "alias_write", "writes"}
NEEDS_ARRAY = {"out_of_range", "in_range"}
NEEDS_FLOAT = {"nested"}

NAME_POOL = ("loss", "objective", "energy", "d_loss", "value", "residuals", "pullback",
             "tangent", "t_value", "d_value", "primals", "tangents", "scale", "shift",
             "other", "buffer", "index", "k", "g", "inner", "h", "v", "fwd", "rt_1",
             "x_tape", "n_iter", "d_x", "result", "grad", "hess", "w_bar", "cot")


@dataclass
class Case:
    """One check's program: ``source`` defines ``wrapper`` and ``reference``; the entry
    point runs ``wrapper`` at ``args`` (``alias_of``: pairs of positions that must be
    one array object); ``reference(*args, *extra)`` is the plain mathematics."""

    variation: str
    source: str
    wrapper: str
    reference: str
    args: tuple
    extra: tuple = ()
    alias_of: tuple[int, int] | None = None
    expect: str = "derivative"  # or "IndexError", "refusal"
    scalar_result: bool = True
    notes: list[str] = field(default_factory=list)


def applicable(variation: str, args: tuple, scalar: bool) -> bool:
    """Whether ``variation`` can wrap a program of these arguments and result."""
    if variation in SCALAR_ONLY and not scalar:
        return False
    if variation in NEEDS_FLOAT_ARRAY:
        return _float_array(args) is not None
    if variation in NEEDS_ARRAY:
        return any(isinstance(a, np.ndarray) and a.ndim == 1 and a.size for a in args)
    if variation in NEEDS_FLOAT:
        return any(type(a) is float for a in args)
    if variation == "float32":
        return any(type(a) is float or _is_float_array(a) for a in args)
    return True


def _is_float_array(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _float_array(args: tuple) -> int | None:
    return next((i for i, a in enumerate(args) if _is_float_array(a) and a.ndim == 1), None)


def _fresh_names(rng: random.Random, taken: set[str], count: int) -> list[str]:
    names = []
    pool = [n for n in NAME_POOL if n not in taken]
    rng.shuffle(pool)
    for n in pool:
        if len(names) == count:
            break
        names.append(n)
        taken.add(n)
    k = 0
    while len(names) < count:  # the pool is used up: numbered names
        candidate = f"w{k}"
        k += 1
        if candidate not in taken:
            names.append(candidate)
            taken.add(candidate)
    return names


def words_of(source: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", source))


def build(program, args: tuple, value, variation: str, rng: random.Random) -> Case:
    """The case of ``variation`` wrapping ``program`` (``fname(*args) == value``)."""
    taken = words_of(program.source) | {"numpy", "s2s_ad", "math", "np", "ad"}
    w, r, *extra = _fresh_names(rng, taken, 6)
    params = list(program.params)
    f = program.fname
    call = f"{f}({', '.join(params)})"
    head = "\n\nimport numpy\nimport s2s_ad\n\n\n"
    scalar = np.ndim(value) == 0
    maker = _MAKERS[variation]
    body, ref, case = maker(w=w, r=r, extra=extra, params=params, call=call, args=args,
                            value=value, rng=rng)
    case.source = program.source + head + body + "\n\n\n" + ref + "\n"
    case.wrapper, case.reference, case.variation = w, r, variation
    case.scalar_result = scalar and variation not in ("tuple", "dict", "array")
    return case


def _sig(params: list[str]) -> str:
    return ", ".join(params)


def _same(w, r, params, call, body_lines, args, extra_params=(), extra_args=()):
    sig = _sig(params + list(extra_params))
    body = "\n".join(f"    {line}" for line in body_lines)
    return (f"def {w}({sig}):\n{body}\n",
            f"def {r}({sig}):\n{body}\n",
            Case("", "", "", "", tuple(args) + tuple(extra_args)))


def _unchanged(w, r, extra, params, call, args, value, rng):
    return _same(w, r, params, call, [f"return {call}"], args)


def _defaults(w, r, extra, params, call, args, value, rng):
    k1, k2 = extra[:2]
    a, b = rng.choice([1.25, 0.5, -2.0]), rng.choice([-0.5, 3.0, 0.0])
    lines = [f"return {call} * {k1} + {k2}"]
    wrapper = f"def {w}({_sig(params)}, {k1}={a}, {k2}={b}):\n    " + lines[0] + "\n"
    reference = f"def {r}({_sig(params)}, {k1}={a}, {k2}={b}):\n    " + lines[0] + "\n"
    return wrapper, reference, Case("", "", "", "", tuple(args))


def _marker(w, r, extra, params, call, args, value, rng):
    c = extra[0]
    use = rng.choice([f"{call} * {c} + {c}", f"{call} * {call} * {c}", f"{c} * {c} + {call}"])
    wrapper = (f"def {w}({_sig(params)}):\n    {c} = s2s_ad.without_derivative({call})\n"
               f"    return {use}\n")
    reference = f"def {r}({_sig(params)}, {c}):\n    return {use}\n"
    return wrapper, reference, Case("", "", "", "", tuple(args), extra=(float(value),))


def _alias(w, r, extra, params, call, args, value, rng, write: bool = False):
    other = extra[0]
    position = _float_array(args)
    arr = params[position]
    if write:
        first = rng.choice([f"{other} *= 1.5", f"{other}[0] = {other}[0] * 2.0 + 1.0",
                            f"{other}[:] = {other} + 0.25"])
        lines = [first, f"return {call} + numpy.sum({other}) * 0.5"]
    else:
        lines = [f"return {call} + numpy.sum({other} * {arr}) * 0.5"]
    wrapper, reference, case = _same(w, r, params, call, lines, args, [other],
                                     [args[position]])
    case.alias_of = (position, len(args))
    case.expect = "refusal" if write else "derivative"
    return wrapper, reference, case


def _alias_write(**kw):
    return _alias(**kw, write=True)


def _writes(w, r, extra, params, call, args, value, rng):
    arr = params[_float_array(args)]
    first = rng.choice([f"{arr} *= 1.5", f"{arr}[0] = {arr}[0] * 2.0 + 1.0",
                        f"{arr}[-1] += {arr}[0]", f"{arr}[:] = numpy.sin({arr})"])
    return _same(w, r, params, call, [first, f"return {call}"], args)


def _float32(w, r, extra, params, call, args, value, rng):
    return _same(w, r, params, call, [f"return {call}"], args)


def _tuple(w, r, extra, params, call, args, value, rng):
    first = extra[0]
    return _same(w, r, params, call,
                 [f"{first} = {call}", f"return ({first}, {first} * 2.0)"], args)


def _dict(w, r, extra, params, call, args, value, rng):
    first = extra[0]
    return _same(w, r, params, call,
                 [f"{first} = {call}", f"return {{'first': {first}, 'second': {first} * {first}}}"],
                 args)


def _array(w, r, extra, params, call, args, value, rng):
    first = extra[0]
    if np.ndim(value) == 0:
        ret = f"return numpy.array([{first}, {first} * {first}, 1.0 - {first}])"
    else:
        ret = f"return numpy.stack([{first}, {first} * 3.0])"
    return _same(w, r, params, call, [f"{first} = {call}", ret], args)


def _index_target(args: tuple) -> int:
    return next(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim == 1
                and a.size)


def _indexed(w, r, extra, params, call, args, value, rng, inside: bool):
    position = _index_target(args)
    arr, n = params[position], args[position].size
    if inside:
        index = rng.choice([-1, -n, 0, n - 1])
    else:
        index = rng.choice([n, n + 3, -n - 1, 10**6])
    copy, k = extra[:2]
    read = rng.random() < 0.6
    via_argument = rng.random() < 0.4
    at = k if via_argument else str(index)
    if read:
        lines = [f"return {call} + {arr}[{at}] * 0.5"]
    else:
        lines = [f"{copy} = {arr} * 1.0", f"{copy}[{at}] = 2.0",
                 f"return {call} + numpy.sum({copy}) * 0.5"]
    extra_params, extra_args = ([k], [index]) if via_argument else ([], [])
    wrapper, reference, case = _same(w, r, params, call, lines, args, extra_params, extra_args)
    case.expect = "derivative" if inside else "IndexError"
    return wrapper, reference, case


def _out_of_range(**kw):
    return _indexed(**kw, inside=False)


def _in_range(**kw):
    return _indexed(**kw, inside=True)


# d/dt (t * t / 2 + sin t) = t + cos t;  d/dy (t * y * y) = 2 t y (at y = 1: 2 t)
_INNERS = (
    ("s2s_ad.gradient({inner})({s})", "({s} + numpy.cos({s}))",
     "def {inner}(t):\n    return t * t * 0.5 + numpy.sin(t)\n"),
    ("s2s_ad.jvp({inner}, ({s},), (1.0,))[1]", "({s} + numpy.cos({s}))",
     "def {inner}(t):\n    return t * t * 0.5 + numpy.sin(t)\n"),
    ("s2s_ad.gradient({inner}, wrt='y')({s}, 1.0)", "(2.0 * {s})",
     "def {inner}(t, y):\n    return t * y * y\n"),
    ("s2s_ad.value_and_gradient({inner})({s})[1]", "({s} + numpy.cos({s}))",
     "def {inner}(t):\n    return t * t * 0.5 + numpy.sin(t)\n"),
)


def _nested(w, r, extra, params, call, args, value, rng):
    inner, slope = extra[:2]
    s = params[next(i for i, a in enumerate(args) if type(a) is float)]
    inside, formula, helper = rng.choice(_INNERS)
    wrapper = (helper.format(inner=inner) + "\n\n" +
               f"def {w}({_sig(params)}):\n    {slope} = {inside.format(inner=inner, s=s)}\n"
               f"    return {call} * {slope}\n")
    reference = (f"def {r}({_sig(params)}):\n    {slope} = {formula.format(s=s)}\n"
                 f"    return {call} * {slope}\n")
    return wrapper, reference, Case("", "", "", "", tuple(args))


_MAKERS = {"plain": _unchanged, "defaults": _defaults, "marker": _marker, "alias": _alias,
           "alias_write": _alias_write, "writes": _writes, "float32": _float32,
           "tuple": _tuple, "dict": _dict, "array": _array, "out_of_range": _out_of_range,
           "in_range": _in_range, "nested": _nested}
