"""Cotangents of tuple (and 1-d array) operations: ``t[i]`` at a run-time
position, and the builtins ``sum``, ``max`` and ``min`` of a tuple.

Tuples may hold numbers of different types, so Numba's versions are written
per tuple length: each item is its own expression (see :func:`_per_item`).

>>> add_at((1.0, 2.0, 3.0), -1, 0.5)
(1.0, 2.0, 3.5)
>>> fill_like((1.0, 7.0), 2.0), at_max((1.0, 7.0, 7.0), 2.0), at_min((1.0, 7.0), 2.0)
((2.0, 2.0), (0.0, 2.0, 0.0), (2.0, 0.0))
"""

from __future__ import annotations

import numpy as np
from numba.core import types
from numba.extending import overload

from .tapes import accumulate

__all__ = ["add_at", "at_max", "at_min", "fill_like", "plus", "sum_items"]


def add_at(t, i, v):
    """``t`` with ``v`` added to its item ``i`` (negative ``i`` counts from the end):
    the cotangent of ``t[i]`` added into that of ``t``."""
    k = i % len(t)
    return tuple(plus(x, v) if j == k else x for j, x in enumerate(t))


def plus(x, v):
    """The cotangent ``x`` with ``v`` added: item by item for tuples (never joined),
    an empty array standing for "none yet" (see ``accumulate``).

    >>> plus(((1.0,), np.zeros((0,))), ((2.0,), np.ones(2)))
    ((3.0,), array([1., 1.]))
    """
    if isinstance(x, tuple):
        return tuple(plus(a, b) for a, b in zip(x, v, strict=True))
    if isinstance(x, np.ndarray):
        return accumulate(x, v)
    return x + v


def fill_like(t, g):
    """The cotangent of ``sum(t)`` for ``t``: ``g`` in every item (every row of an array)."""
    if isinstance(t, np.ndarray):
        return np.zeros(t.shape) + g
    return tuple(_zero_like(x) + g for x in t)


def at_max(t, g):
    """The cotangent of ``max(t)`` for ``t``: ``g`` at the first largest item, 0 elsewhere."""
    return _one_hot(t, g, int(np.argmax(np.asarray(t))))


def at_min(t, g):
    """The cotangent of ``min(t)`` for ``t``: ``g`` at the first smallest item, 0 elsewhere."""
    return _one_hot(t, g, int(np.argmin(np.asarray(t))))


def sum_items(t):
    """``sum(t)`` for a tuple of arrays (Numba's ``sum`` adds numbers only)."""
    return sum(t)


def _zero_like(x):
    return np.zeros(np.shape(x)) if isinstance(x, np.ndarray) else 0.0


def _one_hot(t, g, k):
    if isinstance(t, np.ndarray):
        out = np.zeros(t.shape)
        out[k] = g
        return out
    return tuple(g if j == k else 0.0 * g for j in range(len(t)))


def _compiled(params: str, head: list[str], items: list[str]):
    """``def impl(<params>): <head>; return (<items>,)``, for Numba to compile:
    one expression per item, so items of different types each keep theirs."""
    body = "".join(f"    {line}\n" for line in head)
    namespace = {"np": np, "plus": plus}
    exec(f"def impl({params}):\n{body}    return ({''.join(f'{e}, ' for e in items)})\n",
         namespace)
    return namespace["impl"]


def _first_extreme(n: int, better: str) -> list[str]:
    """Statements leaving in ``k`` the position of the first extreme item of ``t``."""
    lines = ["k = 0", "best = t[0]"]
    for j in range(1, n):
        lines += [f"if t[{j}] {better} best:", f"    k = {j}", f"    best = t[{j}]"]
    return lines


def _one_hot_numba(better: str):
    def typer(t, g):
        if isinstance(t, types.Array):
            pick = np.argmax if better == ">" else np.argmin

            def impl(t, g):
                out = np.zeros(t.shape)
                out[pick(t)] = g
                return out
            return impl
        if isinstance(t, types.BaseTuple) and len(t):
            return _compiled("t, g", _first_extreme(len(t), better),
                             [f"g if k == {j} else 0.0 * g" for j in range(len(t))])
        return None
    return typer


@overload(add_at)
def _add_at_numba(t, i, v):
    if isinstance(t, types.BaseTuple) and len(t):
        n = len(t)
        return _compiled("t, i, v", [f"k = i % {n}"],
                         [f"plus(t[{j}], v) if k == {j} else t[{j}]" for j in range(n)])
    return None


@overload(plus)
def _plus_numba(x, v):
    if isinstance(x, types.BaseTuple):
        return _compiled("x, v", [], [f"plus(x[{j}], v[{j}])" for j in range(len(x))])
    if isinstance(x, types.Array):
        return lambda x, v: accumulate(x, v)
    return lambda x, v: x + v


@overload(fill_like)
def _fill_like_numba(t, g):
    if isinstance(t, types.Array):
        return lambda t, g: np.zeros(t.shape) + g
    if isinstance(t, types.BaseTuple):
        return _compiled("t, g", [], [f"np.zeros(t[{j}].shape) + g"
                                      if isinstance(item, types.Array) else "g"
                                      for j, item in enumerate(t)])
    return None


@overload(sum_items)
def _sum_items_numba(t):
    if isinstance(t, types.BaseTuple) and len(t):
        source = " + ".join(f"t[{j}]" for j in range(len(t)))
        namespace: dict = {}
        exec(f"def impl(t):\n    return 0.0 + {source}\n", namespace)
        return namespace["impl"]
    return None


overload(at_max)(_one_hot_numba(">"))
overload(at_min)(_one_hot_numba("<"))
