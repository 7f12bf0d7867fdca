"""A fix of Numba's array-expression parameter names, applied when the jit stage loads.

Numba fuses an array expression (``a + b * c`` on arrays) into a kernel whose parameter
names it makes from the variables' names, with ``.`` and ``$`` replaced by ``_``; it
only asserts that the results differ. A variable bound twice (SSA names ``d``,
``d.1``) beside one named ``d_1`` gives the same parameter name twice, and Numba
(0.68) stops with ``AssertionError: 'd_1_1' not unique``: plain ``numba.njit`` code
such as ``d = np.zeros(2); d = d + x; d_1 = x[:2]; return d_1 + d`` does not compile.
Generated code names its temporaries ``mul``, ``mul_1``..., so it meets this often.
``unique_parameter_names`` makes the names unique instead; the fix replaces Numba's
function only where it still has the form it fixes.

>>> import numba, numpy as np
>>> install()
>>> @numba.njit
... def spread(x):
...     d = np.zeros(2)
...     d = d + x
...     d_1 = x[:2]
...     return d_1 + d
>>> spread(np.ones(2))
array([2., 2.])
"""

from __future__ import annotations

import contextlib
import inspect
from collections import OrderedDict

from numba.np.ufunc import array_exprs


def _legal(name: str) -> str:
    return name.replace("$", "_").replace(".", "_")


@contextlib.contextmanager
def unique_parameter_names(var_list):
    """Numba's ``_legalize_parameter_names``, with the names made unique: a name taken
    already is redefined in the variable's scope until its legal form is new."""
    var_map = OrderedDict()
    for var in var_list:
        old_name = var.name
        new_name = _legal(var.scope.redefine(old_name, loc=var.loc).name)
        while new_name in var_map:
            new_name = _legal(var.scope.redefine(new_name, loc=var.loc).name)
        var_map[new_name] = var, old_name
        var.name = new_name
    try:
        yield list(var_map)
    finally:
        for var, old_name in var_map.values():
            var.name = old_name


def install() -> None:
    """Use ``unique_parameter_names`` in Numba's array expressions (once; only if
    Numba's function is the one with the assertion)."""
    current = getattr(array_exprs, "_legalize_parameter_names", None)
    if current is None or current is unique_parameter_names:
        return
    try:
        source = inspect.getsource(current)
    except (OSError, TypeError):  # no source to read: leave Numba as it is
        return
    if "not unique" in source:
        array_exprs._legalize_parameter_names = unique_parameter_names
