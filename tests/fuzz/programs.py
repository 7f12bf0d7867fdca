"""Random Python programs for the gradient fuzzer, with names drawn to collide.

A generated program is one module: imports, a few module-level numeric
globals, sometimes a helper function, and the function ``f`` (its name is
drawn too) under test, of float parameters and sometimes one float64 array
parameter of length 3-5. It covers straight-line arithmetic, ``math`` calls
(sin, cos, exp, log and sqrt of positive-ised arguments, tanh, atan2, hypot),
``**`` with constant and variable exponents, ``max``/``min`` with constants on
either side, ``%``, ``if``/``else``, conditional expressions, ``and``/``or``,
``for``/``range`` loops with accumulators, ``while`` loops with a counter and
``break``, ``continue``, early ``return``, calls of a helper (returning a float
or a tuple), tuples (packing, unpacking, swaps, nested tuples and their
items), array item reads, writes into a local copy, ``np.sum``, element-wise
NumPy calls and module-level numeric globals.

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

# ---------------------------------------------------------------------------
# The name pool
# ---------------------------------------------------------------------------

ORDINARY = ("p", "q", "r", "s", "t", "u", "acc", "tmp", "w1", "k2", "alpha", "beta", "total")

# Parameters of rule templates (math_rules, builtin_rules, numpy_rules): ``g`` is
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

# Builtins and library names the programs themselves call: never locals.
CALLED_BUILTINS = {"max", "min", "range", "print", "abs", "float", "int", "sum", "pow",
                   "True", "False", "None"}

MATH_FUNCTIONS = ("sin", "cos", "exp", "log", "sqrt", "tanh", "atan2", "hypot")

CONSTANTS = (0.5, 1.5, -0.75, 2.0, 0.25, -1.25, 3.0, 0.0, 1.0, -2.0, 0.1)

COMPARISONS = ("<", ">", "<=", ">=")


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

    def describe_point(self, args: tuple) -> str:
        return ", ".join(_arg_repr(a) for a in args)


def _arg_repr(a) -> str:
    import numpy as np

    if isinstance(a, np.ndarray):
        return f"np.array({a.tolist()!r})"
    return repr(a)


@dataclass
class Scope:
    floats: list[str]
    ints: list[tuple[str, int]] = field(default_factory=list)  # (name, max value)
    arrays: list[str] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)  # local arrays that may be written
    tuples: dict[str, tuple] = field(default_factory=dict)  # name -> structure
    depth: int = 0
    loop_depth: int = 0
    in_while_counter: str | None = None
    in_helper: bool = False

    def nested(self, **changes) -> Scope:
        values = dict(floats=list(self.floats), ints=list(self.ints), arrays=list(self.arrays),
                      writable=list(self.writable), tuples=dict(self.tuples),
                      depth=self.depth + 1, loop_depth=self.loop_depth,
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
        # module-level numeric globals
        self.globals: dict[str, float] = {}
        for _ in range(ch.integer(0, 2)):
            name = ch.choice(TEMPLATE + GENERATED + ("rt", "ar", "List", "K", "scale"))
            if name not in taken and name.isidentifier() and not keyword.iskeyword(name):
                self.globals[name] = ch.choice((0.5, 1.25, -0.75, 2.0, 3.0))
                taken.add(name)
        if self.globals:
            self.features.add("globals")
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
        self.taken = taken
        lines = self.imports + [""]
        lines += [f"{k} = {v!r}" for k, v in self.globals.items()]
        lines += ["", ""]
        if helper_lines:
            lines += helper_lines + ["", ""]
        main_lines, params, array_param, array_result = self.main_function(taken)
        lines += main_lines
        source = "\n".join(lines) + "\n"
        points = [self.point(params, array_param) for _ in range(3)]
        return Program(source=source, fname=self.fname, params=params, array_param=array_param,
                       array_result=array_result, points=points, features=set(self.features))

    def point(self, params: list[str], array_param: str | None) -> tuple:
        import numpy as np

        out = []
        for p in params:
            if p == array_param:
                out.append(np.array([self.ch.real(-1.5, 1.5) for _ in range(self.array_len)]))
            else:
                out.append(self.ch.real(-2.0, 2.0))
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

    def main_function(self, taken: set[str]):
        ch = self.ch
        self.names = _Names(ch, taken)
        nfloat = ch.integer(1, 3)
        params = [self.names.fresh("float") for _ in range(nfloat)]
        scope = Scope(floats=list(params))
        array_param = None
        array_result = False
        self.array_len = ch.integer(3, 5)
        if self.allow_arrays and ch.boolean(0.3):
            array_param = self.names.fresh("array")
            params.insert(ch.integer(0, len(params)), array_param)
            scope.arrays.append(array_param)
            self.features.add("array")
        body: list[str] = []
        for _ in range(ch.integer(1, self.max_statements)):
            body += self.statement(scope, 1)
        if array_param is not None and ch.boolean(0.2):
            array_result = True
            self.features.add("array-result")
            body.append(f"    return {self.array_expr(scope, 1)}")
        else:
            body.append(f"    return {self.result_expr(scope)}")
        return [f"def {self.fname}({', '.join(params)}):"] + body, params, array_param, \
            array_result

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
        if ch.boolean(0.5):
            structure: tuple = (("f", "f"), "f")
            inner = f"({self.expr(scope, 1)}, {self.expr(scope, 1)})"
            lines.append(f"{pad}{name} = ({inner}, {ch.choice(CONSTANTS[:7])})")
            self.features.add("nested-tuple")
            if ch.boolean(0.6):
                part = self.names.fresh("tuple")
                lines.append(f"{pad}{part} = {name}[0]")
                scope.tuples[part] = ("f", "f")
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
            lines.append(f"{pad}{name} = ({parts})")
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

    def stmt_for(self, scope: Scope, indent: int) -> list[str]:
        ch = self.ch
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

    # -- expressions -------------------------------------------------------------------
    def index(self, scope: Scope) -> str:
        usable = [c for c, top in scope.ints if top < 3]
        if usable and self.ch.boolean(0.5):
            return self.ch.choice(usable)
        return str(self.ch.choice((0, 1, 2, -1)))

    def leaf(self, scope: Scope) -> str:
        ch = self.ch
        roll = ch.integer(0, 99)
        if roll < 55 or not (self.globals or scope.tuples or scope.arrays or scope.ints):
            if roll < 12:
                return repr(ch.choice(CONSTANTS))
            return ch.choice(scope.floats)
        options = []
        if self.globals:
            options.append("global")
        if scope.tuples:
            options.append("tuple")
        if scope.arrays:
            options += ["item", "item"]
        if scope.ints:
            options.append("int")
        kind = ch.choice(options)
        if kind == "global":
            return ch.choice(sorted(self.globals))
        if kind == "tuple":
            name = ch.choice(sorted(scope.tuples))
            structure = scope.tuples[name]
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
        if self.helper is not None and not scope.in_helper and not self.helper_tuple:
            kinds += ["helper"]
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
        # helper call returning a float
        args = ", ".join(sub() for _ in range(self.helper_arity))
        return f"{self.helper}({args})"

    def bounded(self, scope: Scope, depth: int) -> str:
        """An expression of magnitude at most about 1 (loop-carried updates)."""
        return f"{self.m}{self.ch.choice(('sin', 'cos', 'tanh'))}({self.expr(scope, depth)})"

    def array_expr(self, scope: Scope, depth: int) -> str:
        ch = self.ch
        npm = self.npm
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
