"""Random Python programs for the gradient fuzzer, with names drawn to collide.

A generated program is one module: imports, a few module-level numeric
globals (floats, sometimes a float array and an int array), sometimes a helper
function and a function returning its argument, and the function ``f`` (its
name is drawn too) under test, of float parameters and sometimes a float64
array parameter of length 3-5, an int array parameter (values usable as
indices) or a bool array parameter. Sometimes ``f`` is a closure:
``def make(w, c): def f(...): ...; return f`` and ``f = make(np.array([...]),
0.5)``, with a second closure ``f_1 = make(<another array>, ...)``.

It covers straight-line arithmetic, ``math`` calls (sin, cos, exp, log and
sqrt of positive-ised arguments, tanh, atan2, hypot), ``**`` with constant and
variable exponents (also ``x ** n`` with an int loop counter ``n``, and float
parameters that are exactly 0.0), ``max``/``min`` with constants on either
side, ``%``, ``if``/``else``, conditional expressions, ``and``/``or``,
``for``/``range`` loops with accumulators, ``for e in t`` over tuples, list
displays and tuple displays, ``while`` loops with a counter and ``break``,
``continue``, early ``return``, calls of a helper (returning a float or a
tuple), tuples (packing, unpacking, swaps, nested tuples and their items,
items at a loop counter, slices with constant bounds, concatenation,
``sum``/``max``/``min``/``len``), list displays that are only read (``pair =
[p, q]``, ``[[a, b], c]``, ``np.concatenate([u, v])``), array item reads,
writes into a local copy, aliases of a written array (``z, w = y, c``, ``t =
(y, c)``, ``z = same(y)``, then an item write and reads of the alias), int
arrays (``np.array([0, 2, 1])``, reductions with ``axis``, ``np.mean``,
``v[k]``, ``v * k``), bool arrays from comparisons (``np.sum(v > 0)``,
``np.where(m, v, c)``, ``v[m]``, ``v * m``), a float name rebound to an array,
``np.sum``, element-wise NumPy calls, and globals and closure variables. Round 3
adds lists that grow (``items = []`` / ``items = [a, b]``, then ``append`` and
``extend`` in ``for``/``while`` loops and branches, items floats or arrays of
one shape; read by index, ``len``, ``for``/``enumerate``, ``sum``/``max``/``min``,
``np.sum``/``np.mean``/``np.array``/``np.stack``/``np.concatenate``; rarely an
item write, ``pop``, a slice or an alias, which s2s_ad refuses), list
comprehensions and generator expressions (over ranges, arrays, tuples, lists,
``zip`` and ``enumerate``, with ``if`` filters and nested ``for``s, their
variable sometimes shadowing an outer name; as values and as arguments), and
writes through a 1-d int index array or a boolean mask (``y[idx] = v``,
``y[idx] += v``, ``y[v < 0.0] = c``; repeated and negative indices; in loops).
The newer constructs are optional per program (``OPTIONAL``): each program draws a
subset, so that a compiler bug in one of them does not show in every program.
Programs with globals usually come with ``updates``: new values the oracle
gives the globals (rebinding them, or changing arrays in place) before it
checks the gradient again.

**Names.** Every variable, parameter, loop counter, global, helper and the
function itself is named from a pool that mixes ordinary names with the names
the compiler itself uses: the parameters of rule templates (``a``, ``b``,
``x``, ``y``, ``z``, ``g``, ...), the stems of generated names (``d_x``,
``value``, ``residuals``, ``n_iter``, ``position``, ``x_tape``...), names the
generated module binds (``np``, ``math``, ``rt``, ``ar``, ``List``) and the
builtins and loop variable the generated code uses (``len``, ``_``). A program
imports either ``import math`` / ``import numpy as np`` (then ``math`` and
``np`` cannot be locals) or ``from math import sin, ...`` / ``import numpy``
(then they can).

Generation is written against a small :class:`Chooser` interface with two
backends: :class:`RandomChooser` (``random.Random``; fast, reproducible from
one integer seed, used by ``run_fuzz.py`` and ``test_fuzz.py``) and
:class:`HypothesisChooser` (``hypothesis`` draws; :func:`programs` is the
strategy, for shrinking-friendly property tests).

Programs are built to be valid: every name is bound before it is read, loop
counters index arrays within bounds, denominators are ``1 + e*e`` (or a
constant), ``log``/``sqrt``/variable ``**`` see ``1 + e*e``, ``exp`` sees a
bounded argument, and loop-carried updates are bounded. Smoothness at the
evaluation point is checked by the oracle (see ``oracle.py``), which runs an
instrumented copy of the module.
"""

from __future__ import annotations

import importlib.util
import itertools
import keyword
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------
# The name pool
# ---------------------------------------------------------------------------

ORDINARY = ("p", "q", "r", "s", "t", "u", "acc", "tmp", "w1", "k2", "alpha", "beta", "total")

# Parameters of rule templates (s2s_ad/rules/*_rules.py): ``g`` is
# the cotangent and ``z`` the result in every template.
TEMPLATE = ("a", "b", "x", "y", "z", "g", "c", "base", "lo", "hi", "A", "n", "axis", "start",
            "seq", "shape", "num")

# Stems and whole names that normalize / control / reverse / saving generate.
GENERATED = (
    "d_x", "d_y", "d_a", "d_b", "d_g", "d_z", "d_value", "d_value_1", "value", "value_1",
    "result", "residuals", "tape", "trip_count", "position", "n_iter", "returned", "retval",
    "skip", "stop", "loop_cond", "ifexp", "boolop", "cond", "cond_t", "not_boolop", "tup",
    "t_1", "cmp", "text", "i", "i_1", "x_saved", "x_tape", "x_stack", "x_stack_top", "x_read",
    "x_initial", "x_final", "x_overwritten", "d_x_in", "d_x_1", "counter", "sin_x",
    "x_mul_y", "a_add_b", "neg_x", "mul", "add", "external", "call", "x_val", "tanh_x",
    "exp_x", "max", "min", "helper_residuals", "helper_grads", "f_forward", "f_pullback",
    "f_value_and_grad", "position_1", "n_iter_1", "trip_count_1", "d_value_in",
    # lists that grow and comprehensions (normalize/growing.py, reverse/lists.py) and
    # writes through index arrays (rt.written_items)
    "items", "d_items", "item", "items_array", "items_len", "len_v", "w_1", "items_1",
    "written", "idx",
)

# Names the generated module binds or the generated code calls.
MODULE_LEVEL = ("rt", "ar", "List", "_", "len", "np", "math", "numpy_")

# Derived names: built from another name of the same function, the way the
# compiler builds its own (d_<v>, <v>_saved, ...).
DERIVED = ("d_{}", "{}_saved", "{}_tape", "{}_stack", "{}_read", "{}_in", "{}_1",
           "{}_initial", "{}_final", "{}_overwritten", "sin_{}", "{}_mul_{}", "neg_{}",
           "d_{}_in", "{}_residuals", "{}_grads")

MAIN_NAMES = ("f", "f", "f", "f", "value", "g", "loss", "result", "d_value", "z", "rt",
              "forward", "pullback")
HELPER_NAMES = ("helper", "helper", "g", "z", "value", "result", "rt", "ar", "tape", "d_x",
                "position", "f_forward", "f_pullback", "residuals", "List", "sq")
# a factory of closures (``def make(w): def inner(...): ...; return inner``)
FACTORY_NAMES = ("make", "make", "factory", "closure", "g", "value", "rt", "f_forward",
                 "residuals", "tape", "List", "outer")
# a function returning its argument (an alias of an array)
IDENT_NAMES = ("same", "ident", "g", "z", "value", "rt", "ar", "tape", "d_x", "residuals",
               "List", "f_pullback")
# module-level globals (and closure variables)
GLOBAL_NAMES = TEMPLATE + GENERATED + ("rt", "ar", "List", "K", "scale", "W", "weights")

# Builtins and library names the programs themselves call: never locals.
CALLED_BUILTINS = {"max", "min", "range", "print", "abs", "float", "int", "sum", "pow",
                   "enumerate", "zip", "list",
                   "True", "False", "None"}

MATH_FUNCTIONS = ("sin", "cos", "exp", "log", "sqrt", "tanh", "atan2", "hypot")

CONSTANTS = (0.5, 1.5, -0.75, 2.0, 0.25, -1.25, 3.0, 0.0, 1.0, -2.0, 0.1)

COMPARISONS = ("<", ">", "<=", ">=")

# Constructs a program may use (each program draws a subset): int arrays (parameter,
# global, ``np.array([0, 2, 1])``) and their reductions, bool arrays from comparisons,
# aliases of a written array, tuple slices and concatenation, list displays, iteration
# over tuples and lists, ``x ** n`` with an int counter, a float name rebound to an array,
# ``np.concatenate([u, v])``; round 3: lists that grow (``append``/``extend``), list
# comprehensions and generator expressions, writes through an index array or a mask.
OPTIONAL = ("int", "bool", "alias", "tuple-ops", "list", "pow-counter", "rebind-array",
            "concat", "tuple-iter", "grow-list", "comprehension", "index-write")


# ---------------------------------------------------------------------------
# Choosers
# ---------------------------------------------------------------------------


class Chooser:
    """Where the random decisions come from."""

    def choice(self, seq):
        raise NotImplementedError

    def integer(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def boolean(self, p: float = 0.5) -> bool:
        raise NotImplementedError

    def real(self, lo: float, hi: float) -> float:
        raise NotImplementedError


class RandomChooser(Chooser):
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def choice(self, seq):
        seq = list(seq)
        return seq[self.rng.randrange(len(seq))]

    def integer(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def boolean(self, p: float = 0.5) -> bool:
        return self.rng.random() < p

    def real(self, lo: float, hi: float) -> float:
        # rounded so the program text and the report stay short
        return round(self.rng.uniform(lo, hi), 6)


class HypothesisChooser(Chooser):
    def __init__(self, draw):
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def choice(self, seq):
        return self.draw(self.st.sampled_from(list(seq)))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def boolean(self, p: float = 0.5) -> bool:
        # biased like the random backend; shrinks towards False
        return self.draw(self.st.integers(0, 999)) < int(p * 1000)

    def real(self, lo: float, hi: float) -> float:
        value = self.draw(self.st.floats(lo, hi, allow_nan=False, allow_infinity=False))
        return round(value, 6)


# ---------------------------------------------------------------------------
# Programs
# ---------------------------------------------------------------------------


@dataclass
class Program:
    """A generated module: ``source`` defines ``fname``; ``points`` are argument tuples
    to differentiate at (the oracle uses the first one that is away from kinks)."""

    source: str
    fname: str
    params: list[str]
    array_param: str | None
    array_result: bool
    points: list[tuple]
    features: set[str] = field(default_factory=set)
    seed: int | None = None
    # globals changed between calls: steps, each a list of (global, how, value) with how
    # "rebind" (module.G = value) or "inplace" (module.G[:] = value); the oracle checks
    # the gradient again after each step
    updates: list[list[tuple[str, str, Any]]] = field(default_factory=list)
    # a second closure made by the same factory with another array (checked too, and
    # then ``fname`` again: each closure must keep its own gradient)
    twin: str | None = None

    @staticmethod
    def describe_step(step: list) -> str:
        return "; ".join(f"{name} = {_value_repr(value)}" if how == "rebind"
                         else f"{name}[:] = {_value_repr(value)}" for name, how, value in step)

    def describe_updates(self) -> str:
        return " | then ".join(self.describe_step(step) for step in self.updates)

    def describe_point(self, args: tuple) -> str:
        return ", ".join(_arg_repr(a) for a in args)


def _arg_repr(a) -> str:
    import numpy as np

    if isinstance(a, np.ndarray):
        return f"np.array({a.tolist()!r})"
    return repr(a)


def _value_repr(value) -> str:
    if isinstance(value, list):
        return f"np.array({value!r})"
    return repr(value)


@dataclass
class Scope:
    floats: list[str]
    ints: list[tuple[str, int]] = field(default_factory=list)  # (name, max value)
    arrays: list[str] = field(default_factory=list)  # float arrays of the common length
    writable: list[str] = field(default_factory=list)  # local arrays that may be written
    tuples: dict[str, tuple] = field(default_factory=dict)  # name -> structure
    lists: set[str] = field(default_factory=set)  # the "tuples" built as list displays
    int_arrays: list[str] = field(default_factory=list)  # values in 0..len-1 (indices)
    bool_arrays: list[str] = field(default_factory=list)
    # lists that grow: name -> (item kind "f" (float) or "a" (array of the common length),
    # the fewest items it can hold here)
    growing: dict[str, tuple[str, int]] = field(default_factory=dict)
    frozen: set[str] = field(default_factory=set)  # lists iterated here: never appended to
    depth: int = 0
    loop_depth: int = 0
    in_while_counter: str | None = None
    in_helper: bool = False

    def nested(self, **changes) -> Scope:
        values = dict(floats=list(self.floats), ints=list(self.ints), arrays=list(self.arrays),
                      writable=list(self.writable), tuples=dict(self.tuples),
                      lists=set(self.lists), int_arrays=list(self.int_arrays),
                      bool_arrays=list(self.bool_arrays), growing=dict(self.growing),
                      frozen=set(self.frozen), depth=self.depth + 1, loop_depth=self.loop_depth,
                      in_while_counter=self.in_while_counter, in_helper=self.in_helper)
        values.update(changes)
        return Scope(**values)


class _Names:
    """Names of one function: each name keeps one kind (float, int, array, tuple)."""

    def __init__(self, ch: Chooser, forbidden: set[str]):
        self.ch = ch
        self.forbidden = set(forbidden)
        self.kinds: dict[str, str] = {}
        self._plain = itertools.count()
        self.called: set[str] = set()  # pool names called as builtins (``len``)

    def builtin(self, fn: str) -> bool:
        """Whether the function may call the builtin ``fn`` (``len`` is also a pool name):
        not when it is a local or a module-level name; once called, never a local."""
        if fn in self.kinds or (fn in self.forbidden and fn not in self.called):
            return False
        self.forbidden.add(fn)
        self.called.add(fn)
        return True

    def _candidate(self) -> str:
        roll = self.ch.integer(0, 99)
        if roll < 25:
            return self.ch.choice(ORDINARY)
        if roll < 50:
            return self.ch.choice(TEMPLATE)
        if roll < 75:
            return self.ch.choice(GENERATED)
        if roll < 88:
            return self.ch.choice(MODULE_LEVEL)
        existing = sorted(self.kinds) or ["x"]
        pattern = self.ch.choice(DERIVED)
        return pattern.format(*[self.ch.choice(existing) for _ in range(pattern.count("{}"))])

    def ok(self, name: str, kind: str) -> bool:
        return (name.isidentifier() and not keyword.iskeyword(name)
                and name not in self.forbidden and self.kinds.get(name, kind) == kind)

    def fresh(self, kind: str, avoid: set[str] = frozenset()) -> str:
        """A name for a new variable of ``kind`` (one not used yet in this function)."""
        for _ in range(30):
            name = self._candidate()
            if name not in self.kinds and name not in avoid and self.ok(name, kind):
                self.kinds[name] = kind
                return name
        while True:
            name = f"v{next(self._plain)}"
            if name not in self.kinds and name not in self.forbidden:
                self.kinds[name] = kind
                return name


class Generator:
    """Builds one program from a :class:`Chooser`."""

    def __init__(self, ch: Chooser, max_statements: int = 6, allow_arrays: bool = True):
        self.ch = ch
        self.max_statements = max_statements
        self.allow_arrays = allow_arrays
        self.features: set[str] = set()

    # -- module ----------------------------------------------------------------------
    def program(self) -> Program:
        ch = self.ch
        self.style = ch.choice(("module", "module", "from"))
        if self.style == "module":
            self.imports = ["import math", "import numpy as np"]
            self.m = "math."
            self.npm = "np"
            taken = {"math", "np"}
        else:
            self.imports = [f"from math import {', '.join(MATH_FUNCTIONS)}", "import numpy"]
            self.m = ""
            self.npm = "numpy"
            taken = set(MATH_FUNCTIONS) | {"numpy"}
            self.features.add("from-imports")
        taken |= CALLED_BUILTINS
        self.fname = ch.choice(MAIN_NAMES)
        taken.add(self.fname)
        self.array_len = n = ch.integer(3, 5)
        # which of the optional constructs this program may use (so that a compiler
        # bug in one of them does not hide the others in every program)
        self.opts = {o for o in OPTIONAL if ch.boolean(0.4)}
        # module-level numeric globals: floats, sometimes a float array, an int array
        self.globals: dict[str, float] = {}
        self.global_arrays: dict[str, list[float]] = {}
        self.global_int_arrays: dict[str, list[int]] = {}
        for _ in range(ch.integer(0, 2)):
            name = self._module_name(taken, GLOBAL_NAMES)
            if name is not None:
                self.globals[name] = ch.choice((0.5, 1.25, -0.75, 2.0, 3.0))
        if self.allow_arrays and ch.boolean(0.2):
            name = self._module_name(taken, GLOBAL_NAMES)
            if name is not None:
                self.global_arrays[name] = [ch.real(-1.5, 1.5) for _ in range(n)]
                self.features.add("global-array")
        if self.allow_arrays and ch.boolean(0.1):
            name = self._module_name(taken, GLOBAL_NAMES)
            if name is not None:
                self.global_int_arrays[name] = [ch.integer(0, n - 1) for _ in range(n)]
                self.features.add("global-int-array")
        if self.globals:
            self.features.add("globals")
        self.visible = sorted(self.globals)
        self.helper = None
        self.helper_arity = 0
        self.helper_tuple = False
        helper_lines: list[str] = []
        if ch.boolean(0.3):
            hname = ch.choice(HELPER_NAMES)
            if hname not in taken:
                self.helper = hname
                taken.add(hname)
                helper_lines = self.helper_function(taken)
        # a function returning its argument: ``z = same(y)`` makes an alias
        self.ident = None
        ident_lines: list[str] = []
        if self.allow_arrays and "alias" in self.opts and ch.boolean(0.5):
            name = ch.choice(IDENT_NAMES)
            if name not in taken:
                self.ident = name
                taken.add(name)
                param = ch.choice(TEMPLATE + ORDINARY + ("x_saved", "d_x", "tape"))
                ident_lines = [f"def {name}({param}):", f"    return {param}"]
                self.features.add("ident-helper")
        # a factory of closures: the function under test is ``make(array)``
        factory = None
        if ch.boolean(0.15):
            factory = ch.choice(FACTORY_NAMES)
            if factory in taken:
                factory = None
            else:
                taken.add(factory)
        closure_arrays: list[str] = []
        closure_floats: list[str] = []
        if factory is not None:
            if self.allow_arrays:
                name = self._module_name(taken, GLOBAL_NAMES + MODULE_LEVEL)
                if name is not None:
                    closure_arrays.append(name)
            if not closure_arrays or ch.boolean(0.4):
                name = self._module_name(taken, GLOBAL_NAMES + MODULE_LEVEL)
                if name is not None:
                    closure_floats.append(name)
            if not closure_arrays and not closure_floats:
                factory = None
        self.taken = taken
        lines = self.imports + [""]
        lines += [f"{k} = {v!r}" for k, v in self.globals.items()]
        lines += [f"{k} = {self.npm}.array({v!r})" for k, v in self.global_arrays.items()]
        lines += [f"{k} = {self.npm}.array({v!r})" for k, v in self.global_int_arrays.items()]
        lines += ["", ""]
        for extra in (helper_lines, ident_lines):
            if extra:
                lines += extra + ["", ""]
        twin = None
        if factory is None:
            main_lines, params, array_param, array_result = self.main_function(taken)
            lines += main_lines
        else:
            self.features.add("closure")
            inner = self.fname
            if ch.boolean(0.4):
                other = ch.choice(MAIN_NAMES + ("inner", "closure", "d_x", "value_1"))
                if other not in taken:
                    inner = other
            cparams = closure_arrays + closure_floats
            main_lines, params, array_param, array_result = self.main_function(
                taken, indent=2, name=inner, closure_arrays=closure_arrays,
                closure_floats=closure_floats)
            lines += [f"def {factory}({', '.join(cparams)}):"] + main_lines + [
                f"    return {inner}", "", ""]
            lines.append(f"{self.fname} = {factory}("
                         f"{self._closure_args(closure_arrays, closure_floats)})")
            twin = self._module_name(taken, (f"{self.fname}_1", f"{self.fname}_twin", "other",
                                             "d_" + self.fname, "g2", "value_1"))
            if twin is not None:
                self.features.add("closure-twin")
                lines.append(f"{twin} = {factory}("
                             f"{self._closure_args(closure_arrays, closure_floats)})")
        source = "\n".join(lines) + "\n"
        points = [self.point(params, zero=(k == 0 and ch.boolean(0.25))) for k in range(3)]
        updates = self.updates()
        return Program(source=source, fname=self.fname, params=params, array_param=array_param,
                       array_result=array_result, points=points, features=set(self.features),
                       updates=updates, twin=twin)

    def _module_name(self, taken: set[str], pool) -> str | None:
        """A new module-level (or closure) name from ``pool``, or None."""
        name = self.ch.choice(pool)
        if name in taken or not name.isidentifier() or keyword.iskeyword(name):
            return None
        taken.add(name)
        return name

    def _closure_args(self, arrays: list[str], floats: list[str]) -> str:
        values = [f"{self.npm}.array({self._reals(self.array_len)!r})" for _ in arrays]
        values += [repr(self.ch.choice((0.5, 1.25, -0.75, 2.0, -1.5, 0.3))) for _ in floats]
        return ", ".join(values)

    def _reals(self, count: int) -> list[float]:
        return [self.ch.real(-1.5, 1.5) for _ in range(count)]

    def updates(self) -> list[list[tuple[str, str, Any]]]:
        """Globals changed between calls (the oracle checks the gradient again after each
        step): floats rebound (sometimes to an int: another kind), arrays rebound or
        changed in place."""
        ch = self.ch
        n = self.array_len
        out: list[list[tuple[str, str, Any]]] = []
        if not (self.globals or self.global_arrays or self.global_int_arrays) or \
                not ch.boolean(0.7):
            return out
        for _ in range(1 if ch.boolean(0.7) else 2):
            step: list[tuple[str, str, Any]] = []
            for name in self.globals:
                if ch.boolean(0.8):
                    step.append((name, "rebind",
                                 ch.choice((0.75, -1.5, 2.5, 1.0, -0.25, 3, -2, 1))))
            for name in self.global_arrays:
                if ch.boolean(0.8):
                    step.append((name, ch.choice(("rebind", "inplace")),
                                 [ch.real(-1.5, 1.5) for _ in range(n)]))
            for name in self.global_int_arrays:
                if ch.boolean(0.8):
                    step.append((name, ch.choice(("rebind", "inplace")),
                                 [ch.integer(0, n - 1) for _ in range(n)]))
            if step:
                out.append(step)
        if out:
            self.features.add("global-update")
            if any(how == "inplace" for step in out for _, how, _ in step):
                self.features.add("global-inplace")
        return out

    def point(self, params: list[str], zero: bool = False) -> tuple:
        """Arguments; with ``zero``, one float parameter is exactly 0.0 (``x ** n`` there)."""
        import numpy as np

        ch = self.ch
        n = self.array_len
        floats = [p for p in params if self.param_kinds[p] == "float"]
        zeroed = ch.choice(floats) if zero and floats else None
        out = []
        for p in params:
            kind = self.param_kinds[p]
            if kind == "array":
                out.append(np.array([ch.real(-1.5, 1.5) for _ in range(n)]))
            elif kind == "int-array":
                out.append(np.array([ch.integer(0, n - 1) for _ in range(n)]))
            elif kind == "bool-array":
                out.append(np.array([ch.boolean(0.5) for _ in range(n)]))
            elif p == zeroed:
                out.append(0.0)
            else:
                out.append(ch.real(-2.0, 2.0))
        return tuple(out)

    # -- functions ---------------------------------------------------------------------
    def helper_function(self, taken: set[str]) -> list[str]:
        ch = self.ch
        self.names = _Names(ch, taken)
        arity = ch.integer(1, 3)
        params = [self.names.fresh("float") for _ in range(arity)]
        scope = Scope(floats=list(params), in_helper=True)
        self.features.add("helper")
        body: list[str] = []
        for _ in range(ch.integer(1, 3)):
            body += self.statement(scope, 1)
        self.helper_arity = arity
        if ch.boolean(0.3):
            self.helper_tuple = True
            self.features.add("helper-tuple")
            body.append(f"    return ({self.expr(scope, 2)}, {self.expr(scope, 2)})")
        else:
            body.append(f"    return {self.result_expr(scope)}")
        return [f"def {self.helper}({', '.join(params)}):"] + body

    def main_function(self, taken: set[str], indent: int = 1, name: str | None = None,
                      closure_arrays: list[str] = (), closure_floats: list[str] = ()):
        ch = self.ch
        self.names = _Names(ch, taken)
        self.visible = sorted(self.globals) + list(closure_floats)
        nfloat = ch.integer(1, 3)
        params = [self.names.fresh("float") for _ in range(nfloat)]
        self.param_kinds = {p: "float" for p in params}
        scope = Scope(floats=list(params))
        scope.arrays += list(closure_arrays) + sorted(self.global_arrays)
        scope.int_arrays += sorted(self.global_int_arrays)
        array_param = None
        array_result = False
        if self.allow_arrays and ch.boolean(0.3):
            array_param = self.names.fresh("array")
            params.insert(ch.integer(0, len(params)), array_param)
            scope.arrays.insert(0, array_param)
            self.param_kinds[array_param] = "array"
            self.features.add("array")
        if self.allow_arrays and "int" in self.opts and ch.boolean(0.4):
            k = self.names.fresh("int-array")
            params.insert(ch.integer(0, len(params)), k)
            scope.int_arrays.append(k)
            self.param_kinds[k] = "int-array"
            self.features.add("int-array-param")
        if self.allow_arrays and "bool" in self.opts and ch.boolean(0.2):
            m = self.names.fresh("bool-array")
            params.insert(ch.integer(0, len(params)), m)
            scope.bool_arrays.append(m)
            self.param_kinds[m] = "bool-array"
            self.features.add("bool-array-param")
        body: list[str] = []
        for _ in range(ch.integer(1, self.max_statements)):
            body += self.statement(scope, indent)
        pad = self._pad(indent)
        if array_param is not None and ch.boolean(0.2):
            array_result = True
            self.features.add("array-result")
            body.append(f"{pad}return {self.array_expr(scope, 1)}")
        else:
            body.append(f"{pad}return {self.result_expr(scope)}")
        header = f"{self._pad(indent - 1)}def {name or self.fname}({', '.join(params)}):"
        return [header] + body, params, array_param, array_result

    def result_expr(self, scope: Scope) -> str:
        """A sum over recent variables (so most of them matter) and one expression."""
        recent = scope.floats[-3:]
        parts = [self.expr(scope, 2)] + [
            v if self.ch.boolean(0.6) else f"{self.ch.choice(CONSTANTS[:7])} * {v}"
            for v in recent if self.ch.boolean(0.7)]
        return " + ".join(parts)

    # -- statements --------------------------------------------------------------------
    def statement(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        kinds = ["assign", "assign", "aug", "unpack"]
        if scope.depth < 2:
            kinds += ["if", "if"]
            if scope.loop_depth < 2:
                kinds += ["for", "for", "while"]
            if not scope.in_helper:
                kinds += ["tuple"]
        if scope.arrays and not scope.in_helper and scope.depth == 0:
            kinds += ["array_copy", "array_value"]
        if scope.writable:
            kinds += ["array_write", "array_write"]
        if scope.loop_depth > 0:
            kinds += ["break"]
        if scope.depth > 0 and not scope.in_helper:
            kinds += ["return"]
        if self.helper is not None and not scope.in_helper:
            kinds += ["call", "call"]
        opts = self.opts
        if not scope.in_helper:
            if "int" in opts and self.allow_arrays:
                kinds += ["int_array_local"]
            if "bool" in opts and (scope.arrays or scope.int_arrays):
                kinds += ["bool_array_local"]
            if "alias" in opts and scope.writable:
                kinds += ["alias"] * 4
            elif "alias" in opts and scope.arrays and scope.depth == 0:
                kinds += ["array_copy"] * 4  # something to alias
            if "tuple-ops" in opts:
                kinds += ["tuple_ops", "tuple_ops", "tuple_ops"] if scope.tuples else [
                    "tuple", "tuple"]
            if "rebind-array" in opts and scope.depth == 0 and scope.arrays and \
                    len(scope.floats) >= 2:
                kinds += ["rebind_array"]
            if "grow-list" in opts:
                kinds += ["list_new"] * (1 if scope.growing else 3)
                if self._appendable(scope):
                    kinds += ["list_append"] * 3
                if scope.growing and scope.depth < 2 and scope.loop_depth < 2:
                    kinds += ["for_list"]
            if "comprehension" in opts:
                kinds += ["comp_assign"]
            if "index-write" in opts and self.allow_arrays:
                if scope.writable:
                    kinds += ["index_write"] * 4
                kinds += ["scratch"] * (1 if scope.writable else 3)
        kind = ch.choice(kinds)
        return getattr(self, f"stmt_{kind}")(scope, indent)

    def _pad(self, indent: int) -> str:
        return "    " * indent

    def stmt_assign(self, scope: Scope, indent: int) -> list[str]:
        reuse = scope.loop_depth > 0 and self.ch.boolean(0.5)
        if reuse:
            name = self.ch.choice(scope.floats)
            value = self.bounded(scope, 2)
        else:
            name = self._new_or_existing_float(scope)
            value = self.expr(scope, 3)
        if name not in scope.floats:
            scope.floats.append(name)
        return [f"{self._pad(indent)}{name} = {value}"]

    def _new_or_existing_float(self, scope: Scope) -> str:
        if self.ch.boolean(0.25):
            return self.ch.choice(scope.floats)
        return self.names.fresh("float")

    def stmt_aug(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        name = ch.choice(scope.floats)
        op = ch.choice(("+=", "-=", "*=", "/="))
        self.features.add("augassign")
        if op == "/=":
            v = self.expr(scope, 1)
            return [f"{self._pad(indent)}{name} /= 1.0 + {v} * {v}"]
        value = self.bounded(scope, 2) if scope.loop_depth > 0 else self.expr(scope, 2)
        return [f"{self._pad(indent)}{name} {op} {value}"]

    def stmt_unpack(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        pad = self._pad(indent)
        first = ch.choice(scope.floats)
        others = [v for v in scope.floats if v != first]
        if others and ch.boolean(0.5):
            second = ch.choice(others)
            self.features.add("swap")
            if ch.boolean(0.5):
                return [f"{pad}{first}, {second} = {second}, {first}"]
            return [f"{pad}{first}, {second} = {second}, {self.bounded(scope, 1)}"]
        second = self.names.fresh("float")
        values = (self.expr(scope, 2), self.expr(scope, 2))
        if second not in scope.floats:
            scope.floats.append(second)
        self.features.add("unpack")
        return [f"{pad}{first}, {second} = {values[0]}, {values[1]}"]

    def stmt_tuple(self, scope: Scope, indent: int) -> list[str]:
        """Tuple packing, nested tuples, reading their items, unpacking them."""
        ch = self.ch
        pad = self._pad(indent)
        name = self.names.fresh("tuple")
        self.features.add("tuple")
        lines = []
        # a list display that is only read is differentiated as a tuple
        as_list = "list" in self.opts and ch.boolean(0.5)
        left, right = ("[", "]") if as_list else ("(", ")")
        if as_list:
            self.features.add("list-display")
            scope.lists.add(name)
        if ch.boolean(0.5):
            structure: tuple = (("f", "f"), "f")
            inner_list = as_list and ch.boolean(0.5)
            a, b = self.expr(scope, 1), self.expr(scope, 1)
            inner = f"[{a}, {b}]" if inner_list else f"({a}, {b})"
            lines.append(f"{pad}{name} = {left}{inner}, {ch.choice(CONSTANTS[:7])}{right}")
            self.features.add("nested-tuple")
            if ch.boolean(0.6):
                part = self.names.fresh("tuple")
                lines.append(f"{pad}{part} = {name}[0]")
                scope.tuples[part] = ("f", "f")
                if inner_list:
                    scope.lists.add(part)
            if ch.boolean(0.4):
                a = self._new_or_existing_float(scope)
                b = self.names.fresh("float", avoid={a})
                lines.append(f"{pad}({a}, {b}), {self.names.fresh('float', avoid={a, b})}"
                             f" = {name}")
                for v in (a, b):
                    if v not in scope.floats:
                        scope.floats.append(v)
        else:
            structure = ("f", "f", "f")[: ch.integer(2, 3)]
            parts = ", ".join(self.expr(scope, 2) for _ in structure)
            lines.append(f"{pad}{name} = {left}{parts}{right}")
            if ch.boolean(0.5):
                targets = [self._new_or_existing_float(scope) for _ in structure]
                if len(set(targets)) == len(targets):
                    lines.append(f"{pad}{', '.join(targets)} = {name}")
                    for v in targets:
                        if v not in scope.floats:
                            scope.floats.append(v)
        scope.tuples[name] = structure
        return lines

    def stmt_if(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        pad = self._pad(indent)
        self.features.add("if")
        lines = [f"{pad}if {self.condition(scope)}:"]
        inner = scope.nested()
        for _ in range(ch.integer(1, 2)):
            lines += self.statement(inner, indent + 1)
        if ch.boolean(0.6):
            lines.append(f"{pad}else:")
            inner = scope.nested()
            for _ in range(ch.integer(1, 2)):
                lines += self.statement(inner, indent + 1)
        return lines

    def _flat_tuples(self, scope: Scope) -> list[str]:
        return sorted(n for n, s in scope.tuples.items() if all(x == "f" for x in s))

    def stmt_for(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        if "tuple-iter" in self.opts and ch.boolean(0.4):
            return self.stmt_for_items(scope, indent)
        pad = self._pad(indent)
        counter = self.names.fresh("int")
        form = ch.integer(0, 3)
        if form == 0:
            k = ch.integer(1, 3)
            header, top = f"range({k})", k - 1
        elif form == 1:
            lo = ch.integer(0, 1)
            hi = ch.integer(lo + 1, 3)
            header, top = f"range({lo}, {hi})", hi - 1
        elif form == 2:
            k = ch.integer(1, 3)
            header, top = f"range({k}, 0, -1)", k
        else:
            header, top = "range(0, 3, 2)", 2
        self.features.add("for")
        # an accumulator initialised before the loop
        lines = []
        acc = None
        if ch.boolean(0.6):
            acc = self.names.fresh("float")
            lines.append(f"{pad}{acc} = {self.leaf(scope)}")
            scope.floats.append(acc)
        lines.append(f"{pad}for {counter} in {header}:")
        inner = scope.nested(loop_depth=scope.loop_depth + 1,
                             ints=scope.ints + [(counter, top)])
        body = []
        if ch.boolean(0.15):
            self.features.add("continue")
            body += [f"{pad}    if {self.condition(inner)}:", f"{pad}        continue"]
        if acc is not None:
            op = ch.choice(("+", "*", "-"))
            if op == "*":
                body.append(f"{pad}    {acc} = {acc} * {self.ch.choice((0.5, 0.9, -0.8))} + "
                            f"{self.bounded(inner, 2)}")
            else:
                body.append(f"{pad}    {acc} = {acc} {op} {self.bounded(inner, 2)}")
        for _ in range(ch.integer(1 if acc is None else 0, 2)):
            body += self.statement(inner, indent + 1)
        return lines + body

    def stmt_for_items(self, scope: Scope, indent: int) -> list[str]:
        """``for e in t`` over a tuple, a list display or a tuple display."""
        ch = self.ch
        pad = self._pad(indent)
        flat = self._flat_tuples(scope)
        if flat and ch.boolean(0.6):
            header = ch.choice(flat)
            self.features.add("for-in-tuple")
        else:
            items = ", ".join(self.expr(scope, 1) for _ in range(ch.integer(2, 3)))
            if ch.boolean(0.6):
                header = f"[{items}]"
                self.features.add("for-in-list")
            else:
                header = f"({items})"
                self.features.add("for-in-tuple")
        item = self.names.fresh("float")
        lines = []
        acc = self.names.fresh("float", avoid={item})
        lines.append(f"{pad}{acc} = {self.leaf(scope)}")
        scope.floats.append(acc)
        lines.append(f"{pad}for {item} in {header}:")
        inner = scope.nested(loop_depth=scope.loop_depth + 1, floats=scope.floats + [item])
        if header in scope.tuples:
            inner.frozen.add(header)  # a list display the loop iterates never grows in it
        body = []
        if ch.boolean(0.15):
            self.features.add("continue")
            body += [f"{pad}    if {self.condition(inner)}:", f"{pad}        continue"]
        op = ch.choice(("+", "-", "*"))
        if op == "*":
            body.append(f"{pad}    {acc} = {acc} * {self.m}tanh({item}) + "
                        f"{self.bounded(inner, 1)}")
        else:
            body.append(f"{pad}    {acc} = {acc} {op} {item} * {self.bounded(inner, 1)}")
        for _ in range(ch.integer(0, 1)):
            body += self.statement(inner, indent + 1)
        return lines + body

    def stmt_while(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
        pad = self._pad(indent)
        counter = self.names.fresh("int")
        k = ch.integer(1, 3)
        self.features.add("while")
        lines = [f"{pad}{counter} = 0", f"{pad}while {counter} < {k}:",
                 f"{pad}    {counter} += 1"]
        inner = scope.nested(loop_depth=scope.loop_depth + 1, ints=scope.ints + [(counter, k)],
                             in_while_counter=counter)
        for _ in range(ch.integer(1, 2)):
            lines += self.statement(inner, indent + 1)
        if ch.boolean(0.5):
            lines += self.stmt_break(inner, indent + 1)
        return lines

    def stmt_break(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        self.features.add("break")
        return [f"{pad}if {self.condition(scope)}:", f"{pad}    break"]

    def stmt_return(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        self.features.add("early-return")
        return [f"{pad}if {self.condition(scope)}:", f"{pad}    return {self.expr(scope, 2)}"]

    def stmt_call(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        args = ", ".join(self.expr(scope, 1) for _ in range(self.helper_arity))
        if self.helper_tuple:
            a = self._new_or_existing_float(scope)
            b = self.names.fresh("float", avoid={a})
            for v in (a, b):
                if v not in scope.floats:
                    scope.floats.append(v)
            if self.ch.boolean(0.7):
                return [f"{pad}{a}, {b} = {self.helper}({args})"]
            return [f"{pad}{a} = {self.helper}({args})[{self.ch.integer(0, 1)}]",
                    f"{pad}{b} = {a} * 0.5"]
        name = self._new_or_existing_float(scope)
        if name not in scope.floats:
            scope.floats.append(name)
        return [f"{pad}{name} = {self.helper}({args})"]

    def stmt_array_copy(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        src = scope.arrays[0]
        name = self.names.fresh("array")
        how = self.ch.choice((f"{src}.copy()", f"{self.npm}.copy({src})"))
        scope.arrays.append(name)
        scope.writable.append(name)
        self.features.add("array-copy")
        return [f"{pad}{name} = {how}"]

    def stmt_array_value(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        name = self.names.fresh("array")
        value = self.array_expr(scope, 1)
        scope.arrays.append(name)
        self.features.add("array-value")
        return [f"{pad}{name} = {value}"]

    def stmt_array_write(self, scope: Scope, indent: int) -> list[str]:
        pad = self._pad(indent)
        name = self.ch.choice(scope.writable)
        index = self.index(scope)
        self.features.add("array-write")
        if self.ch.boolean(0.3):
            return [f"{pad}{name}[{index}] += {self.bounded(scope, 1)}"]
        value = self.bounded(scope, 2) if scope.loop_depth > 0 else self.expr(scope, 2)
        return [f"{pad}{name}[{index}] = {value}"]

    def stmt_int_array_local(self, scope: Scope, indent: int) -> list[str]:
        """``k = np.array([0, 2, 1])``: an int array built from a list display."""
        name = self.names.fresh("int-array")
        values = [self.ch.integer(0, self.array_len - 1) for _ in range(self.array_len)]
        scope.int_arrays.append(name)
        self.features.add("int-array-local")
        return [f"{self._pad(indent)}{name} = {self.npm}.array({values!r})"]

    def stmt_bool_array_local(self, scope: Scope, indent: int) -> list[str]:
        """``m = v > c``: a bool array from a comparison."""
        name = self.names.fresh("bool-array")
        scope.bool_arrays.append(name)
        self.features.add("bool-array")
        return [f"{self._pad(indent)}{name} = {self.array_comparison(scope)}"]

    def array_comparison(self, scope: Scope) -> str:
        ch = self.ch
        if scope.arrays and (not scope.int_arrays or ch.boolean(0.7)):
            right = repr(ch.choice((0.0, 0.5, -0.25, 0.3))) if ch.boolean(0.6) else \
                self.leaf(scope)
            return f"{ch.choice(scope.arrays)} {ch.choice(COMPARISONS)} {right}"
        return f"{ch.choice(scope.int_arrays)} {ch.choice(COMPARISONS)} " \
               f"{ch.integer(0, self.array_len - 1)}"

    def stmt_alias(self, scope: Scope, indent: int) -> list[str]:
        """An alias of a written array (``z, w = y, c`` / ``t = (y, c)`` / ``z = same(y)``),
        an item write into the array or the alias, and reads of the alias. Right or
        refused (``NonDifferentiableError``) are both fine."""
        ch = self.ch
        pad = self._pad(indent)
        y = ch.choice(scope.writable)
        form = ch.integer(0, 2 if self.ident is not None else 1)
        lines = []
        if form == 0:
            z = self.names.fresh("array")
            w = self.names.fresh("float", avoid={z})
            lines.append(f"{pad}{z}, {w} = {y}, {self.expr(scope, 1)}")
            scope.floats.append(w)
            alias = z
            self.features.add("alias-unpack")
        elif form == 1:
            t = self.names.fresh("array-tuple")
            lines.append(f"{pad}{t} = ({y}, {self.expr(scope, 1)})")
            alias = f"{t}[0]"
            self.features.add("alias-tuple")
        else:
            z = self.names.fresh("array")
            lines.append(f"{pad}{z} = {self.ident}({y})")
            alias = z
            self.features.add("alias-call")
        target = ch.choice((y, alias))
        if ch.boolean(0.3):
            lines.append(f"{pad}{target}[{self.index(scope)}] += {self.bounded(scope, 1)}")
        else:
            lines.append(f"{pad}{target}[{self.index(scope)}] = {self.bounded(scope, 1)}")
        s = self.names.fresh("float")
        read = f"{alias}[{self.index(scope)}] * {self.leaf(scope)}"
        if ch.boolean(0.5):
            read += f" + {self.npm}.sum({ch.choice((y, alias))})"
        lines.append(f"{pad}{s} = {read}")
        scope.floats.append(s)
        if form != 1:
            scope.arrays.append(alias)
        return lines

    def stmt_tuple_ops(self, scope: Scope, indent: int) -> list[str]:
        """A new tuple from a slice with constant bounds or a concatenation."""
        ch = self.ch
        pad = self._pad(indent)
        name = ch.choice(sorted(scope.tuples))
        structure = scope.tuples[name]
        new = self.names.fresh("tuple")
        tuples = sorted(t for t in scope.tuples if t not in scope.lists)
        form = ch.integer(0, 2)
        if form == 0 or name in scope.lists:
            n = len(structure)
            lo = ch.integer(-n, n - 1)
            hi = ch.choice((None, ch.integer(lo + 1 if lo >= 0 else lo + n + 1, n)))
            part = structure[lo:hi]
            if not part:
                part, lo, hi = structure, 0, None
            text = f"{name}[{'' if lo == 0 and ch.boolean(0.5) else lo}:" \
                   f"{'' if hi is None else hi}]"
            if name in scope.lists:
                scope.lists.add(new)
            self.features.add("tuple-slice")
        elif form == 1 or len(tuples) < 1:
            text = f"{name} + ({self.expr(scope, 1)},)"
            part = structure + ("f",)
            self.features.add("tuple-concat")
        else:
            other = ch.choice(tuples)
            text = f"{name} + {other}"
            part = structure + scope.tuples[other]
            self.features.add("tuple-concat")
        scope.tuples[new] = part
        return [f"{pad}{new} = {text}"]

    def stmt_rebind_array(self, scope: Scope, indent: int) -> list[str]:
        """A float name rebound to an array (it is an array from here on)."""
        name = self.ch.choice(scope.floats)
        value = self.array_expr(scope, 1)
        scope.floats.remove(name)
        scope.arrays.append(name)
        self.features.add("rebind-to-array")
        return [f"{self._pad(indent)}{name} = {value}"]

    # -- lists that grow (round 3) -------------------------------------------------------
    def _appendable(self, scope: Scope) -> list[str]:
        """Lists that may grow here: growing lists and flat list displays read so far
        (they grow from here on), not the ones a loop here iterates."""
        names = [n for n in sorted(scope.growing) if n not in scope.frozen]
        names += [n for n in sorted(scope.lists) if n in scope.tuples and n not in scope.frozen
                  and all(x == "f" for x in scope.tuples[n])]
        return names

    def _item(self, scope: Scope, kind: str, depth: int = 2) -> str:
        """An item for a list of ``kind`` ("f" or "a"); bounded inside loops."""
        if kind == "a":
            value = self.array_expr(scope, 1)
            return f"{self.npm}.tanh({value})" if scope.loop_depth > 0 else value
        return self.bounded(scope, depth - 1) if scope.loop_depth > 0 else \
            self.expr(scope, depth)

    def _extend(self, scope: Scope, name: str) -> tuple[str, int]:
        """``name.extend(...)`` of a tuple or list display (or, for floats, an array);
        returns the text and how many items it adds."""
        ch = self.ch
        kind, _ = scope.growing[name]
        self.features.add("list-extend")
        if kind == "f" and scope.arrays and ch.boolean(0.25):
            self.features.add("list-extend-array")
            a = ch.choice(scope.arrays)
            return f"{name}.extend({a} * {self._item(scope, 'f', 1)})", self.array_len
        count = ch.integer(1, 3)
        items = ", ".join(self._item(scope, kind, 1) for _ in range(count))
        if ch.boolean(0.5):
            return f"{name}.extend(({items}{',' if count == 1 else ''}))", count
        return f"{name}.extend([{items}])", count

    def stmt_list_new(self, scope: Scope, indent: int) -> list[str]:
        """``items = []`` or ``items = [a, b]`` (floats, or arrays of one shape), often
        followed by a loop that appends to it."""
        ch = self.ch
        pad = self._pad(indent)
        kind = "a" if scope.arrays and ch.boolean(0.35) else "f"
        count = 0 if ch.boolean(0.45) else ch.integer(1, 2)
        items = ", ".join(self._item(scope, kind) for _ in range(count))
        name = self.names.fresh("list")
        self.features.add("list-grow")
        self.features.add("list-of-arrays" if kind == "a" else "list-of-floats")
        self.features.add("list-empty-init" if count == 0 else "list-display-init")
        if scope.loop_depth > 0:
            self.features.add("list-new-per-iteration")
        lines = [f"{pad}{name} = [{items}]"]
        scope.growing[name] = (kind, count)
        if ch.boolean(0.7) and scope.loop_depth < 2:
            lines += self._fill_loop(scope, indent, name)
        if ch.boolean(0.6):
            lines += self._read_list(scope, indent, name)
        return lines

    def _fill_loop(self, scope: Scope, indent: int, name: str) -> list[str]:
        """A loop appending to ``name``: over ``range(k)``, over an array, or
        ``while len(name) < k``."""
        ch = self.ch
        pad = self._pad(indent)
        kind, least = scope.growing[name]
        form = ch.integer(0, 2)
        if form == 1 and not scope.arrays:
            form = 0
        if form == 2 and not self.names.builtin("len"):
            form = 0
        if form == 0:
            counter = self.names.fresh("int")
            trips = ch.integer(1, 4)
            lines = [f"{pad}for {counter} in range({trips}):"]
            inner = scope.nested(loop_depth=scope.loop_depth + 1,
                                 ints=scope.ints + [(counter, trips - 1)])
            self.features.add("list-append-for")
        elif form == 1:
            a = ch.choice(scope.arrays)
            w = self.names.fresh("float")
            trips = self.array_len
            lines = [f"{pad}for {w} in {a}:"]
            inner = scope.nested(loop_depth=scope.loop_depth + 1, floats=scope.floats + [w])
            self.features.add("list-append-for-array")
        else:
            trips = ch.integer(1, 5)
            lines = [f"{pad}while len({name}) < {trips}:"]
            inner = scope.nested(loop_depth=scope.loop_depth + 1)
            self.features.add("list-append-while")
            self.features.add("list-len")
        body, added = self._append_body(inner, indent + 1, name, must=form == 2)
        lines += body
        extra = form != 2 and ch.boolean(0.3)
        if extra:  # may break or return: then only the first trip's appends are sure
            lines += self.statement(inner, indent + 1)
        if form == 2:
            least = max(least, trips)
        else:
            least += added * (1 if extra else trips)
        scope.growing[name] = (kind, least)
        return lines

    def _append_body(self, scope: Scope, indent: int, name: str,
                     must: bool) -> tuple[list[str], int]:
        """Appends to ``name`` (in branches too); with ``must``, at least one on every
        path. Returns the lines and how many items every pass surely adds."""
        ch = self.ch
        pad = self._pad(indent)
        kind, least = scope.growing[name]
        form = ch.integer(0, 4)
        if must and form == 2:
            form = 0

        def append() -> str:
            return f"{name}.append({self._item(scope, kind)})"

        self.features.add("list-append")
        if form == 0:
            lines, added = [f"{pad}{append()}"], 1
        elif form == 1:
            lines = [f"{pad}if {self.condition(scope)}:", f"{pad}    {append()}",
                     f"{pad}else:", f"{pad}    {append()}"]
            if ch.boolean(0.4):
                lines.append(f"{pad}    {append()}")
            added = 1
        elif form == 2:
            lines, added = [f"{pad}if {self.condition(scope)}:", f"{pad}    {append()}"], 0
        elif form == 3:
            text, added = self._extend(scope, name)
            lines = [f"{pad}{text}"]
        else:
            lines = [f"{pad}{append()}", f"{pad}if {self.condition(scope)}:",
                     f"{pad}    {append()}"]
            added = 1
        if form in (1, 2, 4):
            self.features.add("list-append-in-branch")
        scope.growing[name] = (kind, least + added)
        return lines, added

    def stmt_list_append(self, scope: Scope, indent: int) -> list[str]:
        """``items.append(v)`` or ``items.extend(...)`` (in loops and branches when the
        statement is); rarely a use that s2s_ad refuses (an item write, ``pop``, a slice,
        an alias)."""
        ch = self.ch
        pad = self._pad(indent)
        name = ch.choice(self._appendable(scope))
        if name not in scope.growing:  # a list display, only read so far, grows from here
            structure = scope.tuples.pop(name)
            scope.lists.discard(name)
            scope.growing[name] = ("f", len(structure))
            self.features.add("list-display-grown")
        if ch.boolean(0.06):
            return self._list_misuse(scope, indent, name)
        kind, least = scope.growing[name]
        if scope.loop_depth > 0:
            self.features.add("list-append-in-loop")
        elif scope.depth > 0:
            self.features.add("list-append-in-branch")
        if ch.boolean(0.3):
            text, added = self._extend(scope, name)
        else:
            text, added = f"{name}.append({self._item(scope, kind)})", 1
            self.features.add("list-append")
        scope.growing[name] = (kind, least + added)
        return [f"{pad}{text}"]

    def _list_misuse(self, scope: Scope, indent: int, name: str) -> list[str]:
        """A use of a growing list that s2s_ad refuses at its line (REFUSED is the right
        outcome; a crash or a wrong gradient is not)."""
        ch = self.ch
        pad = self._pad(indent)
        npm = self.npm
        kind, least = scope.growing[name]
        forms = ("slice", "alias") + (("write",) if least > 0 else ())
        if least > 0 and scope.depth == 0:  # a pop in a loop or a branch: length unknown
            forms += ("pop",)
        form = ch.choice(forms)
        self.features.add(f"list-misuse-{form}")
        if form == "write":
            return [f"{pad}{name}[{ch.integer(-least, least - 1)}] = {self._item(scope, kind)}"]
        lines = []
        if form == "pop":
            scope.growing[name] = (kind, least - 1)
            text = f"{name}.pop()" if kind == "f" else f"{npm}.sum({name}.pop())"
        elif form == "slice":
            text = f"{npm}.sum({name}[{ch.choice(('1:', ':2', '-2:'))}])"
        else:
            other = self.names.fresh("list")
            lines.append(f"{pad}{other} = {name}")
            text = f"{npm}.sum({other})"
        s = self.names.fresh("float")
        lines.append(f"{pad}{s} = {text}")
        scope.floats.append(s)
        return lines

    def stmt_for_list(self, scope: Scope, indent: int) -> list[str]:
        """``for w in items`` / ``for i, w in enumerate(items)`` with an accumulator."""
        ch = self.ch
        pad = self._pad(indent)
        name = ch.choice(sorted(scope.growing))
        kind, _ = scope.growing[name]
        item = self.names.fresh("float" if kind == "f" else "array")
        acc = self.names.fresh("float", avoid={item})
        lines = [f"{pad}{acc} = {self.leaf(scope)}"]
        scope.floats.append(acc)
        inner = scope.nested(loop_depth=scope.loop_depth + 1)
        inner.frozen.add(name)  # appending to the list a loop iterates never ends
        if ch.boolean(0.35):
            counter = self.names.fresh("int", avoid={item, acc})
            inner.ints.append((counter, 99))  # the length is not known here
            lines.append(f"{pad}for {counter}, {item} in enumerate({name}):")
            self.features.add("list-enumerate")
            weight = f"({counter} * 0.5)"
        else:
            lines.append(f"{pad}for {item} in {name}:")
            self.features.add("list-for")
            weight = None
        if kind == "f":
            inner.floats.append(item)
            value = item
        else:
            inner.arrays.append(item)
            value = f"{self.npm}.sum({item} * {self.leaf(inner)})"
        if weight is not None:
            value = f"{weight} * {value}"
        if ch.boolean(0.5):
            lines.append(f"{pad}    {acc} = {acc} + {value} * {self.bounded(inner, 1)}")
        else:
            lines.append(f"{pad}    {acc} = {acc} * {ch.choice((0.5, 0.9, -0.8))} + "
                         f"{self.m}tanh({value})")
        for _ in range(ch.integer(0, 1)):
            lines += self.statement(inner, indent + 1)
        return lines

    def _read_list(self, scope: Scope, indent: int, name: str) -> list[str]:
        """``s = <a read of name>`` (a new float, so the result likely depends on it)."""
        value = self.list_read(scope, 1, name)
        s = self.names.fresh("float")
        scope.floats.append(s)
        return [f"{self._pad(indent)}{s} = {value}"]

    def list_read(self, scope: Scope, depth: int, name: str | None = None) -> str:
        """A float read from a growing list: an item (by a constant, negative or counter
        index), ``len``, ``sum``/``max``/``min``, ``np.sum``/``np.mean``, ``np.array``,
        ``np.stack``, ``np.concatenate``."""
        ch = self.ch
        npm = self.npm
        if name is None:
            name = ch.choice(sorted(scope.growing))
        kind, least = scope.growing[name]

        def sub() -> str:
            return self.expr(scope, max(depth - 1, 0))

        forms = ["npsum", "len", "array"]
        if kind == "f":
            forms += ["sum"]
        if least > 0:
            forms += ["item", "item", "last"]
            forms += ["max", "min", "mean"] if kind == "f" else ["stack", "concat", "sumarrays"]
        form = ch.choice(forms)
        if form == "len" and not self.names.builtin("len"):
            form = "npsum"
        self.features.add(f"list-{form}")
        if form == "item":
            index = str(ch.integer(-least, least - 1))
            counters = [c for c, top in scope.ints if top < least]
            if counters and ch.boolean(0.3):
                index = ch.choice(counters)
                self.features.add("list-item-counter")
            elif index.startswith("-"):
                self.features.add("list-item-negative")
            if kind == "f":
                return f"{name}[{index}]"
            if ch.boolean(0.5):
                return f"{name}[{index}][{ch.integer(0, self.array_len - 1)}]"
            return f"{npm}.sum({name}[{index}] * {sub()})"
        if form == "last":
            return f"{name}[-1]" if kind == "f" else f"{npm}.sum({name}[-1])"
        if form == "len":
            return f"(len({name}) * {sub()})"
        if form == "npsum":
            return f"{npm}.sum({name})"
        if form == "array":
            if kind == "f":
                return f"{npm}.sum({npm}.array({name}) * {sub()})"
            return f"{npm}.sum({npm}.array({name}) ** 2)"
        if form in ("sum", "max", "min"):
            return f"{form}({name})"
        if form == "mean":
            return f"{npm}.mean({name})"
        if form == "stack":
            return f"{npm}.sum({npm}.stack({name}) * {sub()})"
        if form == "concat":
            if ch.boolean(0.5):
                return f"{npm}.concatenate({name})[{ch.integer(0, least * self.array_len - 1)}]"
            return f"{npm}.sum({npm}.concatenate({name}) * {sub()})"
        return f"{npm}.sum(sum({name}) * {sub()})"  # sumarrays

    def list_array(self, scope: Scope) -> str | None:
        """An array read from a list of arrays (an item, ``sum``, a mean of the stack),
        or None."""
        ch = self.ch
        names = sorted(n for n, (k, least) in scope.growing.items() if k == "a" and least > 0)
        if not names or not ch.boolean(0.25):
            return None
        name = ch.choice(names)
        _, least = scope.growing[name]
        form = ch.integer(0, 3)
        self.features.add("list-array-read")
        if form == 0:
            return f"{name}[{ch.integer(-least, least - 1)}]"
        if form == 1:
            return f"{name}[-1]"
        if form == 2:
            return f"sum({name})"
        return f"{self.npm}.mean({self.npm}.stack({name}), axis=0)"

    # -- comprehensions and generator expressions (round 3) ------------------------------
    def _comp_var(self, scope: Scope, taken: set[str]) -> str:
        """A float comprehension variable: a new name, or (sometimes) an outer float it
        shadows (the comprehension's own name)."""
        outer = [v for v in scope.floats if v not in taken]
        if outer and self.ch.boolean(0.2):
            self.features.add("comp-shadow")
            return self.ch.choice(outer)
        return self.names.fresh("float", avoid=taken)

    def _comp_clauses(self, scope: Scope) -> tuple[str, Scope, int, list[str]]:
        """The ``for ... in ... [if ...]`` clauses: over ``range``, a tuple display, an
        array, ``zip`` of arrays, ``enumerate`` of an array, a tuple, a list display or a
        growing list; nested sometimes. Returns the text, the scope of the element, the
        fewest items and the float variables."""
        ch = self.ch
        inner = scope.nested(depth=scope.depth)
        clauses = []
        least = 1
        variables: list[str] = []
        for _ in range(1 if ch.boolean(0.75) else 2):
            sources = ["range", "tuple"]
            if inner.arrays:
                sources += ["array", "array", "zip", "enumerate"]
            if self._flat_tuples(inner):
                sources += ["named-tuple"]
            float_lists = sorted(n for n, (k, _) in inner.growing.items() if k == "f")
            if float_lists:
                sources += ["list", "list"]
            source = ch.choice(sources)
            self.features.add(f"comp-over-{source}")
            # only a first clause's variable may shadow an outer name: a later clause's
            # iterable is evaluated inside the comprehension, where the name is unbound
            taken = set(variables) | (set(inner.floats) if clauses else set())
            if source == "range":
                count = ch.integer(1, 4)
                i = self.names.fresh("int")
                text = f"for {i} in range({count})"
                inner.ints.append((i, count - 1))
                if not variables:
                    variables.append(f"({i} * 0.5)")
            elif source == "tuple":
                parts = [self.expr(inner, 1) for _ in range(ch.integer(2, 3))]
                count = len(parts)
                w = self._comp_var(inner, taken)
                text = f"for {w} in ({', '.join(parts)})"
                variables.append(w)
            elif source in ("array", "enumerate"):
                a = ch.choice(inner.arrays)
                count = self.array_len
                w = self._comp_var(inner, taken)
                if source == "array":
                    text = f"for {w} in {a}"
                else:
                    i = self.names.fresh("int", avoid=taken | {w})
                    text = f"for {i}, {w} in enumerate({a})"
                    inner.ints.append((i, count - 1))
                variables.append(w)
            elif source == "zip":
                a, b = ch.choice(inner.arrays), ch.choice(inner.arrays)
                count = self.array_len
                p = self._comp_var(inner, taken)
                q = self._comp_var(inner, taken | {p})
                text = f"for {p}, {q} in zip({a}, {b})"
                variables += [p, q]
            elif source == "named-tuple":
                t = ch.choice(self._flat_tuples(inner))
                count = len(inner.tuples[t])
                w = self._comp_var(inner, taken)
                text = f"for {w} in {t}"
                variables.append(w)
            else:
                name = ch.choice(float_lists)
                count = inner.growing[name][1]
                w = self._comp_var(inner, taken)
                text = f"for {w} in {name}"
                variables.append(w)
            inner.floats += [v for v in variables if v.isidentifier() and v not in inner.floats]
            least *= count
            if ch.boolean(0.3):
                self.features.add("comp-filter")
                text += f" if {self.condition(inner)}"
                least = 0
            clauses.append(text)
        if len(clauses) > 1:
            self.features.add("comp-nested")
        return " ".join(clauses), inner, least, variables

    def _comp_element(self, scope: Scope, variables: list[str], items: str) -> str:
        ch = self.ch
        w = ch.choice(variables)
        if items == "a":
            a = ch.choice(scope.arrays)
            form = ch.integer(0, 2)
            if form == 0:
                return f"{a} * {w}"
            if form == 1:
                return f"{self.npm}.sin({a} * {w})"
            return f"{a} * {self.expr(scope, 1)}"
        form = ch.integer(0, 4)
        if form == 0:
            return f"{w} * {self.expr(scope, 1)}"
        if form == 1:
            return f"{w} ** 2" if w.isidentifier() else f"{w} * {w}"
        if form == 2:
            return f"{self.m}{ch.choice(('sin', 'cos', 'tanh'))}({w}) * {self.leaf(scope)}"
        if form == 3 and len(variables) > 1:
            return f"{variables[0]} * {variables[-1]}"
        return self.expr(scope, 1)

    def comprehension(self, scope: Scope, depth: int) -> str:
        """A float from a list comprehension or a generator expression: ``sum``,
        ``max``/``min``, ``len``, ``np.sum``/``np.mean``/``np.array``, an item of it; of
        arrays: ``np.stack``, ``np.concatenate``, ``sum`` of a generator."""
        ch = self.ch
        npm = self.npm
        items = "a" if scope.arrays and ch.boolean(0.2) else "f"
        clauses, inner, least, variables = self._comp_clauses(scope)
        elt = self._comp_element(inner, variables, items)
        body = f"{elt} {clauses}"
        e = self.leaf(scope)
        if items == "a":
            self.features.add("comp-of-arrays")
            forms = ["npsum"] + (["stack", "concat", "sumgen"] if least > 0 else [])
            form = ch.choice(forms)
            self.features.add(f"comp-{form}")
            if form == "npsum":
                return f"{npm}.sum([{body}])"
            if form == "stack":
                return f"{npm}.sum({npm}.stack([{body}]) * {e})"
            if form == "concat":
                return f"{npm}.sum({npm}.concatenate([{body}]) ** 2)"
            return f"{npm}.sum(sum({body}) * {e})"
        forms = ["sum", "sumgen", "sumgen", "npsum", "array", "len"]
        if least > 0:
            forms += ["max", "min", "maxgen", "mingen", "mean", "index"]
        form = ch.choice(forms)
        if form == "len" and not self.names.builtin("len"):
            form = "sum"
        self.features.add(f"comp-{form}")
        self.features.add("comp-generator" if form.endswith("gen") else "comp-list")
        if form == "sum":
            return f"sum([{body}])"
        if form in ("sumgen", "maxgen", "mingen"):
            return f"{form[:3]}({body})"
        if form in ("max", "min"):
            return f"{form}([{body}])"
        if form == "npsum":
            return f"{npm}.sum([{body}])"
        if form == "mean":
            return f"{npm}.mean([{body}])"
        if form == "array":
            return f"{npm}.sum({npm}.array([{body}]) * {e})"
        if form == "len":
            return f"(len([1.0 {clauses}]) * {e})"
        return f"[{body}][{ch.integer(-least, least - 1)}]"  # index

    def stmt_comp_assign(self, scope: Scope, indent: int) -> list[str]:
        """``name = [e for ...]``: a list (that may grow from here on)."""
        ch = self.ch
        items = "a" if scope.arrays and ch.boolean(0.25) else "f"
        clauses, inner, least, variables = self._comp_clauses(scope)
        elt = self._comp_element(inner, variables, items)
        name = self.names.fresh("list")
        scope.growing[name] = (items, least)
        self.features.add("comp-assigned")
        self.features.add("comp-list")
        lines = [f"{self._pad(indent)}{name} = [{elt} {clauses}]"]
        if ch.boolean(0.5):
            lines += self._read_list(scope, indent, name)
        return lines

    # -- writes through an index array or a mask (round 3) -------------------------------
    def stmt_scratch(self, scope: Scope, indent: int) -> list[str]:
        """A local array to write into: ``np.zeros(n)``, ``np.ones(n)``, ``v * 1.0``,
        ``np.copy(v)``."""
        ch = self.ch
        npm = self.npm
        forms = [f"{npm}.zeros({self.array_len})", f"{npm}.ones({self.array_len})"]
        if scope.arrays:
            a = ch.choice(scope.arrays)
            forms += [f"{a} * 1.0", f"{npm}.copy({a})"]
        value = ch.choice(forms)
        name = self.names.fresh("array")
        scope.arrays.append(name)
        scope.writable.append(name)
        self.features.add("scratch-array")
        lines = [f"{self._pad(indent)}{name} = {value}"]
        if "index-write" in self.opts and ch.boolean(0.6):
            lines += self.stmt_index_write(scope, indent, name)
        return lines

    def stmt_index_write(self, scope: Scope, indent: int, y: str | None = None) -> list[str]:
        """``y[idx] = v`` / ``y[idx] += v`` through a 1-d int array (a parameter, a global,
        a local, or ``np.array([...])`` with repeated and negative indices) or a boolean
        mask (``y[v < 0.0] = c``); the value a scalar, an array, ``a[idx] * e`` or
        ``y[idx] * c + e``."""
        ch = self.ch
        npm = self.npm
        n = self.array_len
        pad = self._pad(indent)
        y = y or ch.choice(scope.writable)
        bounded = scope.loop_depth > 0
        if bounded:
            self.features.add("index-write-in-loop")
        op = "+=" if ch.boolean(0.3) else "="
        if op == "+=":
            self.features.add("index-write-aug")

        def scalar() -> str:
            return self.bounded(scope, 1) if bounded or op == "+=" else self.expr(scope, 2)

        how = ch.choice(("int", "int", "literal", "mask", "mask"))
        if how == "int" and not scope.int_arrays:
            how = "literal"
        length = n
        if how == "int":
            index = ch.choice(scope.int_arrays)
        elif how == "literal":
            length = ch.integer(1, n + 1)
            values = [ch.integer(-n, n - 1) for _ in range(length)]
            if length > 1 and ch.boolean(0.5):
                values[-1] = values[0]
            if len(set(v % n for v in values)) < length:
                self.features.add("index-write-repeated")
            if any(v < 0 for v in values):
                self.features.add("index-write-negative")
            index = f"{npm}.array({values!r})"
        elif scope.bool_arrays and ch.boolean(0.4):
            index = ch.choice(scope.bool_arrays)
        else:
            right = repr(ch.choice((0.0, 0.5, -0.25, 0.3)))
            index = f"{ch.choice(scope.arrays)} {ch.choice(COMPARISONS)} {right}"
        self.features.add(f"index-write-{how}")
        forms = ["scalar", "scalar", "gather", "self"]
        if length == n and how != "mask":
            forms += ["array"]
        form = ch.choice(forms)
        self.features.add(f"index-write-value-{form}")
        if form == "scalar":
            value = scalar()
        elif form == "array":
            value = self.array_expr(scope, 1)
            if bounded or op == "+=":
                value = f"{npm}.tanh({value})"
        elif form == "gather":
            value = f"{ch.choice(scope.arrays)}[{index}] * {scalar()}"
        else:
            value = f"{y}[{index}] * {ch.choice((0.5, -0.8, 0.9))} + {scalar()}"
        return [f"{pad}{y}[{index}] {op} {value}"]

    # -- expressions -------------------------------------------------------------------
    def index(self, scope: Scope) -> str:
        usable = [c for c, top in scope.ints if top < 3]
        if usable and self.ch.boolean(0.5):
            return self.ch.choice(usable)
        return str(self.ch.choice((0, 1, 2, -1)))

    def leaf(self, scope: Scope) -> str:
        ch = self.ch
        if scope.ints and scope.tuples and ("tuple-ops" in self.opts or "list" in self.opts):
            # a tuple (or list) item at a loop counter, when one fits
            fits = [(t, c) for t in self._flat_tuples(scope) for c, top in scope.ints
                    if top <= len(scope.tuples[t]) - 1]
            if fits and ch.boolean(0.3):
                self.features.add("tuple-counter-index")
                t, c = ch.choice(fits)
                return f"{t}[{c}]"
        roll = ch.integer(0, 99)
        if roll < 55 or not (self.visible or scope.tuples or scope.arrays or scope.ints):
            if roll < 12:
                return repr(ch.choice(CONSTANTS))
            return ch.choice(scope.floats)
        options = []
        if self.visible:
            options.append("global")
        if scope.tuples:
            options.append("tuple")
        if scope.arrays:
            options += ["item", "item"]
        if scope.ints:
            options.append("int")
        kind = ch.choice(options)
        if kind == "global":
            return ch.choice(self.visible)
        if kind == "tuple":
            name = ch.choice(sorted(scope.tuples))
            structure = scope.tuples[name]
            if all(x == "f" for x in structure) and ch.boolean(0.5):
                # indexed by a loop counter (or from the end)
                usable = [c for c, top in scope.ints if top <= len(structure) - 1]
                if usable and ch.boolean(0.7):
                    self.features.add("tuple-counter-index")
                    return f"{name}[{ch.choice(usable)}]"
                return f"{name}[{ch.integer(-len(structure), -1)}]"
            i = ch.integer(0, len(structure) - 1)
            if isinstance(structure[i], tuple):
                return f"{name}[{i}][{ch.integer(0, len(structure[i]) - 1)}]"
            return f"{name}[{i}]"
        if kind == "item":
            self.features.add("array-read")
            return f"{ch.choice(scope.arrays)}[{self.index(scope)}]"
        self.features.add("int-mix")
        return f"({ch.choice([c for c, _ in scope.ints])} * 0.5)"

    def expr(self, scope: Scope, depth: int) -> str:
        ch = self.ch
        if depth <= 0 or ch.integer(0, 3) == 0:
            return self.leaf(scope)
        sub = lambda: self.expr(scope, depth - 1)  # noqa: E731
        kinds = ["bin", "bin", "bin", "neg", "div", "call", "exp", "log", "sqrt", "pow_const",
                 "pow_var", "maxmin", "mod", "ifexp", "atan2", "hypot", "boolifexp"]
        if scope.arrays and not scope.in_helper:
            kinds += ["npsum", "npsum"]
            if "concat" in self.opts:
                kinds += ["concat"]
        if not scope.in_helper and (scope.int_arrays or scope.bool_arrays or (
                scope.arrays and ("int" in self.opts or "bool" in self.opts))):
            kinds += ["intarr", "intarr"]
        if "tuple-ops" in self.opts and self._flat_tuples(scope):
            kinds += ["tupagg", "tupagg"]
        if "pow-counter" in self.opts and scope.ints:
            kinds += ["pow_counter", "pow_counter"]
        if self.helper is not None and not scope.in_helper and not self.helper_tuple:
            kinds += ["helper"]
        if scope.growing:
            kinds += ["listread"] * 3
        if "comprehension" in self.opts:
            kinds += ["comp", "comp"]
        kind = ch.choice(kinds)
        m = self.m
        if kind == "bin":
            return f"({sub()} {ch.choice('+-*')} {sub()})"
        if kind == "neg":
            return f"(-{sub()})"
        if kind == "div":
            if ch.boolean(0.3):
                return f"({sub()} / {ch.choice((2.0, -1.5, 0.5, 4.0))})"
            d = sub()
            return f"({sub()} / (1.0 + {d} * {d}))"
        if kind == "call":
            self.features.add("math")
            return f"{m}{ch.choice(('sin', 'cos', 'tanh'))}({sub()})"
        if kind == "exp":
            self.features.add("math")
            return f"{m}exp({m}{ch.choice(('tanh', 'sin', 'cos'))}({sub()}))"
        if kind == "log":
            self.features.add("math")
            e = sub()
            return f"{m}log(1.0 + {e} * {e})"
        if kind == "sqrt":
            self.features.add("math")
            e = sub()
            return f"{m}sqrt(1.0 + {e} * {e})"
        if kind == "atan2":
            self.features.add("atan2")
            if ch.boolean(0.5):
                e = sub()
                return f"{m}atan2({sub()}, 1.0 + {e} * {e})"
            return f"{m}atan2({sub()}, {sub()})"
        if kind == "hypot":
            self.features.add("hypot")
            return f"{m}hypot({sub()}, {sub()})"
        if kind == "pow_const":
            self.features.add("pow")
            form = ch.integer(0, 6)
            if form == 0:
                return f"({self.leaf(scope)} ** {ch.choice((2, 3, 0, 1, 2.0))})"
            if form == 1:
                return f"((-2.0) ** {ch.choice((2, 3, 2.0))} * {self.leaf(scope)})"
            if form == 2:
                return f"(-{ch.choice((2.0, 1.5))} ** 2 * {self.leaf(scope)})"
            if form == 3:
                e = sub()
                return f"((1.0 + {e} * {e}) ** {ch.choice((-1.5, -1, 0.5, -0.5, 1.5))})"
            if form == 4:
                return f"({ch.choice((2.0, 0.5, 1.5))} ** {self.bounded(scope, depth - 1)})"
            if form == 5:
                return f"({self.leaf(scope)} ** 0 + {self.leaf(scope)})"
            return f"({self.leaf(scope)} ** {ch.choice((2, 3))})"
        if kind == "pow_var":
            self.features.add("pow-var")
            e = sub()
            return f"((1.0 + {e} * {e}) ** {self.bounded(scope, depth - 1)})"
        if kind == "maxmin":
            self.features.add("maxmin")
            fn = ch.choice(("max", "min"))
            c = repr(ch.choice(CONSTANTS))
            form = ch.integer(0, 2)
            if form == 0:
                return f"{fn}({sub()}, {c})"
            if form == 1:
                return f"{fn}({c}, {sub()})"
            return f"{fn}({sub()}, {sub()})"
        if kind == "mod":
            self.features.add("mod")
            if ch.boolean(0.7):
                return f"({sub()} % {ch.choice((1.5, 2.0, 0.7, 3.0, -1.5))})"
            d = sub()
            return f"({sub()} % (2.0 + {d} * {d}))"
        if kind == "ifexp":
            self.features.add("ifexp")
            return f"({sub()} if {self.condition(scope)} else {sub()})"
        if kind == "boolifexp":
            self.features.add("boolop")
            op = ch.choice(("and", "or"))
            return (f"({sub()} if ({self.condition(scope)} {op} {self.condition(scope)}) "
                    f"else {sub()})")
        if kind == "npsum":
            self.features.add("np")
            return f"{self.npm}.sum({self.array_expr(scope, depth - 1)})"
        if kind == "concat":
            self.features.add("concatenate")
            a, b = ch.choice(scope.arrays), ch.choice(scope.arrays)
            if ch.boolean(0.5):
                return f"{self.npm}.sum({self.npm}.concatenate([{a}, {b}]) * {sub()})"
            return f"{self.npm}.concatenate([{a}, {b}])[{ch.integer(0, 2 * self.array_len - 1)}]"
        if kind == "intarr":
            return self.int_array_expr(scope, depth)
        if kind == "tupagg":
            name = ch.choice(self._flat_tuples(scope))
            fn = ch.choice(("sum", "max", "min", "len"))
            self.features.add(f"tuple-{fn}")
            if fn == "len":
                if not self.names.builtin("len"):
                    fn = "sum"  # len is a variable here
                else:
                    return f"(len({name}) * {sub()})"
            return f"{fn}({name})"
        if kind == "listread":
            return self.list_read(scope, depth)
        if kind == "comp":
            return self.comprehension(scope, depth)
        if kind == "pow_counter":
            self.features.add("pow-counter")
            counter = ch.choice([c for c, _ in scope.ints])
            base = self.leaf(scope) if ch.boolean(0.6) else self.bounded(scope, depth - 1)
            return f"({base} ** {counter})"
        # helper call returning a float
        args = ", ".join(sub() for _ in range(self.helper_arity))
        return f"{self.helper}({args})"

    def int_array_expr(self, scope: Scope, depth: int) -> str:
        """A float from int or bool arrays: reductions (with ``axis``), counts of a
        comparison, reads through an index array or a mask, ``np.where``."""
        ch = self.ch
        npm = self.npm
        options = []
        if scope.int_arrays:
            options += ["ksum", "kmean", "kcount"]
            if scope.arrays:
                options += ["vk", "vk", "vidx"]
        if scope.arrays:
            options += ["count", "meanaxis"]
            if "bool" in self.opts or scope.bool_arrays:
                options += ["where", "mask", "vm"]
        if scope.bool_arrays:
            options += ["msum"]
        form = ch.choice(options)
        self.features.add(f"intarr-{form}")

        def k():
            return ch.choice(scope.int_arrays)

        def a():
            return ch.choice(scope.arrays)

        def m():
            if scope.bool_arrays and ch.boolean(0.6):
                return ch.choice(scope.bool_arrays)
            return f"({self.array_comparison(scope)})"

        if form == "ksum":
            return f"({npm}.sum({k()}, axis=0) * {self.leaf(scope)})"
        if form == "kmean":
            return f"({npm}.mean({k()}) * {self.leaf(scope)})"
        if form == "kcount":
            bound = ch.integer(0, self.array_len - 1)
            return f"({npm}.sum({k()} > {bound}) * {self.leaf(scope)})"
        if form == "vk":
            how = ch.integer(0, 2)
            if how == 0:
                return f"{npm}.sum({a()} * {k()})"
            if how == 1:
                return f"{npm}.sum({a()} * {k()}, axis=0)"
            return f"{npm}.mean({a()} * {k()})"
        if form == "vidx":
            return f"{npm}.sum({a()}[{k()}])"
        if form == "count":
            return f"({npm}.sum({self.array_comparison(scope)}) * {self.leaf(scope)})"
        if form == "meanaxis":
            return f"{npm}.{ch.choice(('mean', 'sum'))}({a()}, axis=0)"
        if form == "where":
            other = self.leaf(scope) if ch.boolean(0.5) else f"{ch.choice((0.5, -2.0))} * {a()}"
            return f"{npm}.sum({npm}.where({m()}, {a()}, {other}))"
        if form == "mask":
            return f"{npm}.sum({a()}[{m()}])"
        if form == "vm":
            return f"{npm}.sum({a()} * {m()})"
        return f"({npm}.sum({ch.choice(scope.bool_arrays)}) * {self.leaf(scope)})"

    def bounded(self, scope: Scope, depth: int) -> str:
        """An expression of magnitude at most about 1 (loop-carried updates)."""
        return f"{self.m}{self.ch.choice(('sin', 'cos', 'tanh'))}({self.expr(scope, depth)})"

    def array_expr(self, scope: Scope, depth: int) -> str:
        ch = self.ch
        npm = self.npm
        if scope.growing:
            from_list = self.list_array(scope)
            if from_list is not None:
                return from_list
        a = ch.choice(scope.arrays)
        form = ch.integer(0, 6)
        if form == 0:
            return a
        if form == 1:
            return f"{a} * {self.expr(scope, max(depth - 1, 0))}"
        if form == 2:
            return f"{npm}.tanh({npm}.exp({a} * {ch.choice((0.5, -0.3, 1.0))}))"
        if form == 3:
            return f"{npm}.{ch.choice(('sin', 'cos', 'tanh'))}({a})"
        if form == 4:
            b = ch.choice(scope.arrays)
            return f"{a} {ch.choice('+-*')} {b}"
        if form == 5:
            return f"{a} * {a} + {self.leaf(scope)}"
        if form == 6 and scope.int_arrays and ch.boolean(0.5):
            self.features.add("array-times-int-array")
            return f"{a} * {ch.choice(scope.int_arrays)}"
        if form == 6 and (scope.bool_arrays or "bool" in self.opts) and ch.boolean(0.5):
            self.features.add("array-where")
            m = ch.choice(scope.bool_arrays) if scope.bool_arrays and ch.boolean(0.5) else \
                f"{a} > {ch.choice((0.0, 0.5, -0.25))}"
            return f"{npm}.where({m}, {a}, {self.leaf(scope)})"
        return f"{npm}.exp({npm}.tanh({a})) / (1.0 + {a} * {a})"

    def condition(self, scope: Scope) -> str:
        ch = self.ch
        if scope.ints and ch.boolean(0.3):
            counter = ch.choice([c for c, _ in scope.ints])
            return f"{counter} {ch.choice(COMPARISONS)} {ch.choice((0.5, 1.5, 2.5))}"
        left = self.expr(scope, 1) if ch.boolean(0.4) else ch.choice(scope.floats)
        right = repr(ch.choice(CONSTANTS)) if ch.boolean(0.5) else ch.choice(scope.floats)
        if left == right:
            right = "0.5"
        return f"{left} {ch.choice(COMPARISONS)} {right}"


def generate(ch: Chooser, max_statements: int = 6, allow_arrays: bool = True) -> Program:
    """One random program."""
    return Generator(ch, max_statements=max_statements, allow_arrays=allow_arrays).program()


def program_from_seed(seed: int, max_statements: int = 6) -> Program:
    """The program number ``seed`` (the same on every run)."""
    program = generate(RandomChooser(seed), max_statements=max_statements)
    program.seed = seed
    return program


def programs(max_statements: int = 6):
    """A hypothesis strategy of :class:`Program`."""
    from hypothesis import strategies as st

    @st.composite
    def strategy(draw):
        return generate(HypothesisChooser(draw), max_statements=max_statements)

    return strategy()


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------

_counter = itertools.count()


def load_source(source: str, directory: Path, stem: str = "fuzz_program"):
    """Write ``source`` to a new file in ``directory`` and import it under a unique name
    (s2s_ad reads function source through inspect/linecache, so it must be a real file)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{stem}_{next(_counter)}_{random.getrandbits(24):06x}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def unload(module) -> None:
    sys.modules.pop(module.__name__, None)
