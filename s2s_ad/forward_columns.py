"""Forward-mode Jacobians in one compiled call: a small driver, generated per call
signature, runs a function's Numba-compiled tangent kernel once per column with a
unit tangent, inside Numba, and gathers the columns.

The driver takes the kernel's arguments without their tangents (the primals, then
the global values) and returns ``(value, columns)``: the function's value and its
Jacobian as a ``(value.size, columns)`` array, in the order of the differentiated
arguments and, within an array, of its flat (C-order) entries.

>>> print(driver_source(2, 1, [(0, 1), (1, 0)], True))
def make(kernel, np):
    def columns(a0, a1, g0):
        t0 = np.zeros(a0.shape[0])
        u0 = t0
        t1 = 0.0
        value, tangent = kernel(a0, a1, g0, t0, t1)
        out = np.empty((tangent.size, u0.size + 1))
        for j in range(u0.size):
            u0[j] = 1.0
            for i, entry in enumerate(kernel(a0, a1, g0, t0, t1)[1].flat):
                out[i, j] = entry
            u0[j] = 0.0
        t1 = 1.0
        for i, entry in enumerate(kernel(a0, a1, g0, t0, t1)[1].flat):
            out[i, u0.size] = entry
        t1 = 0.0
        return value, out
    return columns
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from .compiler.jit import NUMBA_ERRORS


def driver_source(n_args: int, n_globals: int, wrt: Sequence[tuple[int, int]],
                  array_result: bool, written: Sequence[int] = ()) -> str:
    """The driver's source: ``wrt`` lists ``(position, ndim)`` of each differentiated
    argument (``ndim`` 0 for a float), ``array_result`` whether the value is an array;
    every run gets its own copy of the arguments at the positions in ``written`` (the
    function writes into them: each column starts from the caller's values)."""
    params = [f"a{i}" for i in range(n_args)] + [f"g{j}" for j in range(n_globals)]
    passed = [f"{a}.copy()" if i in written else a for i, a in enumerate(params)]
    call = f"kernel({', '.join(passed + [f't{p}' for p, _ in wrt])})"
    lines = []
    for p, ndim in wrt:
        if ndim == 1:  # no reshape: a second of Numba compile time less
            lines += [f"t{p} = np.zeros(a{p}.shape[0])", f"u{p} = t{p}"]
        elif ndim:
            lines += [f"t{p} = np.zeros(a{p}.shape)", f"u{p} = t{p}.reshape(-1)"]
        else:
            lines.append(f"t{p} = 0.0")
    sizes = [f"u{p}.size" if ndim else "1" for p, ndim in wrt]
    total = " + ".join(sizes)
    lines.append(f"value, tangent = {call}")
    lines.append(f"out = np.empty(({'tangent.size' if array_result else '1'}, {total}))")
    start = "0"
    for (p, ndim), size in zip(wrt, sizes, strict=True):
        if ndim:
            index = "j" if start == "0" else f"{start} + j"
            lines += [f"for j in range(u{p}.size):", f"    u{p}[j] = 1.0",
                      *_column(call, index, array_result, "    "), f"    u{p}[j] = 0.0"]
        else:
            lines += [f"t{p} = 1.0", *_column(call, start, array_result, ""), f"t{p} = 0.0"]
        start = size if start == "0" else f"{start} + {size}"
    lines.append("return value, out")
    body = "\n".join("        " + line for line in lines)
    return f"def make(kernel, np):\n    def columns({', '.join(params)}):\n{body}\n" \
           "    return columns\n"


def _column(call: str, index: str, array_result: bool, indent: str) -> list[str]:
    """The lines writing column ``index``: an element loop (a slice assignment of the
    tangent costs seconds of Numba compile time more)."""
    if not array_result:
        return [f"{indent}out[0, {index}] = {call}[1]"]
    return [f"{indent}for i, entry in enumerate({call}[1].flat):",
            f"{indent}    out[i, {index}] = entry"]


def compiled_driver(kernel: Any, passed: tuple, n_args: int, wrt: Sequence[tuple[int, int]],
                    array_result: bool, written: Sequence[int] = ()) -> Callable | None:
    """The driver for ``kernel`` (a Numba dispatcher) compiled for ``passed`` (its
    arguments without tangents), or ``None`` if Numba cannot compile it."""
    source = driver_source(n_args, len(passed) - n_args, wrt, array_result, written)
    space: dict[str, Any] = {}
    exec(source, space)  # noqa: S102 - built above from fixed templates
    driver = numba.njit(space["make"](kernel, np))
    try:
        driver.compile(tuple(numba.typeof(a) for a in passed))
    except NUMBA_ERRORS:
        return None
    return driver
