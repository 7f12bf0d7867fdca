"""``dtype`` arguments in source: ``np.zeros(n, dtype=np.float32)``, ``dtype=float``,
``dtype="float32"``, ``x.astype("float64")``.

Generated code passes a dtype on as NumPy's name of it (``'float32'``), which NumPy
and Numba both read; complex dtypes are refused (s2s_ad differentiates real values).

>>> dtype_name(np.float32), dtype_name(float), dtype_name("f8"), scalar_type("int64")
('float32', 'float64', 'float64', <class 'numpy.int64'>)
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from s2s_ad.compiler.syntax.builders import const


def names_a_dtype(value: Any) -> bool:
    """Whether ``value`` is a dtype, its name, or a number type (``float``, ``np.int64``)."""
    return isinstance(value, np.dtype | str) or isinstance(value, type) and issubclass(
        value, float | int | bool | np.generic)


def dtype_name(value: Any) -> str:
    """NumPy's name of the dtype ``value`` names; ValueError (problem, what to do) for one
    that is no dtype or is not real."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        raise ValueError(f"{value!r} is not a dtype", "name a float, int or bool dtype") \
            from None
    if dtype.kind not in "biuf":
        raise ValueError(f"the dtype {dtype.name} is not supported: s2s_ad differentiates "
                         "real values only", "use a float, int or bool dtype")
    return dtype.name


def scalar_type(name: str) -> Any:
    """The scalar type a dtype string names (``"float64"`` -> ``np.float64``), or None."""
    try:
        return np.dtype(name).type
    except TypeError:
        return None


def dtype_argument(norm: Any, node: gast.expr) -> gast.expr:
    """A ``dtype=`` argument as NumPy's name of the dtype, for the expression normalizer
    ``norm`` (an atom of it when it names no dtype)."""
    try:
        value = node.value if isinstance(node, gast.Constant) else norm.resolve(node)
    except KeyError:
        return norm.atom(node)
    try:
        return gast.copy_location(const(dtype_name(value)), node) \
            if names_a_dtype(value) else norm.atom(node)
    except ValueError as exc:
        raise norm.error(node, *exc.args) from None
