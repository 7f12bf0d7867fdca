"""Property tests: random scalar programs, differentiated and checked numerically.

A hypothesis strategy builds small Python functions of two or three float
parameters (and sometimes an int loop bound ``n``) out of arithmetic, ``math``
calls, plain, augmented and tuple (swap) assignments, ``if``/``elif``/``else``
(on floats, and on loop counters so the branch changes between iterations),
conditional expressions and ``for``-``range`` loops, nested one level, with
loop-carried accumulators. Each program is
written to a real ``.py`` file (the compiler reads source through ``inspect``),
imported, and differentiated:

* the generated-Python gradient (``jit=False``) must match central finite
  differences of the plain program (rtol 1e-6, atol 1e-8), and its value the
  plain program's;
* the Numba gradient (``jit=True``) must agree with the Python one to 1e-12.

A failure prints the generated program and its inputs.

The programs are well conditioned by construction: denominators are
``1 + v*v``, ``**`` has a small integer exponent or a positive base, ``exp``
sees only ``tanh``/``sin`` of its argument, and loop-carried updates are
bounded. Inputs where a branch comparison is a near-tie, or where the finite
difference stencil would cross a branch, are skipped: there the derivative is
not what finite differences measure.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import operator
import re
import sys
import warnings
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from s2s_ad.testing import extrapolated_difference, moving_entry, relative_step

# ---------------------------------------------------------------------------
# Program representation
#
# Expressions and statements are small tuples rendered to source twice: once
# plain (the program under test) and once instrumented, where every comparison
# goes through ``_cmp`` and every assigned value through ``_val`` so the test
# can see branch margins, branch outcomes and magnitudes without touching the
# program the compiler sees.
# ---------------------------------------------------------------------------

CONSTANTS = (0.5, 1.5, -0.75, 2.0, 0.25, -1.25, 3.0)
COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}
COMPARISONS = tuple(COMPARE)
BOUNDED_FUNCTIONS = ("sin", "cos", "tanh", "atan")
LOOP_VARIABLES = ("i", "j")
# Names that hold ints: loop counters and the loop-bound parameter ``n``.
INT_NAMES = LOOP_VARIABLES + ("n",)

# Branch sides closer than this at the drawn inputs are treated as ties.
TIE_MARGIN = 1e-3
# Values beyond this make finite differences meaningless; such inputs are skipped.
MAGNITUDE_LIMIT = 1e4
# Gradient tolerance against finite differences. The extrapolated differences
# are good to ~1e-11 on these programs, and examples whose own error estimate
# exceeds a tenth of this are skipped, so a failure is the compiler's.
RTOL = 1e-6
ATOL = 1e-8


def render_expr(node: tuple, instrument: bool) -> str:
    """Python source for an expression node."""
    kind = node[0]
    r = lambda sub: render_expr(sub, instrument)  # noqa: E731
    if kind == "var":
        return node[1]
    if kind == "const":
        return repr(node[1])
    if kind == "bin":
        return f"({r(node[2])} {node[1]} {r(node[3])})"
    if kind == "neg":
        return f"(-{r(node[1])})"
    if kind == "div":
        # Dividing by 1 + b*b keeps the denominator >= 1.
        return f"({r(node[1])} / (1.0 + {r(node[2])} * {r(node[2])}))"
    if kind == "pow_int":
        return f"({r(node[1])} ** {node[2]})"
    if kind == "pow_pos":
        # Positive base, bounded exponent (a constant or tanh of something).
        return f"((1.0 + {r(node[1])} * {r(node[1])}) ** {r(node[2])})"
    if kind == "call":
        return f"math.{node[1]}({r(node[2])})"
    if kind == "exp":
        return f"math.exp(math.{node[1]}({r(node[2])}))"
    if kind == "log":
        return f"math.log(1.0 + {r(node[1])} * {r(node[1])})"
    if kind == "sqrt":
        return f"math.sqrt(1.0 + {r(node[1])} * {r(node[1])})"
    if kind == "ifexp":
        return f"({r(node[2])} if {render_cond(node[1], instrument)} else {r(node[3])})"
    raise ValueError(f"unknown expression node {kind!r}")


def render_cond(node: tuple, instrument: bool) -> str:
    """Python source for a condition: a comparison or an ``and``/``or`` of two."""
    if node[0] in ("and", "or"):
        left = render_cond(node[1], instrument)
        right = render_cond(node[2], instrument)
        return f"({left} {node[0]} {right})"
    _, op, left, right = node
    if instrument:
        return f"_cmp({render_expr(left, True)}, {op!r}, {render_expr(right, True)})"
    return f"{render_expr(left, False)} {op} {render_expr(right, False)}"


def render_block(stmts: list[tuple], indent: int, instrument: bool) -> list[str]:
    """Source lines for a list of statements at the given indentation level."""
    pad = "    " * indent
    lines: list[str] = []
    for stmt in stmts:
        kind = stmt[0]
        if kind == "assign":
            lines.append(f"{pad}{stmt[1]} = {render_expr(stmt[2], instrument)}")
        elif kind == "aug":
            _, name, op, value = stmt
            if op == "/=":
                value_src = render_expr(value, instrument)
                lines.append(f"{pad}{name} /= 1.0 + {value_src} * {value_src}")
            else:
                lines.append(f"{pad}{name} {op} {render_expr(value, instrument)}")
        elif kind == "unpack":
            _, targets, values = stmt
            sources = ", ".join(render_expr(v, instrument) for v in values)
            lines.append(f"{pad}{', '.join(targets)} = {sources}")
        elif kind == "if":
            lines.extend(render_if(stmt, indent, instrument, keyword="if"))
        elif kind == "for":
            _, var, bound, body = stmt
            lines.append(f"{pad}for {var} in range({bound}):")
            lines.extend(render_block(body, indent + 1, instrument))
        else:
            raise ValueError(f"unknown statement {kind!r}")
        if instrument and kind in ("assign", "aug"):
            lines.append(f"{pad}_val({stmt[1]})")
        if instrument and kind == "unpack":
            lines.extend(f"{pad}_val({name})" for name in stmt[1])
    return lines


def render_if(stmt: tuple, indent: int, instrument: bool, keyword: str) -> list[str]:
    """An ``if`` statement; an ``else`` holding a single ``if`` renders as ``elif``."""
    pad = "    " * indent
    _, cond, body, orelse = stmt
    lines = [f"{pad}{keyword} {render_cond(cond, instrument)}:"]
    lines.extend(render_block(body, indent + 1, instrument))
    if len(orelse) == 1 and orelse[0][0] == "if":
        lines.extend(render_if(orelse[0], indent, instrument, keyword="elif"))
    elif orelse:
        lines.append(f"{pad}else:")
        lines.extend(render_block(orelse, indent + 1, instrument))
    return lines


@dataclass(frozen=True)
class Program:
    """A generated function ``f`` and the inputs to differentiate it at."""

    float_params: tuple[str, ...]
    has_n: bool
    body: tuple
    result: tuple
    float_args: tuple[float, ...]
    n: int

    @property
    def params(self) -> tuple[str, ...]:
        return self.float_params + (("n",) if self.has_n else ())

    @property
    def args(self) -> tuple:
        return self.float_args + ((self.n,) if self.has_n else ())

    def source(self, instrument: bool = False) -> str:
        header = [] if instrument else ["import math", "", ""]
        lines = header + [f"def f({', '.join(self.params)}):"]
        lines += render_block(list(self.body), 1, instrument)
        lines.append(f"    return {render_expr(self.result, instrument)}")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The strategy
# ---------------------------------------------------------------------------


@dataclass
class Scope:
    """What a statement being generated may read and write."""

    floats: list[str]
    ints: list[str] = field(default_factory=list)  # loop counters and ``n``
    loop_depth: int = 0
    block_depth: int = 0

    def nested(self, **changes) -> Scope:
        values = dict(
            floats=list(self.floats),
            ints=list(self.ints),
            loop_depth=self.loop_depth,
            block_depth=self.block_depth + 1,
        )
        values.update(changes)
        return Scope(**values)


class Names:
    """Fresh variable names (v0, v1, ...) and the order variables were written in."""

    def __init__(self) -> None:
        self._counter = itertools.count()
        self.written: list[str] = []

    def fresh(self) -> str:
        return f"v{next(self._counter)}"


def is_int_expr(node: tuple) -> bool:
    """Whether an expression only combines loop counters (so Python gives an int)."""
    kind = node[0]
    if kind == "var":
        return node[1] in INT_NAMES
    if kind == "bin":
        return is_int_expr(node[2]) and is_int_expr(node[3])
    if kind in ("neg", "pow_int"):
        return is_int_expr(node[1])
    if kind == "ifexp":
        return is_int_expr(node[2]) and is_int_expr(node[3])
    return False


def leaf(draw, scope: Scope) -> tuple:
    # Variables three times as often as constants: constant subtrees test little.
    choices = ["var", "const", "var", "var"] + (["int"] if scope.ints else [])
    kind = draw(st.sampled_from(choices))
    if kind == "var":
        return ("var", draw(st.sampled_from(scope.floats)))
    if kind == "const":
        return ("const", draw(st.sampled_from(CONSTANTS)))
    return ("var", draw(st.sampled_from(scope.ints)))


EXPR_KINDS = (
    "bin",
    "call",
    "div",
    "pow_int",
    "exp",
    "log",
    "sqrt",
    "pow_pos",
    "neg",
    "ifexp",
)


def expr(draw, scope: Scope, depth: int) -> tuple:
    """A random expression of at most ``depth`` operator levels."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return leaf(draw, scope)
    kind = draw(st.sampled_from(EXPR_KINDS))
    sub = lambda: expr(draw, scope, depth - 1)  # noqa: E731
    if kind == "bin":
        return ("bin", draw(st.sampled_from("+-*")), sub(), sub())
    if kind == "call":
        return ("call", draw(st.sampled_from(BOUNDED_FUNCTIONS)), sub())
    if kind == "div":
        return ("div", sub(), sub())
    if kind == "pow_int":
        # Integer powers of a leaf only, so magnitudes stay polynomially small.
        return ("pow_int", leaf(draw, scope), draw(st.sampled_from((2, 3))))
    if kind == "exp":
        return ("exp", draw(st.sampled_from(("tanh", "sin"))), sub())
    if kind == "log":
        return ("log", sub())
    if kind == "sqrt":
        return ("sqrt", sub())
    if kind == "pow_pos":
        if draw(st.booleans()):
            exponent = ("const", draw(st.sampled_from((0.5, -0.5, 1.5))))
        else:
            exponent = ("call", "tanh", sub())
        return ("pow_pos", sub(), exponent)
    if kind == "neg":
        return ("neg", sub())
    return ("ifexp", condition(draw, scope), sub(), sub())


def float_expr(draw, scope: Scope, depth: int) -> tuple:
    """An expression that evaluates to a float (never a bare int counter)."""
    node = expr(draw, scope, depth)
    if is_int_expr(node):
        node = ("bin", "*", ("const", 0.5), node)
    return node


def bounded_expr(draw, scope: Scope, depth: int) -> tuple:
    """An expression with magnitude at most about 1, for loop-carried updates."""
    inner = expr(draw, scope, depth)
    return ("call", draw(st.sampled_from(BOUNDED_FUNCTIONS)), inner)


def comparison(draw, scope: Scope) -> tuple:
    if scope.ints and draw(st.integers(0, 2)) == 0:
        # A counter against a half-integer: the branch taken changes from one
        # iteration to the next, which the pullback must replay in reverse.
        counter = ("var", draw(st.sampled_from(scope.ints)))
        threshold = ("const", draw(st.sampled_from((0.5, 1.5, 2.5))))
        return ("cmp", draw(st.sampled_from(COMPARISONS)), counter, threshold)
    left = ("var", draw(st.sampled_from(scope.floats)))
    right = draw(
        st.one_of(
            st.sampled_from(scope.floats).map(lambda v: ("var", v)),
            st.sampled_from(CONSTANTS).map(lambda c: ("const", c)),
        )
    )
    if left == right:
        right = ("const", 0.5)
    if draw(st.booleans()):
        # Occasionally compare a computed value, not just a variable.
        left = expr(draw, scope, 1)
    return ("cmp", draw(st.sampled_from(COMPARISONS)), left, right)


def condition(draw, scope: Scope) -> tuple:
    first = comparison(draw, scope)
    if draw(st.integers(0, 4)) == 0:
        return (draw(st.sampled_from(("and", "or"))), first, comparison(draw, scope))
    return first


def statement(draw, names: Names, scope: Scope) -> list[tuple]:
    """One statement (a loop comes with its accumulator's initialisation).

    A variable it defines is added to ``scope.floats``.
    """
    kinds = ["assign", "aug", "unpack"]
    if scope.block_depth < 3:
        kinds.append("if")
        if scope.loop_depth < 2:
            kinds.append("for")
    kind = draw(st.sampled_from(kinds))
    in_loop = scope.loop_depth > 0
    if kind == "assign":
        name = names.fresh()
        # Inside a loop a fresh temporary may be unbounded (it is recomputed
        # every iteration); an existing variable is loop-carried, so bounded.
        reuse = in_loop and draw(st.booleans())
        if reuse:
            name = draw(st.sampled_from(scope.floats))
            value = bounded_expr(draw, scope, 2)
        else:
            value = float_expr(draw, scope, 3)
        stmt = ("assign", name, value)
        names.written.append(name)
        if name not in scope.floats:
            scope.floats.append(name)
        return [stmt]
    if kind == "aug":
        name = draw(st.sampled_from(scope.floats))
        op = draw(st.sampled_from(("+=", "-=", "*=", "/=")))
        if in_loop and op != "/=":
            value = bounded_expr(draw, scope, 2)
        else:
            value = float_expr(draw, scope, 2)
        names.written.append(name)
        return [("aug", name, op, value)]
    if kind == "unpack":
        return [unpack_statement(draw, names, scope)]
    if kind == "if":
        return [if_statement(draw, names, scope)]
    return for_statement(draw, names, scope)


def unpack_statement(draw, names: Names, scope: Scope) -> tuple:
    """``a, b = e1, e2``: both sides are evaluated before either name is bound.

    Often a swap or rotation of existing variables (``x, y = y, x * c``), the
    case that breaks a transform that binds targets one at a time.
    """
    in_loop = scope.loop_depth > 0
    first = draw(st.sampled_from(scope.floats))
    second = draw(st.sampled_from([v for v in scope.floats if v != first] + [names.fresh()]))
    if draw(st.booleans()) and second in scope.floats:
        values = (("var", second), ("var", first))  # a swap keeps magnitudes as they are
    else:
        make = bounded_expr if in_loop else float_expr
        values = (make(draw, scope, 2), make(draw, scope, 2))
    names.written.extend((first, second))
    if second not in scope.floats:
        scope.floats.append(second)
    return ("unpack", (first, second), values)


def block(draw, names: Names, scope: Scope, min_size: int, max_size: int) -> list[tuple]:
    count = draw(st.integers(min_size, max_size))
    return [stmt for _ in range(count) for stmt in statement(draw, names, scope)]


def if_statement(draw, names: Names, scope: Scope) -> tuple:
    cond = condition(draw, scope)
    body = block(draw, names, scope.nested(), 1, 2)
    shape = draw(st.sampled_from(("else", "none", "elif")))
    if shape == "none":
        orelse: list[tuple] = []
    elif shape == "elif" and scope.block_depth < 2:
        orelse = [if_statement(draw, names, scope.nested())]
    else:
        orelse = block(draw, names, scope.nested(), 1, 2)
    # Sometimes both branches define the same new variable, visible afterwards.
    if orelse and draw(st.booleans()):
        name = names.fresh()
        body = body + [("assign", name, float_expr(draw, scope, 2))]
        orelse = orelse + [("assign", name, float_expr(draw, scope, 2))]
        scope.floats.append(name)
    return ("if", cond, body, orelse)


def for_statement(draw, names: Names, scope: Scope) -> list[tuple]:
    var = LOOP_VARIABLES[scope.loop_depth]
    bound = draw(st.sampled_from((2, "n", 0, 1, 3, 4)))
    if bound == "n" and "n" not in scope.ints:
        bound = 3
    # A loop-carried accumulator, initialised just before the loop.
    acc = names.fresh()
    init = ("assign", acc, draw(st.sampled_from((("const", 0.0), ("const", 1.0)))))
    scope.floats.append(acc)
    inner = scope.nested(ints=scope.ints + [var], loop_depth=scope.loop_depth + 1)
    update = ("aug", acc, draw(st.sampled_from(("+=", "*="))), bounded_expr(draw, inner, 2))
    body = block(draw, names, inner, 0, 2) + [update]
    return [init, ("for", var, bound, body)]


@st.composite
def programs(draw, max_statements: int = 6) -> Program:
    """A random well-conditioned program together with inputs to evaluate it at."""
    float_params = ("x", "y", "z")[: draw(st.integers(2, 3))]
    has_n = draw(st.booleans())
    names = Names()
    scope = Scope(floats=list(float_params), ints=["n"] if has_n else [])
    body = block(draw, names, scope, 1, max_statements)
    # The result adds up the variables written last (so most of the body
    # matters) and every parameter not among them (so none is ignored outright).
    recent = list(dict.fromkeys(v for v in reversed(names.written) if v in scope.floats))[:3]
    result = float_expr(draw, scope, 2)
    for name in recent + [p for p in float_params if p not in recent]:
        result = ("bin", "+", ("var", name), result)
    args = tuple(
        draw(st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)) for _ in float_params
    )
    n = draw(st.integers(0, 4)) if has_n else 0
    return Program(float_params, has_n, tuple(body), result, args, n)


# ---------------------------------------------------------------------------
# Plain evaluation with instrumentation, and finite differences
# ---------------------------------------------------------------------------


class Trace:
    """What one instrumented run saw: branch outcomes, closest tie, largest value."""

    def __init__(self) -> None:
        self.outcomes: list[bool] = []
        self.min_margin = math.inf
        self.max_magnitude = 0.0

    def cmp(self, left, op: str, right) -> bool:
        outcome = COMPARE[op](left, right)
        self.outcomes.append(outcome)
        self.min_margin = min(self.min_margin, abs(left - right))
        return outcome

    def val(self, value) -> None:
        self.max_magnitude = max(self.max_magnitude, abs(value))


def instrumented(program: Program):
    """Run the program in plain Python; returns ``run(*args) -> (value, Trace)``."""
    namespace: dict = {"math": math}
    exec(compile(program.source(instrument=True), "<instrumented>", "exec"), namespace)
    fn = namespace["f"]

    def run(*args):
        trace = Trace()
        namespace["_cmp"] = trace.cmp
        namespace["_val"] = trace.val
        value = fn(*args)
        trace.val(value)
        return value, trace

    return run


def finite_difference_gradient(
    fn, args: tuple, wrt: range, rel_step: float = 1e-4
) -> list[tuple[float, float]]:
    """``(derivative, error estimate)`` of ``fn`` in each argument of ``wrt``.

    Fourth-order central differences at steps h = rel_step * max(1, |x|) and
    h/2, combined by Richardson extrapolation; the gap between the two is the
    error estimate (``s2s_ad.testing.extrapolated_difference``). With h = 1e-4 the
    rounding error is ~1e-12 |f|, a hundred times below a second-order stencil at
    its best step, and the estimate flags the rare high-frequency program whose
    truncation error is not negligible.
    """
    result = []
    for index in wrt:
        x = args[index]
        h = relative_step(x, rel_step)
        h = (x + h) - x  # a step that is exactly representable around x
        result.append(extrapolated_difference(moving_entry(fn, args, index), h))
    return result


@dataclass
class Reference:
    """The plain program's value and finite-difference gradient at the inputs."""

    value: float
    gradient: list[float]


def reference_or_skip(program: Program) -> Reference:
    """Evaluate the program plainly; ``assume`` away inputs FD cannot judge.

    Skipped: a branch comparison within TIE_MARGIN of a tie, a value beyond
    MAGNITUDE_LIMIT, a stencil point that takes other branches than the inputs
    (the difference quotient would straddle a jump), and a finite-difference
    error estimate above a tenth of the tolerance.
    """
    run = instrumented(program)
    args = program.args
    value, base = run(*args)
    assume(base.min_margin > TIE_MARGIN)
    assume(base.max_magnitude < MAGNITUDE_LIMIT)
    traces: list[Trace] = []

    def value_recording_branches(*point):
        point_value, trace = run(*point)
        traces.append(trace)
        return point_value

    wrt = range(len(program.float_params))
    estimates = finite_difference_gradient(value_recording_branches, args, wrt)
    assume(all(trace.outcomes == base.outcomes for trace in traces))
    for derivative, error in estimates:
        assume(error < 0.1 * (ATOL + RTOL * abs(derivative)))
    return Reference(value, [derivative for derivative, _ in estimates])


def close(got: float, expected: float, rtol: float, atol: float) -> bool:
    return abs(got - expected) <= atol + rtol * abs(expected)


# ---------------------------------------------------------------------------
# Loading programs as real modules and differentiating them
# ---------------------------------------------------------------------------

_module_counter = itertools.count()


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("random_programs")


@pytest.fixture(scope="module")
def ad():
    return pytest.importorskip("s2s_ad")


def load_program(program: Program, directory):
    """Write the program to its own file and import it, so ``inspect`` can read it."""
    module_name = f"random_program_{next(_module_counter)}"
    path = directory / f"{module_name}.py"
    path.write_text(program.source())
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def as_tuple(gradient, count: int) -> tuple:
    """``gradient`` returns a bare value for one parameter and a tuple for several."""
    return tuple(gradient) if count > 1 else (gradient,)


@dataclass
class Differentiated:
    """What the compiler made of a program at its inputs."""

    gradient: tuple
    value: float
    path: str
    zero_warned: set[str]  # parameters a ZeroDerivativeWarning called irrelevant


def differentiate(ad, program: Program, directory, jit: bool) -> Differentiated:
    """Differentiate the program with the compiler and evaluate it at its inputs."""
    module = load_program(program, directory)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = ad.differentiable(module.f, jit=jit)
            gradient = ad.gradient(df)(*program.args)
            value = df(*program.args)
            path = ad.explain(df, *program.args).path
    finally:
        sys.modules.pop(module.__name__, None)
    zero_warned = {
        match.group(1)
        for w in caught
        if issubclass(w.category, ad.ZeroDerivativeWarning)
        for match in [re.search(r"parameter '(\w+)'", str(w.message))]
        if match
    }
    return Differentiated(as_tuple(gradient, len(program.float_params)), value, path, zero_warned)


def describe(program: Program) -> str:
    args = ", ".join(repr(a) for a in program.args)
    return f"{program.source()}\nat f({args})"


# ---------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------


# Numba and CPython may round a cancelling sum of O(1) terms differently in the
# last bits, so an exactly-zero gradient on one side is allowed a few ulps of 1.
NUMBA_ATOL = 1e-14

COMMON_SETTINGS = dict(
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)


@settings(max_examples=30, **COMMON_SETTINGS)
@given(program=programs())
def test_python_gradient_matches_finite_differences(program, ad, program_dir):
    reference = reference_or_skip(program)
    note(describe(program))
    result = differentiate(ad, program, program_dir, jit=False)
    report = (
        f"{describe(program)}\ngradient {result.gradient}\n"
        f"finite differences {tuple(reference.gradient)}"
    )
    assert result.path == "python", report
    assert close(result.value, reference.value, 1e-12, 1e-12), f"{report}\nvalue {result.value}"
    assert len(result.gradient) == len(reference.gradient), report
    pairs = zip(program.float_params, result.gradient, reference.gradient, strict=True)
    for name, got, expected in pairs:
        assert close(got, expected, RTOL, ATOL), f"d/d{name} wrong\n{report}"
        # A warning that a parameter never matters is wrong if it visibly does.
        if name in result.zero_warned:
            assert close(expected, 0.0, 0.0, ATOL), f"false zero-derivative warning\n{report}"


@settings(max_examples=10, **COMMON_SETTINGS)
@given(program=programs(max_statements=4))
def test_numba_gradient_matches_python(program, ad, program_dir):
    reference_or_skip(program)
    note(describe(program))
    python = differentiate(ad, program, program_dir, jit=False)
    numba = differentiate(ad, program, program_dir, jit=True)
    report = f"{describe(program)}\npython {python.gradient}\nnumba  {numba.gradient}"
    assert numba.path == "numba", report
    assert close(numba.value, python.value, 1e-12, NUMBA_ATOL), f"{report}\nvalue {numba.value}"
    assert len(numba.gradient) == len(python.gradient), report
    for got, expected in zip(numba.gradient, python.gradient, strict=True):
        assert close(got, expected, 1e-12, NUMBA_ATOL), report
