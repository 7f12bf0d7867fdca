"""The rule table: every registered derivative rule with the calls that exercise it.

``TABLE`` maps a rule's identity -- ``(callee, nargs)`` for a call, ``(gast operator
class, None)`` for an operator, exactly as ``s2s_ad.rules.all_rules()`` lists them --
to the cases that check it. A case is a call expression over named arguments and a
generator of those arguments. Argument generators keep to each function's domain and
away from its kinks: logs see positive values, arcsin sees (-0.9, 0.9), max/min/maximum/
argmax see no ties, floor/round see no values near their jumps, ``%`` sees no quotient
near an integer, and solve/inv/det see diagonally dominant matrices. So central finite
differences are a valid reference.

The test module (test_rule_table.py) turns each case into ``def f(<args>, u): return
np.sum(<expr> * u)`` (``<expr> * u`` for a scalar result) in a real file.

``numba``: None means "only the first case of its rule runs in the Numba subset".
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from dataclasses import dataclass

import gast
import numpy as np
import scipy.linalg
import scipy.special

from s2s_ad import runtime

Args = Callable[[np.random.Generator], dict]


@dataclass(frozen=True)
class Case:
    """One call of a rule and how to draw its arguments."""

    name: str
    expr: str
    args: Args
    wrt: tuple[str, ...] | None = None  # None: every float argument
    numba: bool | None = None  # None: True for the first case of its rule
    stmt: str | None = None  # a statement run before the return (print)
    zero: bool = True  # non-differentiable rules: gradient is zero, with a warning
    constant: tuple[str, ...] = ()  # float arguments a differentiable rule treats as
    # constant: their gradient is zero (checked by finite differences), with a warning
    step: float = 1e-6  # relative finite-difference step (larger across roundings)


# ---- argument generators -------------------------------------------------------------
def _out(v, shape):
    return float(v) if shape == () else np.asarray(v, dtype=np.float64)


def unif(shape=(), lo=-1.0, hi=1.0):
    return lambda rng: _out(rng.uniform(lo, hi, shape), shape)


def away(shape=(), lo=0.3, hi=1.5):
    """|v| in [lo, hi) with random signs: no kink of abs/sign/cbrt nearby."""
    return lambda rng: _out(rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape), shape)


def distinct(shape, lo=-2.0, hi=2.0):
    """Evenly spread, shuffled values: no ties for max/min/argmax/argsort."""
    def gen(rng):
        values = np.linspace(lo, hi, int(np.prod(shape)))
        rng.shuffle(values)
        return values.reshape(shape)
    return gen


def abs_distinct(shape):
    """Like distinct, shifted so that no two |values| tie and none is 0 (inf-norms)."""
    return lambda rng: distinct(shape)(rng) + 0.037


def off_grid(shape=()):
    """Values whose fractional part is in [0.15, 0.35] or [0.65, 0.85]: away from the
    jumps of floor/ceil/trunc/rint/round."""
    def gen(rng):
        whole = rng.integers(-3, 3, shape)
        frac = rng.uniform(0.15, 0.35, shape) + 0.5 * rng.integers(0, 2, shape)
        return _out(whole + frac, shape)
    return gen


def well_conditioned(n):
    """Diagonally dominant with a positive diagonal: invertible, positive determinant."""
    return lambda rng: rng.uniform(-0.5, 0.5, (n, n)) + n * np.eye(n)


def well_conditioned_stack(k, n):
    """A stack of ``k`` diagonally dominant ``n x n`` matrices."""
    return lambda rng: rng.uniform(-0.5, 0.5, (k, n, n)) + n * np.eye(n)


def boolean(shape):
    return lambda rng: rng.random(shape) < 0.5


def args(**gens) -> Args:
    """Independent arguments, in keyword order."""
    return lambda rng: {name: gen(rng) for name, gen in gens.items()}


def untied(shape_a=(), shape_b=(), names=("a", "b")):
    """Two arguments that never tie (even broadcast): |a| >= 0.3 and |b| <= 0.1."""
    return args(**{names[0]: away(shape_a), names[1]: unif(shape_b, -0.1, 0.1)})


def untied_scalars(names=("a", "b")):
    """Two scalars at least 0.2 apart, either one the larger."""
    def gen(rng):
        a = float(rng.uniform(-1, 1))
        return {names[0]: a, names[1]: a + float(rng.choice([-1, 1]) * rng.uniform(0.2, 1))}
    return gen


def mod_pair(shape_a=(), shape_b=(), names=("a", "b"), sign=1.0):
    """a / b = +-(k + f) with f in [0.2, 0.8]: a % b, a // b and fmod(a, b) are smooth
    (or constant) there, also broadcast."""
    def gen(rng):
        shape = np.broadcast_shapes(shape_a, shape_b)
        q = rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)
        if shape_a == shape:
            b = sign * rng.uniform(0.7, 1.3, shape_b)
            a = q * b
        else:  # a is the broadcast one: b = a / q
            a = rng.uniform(2.0, 3.0, shape_a)
            q = np.abs(q) + 1.0
            b = sign * a / q
        return {names[0]: _out(np.array(a), shape_a), names[1]: _out(np.array(b), shape_b)}
    return gen


def clip_args(shape):
    """x away from the clip bounds -0.5 and 0.5."""
    def gen(rng):
        x = rng.uniform(-1, 1, shape)
        near = np.abs(np.abs(x) - 0.5) < 0.05
        x[near] += 0.15
        return {"x": x}
    return gen


V = (5,)
M = (3, 4)
ROW = (4,)
COL = (3, 1)

TABLE: dict[tuple, list[Case]] = {}


def rule(callee, nargs, *cases: Case) -> None:
    assert (callee, nargs) not in TABLE, f"duplicate table entry {callee!r}/{nargs}"
    TABLE[(callee, nargs)] = list(cases)


# ---- Python operators, on scalars and on arrays (with broadcasting) ------------------------
def _binop(op, sym, gen_for):
    cases = [Case(f"{name}", f"a {sym} b", gen_for(sa, sb))
             for name, sa, sb in (("scalars", (), ()), ("arrays", V, V),
                                  ("array-scalar", M, ()), ("scalar-array", (), M),
                                  ("broadcast-row", M, ROW), ("broadcast-col", M, COL),
                                  ("broadcast-row-2d", M, (1, 4)))]
    rule(op, None, *[Case(f"op{sym}-{c.name}", c.expr, c.args, numba=c.name in (
        "arrays", "scalars")) for c in cases])


_binop(gast.Add, "+", lambda sa, sb: args(a=unif(sa), b=unif(sb)))
_binop(gast.Sub, "-", lambda sa, sb: args(a=unif(sa), b=unif(sb)))
_binop(gast.Mult, "*", lambda sa, sb: args(a=unif(sa), b=unif(sb)))
_binop(gast.Div, "/", lambda sa, sb: args(a=unif(sa), b=away(sb)))
_binop(gast.Pow, "**", lambda sa, sb: args(a=unif(sa, 0.5, 2.0), b=unif(sb, -1.5, 2.5)))
_binop(gast.Mod, "%", lambda sa, sb: mod_pair(sa, sb))
TABLE[(gast.Mod, None)] += [
    Case("op%-negative-divisor", "a % b", mod_pair((), (), sign=-1.0)),
    Case("op%-array-negative-divisor", "a % b", mod_pair(V, V, sign=-1.0)),
]
TABLE[(gast.Pow, None)] += [
    Case("op**-int-exponent", "a ** 3", args(a=unif())),
    Case("op**-array-int-exponent", "a ** 2", args(a=unif(M))),
    Case("op**-constant-base", "2.0 ** b", args(b=unif(M))),
]
rule(gast.FloorDiv, None,
     Case("op//-scalars", "a // b", mod_pair()),
     Case("op//-arrays", "a // b", mod_pair(V, V)),
     Case("op//-array-scalar", "a // b", mod_pair(M, ())))
rule(gast.MatMult, None,
     Case("op@-2d-2d", "a @ b", args(a=unif((3, 4)), b=unif((4, 2)))),
     Case("op@-1d-1d", "a @ b", args(a=unif(ROW), b=unif(ROW))),
     Case("op@-2d-1d", "a @ b", args(a=unif((3, 4)), b=unif(ROW))),
     Case("op@-1d-2d", "a @ b", args(a=unif((3,)), b=unif((3, 4))), numba=True))
rule(gast.USub, None,
     Case("op-neg-scalar", "-a", args(a=unif())),
     Case("op-neg-array", "-a", args(a=unif(M)), numba=True))
rule(gast.UAdd, None,
     Case("op-pos-scalar", "+a", args(a=unif())),
     Case("op-pos-array", "+a", args(a=unif(M)), numba=True))
rule(gast.Not, None, Case("op-not", "(not a)", args(a=away())))
for _op, _sym in ((gast.BitAnd, "&"), (gast.BitOr, "|"), (gast.BitXor, "^")):
    rule(_op, None, Case(f"op{_sym}-masks", f"(a > 0.5) {_sym} (b < 0.5)",
                         args(a=unif(V), b=unif(V))))
rule(gast.LShift, None, Case("op<<-mask", "(a > 0.5) << 1", args(a=unif(V))))
rule(gast.RShift, None, Case("op>>-mask", "(a > 0.5) >> 1", args(a=unif(V))))
rule(gast.Invert, None, Case("op~-mask", "~(a > 0.5)", args(a=unif(V))))

# ---- math ----------------------------------------------------------------------------------
_MATH_UNARY = {
    math.sin: unif(), math.cos: unif(), math.tan: unif(), math.asin: unif((), -0.9, 0.9),
    math.acos: unif((), -0.9, 0.9), math.atan: unif((), -2, 2), math.degrees: unif(),
    math.radians: unif((), -90, 90), math.sinh: unif((), -1.5, 1.5),
    math.cosh: unif((), -1.5, 1.5), math.tanh: unif((), -1.5, 1.5),
    math.asinh: unif((), -2, 2), math.acosh: unif((), 1.2, 3.0),
    math.atanh: unif((), -0.8, 0.8), math.exp: unif(), math.expm1: unif(),
    math.exp2: unif(), math.log1p: unif((), -0.5, 2.0), math.log2: unif((), 0.3, 3.0),
    math.log10: unif((), 0.3, 3.0), math.sqrt: unif((), 0.3, 3.0), math.cbrt: away(),
    math.erf: unif((), -1.5, 1.5), math.erfc: unif((), -1.5, 1.5), math.fabs: away(),
}
for _fn, _gen in _MATH_UNARY.items():
    rule(_fn, None, Case(f"math.{_fn.__name__}", f"math.{_fn.__name__}(x)", args(x=_gen)))
rule(math.log, 1, Case("math.log", "math.log(x)", args(x=unif((), 0.3, 3.0))))
rule(math.log, 2, Case("math.log-base", "math.log(x, base)",
                       args(x=unif((), 0.3, 3.0), base=unif((), 1.5, 4.0))))
rule(math.atan2, None,
     Case("math.atan2", "math.atan2(y, x)", args(y=unif(), x=away())),
     Case("math.atan2-left", "math.atan2(y, x)", args(y=away(), x=unif((), -2, -0.5))))
rule(math.hypot, 2, Case("math.hypot", "math.hypot(x, y)", args(x=away(), y=away())))
rule(math.pow, None, Case("math.pow", "math.pow(a, b)",
                          args(a=unif((), 0.5, 2.0), b=unif((), -1.5, 2.5))))
rule(math.copysign, None,
     Case("math.copysign", "math.copysign(x, y)", args(x=away(), y=away()),
          constant=("y",)))
rule(math.fmod, None,
     Case("math.fmod", "math.fmod(x, y)", mod_pair(names=("x", "y"))),
     Case("math.fmod-negative", "math.fmod(x, y)", mod_pair(names=("x", "y"), sign=-1.0)))
for _fn in (math.floor, math.ceil, math.trunc):
    rule(_fn, None, Case(f"math.{_fn.__name__}", f"math.{_fn.__name__}(x)",
                         args(x=off_grid())))
for _fn in (math.isnan, math.isinf, math.isfinite):
    rule(_fn, None, Case(f"math.{_fn.__name__}", f"math.{_fn.__name__}(x)", args(x=unif())))

# ---- builtins ------------------------------------------------------------------------------
rule(builtins.abs, None,
     Case("abs", "abs(x)", args(x=away())),
     Case("abs-array", "abs(x)", args(x=away(M))))
rule(builtins.float, None, Case("float", "float(x)", args(x=unif())))
rule(builtins.max, 2,
     Case("max", "max(a, b)", untied_scalars()),
     Case("max-other", "max(b, a)", untied_scalars()))
rule(builtins.min, 2,
     Case("min", "min(a, b)", untied_scalars()),
     Case("min-other", "min(b, a)", untied_scalars()))
rule(builtins.pow, 2, Case("pow", "pow(a, b)", args(a=unif((), 0.5, 2.0), b=unif((), -1.5, 2.5))))
rule(builtins.int, None, Case("int", "int(x)", args(x=off_grid())))
rule(builtins.round, 1, Case("round", "round(x)", args(x=off_grid())))
rule(builtins.round, 2, Case("round-ndigits", "round(x, 2)", args(x=unif((), -3, 3))))
rule(builtins.bool, None, Case("bool", "bool(x)", args(x=away())))
rule(builtins.len, None, Case("len", "len(x)", args(x=unif(V))))
rule(builtins.print, None,
     Case("print", "x", args(x=unif()), stmt="print(x)", zero=False))
rule(builtins.sum, 1, Case("sum-of-rows", "sum(x)", args(x=unif(V))))
rule(builtins.max, 1, Case("max-of-items", "max(x)", args(x=distinct(V))))
rule(builtins.min, 1, Case("min-of-items", "min(x)", args(x=distinct(V))))
rule(runtime.write_back, None,
     Case("argument-written", "np.sum(x * x)", args(x=unif(V)), stmt="x[0] = x[1] * 2.0",
          zero=False))
# an index the range analysis cannot prove in range is checked first (compiler/bounds_checks.py)
rule(runtime.check_index, None,
     Case("index-checked", "x[len(x) - 1] * x[-2] + x[0] ** 2", args(x=unif(V)), zero=False))

# List() and list_position have no derivative of their own (zero=False: the list's
# items carry it, checked against finite differences)
rule(runtime.new_list, None,
     Case("list-grown", "sum([x * y for y in x])", args(x=unif(V)), zero=False))
rule(runtime.appended, None,
     Case("list-appended", "max(y * y for y in x if y < 0.5)", args(x=unif(V, -1.0, 0.0))))
rule(runtime.list_array, None,
     Case("list-as-array", "np.array([y * x for y in x]) ** 2", args(x=unif(V))))
rule(runtime.list_position, None,
     Case("list-item-from-the-end", "[x * y for y in x][-1] * [y for y in x][1]",
          args(x=unif(V)), zero=False))
# np.concatenate, np.hstack and np.vstack of a list: its items joined (of different lengths
# along the joining axis too), each item's piece of the cotangent sent back to it
rule(runtime.list_concatenate, None,
     Case("list-concatenated", "np.concatenate([r * r for r in x]) ** 3", args(x=unif(M))),
     Case("list-concatenated-ragged", "np.concatenate([x[:k] * x[k] for k in range(1, 4)]) ** 3",
          args(x=unif(V))),
     Case("list-concatenated-columns", "np.concatenate([x[:, :k] for k in range(1, 3)], axis=1)",
          args(x=unif(M))))
rule(runtime.list_hstack, None,
     Case("list-hstacked-ragged", "np.hstack([x[:k] * x[k] for k in range(1, 4)]) ** 3",
          args(x=unif(V))),
     Case("list-hstacked-numbers", "np.hstack([r * r for r in x])", args(x=unif(V))),
     Case("list-hstacked-columns", "np.hstack([x[:, :k] for k in range(1, 3)]) ** 2",
          args(x=unif(M))))
rule(runtime.list_vstack, None,
     Case("list-vstacked-ragged", "np.vstack([x[:k] * x[k] for k in range(1, 3)]) ** 3",
          args(x=unif(M))),
     Case("list-vstacked-rows", "np.vstack([r * r for r in x])", args(x=unif(M))),
     Case("list-vstacked-numbers", "np.vstack([r * r for r in x]) ** 3", args(x=unif(V))))

# ---- NumPy element-wise --------------------------------------------------------------------
_NP_UNARY = {
    np.sin: (-1, 1), np.cos: (-1, 1), np.tan: (-1, 1), np.arcsin: (-0.9, 0.9),
    np.arccos: (-0.9, 0.9), np.arctan: (-2, 2), np.sinh: (-1.5, 1.5), np.cosh: (-1.5, 1.5),
    np.tanh: (-1.5, 1.5), np.arcsinh: (-2, 2), np.arccosh: (1.2, 3.0),
    np.arctanh: (-0.8, 0.8), np.exp: (-1, 1), np.expm1: (-1, 1), np.exp2: (-1, 1),
    np.log: (0.3, 3.0), np.log1p: (-0.5, 2.0), np.log2: (0.3, 3.0), np.log10: (0.3, 3.0),
    np.sqrt: (0.3, 3.0), np.cbrt: None, np.square: (-1, 1), np.abs: None, np.fabs: None,
    np.negative: (-1, 1), np.positive: (-1, 1), np.reciprocal: None,
}
for _fn, _dom in _NP_UNARY.items():
    _name = "abs" if _fn is np.abs else _fn.__name__
    _gen = away if _dom is None else (lambda s, d=_dom: unif(s, *d))
    rule(_fn, None,
         Case(f"np.{_name}", f"np.{_name}(x)", args(x=_gen(V))),
         Case(f"np.{_name}-2d", f"np.{_name}(x)", args(x=_gen(M))),
         Case(f"np.{_name}-scalar", f"np.{_name}(x)", args(x=_gen(()))))

_NP_BINARY = {
    np.add: lambda sa, sb: args(a=unif(sa), b=unif(sb)),
    np.subtract: lambda sa, sb: args(a=unif(sa), b=unif(sb)),
    np.multiply: lambda sa, sb: args(a=unif(sa), b=unif(sb)),
    np.divide: lambda sa, sb: args(a=unif(sa), b=away(sb)),
    np.maximum: untied, np.minimum: untied,
    np.arctan2: lambda sa, sb: args(a=unif(sa), b=away(sb)),
    np.hypot: lambda sa, sb: args(a=away(sa), b=away(sb)),
    np.power: lambda sa, sb: args(a=unif(sa, 0.5, 2.0), b=unif(sb, -1.5, 2.5)),
}
for _fn, _gen in _NP_BINARY.items():
    _n = _fn.__name__
    rule(_fn, None,
         Case(f"np.{_n}", f"np.{_n}(a, b)", _gen(V, V)),
         Case(f"np.{_n}-2d", f"np.{_n}(a, b)", _gen(M, M)),
         Case(f"np.{_n}-array-scalar", f"np.{_n}(a, b)", _gen(M, ())),
         Case(f"np.{_n}-scalar-array", f"np.{_n}(a, b)", _gen((), M)),
         Case(f"np.{_n}-broadcast-row", f"np.{_n}(a, b)", _gen(M, ROW)),
         Case(f"np.{_n}-broadcast-col-first", f"np.{_n}(a, b)", _gen(COL, M)),
         Case(f"np.{_n}-broadcast-row-2d", f"np.{_n}(a, b)", _gen(M, (1, 4))),
         Case(f"np.{_n}-scalars", f"np.{_n}(a, b)", _gen((), ())))
TABLE[(np.maximum, None)].append(Case("np.maximum-swapped", "np.maximum(b, a)", untied(M, M)))
TABLE[(np.minimum, None)].append(Case("np.minimum-swapped", "np.minimum(b, a)", untied(M, M)))

rule(np.where, 3,
     Case("np.where", "np.where(c, a, b)", args(c=boolean(V), a=unif(V), b=unif(V))),
     Case("np.where-2d-scalar", "np.where(c, a, b)", args(c=boolean(M), a=unif(M), b=unif())),
     Case("np.where-broadcast", "np.where(c, a, b)",
          args(c=boolean(M), a=unif(ROW), b=unif(COL))),
     Case("np.where-broadcast-2d", "np.where(c, a, b)",
          args(c=boolean(M), a=unif((1, 4)), b=unif(COL))),
     Case("np.where-float-condition", "np.where(c, a, b)",
          args(c=away(V), a=unif(V), b=unif(V)), constant=("c",)))
rule(np.clip, None,
     Case("np.clip", "np.clip(x, -0.5, 0.5)", clip_args(V)),
     Case("np.clip-2d", "np.clip(x, -0.5, 0.5)", clip_args(M)),
     Case("np.clip-method", "x.clip(-0.5, 0.5)", clip_args(M)),
     Case("np.clip-float-bounds", "np.clip(x, lo, hi)",
          lambda rng: {**clip_args(M)(rng), "lo": -0.5, "hi": 0.5}))

# ---- reductions: every axis / keepdims variant, the method form, 1-D and 3-D --------------
_AXES = (("", None, False), (", keepdims=True", None, True), (", axis=0", 0, False),
         (", axis=0, keepdims=True", 0, True), (", axis=1", 1, False),
         (", axis=1, keepdims=True", 1, True), (", axis=-1", -1, False),
         (", axis=-1, keepdims=True", -1, True), (", axis=None", None, False))
# the Numba subset: whole-array reductions and a spread of the axis/keepdims helpers
_NUMBA_AXES = {("sum", ", keepdims=True"), ("sum", ", axis=0"), ("sum", ", axis=1, keepdims=True"),
               ("sum", ", axis=-1"), ("max", ", axis=0"), ("max", ", axis=-1, keepdims=True"),
               ("mean", ", axis=1"), ("prod", ", axis=0, keepdims=True"), ("min", ", axis=1")}
for _fn, _name, _gen in ((np.sum, "sum", unif), (np.mean, "mean", unif),
                         (np.prod, "prod", lambda s: unif(s, 0.5, 1.5)),
                         (np.max, "max", distinct), (np.min, "min", distinct),
                         (np.amax, "amax", distinct), (np.amin, "amin", distinct)):
    _method = {"amax": "max", "amin": "min"}.get(_name, _name)
    rule(_fn, None,
         *[Case(f"np.{_name}({_kw[2:] or 'all'})", f"np.{_name}(x{_kw})", args(x=_gen(M)),
                numba=_kw == "" or (_name, _kw) in _NUMBA_AXES)
           for _kw, _, _ in _AXES],
         Case(f"np.{_name}-positional-axis", f"np.{_name}(x, 1)", args(x=_gen(M))),
         Case(f"np.{_name}-1d", f"np.{_name}(x)", args(x=_gen(V))),
         Case(f"np.{_name}-1d-axis0", f"np.{_name}(x, axis=0)", args(x=_gen(V))),
         Case(f"np.{_name}-3d-axis1", f"np.{_name}(x, axis=1)", args(x=_gen((2, 3, 4)))),
         Case(f"np.{_name}-3d-axis-1-keepdims", f"np.{_name}(x, axis=-1, keepdims=True)",
              args(x=_gen((2, 3, 4)))),
         *([Case(f"x.{_method}()-method", f"x.{_method}()", args(x=_gen(M))),
            Case(f"x.{_method}(axis=0)-method", f"x.{_method}(axis=0)", args(x=_gen(M)))]
           if _name == _method else []))
rule(np.linalg.norm, None,
     Case("np.linalg.norm", "np.linalg.norm(x)", args(x=unif(V))),
     Case("np.linalg.norm-2d", "np.linalg.norm(x)", args(x=unif(M))),
     Case("np.linalg.norm-ord1", "np.linalg.norm(x, 1)", args(x=away(V)), numba=True),
     Case("np.linalg.norm-ord-inf", "np.linalg.norm(x, np.inf)", args(x=abs_distinct(V))),
     Case("np.linalg.norm-ord-minus-inf-axis", "np.linalg.norm(x, -np.inf, axis=1)",
          args(x=abs_distinct(M)), numba=True),
     Case("np.linalg.norm-ord3-axis-keepdims", "np.linalg.norm(x, 3, axis=0, keepdims=True)",
          args(x=away(M)), numba=True),
     Case("np.linalg.norm-fro", "np.linalg.norm(x, 'fro')", args(x=unif(M))))

# ---- products ------------------------------------------------------------------------------
_PRODUCT_SHAPES = (("1d-1d", ROW, ROW), ("2d-1d", M, ROW), ("1d-2d", (3,), M),
                   ("2d-2d", M, (4, 2)))
for _fn in (np.dot, np.matmul):
    _n = _fn.__name__
    rule(_fn, None, *[Case(f"np.{_n}-{_tag}", f"np.{_n}(a, b)", args(a=unif(_sa), b=unif(_sb)),
                           numba=_fn is np.dot or _tag == "2d-2d")
                      for _tag, _sa, _sb in _PRODUCT_SHAPES])
TABLE[(np.dot, None)].append(Case("x.dot-method", "a.dot(b)", args(a=unif(M), b=unif((4, 2)))))
rule(np.outer, None, Case("np.outer", "np.outer(a, b)", args(a=unif((3,)), b=unif(ROW))))

# ---- shapes -----------------------------------------------------------------------------
rule(np.reshape, None,
     Case("np.reshape", "np.reshape(x, (4, 3))", args(x=unif(M))),
     Case("np.reshape-3d", "np.reshape(x, (2, 2, 3))", args(x=unif(M))),
     Case("np.reshape-flat", "np.reshape(x, (-1,))", args(x=unif(M))),
     Case("np.reshape-from-1d", "np.reshape(x, (2, 6))", args(x=unif((12,)))),
     Case("x.reshape-method-args", "x.reshape(6, 2)", args(x=unif(M))),
     Case("x.reshape-method-tuple", "x.reshape((2, 6))", args(x=unif(M))))
rule(np.transpose, 1,
     Case("np.transpose", "np.transpose(x)", args(x=unif(M))),
     Case("x.T", "x.T", args(x=unif(M))),
     Case("x.transpose-method", "x.transpose()", args(x=unif(M))),
     Case("np.transpose-3d", "np.transpose(x)", args(x=unif((2, 3, 4)))))
rule(np.copy, None,
     Case("np.copy", "np.copy(x)", args(x=unif(M))),
     Case("x.copy-method", "x.copy()", args(x=unif(V))))
rule(np.ravel, None,
     Case("np.ravel", "np.ravel(x)", args(x=unif(M))),
     Case("x.ravel-method", "x.ravel()", args(x=unif(M))),
     Case("x.flatten-method", "x.flatten()", args(x=unif((2, 3, 2)))))
rule(np.concatenate, None,
     Case("np.concatenate-axis0", "np.concatenate((a, b), axis=0)",
          args(a=unif((2, 4)), b=unif(M))),
     Case("np.concatenate-axis1", "np.concatenate((a, b), axis=1)",
          args(a=unif((3, 2)), b=unif(M))),
     Case("np.concatenate-default", "np.concatenate((a, b))", args(a=unif(V), b=unif((3,)))),
     Case("np.concatenate-positional", "np.concatenate((a, b), 1)",
          args(a=unif(M), b=unif((3, 1)))),
     Case("np.concatenate-three", "np.concatenate((a, b, a), axis=0)",
          args(a=unif((2, 4)), b=unif(M))))
rule(np.stack, None,
     Case("np.stack-axis0", "np.stack((a, b), axis=0)", args(a=unif(M), b=unif(M))),
     Case("np.stack-axis1", "np.stack((a, b), axis=1)", args(a=unif(M), b=unif(M))),
     Case("np.stack-default-1d", "np.stack((a, b))", args(a=unif(V), b=unif(V))),
     Case("np.stack-axis-1", "np.stack((a, b), axis=-1)", args(a=unif(V), b=unif(V))))
rule(np.vstack, 1,
     Case("np.vstack-1d-and-2d", "np.vstack((a, b))", args(a=unif(ROW), b=unif(M))),
     Case("np.vstack-1d", "np.vstack((a, b))", args(a=unif(V), b=unif(V)), numba=True),
     Case("np.vstack-2d-list", "np.vstack([a, b, a])", args(a=unif((2, 4)), b=unif(M))),
     Case("np.vstack-numbers", "np.vstack((a, b, a))", args(a=unif(), b=unif((1,)))))
rule(np.hstack, 1,
     Case("np.hstack-1d", "np.hstack((a, b))", args(a=unif(V), b=unif((3,)))),
     Case("np.hstack-2d", "np.hstack((a, b))", args(a=unif(M), b=unif(COL)), numba=True),
     Case("np.hstack-number-and-1d", "np.hstack((a, b, a))", args(a=unif(), b=unif(V))))
rule(np.column_stack, 1,
     Case("np.column_stack-1d-and-2d", "np.column_stack((a, b))",
          args(a=unif((3,)), b=unif(M))),
     Case("np.column_stack-1d", "np.column_stack((a, b))", args(a=unif(V), b=unif(V))),
     Case("np.column_stack-numbers", "np.column_stack((a, b))", args(a=unif(), b=unif()),
          numba=True),
     Case("np.column_stack-3d", "np.column_stack((a, b))",
          args(a=unif((2, 3, 2)), b=unif((2, 1, 2)))))
for _rank, _fn in enumerate((np.atleast_1d, np.atleast_2d, np.atleast_3d), start=1):
    rule(_fn, 1,
         Case(f"np.atleast_{_rank}d-1d", f"np.atleast_{_rank}d(x)", args(x=unif(V))),
         Case(f"np.atleast_{_rank}d-number", f"np.atleast_{_rank}d(x)", args(x=unif()),
              numba=True),
         Case(f"np.atleast_{_rank}d-2d", f"np.atleast_{_rank}d(x)", args(x=unif(M))),
         Case(f"np.atleast_{_rank}d-3d", f"np.atleast_{_rank}d(x)", args(x=unif((2, 3, 2)))))

# ---- linear algebra ------------------------------------------------------------------------
rule(np.linalg.solve, None,
     Case("np.linalg.solve-vector", "np.linalg.solve(A, b)",
          args(A=well_conditioned(3), b=unif((3,)))),
     Case("np.linalg.solve-matrix", "np.linalg.solve(A, b)",
          args(A=well_conditioned(3), b=unif((3, 2)))),
     Case("np.linalg.solve-stack", "np.linalg.solve(A, b)",
          args(A=well_conditioned_stack(2, 3), b=unif((2, 3, 2))), numba=True),
     Case("np.linalg.solve-stack-vector", "np.linalg.solve(A, b)",
          args(A=well_conditioned_stack(2, 3), b=unif((3,)))),
     Case("np.linalg.solve-stack-broadcast", "np.linalg.solve(A, b)",
          args(A=well_conditioned_stack(2, 3), b=unif((3, 2)))))
rule(np.linalg.inv, None,
     Case("np.linalg.inv", "np.linalg.inv(A)", args(A=well_conditioned(3))),
     Case("np.linalg.inv-stack", "np.linalg.inv(A)", args(A=well_conditioned_stack(2, 3)),
          numba=True))
rule(np.linalg.det, None,
     Case("np.linalg.det", "np.linalg.det(A)", args(A=well_conditioned(3))),
     Case("np.linalg.det-4x4", "np.linalg.det(A)", args(A=well_conditioned(4))),
     Case("np.linalg.det-stack", "np.linalg.det(A)", args(A=well_conditioned_stack(3, 2)),
          numba=True))

# ---- einsum, scans, sorting, gathers, conversions (more in rules/test_numpy_rules.py) ------------
rule(np.einsum, 2,
     Case("np.einsum-transpose", "np.einsum('ij->ji', a)", args(a=unif(M))),
     Case("np.einsum-diagonal", "np.einsum('ii->i', a)", args(a=unif((3, 3))), numba=True),
     Case("np.einsum-row-sums", "np.einsum('ij->i', a)", args(a=unif(M))),
     Case("np.einsum-trace-implicit", "np.einsum('ii', a)", args(a=unif((3, 3)))))
rule(np.einsum, 3,
     Case("np.einsum-matvec", "np.einsum('ij,j->i', a, b)", args(a=unif(M), b=unif(ROW))),
     Case("np.einsum-matmul", "np.einsum('ij,jk->ik', a, b)", args(a=unif(M), b=unif((4, 2))),
          numba=True),
     Case("np.einsum-dot", "np.einsum('i,i->', a, b)", args(a=unif(V), b=unif(V))),
     Case("np.einsum-implicit", "np.einsum('ij,jk', a, b)", args(a=unif(M), b=unif((4, 2)))))
rule(np.einsum, 4,
     Case("np.einsum-three", "np.einsum('i,ij,jk->k', a, b, c)",
          args(a=unif((3,)), b=unif(M), c=unif((4, 2)))))
rule(np.einsum, 5,
     Case("np.einsum-four", "np.einsum('i,ij,jk,k->', a, b, c, d)",
          args(a=unif((3,)), b=unif(M), c=unif((4, 2)), d=unif((2,)))))
rule(np.cumsum, None,
     Case("np.cumsum", "np.cumsum(x)", args(x=unif(M))),
     Case("np.cumsum-axis1", "np.cumsum(x, axis=1)", args(x=unif(M)), numba=True),
     Case("np.cumsum-axis0-positional", "np.cumsum(x, 0)", args(x=unif(M))))
rule(np.sort, None,
     Case("np.sort", "np.sort(x)", args(x=distinct(M))),
     Case("np.sort-axis0", "np.sort(x, axis=0)", args(x=distinct(M)), numba=True),
     Case("np.sort-flattened", "np.sort(x, axis=None)", args(x=distinct(M))))
rule(np.take, None,
     Case("np.take", "np.take(x, idx)", args(x=unif(M), idx=lambda rng: np.array([0, 5, 5, -1]))),
     Case("np.take-axis1", "np.take(x, idx, axis=1)",
          args(x=unif(M), idx=lambda rng: np.array([3, 1, 3])), numba=True))
rule(np.float64, 1, Case("np.float64", "np.float64(x)", args(x=unif())))
# float(): NumPy computes float32 * float in float32, the generated code in float64; the
# rounding to float32 (relative 6e-8) needs a step far above 1e-6 (the rule passes g through)
rule(np.float32, 1, Case("np.float32", "float(np.float32(x))", args(x=unif()), step=0.05))
rule(np.array, 1,
     Case("np.array-tuple", "np.array((a, b))", args(a=unif(), b=unif())),
     Case("np.array-tuple-of-arrays", "np.array((a, b))", args(a=unif(V), b=unif(V)),
          numba=True))
rule(math.fsum, None,
     Case("math.fsum-tuple", "math.fsum((a, b))", args(a=unif(), b=unif())),
     Case("math.fsum-array", "math.fsum(x)", args(x=unif(V)), numba=True))

# ---- NumPy non-differentiable ----------------------------------------------------------------
rule(np.sign, None, Case("np.sign", "np.sign(x)", args(x=away(M))))
for _fn in (np.floor, np.ceil, np.trunc, np.rint, np.round):
    rule(_fn, None,
         Case(f"np.{_fn.__name__}", f"np.{_fn.__name__}(x)", args(x=off_grid(M))),
         Case(f"np.{_fn.__name__}-scalar", f"np.{_fn.__name__}(x)", args(x=off_grid())))
for _fn in (np.isnan, np.isinf, np.isfinite):
    rule(_fn, None, Case(f"np.{_fn.__name__}", f"np.{_fn.__name__}(x)", args(x=unif(M))))
rule(np.argmax, 1,
     Case("np.argmax", "np.argmax(x)", args(x=distinct(V))),
     Case("x.argmax-method", "x.argmax()", args(x=distinct(M))))
rule(np.argmin, 1,
     Case("np.argmin", "np.argmin(x)", args(x=distinct(V))),
     Case("x.argmin-method", "x.argmin()", args(x=distinct(M))))
rule(np.argsort, 1, Case("np.argsort", "np.argsort(x)", args(x=distinct(V))))
for _fn in (np.zeros, np.ones):
    rule(_fn, 1,
         Case(f"np.{_fn.__name__}", f"np.{_fn.__name__}(np.shape(x))", args(x=unif(M))),
         Case(f"np.{_fn.__name__}-int", f"np.{_fn.__name__}(len(x))", args(x=unif(V))))
rule(np.empty, 1, Case("np.empty", "np.empty(np.shape(x)).shape[0]", args(x=unif(M))))
for _fn in (np.zeros_like, np.ones_like):
    rule(_fn, 1, Case(f"np.{_fn.__name__}", f"np.{_fn.__name__}(x)", args(x=unif(M))))
rule(np.empty_like, 1, Case("np.empty_like", "np.empty_like(x).shape[1]", args(x=unif(M))))
rule(np.shape, None,
     Case("np.shape", "np.shape(x)[1]", args(x=unif(M))),
     Case("x.shape", "x.shape[0]", args(x=unif(M))))
rule(np.size, 1,
     Case("np.size", "np.size(x)", args(x=unif(M))),
     Case("x.size", "x.size", args(x=unif(M))))
rule(np.ndim, None,
     Case("np.ndim", "np.ndim(x)", args(x=unif(M))),
     Case("x.ndim", "x.ndim", args(x=unif(M))))
rule(np.arange, 1,
     Case("np.arange", "np.arange(len(x))", args(x=unif(V))),
     Case("np.arange-float-stop", "np.arange(n) * 1.5", args(n=off_grid())))
rule(np.arange, 2,
     Case("np.arange-start-stop", "np.arange(start, stop) ** 2",
          args(start=unif((), 0.2, 0.4), stop=unif((), 4.6, 4.8)), constant=("stop",)),
     Case("np.arange-ints", "np.arange(1, len(x)) * x[1:]", args(x=unif(V))))
rule(np.arange, 3,
     Case("np.arange-step", "np.arange(start, stop, step) ** 2",
          args(start=unif((), 0.2, 0.25), stop=unif((), 2.3, 2.35), step=unif((), 0.45, 0.46)),
          constant=("stop",)))
rule(np.eye, 1, Case("np.eye", "np.eye(len(x))", args(x=unif(V))))
rule(np.identity, 1, Case("np.identity", "np.identity(len(x))", args(x=unif(V))))
rule(np.full, 2,
     Case("np.full", "np.full(len(x), level)", args(x=unif(V), level=unif()), constant=("x",)),
     Case("np.full-2d", "np.full((3, 4), level) * x", args(x=unif(M), level=unif())),
     Case("np.full-row", "np.full((3, 4), row)", args(row=unif(ROW))),
     Case("np.full-literal", "np.full(len(x), 2.5) * x", args(x=unif(V))))
rule(np.linspace, 3,
     Case("np.linspace", "np.linspace(start, stop, 5)", args(start=unif(), stop=unif())),
     Case("np.linspace-one", "np.linspace(start, stop, 1)", args(start=unif(), stop=unif())),
     Case("np.linspace-num-from-len", "np.linspace(0.0, stop, len(x)) * x",
          args(x=unif(V), stop=unif())))
rule(np.linspace, 2,
     Case("np.linspace-default-num", "np.linspace(start, stop)", args(start=unif(), stop=unif())),
     Case("np.linspace-num-keyword", "np.linspace(start, stop, num=4)",
          args(start=unif(), stop=unif())))
rule(runtime.astype_int, None,
     Case("x.astype(int)", "x.astype(int)", args(x=off_grid(M))),
     Case("x.astype(np.int64)", "x.astype(np.int64)", args(x=off_grid(V))))
rule(runtime.astype_float, None,
     Case("x.astype(float)", "x.astype(float)", args(x=unif(M))),
     Case("x.astype(np.float64)", "x.astype(np.float64)", args(x=unif(V))))


# ---- issue 23, surf_elem: element-wise, reductions and scans, scipy.special ----------------
def with_nonfinite(shape, specials=(np.nan, np.inf, -np.inf)):
    """Values in [-1, 1) whose first entries are ``specials`` (for np.nan_to_num)."""
    def gen(rng):
        x = rng.uniform(-1.0, 1.0, shape)
        x.flat[:len(specials)] = specials
        return x
    return gen


for _fn, _n, _dom in ((np.deg2rad, "deg2rad", (-90, 90)), (np.radians, "radians", (-90, 90)),
                      (np.rad2deg, "rad2deg", (-2, 2)), (np.degrees, "degrees", (-2, 2)),
                      (np.sinc, "sinc", (-2, 2)), (np.conjugate, "conjugate", (-1, 1)),
                      (np.real, "real", (-1, 1)), (np.real_if_close, "real_if_close", (-1, 1))):
    rule(_fn, None,
         Case(f"np.{_n}", f"np.{_n}(x)", args(x=unif(V, *_dom))),
         Case(f"np.{_n}-2d", f"np.{_n}(x)", args(x=unif(M, *_dom))),
         Case(f"np.{_n}-scalar", f"np.{_n}(x)", args(x=unif((), *_dom))))
TABLE[(np.conjugate, None)].append(Case("np.conj", "np.conj(x)", args(x=unif(M))))
TABLE[(np.sinc, None)].append(Case("np.sinc-near-0", "np.sinc(x)", args(x=unif(M, -1e-3, 1e-3))))
rule(np.nan_to_num, None,
     Case("np.nan_to_num", "np.nan_to_num(x)", args(x=with_nonfinite(M, (np.nan,)))),
     Case("np.nan_to_num-values", "np.nan_to_num(x, nan=fill, posinf=top, neginf=bottom)",
          args(x=with_nonfinite(M), fill=unif(), top=unif(), bottom=unif())))
_ELEM_BINARY = {
    np.mod: lambda sa, sb: mod_pair(sa, sb), np.fmod: lambda sa, sb: mod_pair(sa, sb),
    np.logaddexp: lambda sa, sb: args(a=unif(sa, -2, 2), b=unif(sb, -2, 2)),
    np.logaddexp2: lambda sa, sb: args(a=unif(sa, -2, 2), b=unif(sb, -2, 2)),
    np.fmax: untied, np.fmin: untied,
    np.float_power: lambda sa, sb: args(a=unif(sa, 0.5, 2.0), b=unif(sb, -1.5, 2.5)),
}
for _fn, _gen in _ELEM_BINARY.items():
    _n = _fn.__name__
    rule(_fn, None,
         Case(f"np.{_n}", f"np.{_n}(a, b)", _gen(V, V)),
         Case(f"np.{_n}-2d", f"np.{_n}(a, b)", _gen(M, M)),
         Case(f"np.{_n}-array-scalar", f"np.{_n}(a, b)", _gen(M, ())),
         Case(f"np.{_n}-broadcast-row", f"np.{_n}(a, b)", _gen(M, ROW)),
         Case(f"np.{_n}-broadcast-col-first", f"np.{_n}(a, b)", _gen(COL, M)),
         Case(f"np.{_n}-scalars", f"np.{_n}(a, b)", _gen((), ())))
TABLE[(np.mod, None)].append(Case("np.mod-negative-divisor", "np.mod(a, b)",
                                  mod_pair(M, ROW, sign=-1.0)))
TABLE[(np.fmod, None)].append(Case("np.fmod-negative-divisor", "np.fmod(a, b)",
                                   mod_pair(M, ROW, sign=-1.0)))
rule(np.copysign, None,
     Case("np.copysign", "np.copysign(a, b)", args(a=away(M), b=away(ROW)), constant=("b",)),
     Case("np.copysign-scalars", "np.copysign(a, b)", args(a=away(), b=away()),
          constant=("b",)))
rule(np.imag, None, Case("np.imag", "np.imag(x)", args(x=unif(M))))
rule(np.angle, None, Case("np.angle", "np.angle(x)", args(x=away(M))))
rule(np.heaviside, None,
     Case("np.heaviside", "np.heaviside(x, h0)", args(x=away(M), h0=unif())),
     Case("np.heaviside-broadcast", "np.heaviside(x, h0)", args(x=away(M), h0=unif(ROW))))

for _fn, _name, _gen in ((np.sum, "sum", unif), (np.mean, "mean", unif),
                         (np.prod, "prod", lambda s: unif(s, 0.5, 1.5)),
                         (np.max, "max", distinct), (np.min, "min", distinct)):
    TABLE[(_fn, None)] += [
        Case(f"np.{_name}-tuple-axes", f"np.{_name}(x, axis=(0, 2))", args(x=_gen((2, 3, 4))),
             numba=_name in ("sum", "max")),
        Case(f"np.{_name}-tuple-axes-keepdims", f"np.{_name}(x, axis=(-1, 0), keepdims=True)",
             args(x=_gen((2, 3, 4))), numba=_name == "prod"),
        Case(f"np.{_name}-tuple-all-axes", f"np.{_name}(x, axis=(0, 1))", args(x=_gen(M)))]
TABLE[(np.linalg.norm, None)] += [
    Case("np.linalg.norm-tuple-axes", "np.linalg.norm(x, axis=(0, 1))", args(x=unif((2, 3, 4))),
         numba=True),
    Case("np.linalg.norm-fro-tuple-axes-keepdims", "np.linalg.norm(x, 'fro', (2, 0), True)",
         args(x=unif((2, 3, 4))))]

rule(np.var, None,
     *[Case(f"np.var({kw or 'all'})", f"np.var(x{kw})", args(x=unif((2, 3, 4))),
            numba=kw in ("", ", axis=(0, 2), ddof=1"))
       for kw in ("", ", axis=1", ", axis=-1, keepdims=True", ", axis=(0, 2), ddof=1",
                  ", keepdims=True", ", ddof=2")],
     Case("x.var-method", "x.var(axis=0, ddof=1)", args(x=unif(M))),
     Case("np.var-1d", "np.var(x)", args(x=unif(V))),
     Case("np.var-scalar", "np.var(x) + x", args(x=unif())))
rule(np.std, None,
     *[Case(f"np.std({kw or 'all'})", f"np.std(x{kw})", args(x=unif((2, 3, 4))),
            numba=kw in ("", ", axis=-1, keepdims=True"))
       for kw in ("", ", axis=0", ", axis=-1, keepdims=True", ", axis=(1, 2), ddof=1")],
     Case("x.std-method", "x.std(1)", args(x=unif(M))))
rule(np.trace, None,
     Case("np.trace", "np.trace(x)", args(x=unif((4, 4)))),
     Case("np.trace-offset", "np.trace(x, 1)", args(x=unif(M)), numba=True),
     Case("np.trace-negative-offset", "np.trace(x, -2)", args(x=unif(M))),
     Case("np.trace-stack", "np.trace(x, 0, 1, 2)", args(x=unif((2, 3, 4))), numba=True),
     Case("np.trace-stack-axes", "np.trace(x, offset=1, axis1=-1, axis2=0)",
          args(x=unif((3, 2, 4)))),
     Case("x.trace-method", "x.trace()", args(x=unif((3, 3)))))
rule(np.cumprod, None,
     Case("np.cumprod", "np.cumprod(x)", args(x=unif(M, 0.5, 1.5))),
     Case("np.cumprod-axis", "np.cumprod(x, axis=1)", args(x=unif(M)), numba=True),
     Case("np.cumprod-axis-negative-3d", "np.cumprod(x, axis=-2)", args(x=unif((2, 3, 4)))),
     Case("x.cumprod-method", "x.cumprod(0)", args(x=unif(M))))
rule(np.diff, None,
     Case("np.diff", "np.diff(x)", args(x=unif(V))),
     Case("np.diff-n2-axis0", "np.diff(x, 2, axis=0)", args(x=unif((4, 3))), numba=True),
     Case("np.diff-3d-axis1", "np.diff(x, n=1, axis=1)", args(x=unif((2, 3, 4)))),
     Case("np.diff-n0", "np.diff(x, 0)", args(x=unif(M))))

_SPECIAL_DOMAINS = {"gammaln": (0.2, 4.0), "digamma": (0.3, 4.0), "erf": (-2.0, 2.0),
                    "erfc": (-2.0, 2.0), "expit": (-4.0, 4.0), "logit": (0.05, 0.95)}
for _name, _dom in _SPECIAL_DOMAINS.items():
    rule(getattr(scipy.special, _name), None,
         Case(f"scipy.special.{_name}", f"scipy.special.{_name}(x)", args(x=unif(M, *_dom))),
         Case(f"scipy.special.{_name}-scalar", f"scipy.special.{_name}(x)",
              args(x=unif((), *_dom))))
TABLE[(scipy.special.gammaln, None)].append(
    Case("scipy.special.gammaln-negative", "scipy.special.gammaln(x)",
         args(x=unif(V, -2.8, -2.2)), numba=True))
rule(scipy.special.xlogy, None,
     Case("scipy.special.xlogy", "scipy.special.xlogy(a, b)",
          args(a=unif(M, -1.0, 1.0), b=unif(ROW, 0.2, 2.0))),
     Case("scipy.special.xlogy-scalars", "scipy.special.xlogy(a, b)",
          args(a=unif(), b=unif((), 0.2, 2.0))))
rule(scipy.special.logsumexp, None,
     Case("scipy.special.logsumexp", "scipy.special.logsumexp(x)", args(x=unif(M, -2, 2))),
     Case("scipy.special.logsumexp-axis", "scipy.special.logsumexp(x, axis=1)",
          args(x=unif((2, 3, 4), -2, 2)), numba=True),
     Case("scipy.special.logsumexp-tuple-keepdims",
          "scipy.special.logsumexp(x, axis=(0, -1), keepdims=True)",
          args(x=unif((2, 3, 4), -2, 2))),
     Case("scipy.special.logsumexp-scalar", "scipy.special.logsumexp(x)", args(x=unif())))
rule(scipy.special.softmax, None,
     Case("scipy.special.softmax", "scipy.special.softmax(x)", args(x=unif(M, -2, 2))),
     Case("scipy.special.softmax-axis", "scipy.special.softmax(x, axis=-1)",
          args(x=unif((2, 3, 4), -2, 2)), numba=True),
     Case("scipy.special.softmax-tuple", "scipy.special.softmax(x, axis=(0, 2))",
          args(x=unif((2, 3, 4), -2, 2))))


# ---- the audit: parameters no case feeds from a float argument, and why ------------------
# Every other parameter of every rule (differentiable or not, with an adjoint or treated as
# constant) is fed from a float argument by at least one case above, so that case's
# finite differences check the rule in that parameter (test_rule_table.py).
_SHAPE = "a shape or a count: NumPy refuses floats"
_CONSTANT = "a compile-time constant: the rule refuses a value known only at run time"
_INTERNAL = "written by the compiler, not the user: checked through the cases' lists/writes"
_INTEGER = "integers or booleans only: NumPy refuses floats"
NOT_FLOAT: dict[tuple, dict[str, str]] = {
    **{(fn, 1): {"shape": _SHAPE} for fn in (np.zeros, np.ones, np.empty)},
    **{(fn, 1): {"n": _SHAPE} for fn in (np.eye, np.identity)},
    (np.full, 2): {"shape": _SHAPE},
    (np.linspace, 2): {"num": _SHAPE},
    (np.linspace, 3): {"num": _SHAPE},
    (np.reshape, None): {"shape": _SHAPE},
    (builtins.round, 2): {"ndigits": "an int (Python refuses floats)"},
    (np.take, None): {"indices": "integer indices (the rule refuses others)", "axis": _CONSTANT},
    **{(fn, None): {"axis": _CONSTANT, "keepdims": _CONSTANT}
       for fn in (np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin)},
    (np.linalg.norm, None): {"axis": _CONSTANT, "keepdims": _CONSTANT},
    **{(fn, None): {"axis": _CONSTANT} for fn in (np.concatenate, np.stack, np.cumsum, np.sort)},
    **{(np.einsum, n): {"subscripts": "a string literal"} for n in (2, 3, 4, 5)},
    **{(op, None): {"a": _INTEGER, "b": _INTEGER}
       for op in (gast.BitAnd, gast.BitOr, gast.BitXor, gast.LShift, gast.RShift)},
    (gast.Invert, None): {"a": _INTEGER},
    **{(fn, None): dict.fromkeys(params, _INTERNAL) for fn, params in (
        (runtime.write_back, ("dst", "src")), (runtime.appended, ("items", "value")),
        (runtime.check_index, ("shape", "axis", "index", "location", "function")),
        (runtime.list_array, ("items",)), (runtime.list_position, ("items", "i")),
        (runtime.list_hstack, ("items",)), (runtime.list_vstack, ("items",)))},
    (runtime.list_concatenate, None): {"items": _INTERNAL, "axis": _CONSTANT},
    # issue 23, surf_elem
    (np.nan_to_num, None): {"copy": "a flag: the result is a new array either way here"},
    (np.real_if_close, None): {"tol": "a tolerance for complex input: real input is returned"},
    **{(fn, None): {"axis": _CONSTANT, "keepdims": _CONSTANT, "dtype": "a dtype (refused)",
                    "out": "an output array (refused)",
                    "ddof": "a count (NumPy takes a float too: no derivative is taken in it)"}
       for fn in (np.var, np.std)},
    (np.trace, None): {p: "an int offset or axis (NumPy refuses floats)"
                       for p in ("offset", "axis1", "axis2")},
    (np.cumprod, None): {"axis": _CONSTANT},
    (np.diff, None): {"n": "an int order (NumPy refuses floats)",
                      "axis": "an int axis (NumPy refuses floats)"},
    (scipy.special.logsumexp, None): {"axis": _CONSTANT, "keepdims": _CONSTANT,
                                      "b": "refused (logsumexp(a + np.log(b)) instead)",
                                      "return_sign": "refused unless False"},
    (scipy.special.softmax, None): {"axis": _CONSTANT},
}


def cases() -> list[tuple[tuple, Case]]:
    """Every (rule key, case) of the table, in table order."""
    return [(key, case) for key, group in TABLE.items() for case in group]


def numba_cases() -> list[tuple[tuple, Case]]:
    """The Numba subset: the first case of each rule and those marked numba=True."""
    out = []
    for key, group in TABLE.items():
        for i, case in enumerate(group):
            if case.numba or (case.numba is None and i == 0):
                out.append((key, case))
    return out


# ---- issue 23: shapes, products and rearrangements (surf_shapes) ----------------------------
T3 = (2, 3, 4)
rule(np.transpose, 2,
     Case("np.transpose-axes", "np.transpose(x, (2, 0, 1))", args(x=unif(T3))),
     Case("x.transpose-method-axes", "x.transpose(1, 2, 0)", args(x=unif(T3))),
     Case("np.transpose-negative-axes", "np.transpose(x, (-1, 0))", args(x=unif(M))))
rule(np.moveaxis, None,
     Case("np.moveaxis", "np.moveaxis(x, 0, -1)", args(x=unif(T3))),
     Case("np.moveaxis-tuple", "np.moveaxis(x, (0, 1), (2, 0))", args(x=unif(T3))))
rule(np.swapaxes, None,
     Case("np.swapaxes", "np.swapaxes(x, 0, 2)", args(x=unif(T3))),
     Case("x.swapaxes-method", "x.swapaxes(-1, 0)", args(x=unif(M))))
rule(np.rollaxis, None,
     Case("np.rollaxis", "np.rollaxis(x, 2)", args(x=unif(T3))),
     Case("np.rollaxis-start", "np.rollaxis(x, 0, 2)", args(x=unif(T3))))
rule(np.squeeze, None,
     Case("np.squeeze-axis", "np.squeeze(x, axis=1)", args(x=unif((3, 1, 2)))),
     Case("np.squeeze-tuple", "np.squeeze(x, (0, 2))", args(x=unif((1, 3, 1)))),
     Case("x.squeeze-method", "x.squeeze(-1)", args(x=unif(COL))))
rule(np.expand_dims, None,
     Case("np.expand_dims", "np.expand_dims(x, 1)", args(x=unif(M))),
     Case("np.expand_dims-tuple", "np.expand_dims(x, (0, -1))", args(x=unif(V))))
rule(np.flip, None,
     Case("np.flip", "np.flip(x)", args(x=unif(M))),
     Case("np.flip-axis", "np.flip(x, 1)", args(x=unif(T3))),
     Case("np.flip-axes", "np.flip(x, (0, -1))", args(x=unif(T3))))
rule(np.flipud, None, Case("np.flipud", "np.flipud(x)", args(x=unif(M))))
rule(np.fliplr, None, Case("np.fliplr", "np.fliplr(x)", args(x=unif(T3))))
rule(np.rot90, None,
     Case("np.rot90", "np.rot90(x)", args(x=unif(M))),
     Case("np.rot90-k2", "np.rot90(x, 2)", args(x=unif(M))),
     Case("np.rot90-k3-axes", "np.rot90(x, 3, (2, 0))", args(x=unif(T3))),
     Case("np.rot90-negative", "np.rot90(x, -1, axes=(1, 2))", args(x=unif(T3))))
rule(np.tril, None,
     Case("np.tril", "np.tril(x)", args(x=unif(M))),
     Case("np.tril-k", "np.tril(x, -1)", args(x=unif(T3))),
     Case("np.tril-1d", "np.tril(x, 1)", args(x=unif(ROW))))
rule(np.triu, None,
     Case("np.triu", "np.triu(x, k=1)", args(x=unif(M))),
     Case("np.triu-1d", "np.triu(x)", args(x=unif(ROW))))
rule(np.diag, None,
     Case("np.diag-vector", "np.diag(x)", args(x=unif(ROW))),
     Case("np.diag-matrix", "np.diag(x, -1)", args(x=unif(M))),
     Case("np.diag-vector-k", "np.diag(x, k=2)", args(x=unif((3,)))))
rule(np.diagonal, None,
     Case("np.diagonal", "np.diagonal(x)", args(x=unif(M))),
     Case("np.diagonal-axes", "np.diagonal(x, 1, 2, 0)", args(x=unif(T3))),
     Case("x.diagonal-method", "x.diagonal(offset=-1)", args(x=unif(M))))
rule(np.repeat, None,
     Case("np.repeat", "np.repeat(x, 2)", args(x=unif(M))),
     Case("np.repeat-axis-counts", "np.repeat(x, (1, 0, 2), axis=0)", args(x=unif(M))),
     Case("x.repeat-method", "x.repeat(3, -1)", args(x=unif(T3))))
rule(np.tile, None,
     Case("np.tile", "np.tile(x, (2, 1, 3))", args(x=unif(M))),
     Case("np.tile-int", "np.tile(x, 2)", args(x=unif(V))))
rule(np.roll, None,
     Case("np.roll", "np.roll(x, 2)", args(x=unif(M))),
     Case("np.roll-axis", "np.roll(x, -1, axis=1)", args(x=unif(M))),
     Case("np.roll-tuple", "np.roll(x, (1, 2), axis=(0, 2))", args(x=unif(T3))))
rule(np.pad, None,
     Case("np.pad", "np.pad(x, 1)", args(x=unif(M))),
     Case("np.pad-reflect", "np.pad(x, ((1, 2), (3, 0)), mode='reflect')", args(x=unif(M))),
     Case("np.pad-edge", "np.pad(x, (2, 1), 'edge')", args(x=unif(T3))),
     Case("np.pad-wrap", "np.pad(x, 2, mode='wrap')", args(x=unif(V))),
     Case("np.pad-symmetric", "np.pad(x, ((0, 0), (5, 1)), mode='symmetric')",
          args(x=unif(M))))
rule(np.append, None,
     Case("np.append", "np.append(x, v)", args(x=unif(M), v=unif(ROW))),
     Case("np.append-axis", "np.append(x, v, axis=0)", args(x=unif(M), v=unif((1, 4)))),
     Case("np.append-number", "np.append(x, v)", args(x=unif(V), v=unif())))
rule(np.tensordot, None,
     Case("np.tensordot", "np.tensordot(a, b, 1)", args(a=unif(T3), b=unif((4, 2)))),
     Case("np.tensordot-default", "np.tensordot(a, b)", args(a=unif(M), b=unif((3, 4, 2)))),
     Case("np.tensordot-pairs", "np.tensordot(a, b, axes=([0, 2], [0, 1]))",
          args(a=unif(T3), b=unif((2, 4, 3)))))
rule(np.inner, None,
     Case("np.inner", "np.inner(a, b)", args(a=unif(T3), b=unif(M))),
     Case("np.inner-1d", "np.inner(a, b)", args(a=unif(ROW), b=unif(ROW))),
     Case("np.inner-number", "np.inner(a, b)", args(a=unif(), b=unif(M))))
rule(np.vdot, None, Case("np.vdot", "np.vdot(a, b)", args(a=unif(M), b=unif((2, 6)))))
rule(np.kron, None,
     Case("np.kron", "np.kron(a, b)", args(a=unif(M), b=unif((2, 5)))),
     Case("np.kron-mixed", "np.kron(a, b)", args(a=unif(T3), b=unif(ROW))))
TABLE[(np.dot, None)] += [
    Case("np.dot-3d", "np.dot(a, b)", args(a=unif(T3), b=unif((4, 2))), numba=True),
    Case("np.dot-2d-3d", "np.dot(a, b)", args(a=unif(M), b=unif((3, 4, 2)))),
    Case("np.dot-number", "np.dot(a, b)", args(a=unif(), b=unif(M))),
    Case("np.dot-numbers", "np.dot(a, b)", args(a=unif(), b=unif()))]
TABLE[(np.matmul, None)] += [
    Case("np.matmul-batched", "np.matmul(a, b)", args(a=unif((3, 3, 4)), b=unif((2, 1, 4, 5))),
         numba=True),
    Case("np.matmul-1d-3d", "np.matmul(a, b)", args(a=unif(ROW), b=unif((3, 4, 2))))]
TABLE[(gast.MatMult, None)] += [
    Case("@-batched", "a @ b", args(a=unif(T3), b=unif((4, 5))), numba=True),
    Case("@-3d-1d", "a @ b", args(a=unif(T3), b=unif(ROW)))]
if hasattr(np, "row_stack"):  # NumPy 2 deprecates it: an alias of vstack
    rule(np.row_stack, 1, Case("np.row_stack", "np.vstack((a, b))", args(a=unif(M), b=unif(ROW))))
TABLE[(np.hstack, 1)].append(Case("np.hstack-of-3d-array", "np.hstack(x)", args(x=unif(T3))))
TABLE[(np.column_stack, 1)] += [
    Case("np.column_stack-of-2d-array", "np.column_stack(x)", args(x=unif(M))),
    Case("np.column_stack-of-3d-array", "np.column_stack(x)", args(x=unif(T3)))]
rule(runtime.section, None,  # np.split and its kin: one call per piece
     Case("np.split", "np.split(x, 2, axis=1)[1]", args(x=unif(M))),
     Case("np.split-indices", "np.split(x, (1, 3))[0]", args(x=unif(V))),
     Case("np.array_split", "np.array_split(x, 3)[2]", args(x=unif(V))),
     Case("np.vsplit", "np.vsplit(x, 2)[0]", args(x=unif((4, 3)))),
     Case("np.hsplit", "np.hsplit(x, (1,))[1]", args(x=unif(M))),
     Case("np.dsplit", "np.dsplit(x, 2)[1]", args(x=unif(T3))))
TABLE[(np.einsum, 3)].append(  # (the interleaved form: test_surface_shapes.py)
    Case("np.einsum-ellipsis", "np.einsum('...ij,...j->...i', a, b)",
         args(a=unif(T3), b=unif((2, 4)))))
TABLE[(np.einsum, 2)].append(
    Case("np.einsum-ellipsis-implicit", "np.einsum('i...', a)", args(a=unif(T3))))
rule(np.gradient, None,
     Case("np.gradient", "np.gradient(f)", args(f=unif(V))),
     Case("np.gradient-spacing-axis", "np.gradient(f, h, axis=1)",
          args(f=unif(M), h=unif((), 0.5, 1.5))))
rule(np.select, None,
     Case("np.select", "np.select([x > 0.5, x < -0.5], [x * 2.0, x ** 2], d)",
          lambda rng: {**clip_args(M)(rng), "d": unif()(rng)}),  # x away from +-0.5
     Case("np.select-number-choice", "np.select((x > 0.0,), (c,), x)",
          args(x=away(M), c=unif())))
rule(np.partition, None,
     Case("np.partition", "np.sum(np.partition(x, 2)[:, :2] ** 2)", args(x=unif((3, 6)))),
     Case("np.partition-axis0", "np.partition(x, 1, axis=0)[1]", args(x=unif(M))))
_REARRANGE_CONSTANTS = {
    (np.transpose, 2): {"axes": _CONSTANT},
    (np.moveaxis, None): {"source": _CONSTANT, "destination": _CONSTANT},
    (np.swapaxes, None): {"axis1": _CONSTANT, "axis2": _CONSTANT},
    (np.rollaxis, None): {"axis": _CONSTANT, "start": _CONSTANT},
    (np.squeeze, None): {"axis": _CONSTANT},
    (np.expand_dims, None): {"axis": _CONSTANT},
    (np.flip, None): {"axis": _CONSTANT},
    (np.rot90, None): {"k": _CONSTANT, "axes": _CONSTANT},
    **{(fn, None): {"k": _CONSTANT} for fn in (np.tril, np.triu, np.diag)},
    (np.diagonal, None): {"offset": _CONSTANT, "axis1": _CONSTANT, "axis2": _CONSTANT},
    (np.repeat, None): {"repeats": _SHAPE, "axis": _CONSTANT},
    (np.tile, None): {"reps": _CONSTANT},
    (np.roll, None): {"shift": _SHAPE, "axis": _CONSTANT},
    (np.pad, None): {"pad_width": _CONSTANT, "mode": "a string literal"},
    (np.append, None): {"axis": _CONSTANT},
    (np.tensordot, None): {"axes": _CONSTANT},
    (np.gradient, None): {"axis": _CONSTANT, "edge_order": _CONSTANT},
    (np.select, None): {"condlist": "boolean arrays"},
    (np.partition, None): {"kth": _SHAPE, "axis": _CONSTANT},
    (runtime.section, None): {"sections": _CONSTANT, "i": _INTERNAL, "axis": _CONSTANT,
                              "equal": _INTERNAL},
}
NOT_FLOAT.update(_REARRANGE_CONSTANTS)


# ---- linear algebra: decompositions and matrix norms (issue 23) ---------------------------
def spd(n):
    """Symmetric positive definite, well conditioned (cholesky)."""
    def gen(rng):
        m = rng.uniform(-0.5, 0.5, (n, n))
        return m @ m.T + n * np.eye(n)
    return gen


def spd_stack(k, n):
    return lambda rng: np.stack([spd(n)(rng) for _ in range(k)])


rule(np.linalg.svd, None,
     Case("np.linalg.svd-values", "np.linalg.svd(a, compute_uv=False)", args(a=unif((4, 3)))),
     Case("np.linalg.svd-u-tall", "np.linalg.svd(a, full_matrices=False)[0] ** 2",
          args(a=unif((4, 3))), numba=True),
     Case("np.linalg.svd-vt-wide", "np.linalg.svd(a, False)[2] ** 2", args(a=unif((2, 4)))),
     Case("np.linalg.svd-s-square-full", "np.linalg.svd(a)[1]", args(a=unif((3, 3)))))
rule(np.linalg.slogdet, None,
     Case("np.linalg.slogdet", "np.linalg.slogdet(A)[1]", args(A=well_conditioned(3))),
     Case("np.linalg.slogdet-stack", "np.linalg.slogdet(A)[1]",
          args(A=well_conditioned_stack(2, 3)), numba=True))
rule(np.linalg.eigh, None,
     Case("np.linalg.eigh-vectors", "np.linalg.eigh(a)[1] ** 2", args(a=unif((3, 3)))),
     Case("np.linalg.eigh-upper-values", "np.linalg.eigh(a, 'U')[0]", args(a=unif((3, 3)))))
rule(np.linalg.eigvalsh, None,
     Case("np.linalg.eigvalsh", "np.linalg.eigvalsh(a)", args(a=unif((3, 3)))),
     Case("np.linalg.eigvalsh-upper", "np.linalg.eigvalsh(a, UPLO='U')", args(a=unif((3, 3)))))
rule(np.linalg.cholesky, None,
     Case("np.linalg.cholesky", "np.linalg.cholesky(A)", args(A=spd(3))),
     Case("np.linalg.cholesky-stack", "np.linalg.cholesky(A)", args(A=spd_stack(2, 3)),
          numba=True))
rule(np.linalg.pinv, None,
     Case("np.linalg.pinv-tall", "np.linalg.pinv(a)", args(a=unif((4, 2)))),
     Case("np.linalg.pinv-wide", "np.linalg.pinv(a)", args(a=unif((2, 3)))))
rule(np.linalg.matrix_power, None,
     Case("np.linalg.matrix_power", "np.linalg.matrix_power(a, 3)", args(a=unif((3, 3)))),
     Case("np.linalg.matrix_power-negative", "np.linalg.matrix_power(A, -2)",
          args(A=well_conditioned(3))),
     Case("np.linalg.matrix_power-zero", "np.linalg.matrix_power(a, 0) * a", args(a=unif((2, 2)))))
TABLE[(np.linalg.norm, None)] += [
    Case("np.linalg.norm-matrix-2", "np.linalg.norm(x, 2)", args(x=unif(M)), numba=True),
    Case("np.linalg.norm-matrix-minus-2", "np.linalg.norm(x, -2)", args(x=unif(M))),
    Case("np.linalg.norm-nuc", "np.linalg.norm(x, 'nuc')", args(x=unif(M))),
    Case("np.linalg.norm-matrix-1", "np.linalg.norm(x, 1)", args(x=away(M))),
    Case("np.linalg.norm-matrix-minus-1", "np.linalg.norm(x, -1)", args(x=away(M))),
    Case("np.linalg.norm-matrix-inf", "np.linalg.norm(x, np.inf)", args(x=away(M))),
    Case("np.linalg.norm-matrix-minus-inf", "np.linalg.norm(x, -np.inf)",
         args(x=away(M)))]
NOT_FLOAT.update({
    (np.linalg.svd, None): {"full_matrices": _CONSTANT, "compute_uv": _CONSTANT},
    (np.linalg.eigh, None): {"UPLO": "the string 'L' or 'U'"},
    (np.linalg.eigvalsh, None): {"UPLO": "the string 'L' or 'U'"},
    (np.linalg.matrix_power, None): {"n": "an int (NumPy refuses floats)"}})
TABLE[(np.zeros, 1)].append(Case("np.zeros-dtype", "np.zeros(len(x), dtype=np.float32) + x",
                                 args(x=unif(V)), zero=False))
TABLE[(np.full, 2)].append(Case("np.full-dtype", "np.full(len(x), y, dtype='float64') * x",
                                args(x=unif(V), y=unif())))
for _key in ((np.zeros, 1), (np.ones, 1), (np.empty, 1), (np.full, 2)):
    NOT_FLOAT[_key] = {**NOT_FLOAT[_key], "dtype": "a dtype: a type, a np.dtype or its name"}


# ---- scipy.linalg (issue 23) ---------------------------------------------------------------
def lower_triangular(n):
    """Well-conditioned lower triangular (random entries above: solve_triangular must not
    read them)."""
    return lambda rng: rng.uniform(-0.5, 0.5, (n, n)) + n * np.eye(n)


rule(scipy.linalg.solve_triangular, None,
     Case("scipy.linalg.solve_triangular-lower", "scipy.linalg.solve_triangular(a, b, lower=True)",
          args(a=lower_triangular(3), b=unif((3,)))),
     Case("scipy.linalg.solve_triangular-upper-trans",
          "scipy.linalg.solve_triangular(a, b, trans=1)",
          args(a=lower_triangular(3), b=unif((3, 2))), numba=True),
     Case("scipy.linalg.solve_triangular-unit-T",
          "scipy.linalg.solve_triangular(a, b, 'T', True, True)",
          args(a=lower_triangular(3), b=unif((3, 2)))))
rule(scipy.linalg.cholesky, None,
     Case("scipy.linalg.cholesky", "scipy.linalg.cholesky(A)", args(A=spd(3))),
     Case("scipy.linalg.cholesky-lower", "scipy.linalg.cholesky(A, lower=True)",
          args(A=spd(3))))
rule(scipy.linalg.cho_factor, None,
     Case("scipy.linalg.cho_factor", "scipy.linalg.cho_factor(A)[0]", args(A=spd(3))),
     Case("scipy.linalg.cho_factor-lower", "scipy.linalg.cho_factor(A, True)[0]",
          args(A=spd(3))))
rule(scipy.linalg.cho_solve, None,
     Case("scipy.linalg.cho_solve", "scipy.linalg.cho_solve(scipy.linalg.cho_factor(A), b)",
          args(A=spd(3), b=unif((3,)))),
     Case("scipy.linalg.cho_solve-given-factor", "scipy.linalg.cho_solve((c, True), b)",
          args(c=lower_triangular(3), b=unif((3,)))),
     Case("scipy.linalg.cho_solve-lower-matrix",
          "scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True), b)",
          args(A=spd(3), b=unif((3, 2)))))
rule(scipy.linalg.expm, None,
     Case("scipy.linalg.expm", "scipy.linalg.expm(a)", args(a=unif((3, 3)))),
     Case("scipy.linalg.expm-scaled", "scipy.linalg.expm(4.0 * a)", args(a=unif((3, 3)))))
rule(scipy.linalg.det, None,
     Case("scipy.linalg.det", "scipy.linalg.det(A)", args(A=well_conditioned(3))))
rule(scipy.linalg.inv, None,
     Case("scipy.linalg.inv", "scipy.linalg.inv(A)", args(A=well_conditioned(3))))
rule(scipy.linalg.solve, None,
     Case("scipy.linalg.solve", "scipy.linalg.solve(A, b)",
          args(A=well_conditioned(3), b=unif((3, 2)))))
NOT_FLOAT.update({
    (scipy.linalg.solve_triangular, None): {"trans": _CONSTANT, "lower": _CONSTANT,
                                            "unit_diagonal": _CONSTANT},
    (scipy.linalg.cholesky, None): {"lower": _CONSTANT},
    (scipy.linalg.cho_factor, None): {"lower": _CONSTANT}})
