"""Round 5 (issue 20): programs for the constructs that found issue 20's bugs.

Each program belongs to one *family* (``FAMILIES``; each can be switched on or
off with the ``families`` argument of :func:`round5_program_from_seed`):

- ``redefine``: a helper (or a chain of helpers) redefined between calls, as a
  notebook cell would (``def g(u): ...`` again in the module's namespace);
- ``rebind``: a module-level name holding a function (``act = np.tanh``)
  rebound to another NumPy function or to a user function between calls;
- ``register``: ``@ad.derivative(of=g)`` registered after a gradient through
  ``g`` was taken (and registered again); the registered pullback is ``K``
  times the true one and every input reaches the result through one call of
  ``g``, so the expected gradient is ``K`` times the finite differences;
- ``pullback-mutation``: an argument array changed in place between
  ``value_with_pullback``'s forward and the pullback;
- ``alias-read``: one array passed as two arguments that are only read (also
  a helper given the same array twice);
- ``alias-write``: one array passed as two arguments, one of them written
  (``ArgumentError`` expected; a result equal to plain Python's is fine too);
- ``list-index``: list-literal indices (``v[[0, 2]]``, ``v[[1, 1]]``, rows of
  a 2-d array, ``M[[0, 1], [2, 0]]``), read and written;
- ``list-alias``: arrays appended to a growing list, with aliases and item
  writes between the appends;
- ``numba-mix``: int/bool/float mixing (``c ** -n`` with an int argument,
  ``3 ** (n - 3)``, lists of bools or ints that grow with floats);
- ``nested``: nested ``def``s and lambdas with default parameters (also a
  default taken from an argument), lambdas returning lambdas, and
  ``ad.gradient(lambda ...)`` inside another lambda on the same line;
- ``zero-d``: 0-d arrays (an argument ``np.array(0.7)``, ``np.zeros(())``)
  read and written through ``a[()]`` and ``a[...]``.

Functions are smooth (no branches on floats), so the oracle
(:mod:`round5_oracle`) compares with central finite differences at the given
point directly.
"""

from __future__ import annotations

import dataclasses
import random
import textwrap
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FAMILIES = ("redefine", "rebind", "register", "pullback-mutation", "alias-read",
            "alias-write", "list-index", "list-alias", "numba-mix", "nested", "zero-d")

# Local names: ordinary ones and names the compiler's templates and generated code use
# (not names the templates below read from the module: np, ad, math).
LOCAL_NAMES = ("p", "q", "r", "s", "t", "acc", "tmp", "alpha", "beta", "total", "a", "b",
               "x", "y", "z", "c", "base", "value", "result", "d_x", "x_saved", "items",
               "item", "idx", "tape", "w_1", "trip_count", "v_local", "buf")
HELPER_NAMES = ("g", "helper", "phi", "act", "sq", "value", "tape", "rt", "f_forward", "ar")
MAIN_NAMES = ("f", "f", "loss", "model", "result", "forward")

# (expression of u, its derivative): the scalar functions helpers compute
UNARY = (
    ("u * u * u", "3.0 * u * u"),
    ("np.sin(u)", "np.cos(u)"),
    ("np.tanh(u)", "1.0 - np.tanh(u) ** 2"),
    ("np.exp(0.5 * u)", "0.5 * np.exp(0.5 * u)"),
    ("u * np.sin(u)", "np.sin(u) + u * np.cos(u)"),
    ("u * u + 2.0 * u", "2.0 * u + 2.0"),
    ("np.log(1.0 + u * u)", "2.0 * u / (1.0 + u * u)"),
)
NP_FUNCS = ("np.tanh", "np.sin", "np.cos", "np.exp", "np.arctan", "np.sinh")


@dataclass
class Step:
    """Code run in the program's module before a check (``None``: none), and the factor
    the registered derivatives put on the true gradient from then on."""

    code: str | None = None
    scale: float = 1.0


@dataclass
class Round5Program:
    family: str
    variant: str
    source: str
    fname: str
    args: tuple  # the argument values (copied for every call)
    # argument j is the same object as argument i (j -> i)
    alias: dict[int, int] = field(default_factory=dict)
    # gradient of an aliased write: compare the sum of the aliased cotangents with the
    # total derivative (else each cotangent with its partial derivative)
    alias_total: bool = False
    steps: list[Step] = field(default_factory=lambda: [Step()])
    # pullback-mutation: (argument, how, value) applied between forward and pullback
    mutation: tuple | None = None
    array_result: bool = False
    refusal_ok: bool = False  # is a clear refusal an acceptable outcome here?
    harness: bool = False  # nested: `run(p)` computes ad.gradient(target)(p)
    twin: None = None  # what run_fuzz's report reads of every program
    features: set[str] = field(default_factory=set)
    seed: int | None = None

    # the attributes oracle.check_isolated's crash report reads
    @property
    def points(self) -> list[tuple]:
        return [self.args]

    def describe_updates(self) -> str:
        steps = [step.code.strip().replace("\n", "; ") for step in self.steps if step.code]
        if self.mutation:
            index, how, value = self.mutation
            steps.append(f"between forward and pullback, argument {index}: {how} {value}")
        return " | then ".join(steps)

    @property
    def updates(self) -> list:
        return [step for step in self.steps if step.code] + ([self.mutation] if self.mutation
                                                             else [])

    def describe_point(self, args: tuple) -> str:
        parts = []
        for i, a in enumerate(args):
            if i in self.alias:
                parts.append(f"<argument {self.alias[i]}>")
            elif isinstance(a, np.ndarray):
                parts.append(f"np.array({a.tolist()!r})")
            else:
                parts.append(repr(a))
        return ", ".join(parts)


class Gen:
    """Random choices and names for one program."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.used: set[str] = set()

    def choice(self, seq):
        return self.rng.choice(seq)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def name(self, pool=LOCAL_NAMES) -> str:
        free = [n for n in pool if n not in self.used]
        name = self.choice(free) if free else f"v{len(self.used)}"
        self.used.add(name)
        return name

    def const(self) -> str:
        return repr(self.choice((0.5, 1.5, 2.0, -0.75, 0.25, 3.0)))

    def num(self, lo: float = 0.2, hi: float = 1.2) -> float:
        """A number of magnitude in [lo, hi] (not near 0, where functions look alike),
        of either sign."""
        return round(self.rng.uniform(lo, hi) * self.choice((1.0, -1.0)), 6)

    def vec(self, n: int) -> np.ndarray:
        return np.array([self.num() for _ in range(n)])

    def expr(self, atoms: list[str], depth: int = 2) -> str:
        """A smooth expression of ``atoms`` (floats or arrays; NumPy functions only)."""
        if depth == 0 or self.chance(0.25):
            return self.choice(atoms) if self.chance(0.85) else self.const()
        a = self.expr(atoms, depth - 1)
        kind = self.rng.randrange(8)
        if kind == 0:
            return f"({a} + {self.expr(atoms, depth - 1)})"
        if kind == 1:
            return f"({a} * {self.expr(atoms, depth - 1)})"
        if kind == 2:
            return f"({a} - {self.const()} * {self.expr(atoms, depth - 1)})"
        if kind == 3:
            return f"{self.choice(('np.sin', 'np.tanh', 'np.cos'))}({a})"
        if kind == 4:
            return f"np.exp(np.tanh({a}))"
        if kind == 5:
            return f"({a} / (1.0 + {a} * {a}))"
        if kind == 6:
            return f"np.log(1.0 + {a} * {a})"
        return f"({a} * {a})"


def _module(body: str, imports: str = "import numpy as np\nimport s2s_ad as ad\n") -> str:
    return imports + "\n\n" + textwrap.dedent(body).strip() + "\n"


def _def(name: str, params: list[str], lines: list[str]) -> str:
    return f"def {name}({', '.join(params)}):\n" + "".join(f"    {ln}\n" for ln in lines)


def _scalar_params(g: Gen, k: int) -> tuple[list[str], tuple]:
    names = [g.name() for _ in range(k)]
    return names, tuple(g.num() for _ in names)


# ---------------------------------------------------------------------------
# Families
# ---------------------------------------------------------------------------


def _redefine(g: Gen) -> Round5Program:
    helper = g.name(HELPER_NAMES)
    fname = g.name(MAIN_NAMES)
    params, args = _scalar_params(g, g.choice((1, 2)))
    variant = g.choice(("helper", "chain", "array-helper", "twice"))
    e1, e2, e3 = (e for e, _ in g.rng.sample(UNARY, 3))
    top = [_def(helper, ["u"], [f"return {e1}"])]
    callee = helper
    if variant == "chain":  # f -> h -> helper: the redefinition is two calls away
        callee = g.name(HELPER_NAMES)
        top.append(_def(callee, ["u"], [f"return {helper}(u) * {g.const()} + u"]))
    t = g.name()
    if variant == "array-helper":
        vname = g.name()
        params = [vname, *params]
        args = (g.vec(g.choice((3, 4))), *args)
        lines = [f"{t} = {callee}({vname} * {g.expr(params[1:], 1)})",
                 f"return np.sum({t} * {g.expr(params[1:], 1)})"]
    else:
        lines = [f"{t} = {callee}({g.expr(params, 2)})"]
        if variant == "twice":
            lines.append(f"{t} = {t} + {callee}({t} * {g.const()})")
        lines.append(f"return {g.expr([t, *params], 1)} + {t}")
    top.append(_def(fname, params, lines))
    steps = [Step(), Step(_def(helper, ["u"], [f"return {e2}"]))]
    if g.chance(0.4):
        steps.append(Step(_def(helper, ["u"], [f"return {e3}"])))
    return Round5Program("redefine", variant, _module("\n\n".join(top)), fname, args,
                         steps=steps)


def _rebind(g: Gen) -> Round5Program:
    act = g.name(("act", "activation", "phi", "nonlin", "g", "rt", "value"))
    fname = g.name(MAIN_NAMES)
    params, args = _scalar_params(g, g.choice((1, 2)))
    variant = g.choice(("numpy", "user", "numpy-array", "alias-name"))
    first, second = g.rng.sample(NP_FUNCS, 2)
    top = []
    if variant == "user":
        first = g.name(HELPER_NAMES)
        top.append(_def(first, ["u"], [f"return {g.choice(UNARY)[0]}"]))
    top.append(f"{act} = {first}")
    t = g.name()
    if variant == "numpy-array":
        vname = g.name()
        params = [vname, *params]
        args = (g.vec(3), *args)
        lines = [f"{t} = {act}({vname} * {g.expr(params[1:], 1)})",
                 f"return np.sum({t} * {t}) + {params[1]}"]
    else:
        lines = [f"{t} = {act}({g.expr(params, 2)})",
                 f"return {g.expr([t, *params], 1)} + {t}"]
    top.append(_def(fname, params, lines))
    if variant == "user":
        other = g.name(HELPER_NAMES)
        e1, e2 = (e for e, _ in g.rng.sample(UNARY, 2))
        top[0] = _def(first, ["u"], [f"return {e1}"])
        code = _def(other, ["u"], [f"return {e2}"]) + f"{act} = {other}\n"
    elif variant == "alias-name":  # the name bound to a function that was bound elsewhere
        code = f"_other = {second}\n{act} = _other\n"
    else:
        code = f"{act} = {second}\n"
    steps = [Step(), Step(code)]
    if g.chance(0.3):
        steps.append(Step(f"{act} = {first}\n"))  # back to the first function
    return Round5Program("rebind", variant, _module("\n\n".join(top)), fname, args,
                         steps=steps)


def _register(g: Gen) -> Round5Program:
    helper = g.name(HELPER_NAMES)
    fname = g.name(MAIN_NAMES)
    params, args = _scalar_params(g, g.choice((1, 2)))
    e, de = g.choice(UNARY)
    variant = g.choice(("direct", "via-helper", "again"))
    top = [_def(helper, ["u"], [f"return {e}"])]
    callee = helper
    if variant == "via-helper":
        callee = g.name(HELPER_NAMES)
        top.append(_def(callee, ["u"], [f"return {helper}(u)"]))
    t = g.name()
    # every input reaches the result through the one call of the helper
    pre = " + ".join(f"{g.choice((0.5, -0.75, 0.25, 1.25))!r} * {p}" for p in params)
    post = g.choice(("{t}", "np.sin({t})", "{t} * {t}", "np.tanh({t}) * 2.0"))
    top.append(_def(fname, params, [f"{t} = {callee}({pre})",
                                    f"return {post.format(t=t)}"]))

    def registration(k: float, n: int) -> str:
        return (f"@ad.derivative(of={helper})\n"
                f"def {helper}_vjp_{n}(u):\n"
                f"    return {helper}(u), lambda v: {k!r} * ({de}) * v\n")

    k1 = g.choice((2.0, -1.0, 0.5, 3.0))
    steps = [Step(), Step(registration(k1, 1), k1)]
    if variant == "again":
        k2 = g.choice((0.25, -2.0, 1.5))
        steps.append(Step(registration(k2, 2), k2))
    return Round5Program("register", variant, _module("\n\n".join(top)), fname, args,
                         steps=steps)


def _pullback_mutation(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    vname, sname = g.name(), g.name()
    n = g.choice((3, 4))
    variant = g.choice(("expr", "item", "helper", "copy", "array-result", "two-arrays"))
    params = [vname, sname]
    args: tuple = (g.vec(n), g.num())
    top = []
    t = g.name()
    if variant == "expr":
        lines = [f"return np.sum({g.expr([vname, sname], 2)} * {vname})"]
    elif variant == "item":
        lines = [f"{t} = {vname}[0] * {vname}[{n - 1}] * {sname}",
                 f"return {t} + np.sum(np.tanh({vname}) * {sname})"]
    elif variant == "helper":
        helper = g.name(HELPER_NAMES)
        top.append(_def(helper, ["w", "c"], ["return np.sum(w * w) * c"]))
        lines = [f"return {helper}({vname}, {sname}) + {helper}({vname} * {sname}, 1.5)"]
    elif variant == "copy":
        lines = [f"{t} = {vname}.copy()", f"{t}[0] = {sname}",
                 f"return np.sum({t} * {vname} * {sname})"]
    elif variant == "two-arrays":
        wname = g.name()
        params = [vname, wname, sname]
        args = (g.vec(n), g.vec(n), g.num())
        lines = [f"return np.sum({vname} * {wname}) * {sname} + np.sum(np.sin({wname}))"]
    else:
        lines = [f"return {g.expr([vname, sname], 2)} * {vname}"]
    top.append(_def(fname, params, lines))
    target = 1 if variant == "two-arrays" and g.chance(0.5) else 0
    how = g.choice(("fill", "item", "scale", "zero"))
    value = abs(g.num(2.0, 3.0))
    return Round5Program("pullback-mutation", variant, _module("\n\n".join(top)), fname, args,
                         mutation=(target, how, value),
                         array_result=variant == "array-result", refusal_ok=True)


def _alias_read(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    a, b, s = g.name(), g.name(), g.name()
    n = g.choice((3, 4))
    variant = g.choice(("args", "helper", "args-and-helper"))
    top = []
    if variant == "helper":
        helper = g.name(HELPER_NAMES)
        top.append(_def(helper, ["w", "c"], ["return np.sum(np.tanh(w) * c)"]))
        top.append(_def(fname, [a, s], [f"{b} = {a} * {s}",
                                         f"return {helper}({b}, {b}) + {helper}({a}, {a})"]))
        return Round5Program("alias-read", variant, _module("\n\n".join(top)), fname,
                             (g.vec(n), g.num()))
    lines = [f"return np.sum({g.expr([a, b, s], 2)} * {b}) + {a}[0] * {b}[{n - 1}]"]
    if variant == "args-and-helper":
        helper = g.name(HELPER_NAMES)
        top.append(_def(helper, ["w", "c"], ["return np.sum(w * c * c)"]))
        lines = [f"return {helper}({a}, {b}) * {s} + np.sum({a} * {b})"]
    top.append(_def(fname, [a, b, s], lines))
    base = g.vec(n)
    return Round5Program("alias-read", variant, _module("\n\n".join(top)), fname,
                         (base, base.copy(), g.num()), alias={1: 0})


def _alias_write(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    a, b, s = g.name(), g.name(), g.name()
    n = g.choice((3, 4))
    variant = g.choice(("item", "augmented", "slice", "shift", "smooth-loop"))
    k = g.rng.randrange(n)
    # the smoothing loop reads items the loop has already written when a is b
    write = {"item": f"{b}[{k}] = {a}[{(k + 1) % n}] * {s}",
             "augmented": f"{b}[{k}] += {s} * {a}[{(k + 1) % n}]",
             "slice": f"{b}[:] = np.tanh({a}) * {s}",
             "shift": f"{b}[1:] = {a}[:-1] * {s}",
             "smooth-loop": f"for i in range(1, {n}):\n"
                            f"        {b}[i] = 0.5 * ({a}[i] + {a}[i - 1]) * {s}"}[variant]
    order = g.choice(("write-first", "read-first"))
    t = g.name()
    lines = [write, f"return np.sum({a} * {b}) + {a}[0] * {s}"]
    if order == "read-first":
        lines = [f"{t} = np.sum({a} * {a})", write, f"return {t} + np.sum({a} * {b})"]
    src = _module(_def(fname, [a, b, s], lines))
    base = g.vec(n)
    which = g.choice(((1, 0), (0, 1)))  # the written array passed first or second
    if which == (0, 1):
        src = src.replace(f"def {fname}({a}, {b}, {s})", f"def {fname}({b}, {a}, {s})")
    return Round5Program("alias-write", f"{variant}-{order}", src, fname,
                         (base, base.copy(), g.num()), alias={1: 0}, alias_total=True,
                         refusal_ok=True)


def _list_index(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    v, s, y = g.name(), g.name(), g.name()
    variant = g.choice(("1d", "1d-repeat", "2d-rows", "2d-pairs", "write", "write-repeat",
                        "nested"))
    n = g.choice((3, 4, 5))
    idx = [g.rng.randrange(-n, n) for _ in range(g.choice((1, 2, 3)))]
    if variant in ("1d-repeat", "write-repeat"):
        idx = idx + [idx[0]]
    lst = repr(idx)
    if variant.startswith("2d"):
        arg = np.array([[g.num() for _ in range(n)] for _ in range(3)])
        rows = repr([g.rng.randrange(3) for _ in range(2)])
        cols = repr([g.rng.randrange(n) for _ in range(2)])
        read = f"{v}[{rows}]" if variant == "2d-rows" else f"{v}[{rows}, {cols}]"
        lines = [f"{y} = {read}", f"return np.sum(np.tanh({y}) * {s}) + np.sum({y} * {y})"]
    elif variant in ("write", "write-repeat"):
        arg = g.vec(n)
        op = g.choice(("=", "+="))
        lines = [f"{y} = {v} * 1.0", f"{y}[{lst}] {op} {g.expr([s], 1)}",
                 f"return np.sum({y} * {y} * {s})"]
    elif variant == "nested":
        arg = g.vec(n)
        lines = [f"return np.sum({v}[{lst}][{repr([0] * 2)}] * {s}) + {v}[{lst}][0]"]
    else:
        arg = g.vec(n)
        lines = [f"{y} = {v}[{lst}]", f"return np.sum({y} * {g.expr([s, y], 1)})"]
    src = _module(_def(fname, [v, s], lines))
    return Round5Program("list-index", variant, src, fname, (arg, g.num()),
                         refusal_ok=variant.startswith("write") or variant == "2d-pairs")


def _list_alias(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    v, s, items, y = g.name(), g.name(), g.name(("items", "lst", "xs", "acc", "buf")), g.name()
    n = g.choice((3, 4))
    lines = [f"{items} = []", f"{y} = {v} * {s}"]
    aliases = [y]
    appended = 0
    for _ in range(g.choice((3, 4, 5, 6))):
        op = g.rng.randrange(6)
        target = g.choice(aliases)
        if op <= 1 or appended == 0:
            what = g.choice((target, target, f"{target} * {g.const()}"))
            lines.append(f"{items}.append({what})")
            appended += 1
        elif op == 2:
            lines.append(f"{target}[{g.rng.randrange(n)}] = {g.expr([s], 1)}")
        elif op == 3:
            lines.append(f"{target}[{g.rng.randrange(n)}] += {s} * {g.const()}")
        elif op == 4 and len(aliases) < 3:
            other = g.name()
            lines.append(f"{other} = {target}")
            aliases.append(other)
        else:
            lines.append(f"{target} *= {g.const()}")
    if g.chance(0.4):
        lines.append(f"{y}[0] = {s}")  # a write after the last append
    reads = [f"np.sum({items}[{i}] * {g.const()})" for i in range(appended)]
    if g.chance(0.3):
        reads.append(f"np.sum(np.stack({items}) * {s})")
    lines.append(f"return {' + '.join(reads)} + np.sum({y})")
    src = _module(_def(fname, [v, s], lines))
    return Round5Program("list-alias", f"{appended}-appends", src, fname, (g.vec(n), g.num()),
                         refusal_ok=True)


def _numba_mix(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    x, n = g.name(), g.name(("n", "k", "m", "count", "steps"))
    variant = g.choice(("neg-power", "int-exponent", "int-global", "bool-then-float",
                        "int-then-float", "int-local", "int-division", "bool-arithmetic",
                        "bools-in-loop"))
    top = []
    nval = g.choice((1, 2, 3, 4))
    if variant == "neg-power":
        lines = [f"return {x} * {g.choice(('2.0', '2', '3', '1.5'))} ** -{n}"]
    elif variant == "int-exponent":
        lines = [f"return {x} * {x} * {g.choice(('3', '2', '2.0'))} ** ({n} - {g.choice((3, 4))})"]
    elif variant == "int-global":
        top.append(f"N_STEPS = {nval}")
        lines = [f"return {x} * 2 ** -N_STEPS + {x} ** 2 * {n} ** -2"]
    elif variant == "int-local":
        t = g.name()
        lines = [f"{t} = {n} - {g.choice((2, 3, 5))}", f"return {x} * {x} * 2 ** {t} + {t} * {x}"]
    elif variant == "int-division":  # true division of ints is a float
        lines = [f"return {x} * ({n} / {g.choice((3, 4, 8))}) + {x} * {x} * ({n} // 2) "
                 f"+ {x} / {n}"]
    elif variant == "bool-arithmetic":
        lines = [f"return {x} * ({n} > 2) + ({n} == 1) * {x} * {x} + (True + {x}) * {x}"]
    elif variant == "bools-in-loop":  # a list of bools grown in a loop, then a float
        items = g.name(("items", "lst", "xs", "acc"))
        lines = [f"{items} = []", f"for i in range({n}):", f"    {items}.append(i > 1)",
                 f"{items}.append({x} * 2.4)", f"return {items}[-1] * {x} + sum({items})"]
    else:
        items = g.name(("items", "lst", "xs", "acc"))
        first = ("True", "False", f"{n} > 2") if variant == "bool-then-float" else (
            "1", "2", f"{n} // 2")
        start = ", ".join(g.choice(first) for _ in range(g.choice((0, 1, 2))))
        lines = [f"{items} = [{start}]"]
        if not start:
            lines.append(f"{items}.append({g.choice(first)})")
        lines += [f"{items}.append({x} * 2.4)", f"{items}.append({x} * {x} + {g.const()})",
                  f"return sum({items}) * {x} + {items}[-1]"]
    top.append(_def(fname, [x, n], lines))
    return Round5Program("numba-mix", variant, _module("\n\n".join(top)), fname,
                         (abs(g.num(0.3, 1.5)), nval))


def _nested(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    x, y = g.name(), g.name()
    variant = g.choice(("def-default", "def-default-from-arg", "lambda-default",
                        "lambda-of-lambda", "immediate-lambda", "harness"))
    c = g.const()
    e = g.choice(UNARY)[0]
    if variant == "harness":  # item 11: ad.gradient(lambda ...) inside another lambda
        body = e.replace("u", "x")
        src = _module(f"target = lambda x: {body}\n\n"
                      f"run = lambda p: ad.gradient(lambda x: {body})(p)\n")
        return Round5Program("nested", variant, src, "target", (g.num(),), harness=True)
    h = g.name(("h", "inner", "helper", "sq", "g", "scale"))
    if variant == "def-default":
        lines = [f"def {h}(u, k={c}):", f"    return ({e}) * k",
                 f"return {h}({x}) + {h}({y}, 2.0) * {x}"]
    elif variant == "def-default-from-arg":  # the default is the argument's value
        lines = [f"def {h}(u, k={y}):", f"    return ({e}) * k",
                 f"return {h}({x}) + {h}({x}, {c})"]
    elif variant == "lambda-default":
        lines = [f"{h} = lambda u, k={c}: ({e}) * k",
                 f"return {h}({x}) + {h}({y}, k=0.5) * {x}"]
    elif variant == "lambda-of-lambda":
        lines = [f"{h} = lambda a: lambda b: a * b + np.sin(a)",
                 f"return {h}({x})({y}) + {h}({y})({c})"]
    else:
        lines = [f"return (lambda u: (lambda w: w * u + ({e}))({x} * {y}))({y})"]
    src = _module(_def(fname, [x, y], lines))
    return Round5Program("nested", variant, src, fname, (g.num(), g.num()),
                         refusal_ok=variant in ("lambda-of-lambda", "immediate-lambda"))


def _zero_d(g: Gen) -> Round5Program:
    fname = g.name(MAIN_NAMES)
    a, s, b = g.name(), g.name(), g.name()
    variant = g.choice(("arg-read", "arg-ellipsis", "local-write", "local-ellipsis-write",
                        "local-augmented", "vector-ellipsis", "from-scalar"))
    args: tuple = (np.array(g.num()), g.num())
    if variant == "arg-read":
        lines = [f"return {a}[()] * {s} + np.sin({a}[()])"]
    elif variant == "arg-ellipsis":
        lines = [f"return np.sum({a}[...] * {s}) + {a}[()] * {a}[()]"]
    elif variant == "local-write":
        lines = [f"{b} = np.zeros(())", f"{b}[()] = {s} * 2.0 + {a}[()]",
                 f"return {b}[()] * {s}"]
    elif variant == "local-ellipsis-write":
        lines = [f"{b} = np.ones(())", f"{b}[...] = np.tanh({s}) * {a}[()]",
                 f"return np.sum({b}) * {s}"]
    elif variant == "local-augmented":
        lines = [f"{b} = np.zeros(())", f"{b}[()] += {s} * {s}", f"{b}[()] += {a}[()]",
                 f"return {b}[()] * {s}"]
    elif variant == "vector-ellipsis":
        args = (g.vec(3), g.num())
        lines = [f"return np.sum({a}[...] * {s}) + {a}[...][1]"]
    else:
        lines = [f"{b} = np.array({s} * 2.0)", f"return {b}[()] * {s} + np.sum({a}) * {s}"]
    src = _module(_def(fname, [a, s], lines))
    return Round5Program("zero-d", variant, src, fname, args,
                         refusal_ok=variant == "from-scalar")


def without_changes(program: Round5Program) -> Round5Program:
    """``program`` with nothing changed between calls: the steps' code appended to the
    source (the final state, decorated after it), no in-place change before the
    pullback, no aliasing. s2s_ad gets these right without issue 20's fixes, so they
    check the oracle's expectations (the registrations' factor ``K`` included)."""
    code = "\n".join(step.code for step in program.steps if step.code)
    return dataclasses.replace(program, source=program.source + ("\n" + code if code else ""),
                               steps=[Step(None, program.steps[-1].scale)], mutation=None,
                               alias={}, alias_total=False)


_MAKERS = {"redefine": _redefine, "rebind": _rebind, "register": _register,
           "pullback-mutation": _pullback_mutation, "alias-read": _alias_read,
           "alias-write": _alias_write, "list-index": _list_index, "list-alias": _list_alias,
           "numba-mix": _numba_mix, "nested": _nested, "zero-d": _zero_d}


def round5_program_from_seed(seed: int, families: tuple[str, ...] | None = None,
                             **_: Any) -> Round5Program:
    """Program ``seed``: its family is drawn from ``families`` (default: all)."""
    g = Gen(seed)
    family = g.choice(tuple(families or FAMILIES))
    program = _MAKERS[family](g)
    program.seed = seed
    program.features = {family, f"{family}:{program.variant}"}
    return program
