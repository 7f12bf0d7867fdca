"""The NumPy/SciPy surface catalogue: a table of functions x shapes x axes x keepdims x
broadcasting x dtype, expanded into cases (issue 23).

Each case is one call written as a user would (``np.var(samples, axis=(0, 2), ddof=1)``),
with user-like argument names taken from a pool, and arguments drawn inside the
function's domain and away from its kinks (see ``DOMAINS``), so that central finite
differences are a valid reference. The cases are written into one real module file
(``catalogue_module``) so that the compiler reads them through their own source.

``FAMILIES`` maps a family name to the function that lists its cases. ``CASES`` is all
of them: tests/rules/test_surface_catalogue.py checks them (the Python path by default,
the Numba path in the slow tier), and ``tests/surface_report.py`` counts the outcomes.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import s2s_ad as ad
from s2s_ad.errors import ArgumentError, JitError, NonDifferentiableError
from s2s_ad.testing import (
    assert_close,
    assert_dot_product_identity,
    assert_gradient_like_arguments,
    assert_vjp_matches_fd,
    fresh_copies,
    random_cotangent,
)


@dataclass(frozen=True)
class Operand:
    """One argument: its shape, the domain its values are drawn from, and its dtype."""

    shape: tuple[int, ...]
    domain: str = "unif"
    dtype: str = "float64"


@dataclass(frozen=True)
class Case:
    """One call of one NumPy/SciPy function.

    ``call`` is the returned expression, with ``{a}``, ``{b}``, ``{c}`` for the operands;
    ``before`` are statements run first (same placeholders), for results that are
    tuples or lists (``np.split``, ``np.linalg.eigh``).
    """

    function: str  # what the case exercises, as users spell it: "np.var"
    family: str
    call: str
    operands: tuple[Operand, ...]
    before: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        shapes = ",".join(f"{o.shape}{'f32' if o.dtype == 'float32' else ''}"
                          for o in self.operands)
        first = f"{';'.join(self.before)};" if self.before else ""
        return f"{self.family}:{first}{self.call}:{shapes}".replace(" ", "")

    @property
    def float32(self) -> bool:
        return any(o.dtype == "float32" for o in self.operands)

    def arguments(self) -> tuple:
        """The arguments, drawn from a generator seeded by the case's name."""
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return tuple(draw(o, rng) for o in self.operands)


# ---- argument domains ---------------------------------------------------------------------
def _spread(shape, rng, low=-2.0, high=2.0):
    """Values spread evenly over [low, high], shuffled: no ties for max/sort/partition."""
    size = int(np.prod(shape))
    values = np.linspace(low, high, size) if size > 1 else np.array([0.7])
    rng.shuffle(values)
    return values.reshape(shape)


def _diagonally_dominant(shape, rng):
    n = shape[-1]
    return rng.uniform(-1.0, 1.0, shape) + n * np.eye(n)


def _spd(shape, rng):
    a = rng.uniform(-1.0, 1.0, shape)
    return a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])


def _symmetric_spread(shape, rng):
    """A symmetric matrix with eigenvalues 1, 2, ..., n (no degeneracy)."""
    n = shape[-1]
    q, _ = np.linalg.qr(rng.uniform(-1.0, 1.0, (n, n)))
    return q @ np.diag(np.arange(1.0, n + 1.0)) @ q.T + np.zeros(shape)


def _spread_singular_values(shape, rng):
    """A matrix with singular values 3, 2.5, 2, ...: distinct and away from zero."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.uniform(-1.0, 1.0, (m, k)))
    v, _ = np.linalg.qr(rng.uniform(-1.0, 1.0, (n, k)))
    return u @ np.diag(3.0 - 0.5 * np.arange(k)) @ v.T + np.zeros(shape)


def _lower(shape, rng):
    return np.tril(_diagonally_dominant(shape, rng))


DOMAINS: dict[str, Callable] = {
    "unif": lambda s, r: r.uniform(-1.0, 1.0, s),
    "wide": lambda s, r: r.uniform(-3.0, 3.0, s),
    "pos": lambda s, r: r.uniform(0.5, 2.0, s),
    "unit": lambda s, r: r.uniform(-0.9, 0.9, s),
    "prob": lambda s, r: r.uniform(0.1, 0.9, s),
    "gt1": lambda s, r: r.uniform(1.2, 3.0, s),
    "away": lambda s, r: r.uniform(0.3, 1.5, s) * r.choice([-1.0, 1.0], s),
    "frac": lambda s, r: r.integers(-3, 4, s) + r.uniform(0.2, 0.8, s),  # away from integers
    "distinct": _spread,
    "dominant": _diagonally_dominant,
    "spd": _spd,
    "symmetric": _symmetric_spread,
    "singular_spread": _spread_singular_values,
    "lower": _lower,
}


def draw(operand: Operand, rng: np.random.Generator):
    """A value for ``operand``: a float for shape (), else an array."""
    domain = operand.domain
    if domain.startswith("index"):  # "index<K>": ints in [0, K)
        return rng.integers(0, int(domain[5:]), operand.shape)
    if domain == "mask":
        mask = rng.uniform(size=operand.shape) < 0.5
        mask.flat[0] = True
        return mask
    value = DOMAINS[domain](operand.shape, rng)
    if operand.shape == ():
        return float(value)
    return np.asarray(value, dtype=operand.dtype)


# ---- the table ----------------------------------------------------------------------------
def f64(*shape, domain="unif"):
    return Operand(tuple(shape), domain)


def f32(*shape, domain="unif"):
    return Operand(tuple(shape), domain, "float32")


UNARY_SHAPES = [(), (5,), (3, 4), (2, 3, 4)]

UNARY = {  # function -> domain of its argument
    "np.sin": "unif", "np.cos": "unif", "np.tan": "unif", "np.arcsin": "unit",
    "np.arccos": "unit", "np.arctan": "unif", "np.sinh": "unif", "np.cosh": "unif",
    "np.tanh": "unif", "np.arcsinh": "unif", "np.arccosh": "gt1", "np.arctanh": "unit",
    "np.exp": "unif", "np.expm1": "unif", "np.exp2": "unif", "np.log": "pos",
    "np.log1p": "pos", "np.log2": "pos", "np.log10": "pos", "np.sqrt": "pos",
    "np.cbrt": "away", "np.square": "unif", "np.abs": "away", "np.absolute": "away",
    "np.fabs": "away", "np.negative": "unif", "np.positive": "unif", "np.reciprocal": "away",
    "np.deg2rad": "wide", "np.rad2deg": "unif", "np.degrees": "unif", "np.radians": "wide",
    "np.sinc": "away", "np.real": "unif", "np.imag": "unif", "np.conj": "unif",
    "np.conjugate": "unif", "np.angle": "away", "np.real_if_close": "unif",
    "np.nan_to_num": "unif", "np.sign": "away", "np.floor": "frac", "np.ceil": "frac",
    "np.trunc": "frac", "np.rint": "frac", "np.round": "frac",
    "scipy.special.gammaln": "pos", "scipy.special.digamma": "pos",
    "scipy.special.erf": "unif", "scipy.special.erfc": "unif",
    "scipy.special.expit": "wide", "scipy.special.logit": "prob",
}


def unary() -> Iterator[Case]:
    for function, domain in UNARY.items():
        for shape in UNARY_SHAPES:
            yield Case(function, "unary", f"{function}({{a}})", (f64(*shape, domain=domain),))
        yield Case(function, "unary", f"{function}({{a}})", (f32(3, 4, domain=domain),))


BROADCAST_PAIRS = [((), (4,)), ((4,), ()), ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)),
                   ((2, 3, 4), (3, 1))]

BINARY = {  # function -> domains of (first, second)
    "np.add": ("unif", "unif"), "np.subtract": ("unif", "unif"),
    "np.multiply": ("unif", "unif"), "np.divide": ("unif", "away"),
    "np.true_divide": ("unif", "away"), "np.power": ("pos", "unif"),
    "np.float_power": ("pos", "unif"), "np.maximum": ("distinct", "distinct"),
    "np.minimum": ("distinct", "distinct"), "np.fmax": ("distinct", "distinct"),
    "np.fmin": ("distinct", "distinct"), "np.arctan2": ("away", "away"),
    "np.hypot": ("away", "away"), "np.logaddexp": ("unif", "unif"),
    "np.logaddexp2": ("unif", "unif"), "np.mod": ("frac", "gt1"),
    "np.remainder": ("frac", "gt1"), "np.fmod": ("frac", "gt1"),
    "np.copysign": ("away", "away"), "scipy.special.xlogy": ("pos", "pos"),
}

OPERATORS = {"+": ("unif", "unif"), "-": ("unif", "unif"), "*": ("unif", "unif"),
             "/": ("unif", "away"), "**": ("pos", "unif"), "%": ("frac", "gt1")}


def _distinct_pair(da: str, db: str, sa, sb) -> tuple[Operand, Operand]:
    # maximum(a, b) of two spread operands could still tie after broadcasting: shift b
    return f64(*sa, domain=da), f64(*sb, domain="frac" if db == "distinct" else db)


def binary() -> Iterator[Case]:
    for function, (da, db) in BINARY.items():
        for sa, sb in BROADCAST_PAIRS:
            yield Case(function, "binary", f"{function}({{a}}, {{b}})",
                       _distinct_pair(da, db, sa, sb))
        yield Case(function, "binary", f"{function}({{a}}, {{b}})",
                   (f32(3, 4, domain=da), f32(4, domain="frac" if db == "distinct" else db)))
    for op, (da, db) in OPERATORS.items():
        for sa, sb in BROADCAST_PAIRS:
            yield Case(f"operator {op}", "binary", f"{{a}} {op} {{b}}",
                       (f64(*sa, domain=da), f64(*sb, domain=db)))
    for sa, sb in BROADCAST_PAIRS[2:]:
        yield Case("np.where", "binary", "np.where({a} > 0.0, {a} * {b}, {b})",
                   (f64(*sa, domain="away"), f64(*sb)))
        yield Case("np.clip", "binary", "np.clip({a}, -0.5, {b})",
                   (f64(*sa, domain="frac"), f64(*sb, domain="pos")))


def _axes(ndim: int) -> list:
    """None, every axis, -1, and for ndim >= 2 a tuple of axes."""
    axes = [None, *range(ndim)]
    if ndim >= 2:
        axes.append(-1)
        axes.append((0, ndim - 1))
    if ndim == 3:
        axes.append((1, 2))
    return axes


def _axis_keywords(axis, keepdims: bool) -> str:
    text = "" if axis is None else f", axis={axis}"
    return text + (", keepdims=True" if keepdims else "")


REDUCTIONS = {  # function -> (domain, extra keywords)
    "np.sum": ("unif", ""), "np.mean": ("unif", ""), "np.prod": ("away", ""),
    "np.max": ("distinct", ""), "np.min": ("distinct", ""), "np.amax": ("distinct", ""),
    "np.var": ("unif", ""), "np.std": ("unif", ""), "np.var ddof=1": ("unif", ", ddof=1"),
    "np.std ddof=1": ("unif", ", ddof=1"), "np.linalg.norm": ("away", ""),
    "scipy.special.logsumexp": ("unif", ""),
}


def reductions() -> Iterator[Case]:
    for label, (domain, extra) in REDUCTIONS.items():
        function = label.split()[0]
        for shape in [(6,), (3, 4), (2, 3, 4)]:
            for axis in _axes(len(shape)):
                if function == "np.linalg.norm" and (isinstance(axis, tuple) and len(shape) < 2
                                                    or axis is None and len(shape) > 2):
                    continue  # norm: axis None of a 3-D array is an error in NumPy
                for keepdims in (False, True):
                    call = f"{function}({{a}}{_axis_keywords(axis, keepdims)}{extra})"
                    yield Case(label, "reduction", call, (f64(*shape, domain=domain),))
        yield Case(label, "reduction", f"{function}({{a}}, axis=0{extra})",
                   (f32(3, 4, domain=domain),))
    for method, domain in [("sum", "unif"), ("mean", "unif"), ("prod", "away"),
                           ("max", "distinct"), ("min", "distinct"), ("var", "unif"),
                           ("std", "unif")]:
        yield Case(f"x.{method}()", "reduction", f"{{a}}.{method}(axis=1)",
                   (f64(3, 4, domain=domain),))
        yield Case(f"x.{method}()", "reduction", f"{{a}}.{method}()",
                   (f64(2, 3, 4, domain=domain),))
    yield Case("x.var()", "reduction", "{a}.var(axis=(0, 2), ddof=1)", (f64(2, 3, 4),))
    yield Case("x.std()", "reduction", "{a}.std(ddof=1, keepdims=True)", (f64(3, 4),))


def scans() -> Iterator[Case]:
    for function, domain in [("np.cumsum", "unif"), ("np.cumprod", "away")]:
        for shape, axes in [((6,), [None, 0]), ((3, 4), [None, 0, 1, -1]),
                            ((2, 3, 4), [0, 2])]:
            for axis in axes:
                call = f"{function}({{a}}" + ("" if axis is None else f", axis={axis}") + ")"
                yield Case(function, "scan", call, (f64(*shape, domain=domain),))
    yield Case("np.cumprod", "scan", "np.cumprod({a})", (f64(5, domain="unif"),))
    for shape, keywords in [((6,), ""), ((6,), ", n=2"), ((3, 4), ""), ((3, 4), ", axis=0"),
                            ((3, 4), ", n=2, axis=-1"), ((2, 3, 4), ", axis=1")]:
        yield Case("np.diff", "scan", f"np.diff({{a}}{keywords})", (f64(*shape),))
    for shape, keywords in [((3, 3), ""), ((3, 4), ""), ((3, 4), ", offset=1"),
                            ((4, 3), ", offset=-1"), ((2, 3, 3), ", axis1=1, axis2=2")]:
        yield Case("np.trace", "scan", f"np.trace({{a}}{keywords})", (f64(*shape),))
    for shape, axis in [((6,), -1), ((3, 4), 0), ((3, 4), 1)]:
        yield Case("np.sort", "scan", f"np.sort({{a}}, axis={axis})",
                   (f64(*shape, domain="distinct"),))
        # the order beside kth is NumPy's to choose (Numba's differs): sorted, it is not
        yield Case("np.partition", "scan",
                   f"np.sort(np.partition({{a}}, 1, axis={axis}), axis={axis})",
                   (f64(*shape, domain="distinct"),))
    for shape, keywords in [((6,), ""), ((6,), ", 0.5"), ((3, 4), ", axis=0"),
                            ((3, 4), ", axis=1")]:
        yield Case("np.gradient", "scan", f"np.gradient({{a}}{keywords})", (f64(*shape),))


PRODUCTS = [
    ("np.dot", "np.dot({a}, {b})", [((), (4,)), ((4,), ()), ((4,), (4,)), ((3, 4), (4,)),
                                     ((4,), (4, 3)), ((3, 4), (4, 2)), ((2, 3, 4), (4, 2)),
                                     ((), ())]),
    ("np.matmul", "np.matmul({a}, {b})", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 3)),
                                          ((3, 4), (4, 2)), ((2, 3, 4), (2, 4, 2)),
                                          ((2, 3, 4), (4, 2)), ((3, 4), (2, 4, 2)),
                                          ((2, 1, 3, 4), (3, 4, 2))]),
    ("operator @", "{a} @ {b}", [((4,), (4,)), ((3, 4), (4, 2)), ((2, 3, 4), (2, 4, 2)),
                                 ((2, 3, 4), (4,))]),
    ("np.inner", "np.inner({a}, {b})", [((4,), (4,)), ((3, 4), (4,)), ((3, 4), (2, 4)),
                                        ((2, 3, 4), (4,)), ((), (4,))]),
    ("np.outer", "np.outer({a}, {b})", [((3,), (4,)), ((2, 2), (3,))]),
    ("np.kron", "np.kron({a}, {b})", [((3,), (2,)), ((2, 2), (2, 3)), ((2,), (2, 3))]),
    ("np.vdot", "np.vdot({a}, {b})", [((4,), (4,)), ((2, 3), (2, 3))]),
    ("np.tensordot", "np.tensordot({a}, {b}, axes=1)", [((3, 4), (4, 2)), ((2, 3, 4), (4,))]),
    ("np.tensordot", "np.tensordot({a}, {b}, axes=2)", [((2, 3, 4), (3, 4)),
                                                        ((3, 4), (3, 4))]),
    ("np.tensordot", "np.tensordot({a}, {b}, axes=0)", [((3,), (2,))]),
    ("np.tensordot", "np.tensordot({a}, {b}, axes=([1], [0]))", [((3, 4), (4, 2))]),
    ("np.tensordot", "np.tensordot({a}, {b}, axes=([0, 2], [2, 0]))",
     [((2, 3, 4), (4, 5, 2))]),
    ("np.einsum", "np.einsum('ij,jk->ik', {a}, {b})", [((3, 4), (4, 2))]),
    ("np.einsum", "np.einsum('ij,ij->i', {a}, {b})", [((3, 4), (3, 4))]),
    ("np.einsum", "np.einsum('i,j->ij', {a}, {b})", [((3,), (4,))]),
    ("np.einsum", "np.einsum('...ij,...jk->...ik', {a}, {b})", [((2, 3, 4), (2, 4, 2)),
                                                                ((3, 4), (4, 2))]),
    ("np.einsum", "np.einsum('...i,...i->...', {a}, {b})", [((2, 3, 4), (2, 3, 4))]),
    ("np.einsum", "np.einsum({a}, [0, 1], {b}, [1, 2], [0, 2])", [((3, 4), (4, 2))]),
    ("np.einsum", "np.einsum({a}, [0, 1], {b}, [0, 1])", [((3, 4), (3, 4))]),
]

SINGLE_PRODUCTS = [
    ("np.einsum", "np.einsum('ii->i', {a})", (3, 3)),
    ("np.einsum", "np.einsum('ii', {a})", (3, 3)),
    ("np.einsum", "np.einsum('ij->j', {a})", (3, 4)),
    ("np.einsum", "np.einsum('ijk->kji', {a})", (2, 3, 4)),
    ("np.einsum", "np.einsum('...i->...', {a})", (2, 3, 4)),
    ("np.einsum", "np.einsum({a}, [0, 1], [1])", (3, 4)),
]


def products() -> Iterator[Case]:
    for function, call, pairs in PRODUCTS:
        for sa, sb in pairs:
            yield Case(function, "product", call, (f64(*sa), f64(*sb)))
    for function, call, shape in SINGLE_PRODUCTS:
        yield Case(function, "product", call, (f64(*shape),))
    yield Case("np.dot", "product", "np.dot({a}, {b})", (f32(3, 4), f32(4, 2)))
    yield Case("np.matmul", "product", "np.matmul({a}, {b})", (f32(2, 3, 4), f32(2, 4, 2)))


SHAPE_CALLS = [  # (function, call, operand shape)
    ("np.reshape", "np.reshape({a}, (4, 3))", (3, 4)),
    ("np.reshape", "np.reshape({a}, (2, -1))", (2, 3, 4)),
    ("x.reshape()", "{a}.reshape(6, 4)", (2, 3, 4)),
    ("np.ravel", "np.ravel({a})", (3, 4)),
    ("x.ravel()", "{a}.ravel()", (2, 3, 4)),
    ("x.flatten()", "{a}.flatten()", (3, 4)),
    ("np.transpose", "np.transpose({a})", (3, 4)),
    ("np.transpose", "np.transpose({a})", (2, 3, 4)),
    ("np.transpose", "np.transpose({a}, (1, 0, 2))", (2, 3, 4)),
    ("np.transpose", "np.transpose({a}, axes=(2, 0, 1))", (2, 3, 4)),
    ("x.T", "{a}.T", (3, 4)),
    ("x.T", "{a}.T", (2, 3, 4)),
    ("x.transpose()", "{a}.transpose(2, 0, 1)", (2, 3, 4)),
    ("x.transpose()", "{a}.transpose((1, 0))", (3, 4)),
    ("np.moveaxis", "np.moveaxis({a}, 0, -1)", (2, 3, 4)),
    ("np.moveaxis", "np.moveaxis({a}, 2, 0)", (2, 3, 4)),
    ("np.moveaxis", "np.moveaxis({a}, [0, 1], [2, 0])", (2, 3, 4)),
    ("np.swapaxes", "np.swapaxes({a}, 0, 1)", (3, 4)),
    ("np.swapaxes", "np.swapaxes({a}, 0, 2)", (2, 3, 4)),
    ("x.swapaxes()", "{a}.swapaxes(1, 2)", (2, 3, 4)),
    ("np.rollaxis", "np.rollaxis({a}, 2)", (2, 3, 4)),
    ("np.rollaxis", "np.rollaxis({a}, 0, 2)", (2, 3, 4)),
    ("np.squeeze", "np.squeeze({a})", (3, 1, 4)),
    ("np.squeeze", "np.squeeze({a}, axis=1)", (3, 1, 4)),
    ("np.squeeze", "np.squeeze({a}, axis=0)", (1, 4)),
    ("x.squeeze()", "{a}.squeeze()", (1, 3, 1)),
    ("np.expand_dims", "np.expand_dims({a}, 0)", (3, 4)),
    ("np.expand_dims", "np.expand_dims({a}, axis=-1)", (3, 4)),
    ("np.expand_dims", "np.expand_dims({a}, axis=(0, 2))", (3, 4)),
    ("x[None]", "{a}[None, :, None]", (3, 4)),
    ("x[np.newaxis]", "{a}[:, np.newaxis]", (5,)),
    ("np.repeat", "np.repeat({a}, 2)", (5,)),
    ("np.repeat", "np.repeat({a}, 2)", (3, 4)),
    ("np.repeat", "np.repeat({a}, 3, axis=0)", (3, 4)),
    ("np.repeat", "np.repeat({a}, 2, axis=-1)", (2, 3, 4)),
    ("np.repeat", "np.repeat({a}, [1, 0, 2], axis=0)", (3, 4)),
    ("x.repeat()", "{a}.repeat(2, axis=1)", (3, 4)),
    ("np.tile", "np.tile({a}, 3)", (4,)),
    ("np.tile", "np.tile({a}, (2, 1))", (3, 4)),
    ("np.tile", "np.tile({a}, (2, 1, 3))", (3, 4)),
    ("np.tile", "np.tile({a}, 2)", (3, 4)),
    ("np.diag", "np.diag({a})", (4,)),
    ("np.diag", "np.diag({a}, 1)", (3,)),
    ("np.diag", "np.diag({a})", (3, 3)),
    ("np.diag", "np.diag({a}, k=-1)", (3, 4)),
    ("np.diagonal", "np.diagonal({a})", (3, 4)),
    ("np.diagonal", "np.diagonal({a}, offset=1)", (4, 4)),
    ("np.diagonal", "np.diagonal({a}, axis1=1, axis2=2)", (2, 3, 3)),
    ("x.diagonal()", "{a}.diagonal()", (3, 3)),
    ("np.tril", "np.tril({a})", (4, 4)),
    ("np.tril", "np.tril({a}, -1)", (3, 4)),
    ("np.tril", "np.tril({a}, k=1)", (2, 3, 3)),
    ("np.triu", "np.triu({a})", (4, 4)),
    ("np.triu", "np.triu({a}, 1)", (4, 3)),
    ("np.triu", "np.triu({a}, k=-1)", (2, 3, 3)),
    ("np.flip", "np.flip({a})", (3, 4)),
    ("np.flip", "np.flip({a}, 0)", (3, 4)),
    ("np.flip", "np.flip({a}, axis=-1)", (2, 3, 4)),
    ("np.flip", "np.flip({a}, axis=(0, 2))", (2, 3, 4)),
    ("np.flipud", "np.flipud({a})", (3, 4)),
    ("np.fliplr", "np.fliplr({a})", (3, 4)),
    ("np.rot90", "np.rot90({a})", (3, 4)),
    ("np.rot90", "np.rot90({a}, 2)", (3, 4)),
    ("np.rot90", "np.rot90({a}, k=-1, axes=(1, 2))", (2, 3, 4)),
    ("np.roll", "np.roll({a}, 2)", (6,)),
    ("np.roll", "np.roll({a}, -1, axis=0)", (3, 4)),
    ("np.roll", "np.roll({a}, 1, axis=1)", (3, 4)),
    ("np.roll", "np.roll({a}, (1, 2), axis=(0, 1))", (3, 4)),
    ("np.roll", "np.roll({a}, 3)", (3, 4)),
    ("np.pad", "np.pad({a}, 2)", (4,)),
    ("np.pad", "np.pad({a}, (1, 2))", (3, 4)),
    ("np.pad", "np.pad({a}, ((1, 0), (0, 2)))", (3, 4)),
    ("np.pad", "np.pad({a}, 1, mode='edge')", (3, 4)),
    ("np.pad", "np.pad({a}, (2, 1), mode='reflect')", (5,)),
    ("np.pad", "np.pad({a}, 1, mode='constant', constant_values=0.5)", (3, 4)),
    ("np.broadcast_to", "np.broadcast_to({a}, (3, 4))", (4,)),
    ("np.broadcast_to", "np.broadcast_to({a}, (2, 3, 4))", (3, 1)),
    ("np.atleast_2d", "np.atleast_2d({a})", (4,)),
    ("np.atleast_1d", "np.atleast_1d({a})", (3, 4)),
    ("np.copy", "np.copy({a})", (3, 4)),
    ("x.copy()", "{a}.copy()", (3, 4)),
    ("x.astype()", "{a}.astype(np.float64)", (3, 4)),
    ("x.astype()", "{a}.astype('float64')", (3, 4)),
    ("np.asarray", "np.asarray({a})", (3, 4)),
    ("np.array", "np.array({a})", (3, 4)),
    ("np.array", "np.array({a})", ()),
]

JOINS = [  # (function, call, operand shapes)
    ("np.concatenate", "np.concatenate(({a}, {b}))", [(3,), (4,)]),
    ("np.concatenate", "np.concatenate([{a}, {b}], axis=1)", [(3, 2), (3, 4)]),
    ("np.concatenate", "np.concatenate(({a}, {b}), axis=-1)", [(2, 3, 2), (2, 3, 1)]),
    ("np.concatenate", "np.concatenate(({a}, {b}), axis=None)", [(2, 3), (4,)]),
    ("np.stack", "np.stack(({a}, {b}))", [(3,), (3,)]),
    ("np.stack", "np.stack([{a}, {b}], axis=1)", [(3, 4), (3, 4)]),
    ("np.stack", "np.stack(({a}, {b}), axis=-1)", [(3, 4), (3, 4)]),
    ("np.vstack", "np.vstack(({a}, {b}))", [(3,), (3,)]),
    ("np.vstack", "np.vstack(({a}, {b}))", [(2, 3), (1, 3)]),
    ("np.row_stack", "np.row_stack(({a}, {b}))", [(2, 3), (3,)]),
    ("np.hstack", "np.hstack(({a}, {b}))", [(3,), (2,)]),
    ("np.hstack", "np.hstack(({a}, {b}))", [(3, 2), (3, 1)]),
    ("np.hstack", "np.hstack(({a},))", [(3, 2)]),
    ("np.column_stack", "np.column_stack(({a}, {b}))", [(3,), (3, 2)]),
    ("np.column_stack", "np.column_stack(({a},))", [(4,)]),
    ("np.dstack", "np.dstack(({a}, {b}))", [(3, 2), (3, 2)]),
    ("np.append", "np.append({a}, {b})", [(3,), (2, 2)]),
    ("np.append", "np.append({a}, {b}, axis=0)", [(2, 3), (1, 3)]),
    ("np.r_", "np.r_[{a}, {b}]", [(3,), (2,)]),
    ("np.c_", "np.c_[{a}, {b}]", [(3,), (3, 2)]),
    ("np.select", "np.select([{a} > 0.0, {a} < -0.5], [{a} * {b}, {b}], 0.0)",
     [(3, 4), (3, 4)]),
    ("np.select", "np.select([{a} < 0.3], [{a}], {b})", [(5,), (5,)]),
]

SPLITS = [  # (function, the split, shape): the parts are recombined with distinct weights
    ("np.split", "np.split({a}, 3)", (6,)),
    ("np.split", "np.split({a}, [1, 3], axis=1)", (3, 5)),
    ("np.array_split", "np.array_split({a}, 3)", (7,)),
    ("np.array_split", "np.array_split({a}, 2, axis=1)", (3, 5)),
    ("np.vsplit", "np.vsplit({a}, 2)", (4, 3)),
    ("np.hsplit", "np.hsplit({a}, 3)", (2, 3)),
    ("np.dsplit", "np.dsplit({a}, 2)", (2, 3, 4)),
]


def shapes() -> Iterator[Case]:
    for function, call, shape in SHAPE_CALLS:
        yield Case(function, "shape", call, (f64(*shape),))
    for function, call, shapes_ in JOINS:
        yield Case(function, "join", call, tuple(f64(*s) for s in shapes_))
    for function, call, shape in SPLITS:
        yield Case(function, "split",
                   "np.sum({b}[0] * 2.0) - np.sum({b}[-1] ** 2) + np.sum(np.sin({b}[1]))",
                   (f64(*shape),), before=(f"{{b}} = {call}",))


INDEXING = [  # (label, call, operands)
    ("slice", "{a}[1:]", [f64(5)]),
    ("slice", "{a}[::-1]", [f64(5)]),
    ("slice", "{a}[1:, ::2]", [f64(3, 4)]),
    ("integer", "{a}[2]", [f64(5)]),
    ("integer", "{a}[-1, 1]", [f64(3, 4)]),
    ("integer and slice", "{a}[1, :]", [f64(3, 4)]),
    ("ellipsis", "{a}[..., 0]", [f64(2, 3, 4)]),
    ("ellipsis", "{a}[0, ...]", [f64(3, 4)]),
    ("ellipsis", "{a}[..., 1:]", [f64(2, 3, 4)]),
    ("index array", "{a}[{b}]", [f64(5), Operand((4,), "index5")]),
    ("index array", "{a}[{b}]", [f64(5, 3), Operand((2, 2), "index5")]),
    ("index array and slice", "{a}[{b}, 1:]", [f64(5, 3), Operand((4,), "index5")]),
    ("index array and slice", "{a}[1:, {b}]", [f64(3, 5), Operand((4,), "index5")]),
    ("index array and integer", "{a}[0, {b}]", [f64(3, 5), Operand((4,), "index5")]),
    ("index array and integer", "{a}[{b}, 2]", [f64(5, 3), Operand((4,), "index5")]),
    ("index arrays", "{a}[{b}, {c}]", [f64(5, 4), Operand((3,), "index5"),
                                        Operand((3,), "index4")]),
    ("literal list index", "{a}[[0, 2, 2]]", [f64(5)]),
    ("literal list index", "{a}[[0, 2], :]", [f64(3, 4)]),
    ("boolean mask", "{a}[{b}]", [f64(5), Operand((5,), "mask")]),
    ("boolean mask", "{a}[{b}]", [f64(3, 4), Operand((3, 4), "mask")]),
    ("boolean mask", "{a}[{b}]", [f64(2, 3, 4), Operand((2, 3, 4), "mask")]),
    ("boolean mask", "{a}[{a} > 0.0]", [f64(2, 3, 4, domain="away")]),
    ("np.take", "np.take({a}, {b})", [f64(5), Operand((3,), "index5")]),
    ("np.take", "np.take({a}, {b}, axis=1)", [f64(3, 5), Operand((2,), "index5")]),
]


def indexing() -> Iterator[Case]:
    for label, call, operands in INDEXING:
        yield Case(label, "indexing", call, tuple(operands))


LINALG = [  # (function, call, operand shapes and domains, statements before)
    ("np.linalg.det", "np.linalg.det({a})", [((3, 3), "dominant")]),
    ("np.linalg.det", "np.linalg.det({a})", [((2, 3, 3), "dominant")]),
    ("np.linalg.inv", "np.linalg.inv({a})", [((3, 3), "dominant")]),
    ("np.linalg.inv", "np.linalg.inv({a})", [((2, 3, 3), "dominant")]),
    ("np.linalg.solve", "np.linalg.solve({a}, {b})", [((3, 3), "dominant"), ((3,), "unif")]),
    ("np.linalg.solve", "np.linalg.solve({a}, {b})", [((3, 3), "dominant"), ((3, 2), "unif")]),
    ("np.linalg.solve", "np.linalg.solve({a}, {b})", [((2, 3, 3), "dominant"),
                                                      ((2, 3, 2), "unif")]),
    ("np.linalg.slogdet", "{b}[0] * {b}[1]", [((3, 3), "dominant")]),
    ("np.linalg.slogdet", "{b}[1]", [((2, 3, 3), "dominant")]),
    ("np.linalg.svd", "np.linalg.svd({a}, compute_uv=False)", [((3, 4), "singular_spread")]),
    ("np.linalg.svd", "np.linalg.svd({a}, compute_uv=False)", [((4, 3), "singular_spread")]),
    ("np.linalg.svd", "({b}[0] * {b}[1]) @ {b}[2]", [((4, 3), "singular_spread")]),
    ("np.linalg.svd", "{b}[0] ** 2 @ {b}[1]", [((3, 4), "singular_spread")]),
    ("np.linalg.eigh", "{b}[0] + np.sum({b}[1] ** 2 * {b}[0], axis=0)", [((3, 3), "symmetric")]),
    ("np.linalg.eigvalsh", "np.linalg.eigvalsh({a})", [((4, 4), "symmetric")]),
    ("np.linalg.cholesky", "np.linalg.cholesky({a})", [((3, 3), "spd")]),
    ("np.linalg.cholesky", "np.linalg.cholesky({a})", [((2, 3, 3), "spd")]),
    ("np.linalg.pinv", "np.linalg.pinv({a})", [((4, 3), "singular_spread")]),
    ("np.linalg.pinv", "np.linalg.pinv({a})", [((3, 3), "dominant")]),
    ("np.linalg.matrix_power", "np.linalg.matrix_power({a}, 3)", [((3, 3), "unif")]),
    ("np.linalg.matrix_power", "np.linalg.matrix_power({a}, 0)", [((3, 3), "unif")]),
    ("np.linalg.matrix_power", "np.linalg.matrix_power({a}, -2)", [((3, 3), "dominant")]),
    ("np.linalg.norm", "np.linalg.norm({a})", [((3, 4), "unif")]),
    ("np.linalg.norm", "np.linalg.norm({a}, 'fro')", [((3, 4), "unif")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=2)", [((3, 4), "singular_spread")]),
    ("np.linalg.norm", "np.linalg.norm({a}, 'nuc')", [((3, 4), "singular_spread")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=1)", [((3, 4), "distinct")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=np.inf)", [((3, 4), "distinct")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=1)", [((5,), "away")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=np.inf)", [((5,), "distinct")]),
    ("np.linalg.norm", "np.linalg.norm({a}, ord=3)", [((5,), "away")]),
    ("np.linalg.norm", "np.linalg.norm({a}, axis=1)", [((3, 4), "unif")]),
    ("np.linalg.norm", "np.linalg.norm({a}, axis=(0, 1))", [((3, 4), "unif")]),
    ("scipy.linalg.solve_triangular", "scipy.linalg.solve_triangular({a}, {b}, lower=True)",
     [((3, 3), "lower"), ((3,), "unif")]),
    ("scipy.linalg.solve_triangular", "scipy.linalg.solve_triangular({a}.T, {b})",
     [((3, 3), "lower"), ((3, 2), "unif")]),
    ("scipy.linalg.solve_triangular",
     "scipy.linalg.solve_triangular({a}, {b}, lower=True, trans=1)",
     [((3, 3), "lower"), ((3, 2), "unif")]),
    ("scipy.linalg.cho_solve", "scipy.linalg.cho_solve(scipy.linalg.cho_factor({a}), {b})",
     [((3, 3), "spd"), ((3,), "unif")]),
    ("scipy.linalg.cholesky", "scipy.linalg.cholesky({a}, lower=True)", [((3, 3), "spd")]),
    ("scipy.linalg.expm", "scipy.linalg.expm({a})", [((3, 3), "unif")]),
    ("scipy.linalg.det", "scipy.linalg.det({a})", [((3, 3), "dominant")]),
    ("scipy.linalg.inv", "scipy.linalg.inv({a})", [((3, 3), "dominant")]),
    ("scipy.linalg.solve", "scipy.linalg.solve({a}, {b})", [((3, 3), "dominant"),
                                                            ((3,), "unif")]),
]

LINALG_BEFORE = {"np.linalg.slogdet": "{b} = np.linalg.slogdet({a})",
                 "np.linalg.svd": "{b} = np.linalg.svd({a}, full_matrices=False)",
                 "np.linalg.eigh": "{b} = np.linalg.eigh({a})"}


def linalg() -> Iterator[Case]:
    for function, call, operands in LINALG:
        before = (LINALG_BEFORE[function],) if "{b}" in call and function in LINALG_BEFORE \
            else ()
        yield Case(function, "linalg", call, tuple(f64(*s, domain=d) for s, d in operands),
                   before=before)


SPECIAL = [
    ("scipy.special.xlogy", "scipy.special.xlogy({a}, {b})", [((4,), "pos"), ((4,), "pos")]),
    ("scipy.special.logsumexp", "scipy.special.logsumexp({a}, axis=0, b={b})",
     [((3, 4), "unif"), ((3, 4), "pos")]),
    ("scipy.special.softmax", "scipy.special.softmax({a})", [((5,), "unif")]),
    ("scipy.special.softmax", "scipy.special.softmax({a}, axis=1)", [((3, 4), "unif")]),
    ("scipy.special.softmax", "scipy.special.softmax({a}, axis=0)", [((3, 4), "unif")]),
    ("scipy.special.log_softmax", "scipy.special.log_softmax({a}, axis=-1)", [((3, 4), "unif")]),
]

VALUES = [  # plain floats and conversions people write
    ("np.dot", "np.dot({a}, {b})", [(), ()]),
    ("np.sum", "np.sum({a})", [()]),
    ("np.max", "np.max({a} * 2.0)", [()]),
    ("np.array", "np.array({a}) * 2.0", [()]),
    ("np.array", "np.sum(np.array([{a}, 2.0 * {a}, 1.0]))", [()]),
    ("np.zeros dtype", "np.sum(np.zeros(3, dtype=np.float32) + {a})", [(3,)]),
    ("np.ones dtype", "np.sum(np.ones(3, dtype=np.float64) * {a})", [(3,)]),
    ("np.full", "np.sum(np.full(3, 2.0) * {a})", [(3,)]),
    ("np.zeros_like", "np.sum(np.zeros_like({a}) + {a} ** 2)", [(3,)]),
    ("np.ones_like", "np.sum(np.ones_like({a}) * {a})", [(2, 3)]),
    ("np.linspace", "np.sum(np.linspace(0.0, 1.0, 4) * {a})", [(4,)]),
    ("np.arange", "np.sum(np.arange(4) * {a})", [(4,)]),
    ("np.eye", "np.eye(3) * {a}", [(3, 3)]),
    ("math", "math.exp({a}) + math.log1p({a} * {a})", [()]),
]


def special() -> Iterator[Case]:
    for function, call, operands in SPECIAL:
        yield Case(function, "special", call, tuple(f64(*s, domain=d) for s, d in operands))
    for function, call, shapes_ in VALUES:
        yield Case(function, "values", call, tuple(f64(*s) for s in shapes_))


FAMILIES: dict[str, Callable[[], Iterator[Case]]] = {
    "unary": unary, "binary": binary, "reduction": reductions, "scan": scans,
    "product": products, "shape": shapes, "indexing": indexing, "linalg": linalg,
    "special": special,
}

CASES: list[Case] = [case for family in FAMILIES.values() for case in family()]


# ---- the module the cases live in ---------------------------------------------------------
#: Argument names users pick, by role: first, second and third operand of a case.
NAMES = (("signal", "weights", "field", "samples", "prices", "grid", "activations", "theta"),
         ("scale", "offsets", "bias", "other", "rates", "kernel", "targets", "phase"),
         ("columns", "picks", "lanes", "slots"))


def _argument_names(index: int, count: int) -> list[str]:
    return [NAMES[k][index % len(NAMES[k])] for k in range(count)]


def _function_source(index: int, case: Case) -> str:
    names = _argument_names(index, len(case.operands))
    spelled = dict(zip("abc", names, strict=False))
    spelled.setdefault("b", "parts")  # the local the statements before bind
    lines = [f"def case_{index}({', '.join(names)}):"]
    lines += [f"    {line.format(**spelled)}" for line in case.before]
    lines.append(f"    return {case.call.format(**spelled)}")
    return "\n".join(lines)


def module_source(cases: list[Case]) -> str:
    header = ["# Generated by tests/surface_catalogue.py: one function per catalogue case.",
              "import math", "", "import numpy as np", "import scipy.linalg",
              "import scipy.special", ""]
    return "\n".join(header + [_function_source(i, c) + "\n" for i, c in enumerate(cases)])


@functools.cache
def catalogue_module():
    """The cases written into one module file (in a fresh directory) and imported."""
    directory = Path(tempfile.mkdtemp(prefix="s2s_ad_surface_"))
    path = directory / "surface_cases.py"
    path.write_text(module_source(CASES))
    spec = importlib.util.spec_from_file_location("surface_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["surface_cases"] = module
    spec.loader.exec_module(module)
    return module


def function_of(case: Case) -> Callable:
    return getattr(catalogue_module(), f"case_{CASES.index(case)}")


# ---- checking one case in one path -------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """What happened to one case in one path.

    ``status``: "pass" (value, finite differences, dot-product identity, gradient
    shapes and dtypes, and on the Numba path agreement with the Python path);
    "refused" (a NonDifferentiableError or ArgumentError naming the case's own
    file:line:col); "no numba" (the Python path works, ``jit=True`` cannot compile);
    "wrong" (a check failed); "crash" (any other error, or a refusal not located in
    the case's source).
    """

    status: str
    detail: str = ""


@functools.cache
def differentiable_case(index: int, jit: bool):
    """One differentiable function per case and path in a process: Numba compiles once."""
    return ad.differentiable(getattr(catalogue_module(), f"case_{index}"), jit=jit)


def _tolerances(case: Case) -> dict:
    return {"rtol": 2e-3, "atol": 1e-4} if case.float32 else {"rtol": 1e-5, "atol": 1e-7}


def _pulled_back(case: Case, jit: bool, u):
    df = differentiable_case(CASES.index(case), jit)
    value, pullback = ad.value_with_pullback(df, *fresh_copies(case.arguments()))
    return value, pullback, pullback(u)


def _checked(case: Case, jit: bool) -> Outcome:
    args = case.arguments()
    fn = function_of(case)
    output = fn(*fresh_copies(args))
    u = random_cotangent(output, np.random.default_rng(zlib.crc32(case.name.encode())))
    value, pullback, cotangents = _pulled_back(case, jit, u)
    agree = 1e-5 if case.float32 else 1e-12
    assert_close(value, output, rtol=agree, what="value")
    assert_gradient_like_arguments(args, cotangents)
    assert_vjp_matches_fd(fn, args, u, cotangents, **_tolerances(case))
    assert_dot_product_identity(fn, args, pullback, output, zlib.crc32(case.name.encode()),
                                **_tolerances(case))
    if jit:
        _, _, python = _pulled_back(case, False, u)
        assert_close(cotangents, python, rtol=agree, what="Numba against Python")
    return Outcome("pass")


def _located(error: Exception) -> bool:
    return catalogue_module().__file__ in str(error)


def check(case: Case, jit: bool) -> Outcome:
    """The outcome of ``case`` on the Numba path (``jit=True``) or the Python path."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _checked(case, jit)
        except AssertionError as failure:
            return Outcome("wrong", str(failure)[:2000])
        except (NonDifferentiableError, ArgumentError) as refusal:
            status = "refused" if _located(refusal) else "crash"
            return Outcome(status, f"{type(refusal).__name__}: {refusal}")
        except JitError as error:
            return Outcome("no numba", str(error)[:2000])
        except Exception as error:  # noqa: BLE001  (every other error is a crash)
            return Outcome("crash", f"{type(error).__name__}: {error}"[:2000])


def counts_by(key: Callable[[Case], str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for case in CASES:
        out[key(case)] = out.get(key(case), 0) + 1
    return out


assert len({c.name for c in CASES}) == len(CASES), [
    name for name, group in itertools.groupby(sorted(c.name for c in CASES))
    if len(list(group)) > 1]
