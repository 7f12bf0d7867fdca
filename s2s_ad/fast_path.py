"""The steady-state call of an entry point: one generated function per validated call.

The first call of ``gradient(f)`` with given argument types does the work once:
it binds the arguments, transforms, compiles, checks the result kind and the
integer arguments.  What it found is then baked into a *plan*, a small Python
function generated for those argument types, which every later call runs
directly: it checks, in one expression, that the call is of the same kind (the
same number of positional arguments, each of the same :func:`type_key`) and that
what the transform was built from still holds (``Dependencies.hold``: no helper
redefined, no global function rebound, nothing registered since), reads the
global variables (whose types must be those seen), and calls the compiled kernel.
When any of this fails the plan answers :data:`MISS` and the call takes the full
path, which validates again and installs the plan of what it finds.

>>> import numpy as np
>>> print(guard("a0", np.float64, {}))
type(a0) is k0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .boundary import cast_like, type_key

#: What a plan returns when the call is not the one it was made for.
MISS = object()


def _miss(args: tuple) -> Any:
    return MISS


class FastPath:
    """The plan one entry point tried first (the last one validated for it)."""

    __slots__ = ("call",)

    def __init__(self) -> None:
        self.call: Callable[[tuple], Any] = _miss

    def reset(self) -> None:
        """Forget the plan: the next call takes the full path."""
        self.call = _miss


def _constant(value: Any, bound: dict[str, Any]) -> str:
    """The name under which the generated plan holds ``value``."""
    for name, held in bound.items():
        if held is value:
            return name
    name = f"k{len(bound)}"
    bound[name] = value
    return name


def guard(expr: str, key: Any, bound: dict[str, Any]) -> str:
    """A Python expression true exactly when ``type_key(<expr>) == key`` (or, for
    a dtype equal to but not the one seen, false: a miss, never a wrong hit)."""
    if isinstance(key, type):
        return f"type({expr}) is {_constant(key, bound)}"
    if isinstance(key, tuple) and key and key[0] is np.ndarray:
        _, dtype, ndim, layout = key
        return (f"type({expr}) is {_constant(np.ndarray, bound)} and {expr}.dtype is "
                f"{_constant(dtype, bound)} and {expr}.ndim == {ndim} and "
                f"{expr}.flags.num & 3 == {layout}")
    if isinstance(key, tuple) and key and key[0] is tuple and len(key) <= 9:
        items = [guard(f"{expr}[{i}]", k, bound) for i, k in enumerate(key[1:])]
        return " and ".join([f"type({expr}) is {_constant(tuple, bound)}",
                             f"len({expr}) == {len(key) - 1}", *items])
    return f"{_constant(type_key, bound)}({expr}) == {_constant(key, bound)}"


def cast_expression(expr: str, arg: str, key: Any, bound: dict[str, Any]) -> str:
    """The expression casting the cotangent ``expr`` like the argument ``arg`` of type
    ``key`` (:func:`cast_like`, inlined for floats: the common case)."""
    cast = f"{_constant(cast_like, bound)}({expr}, {arg})"
    if key is float:
        return f"({expr} if type({expr}) is {_constant(float, bound)} else float({expr}))"
    if isinstance(key, tuple) and key and key[0] is np.ndarray:
        return (f"({expr} if type({expr}) is {_constant(np.ndarray, bound)} and "
                f"{expr}.dtype is {arg}.dtype and {expr}.shape == {arg}.shape else {cast})")
    return cast


class PlanParts:
    """What a plan is made of: the validated call and how to run it."""

    def __init__(self, arg_keys: tuple, holds: tuple[str, dict[str, Any]], kernel: Callable,
                 note: Callable[[BaseException], None]):
        self.arg_keys = arg_keys  # type_key of each positional argument
        self.holds = holds  # Dependencies.condition of the transform: (expression, names)
        self.kernel = kernel  # the generated function (compiled or Python)
        self.note = note  # adds the user's location to an exception from the kernel
        self.globals: list[tuple[Callable[[], Any], Any]] = []  # (read, its type_key)
        self.pass_globals: Callable[[tuple], tuple] | None = None  # structures -> leaves
        self.lower: Callable[[tuple], tuple] | None = None  # structured arguments
        self.refuse: Callable[[tuple], None] | None = None  # written-into arguments
        self.result: Callable[[Any], Any] | None = None  # a structured primal result
        self.wrt_positions: list[int] = []


def build_plan(kind: str, parts: PlanParts) -> Callable[[tuple], Any]:
    """The plan of ``kind`` (``"primal"``, ``"value_and_gradient"`` or ``"gradient"``)."""
    holds, dependencies = parts.holds
    bound: dict[str, Any] = {"MISS": MISS, "kernel": parts.kernel, "note": parts.note,
                             **dependencies}
    n = len(parts.arg_keys)
    names = [f"a{i}" for i in range(n)]
    tests = [guard(name, key, bound) for name, key in zip(names, parts.arg_keys, strict=True)]
    lines = [f"if len(args) != {n}:", "    return MISS"]
    if n:
        lines.append(f"{', '.join(names)}, = args")
    # what the transform was built from holds (a missing name or empty cell raise: no)
    lines += ["try:", f"    if not ({' and '.join([*tests, f'({holds})'])}):",
              "        return MISS", "except (KeyError, ValueError):", "    return MISS"]
    values = []
    for j, (read, key) in enumerate(parts.globals):
        lines += [f"g{j} = {_constant(read, bound)}()",
                  f"if not ({guard(f'g{j}', key, bound)}):", "    return MISS"]
        values.append(f"g{j}")
    if parts.refuse is not None:
        lines.append(f"{_constant(parts.refuse, bound)}(args)")
    passed = names if parts.lower is None else [f"*{_constant(parts.lower, bound)}(args)"]
    if values and parts.pass_globals is not None:
        values = [f"*{_constant(parts.pass_globals, bound)}(({', '.join(values)},))"]
    call = f"kernel({', '.join([*passed, *values])})"
    lines += ["try:", f"    {'result' if kind == 'primal' else 'value, raw'} = {call}",
              "except Exception as exc:", "    note(exc)", "    raise"]
    lines += _returned(kind, parts, bound)
    body = "\n".join("        " + line for line in lines)
    source = (f"def make({', '.join(bound)}):\n    def plan(args):\n{body}\n"
              "    return plan\n")
    space: dict[str, Any] = {}
    exec(source, space)  # noqa: S102 - built above from fixed templates
    plan = space["make"](*bound.values())
    plan.source = source
    return plan


def _returned(kind: str, parts: PlanParts, bound: dict[str, Any]) -> list[str]:
    """The lines returning what the entry point returns (as the full path does)."""
    if kind == "primal":
        if parts.result is None:
            return ["return result"]
        return [f"return {_constant(parts.result, bound)}(result)"]
    lines = [f"r{k} = raw[{k}]" for k in range(len(parts.wrt_positions))]
    grads = [cast_expression(f"r{k}", f"a{i}", parts.arg_keys[i], bound)
             for k, i in enumerate(parts.wrt_positions)]
    grad = grads[0] if len(grads) == 1 else f"({', '.join(grads)},)"
    return [*lines, f"return {grad}" if kind == "gradient" else f"return value, {grad}"]


def build_jvp_plan(parts: PlanParts, tangent_keys: tuple,
                   convert: Callable[[int, Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The plan of ``jvp(f, primals, tangents)``: ``parts`` as for the other entry
    points, ``tangent_keys`` the :func:`type_key` of each differentiated argument's
    tangent as the kernel took it, ``convert(position, primal, tangent)`` the full
    path's check and conversion of a tangent (raising its error).  A tangent given as
    the kernel takes it is passed as it is; another is converted and must then be of
    the type seen; a tangent of an argument not differentiated must be ``None`` or a
    zero number: anything else misses, and the full path checks it."""
    bound = plan_names(parts, convert=convert)
    lines, arguments = jvp_lines(parts, tangent_keys, bound)
    return made_plan("primals, tangents",
                     lines + called(f"return kernel({', '.join(arguments)})"), bound)


def plan_names(parts: PlanParts, **more: Any) -> dict[str, Any]:
    """The names a plan of ``parts`` starts from (``more`` added)."""
    holds, dependencies = parts.holds
    return {"MISS": MISS, "kernel": parts.kernel, "note": parts.note, **more, **dependencies}


def jvp_lines(parts: PlanParts, tangent_keys: tuple, bound: dict[str, Any],
              zeros: frozenset[int] = frozenset()) -> tuple[list[str], list[str]]:
    """The lines of a plan of ``(primals, tangents)`` up to the kernel's call (see
    :func:`build_jvp_plan`), and the kernel's arguments: the primals, the globals, the
    tangents of the differentiated arguments, and a zero tangent (``convert(position,
    value, None)``) for each position in ``zeros`` not differentiated, numbering the
    arguments then the globals (forward mode over gradient code differentiates every
    float value it takes)."""
    holds = parts.holds[0]
    n = len(parts.arg_keys)
    names = [f"a{i}" for i in range(n)]
    tests = [guard(name, key, bound) for name, key in zip(names, parts.arg_keys, strict=True)]
    lines = [f"if len(primals) != {n} or len(tangents) != {n}:", "    return MISS"]
    if n:
        lines += [f"{', '.join(names)}, = primals", f"{', '.join(f't{i}' for i in range(n))}, = "
                  "tangents"]
    lines += ["try:", f"    if not ({' and '.join([*tests, f'({holds})'])}):",
              "        return MISS", "except (KeyError, ValueError):", "    return MISS"]
    values = []
    for j, (read, key) in enumerate(parts.globals):
        lines += [f"g{j} = {_constant(read, bound)}()",
                  f"if not ({guard(f'g{j}', key, bound)}):", "    return MISS"]
        values.append(f"g{j}")
    if parts.refuse is not None:  # it writes into arguments: none may share memory
        lines.append(f"{_constant(parts.refuse, bound)}(primals)")
    numbers = _constant((int, float), bound)
    carried = []
    for i in range(n):
        if i not in parts.wrt_positions:
            lines += [f"if t{i} is not None and (type(t{i}) not in {numbers} or t{i} != 0):",
                      "    return MISS"]
            if i in zeros:
                carried.append(_zero(i, f"a{i}", parts.arg_keys[i]))
            continue
        key = tangent_keys[parts.wrt_positions.index(i)]
        test = guard(f"t{i}", key, bound)
        if isinstance(key, tuple):
            test += f" and t{i}.shape == a{i}.shape"
        lines += [f"c{i} = t{i}", f"if not ({test}):", f"    c{i} = convert({i}, a{i}, t{i})",
                  f"    if not ({guard(f'c{i}', key, bound)}):", "        return MISS"]
        carried.append(f"c{i}")
    carried += [_zero(n + j, f"g{j}", key) for j, (_, key) in enumerate(parts.globals)
                if n + j in zeros]
    return lines, [*names, *values, *carried]


def _zero(position: int, expr: str, key: Any) -> str:
    """The zero tangent of the value ``expr`` of type ``key`` at ``position``."""
    return "0.0" if key is float else f"convert({position}, {expr}, None)"


def called(statement: str) -> list[str]:
    """``statement`` calling the kernel, an exception it raises noted with the user's line."""
    return ["try:", f"    {statement}", "except Exception as exc:", "    note(exc)", "    raise"]


def made_plan(params: str, lines: list[str], bound: dict[str, Any]) -> Callable:
    """The function ``plan(<params>)`` running ``lines``, over the names ``bound``."""
    body = "\n".join("        " + line for line in lines)
    source = (f"def make({', '.join(bound)}):\n    def plan({params}):\n{body}\n"
              "    return plan\n")
    space: dict[str, Any] = {}
    exec(source, space)  # noqa: S102 - built from fixed templates
    plan = space["make"](*bound.values())
    plan.source = source
    return plan
