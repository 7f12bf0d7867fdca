"""Float literals as NumPy 2 combines them with arrays, for compiled code.

NumPy 2 treats a Python float as *weak*: ``x32 * 2.0`` and ``np.maximum(x32, 0.0)``
stay float32 for a float32 array ``x32``.  Numba types the literal as float64 and
promotes the result to float64, so a float32 model's activations turn float64
after ``relu`` and the next ``x @ weight`` mixes dtypes, which Numba refuses.
Generated modules loaded for Numba therefore have each float literal that meets
an operand in an arithmetic operation wrapped in :func:`weak` (see
``s2s_ad.compiler.weak_floats``), which gives it the float dtype of that
operand: float32 next to float32 arrays and scalars, unchanged otherwise.

>>> import numba, numpy as np
>>> @numba.njit
... def scaled(x):
...     return x * weak(2.0, x)
>>> scaled(np.ones(2, dtype=np.float32)).dtype, scaled(np.ones(2)).dtype
(dtype('float32'), dtype('float64'))
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import overload

__all__: list[str] = []


def weak(value: float, like: Any) -> Any:
    """The literal ``value`` as it combines with ``like`` (in Python: itself, already
    weak under NumPy 2's rules)."""
    return value


@overload(weak)
def _weak(value, like):
    dtype = like.dtype if isinstance(like, types.Array) else like
    if dtype == types.float32:
        return lambda value, like: np.float32(value)
    return lambda value, like: value
