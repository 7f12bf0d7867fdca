"""Window geometry shared by the NumPy and Numba kernels: output sizes and padding.

Padding follows TensorFlow: ``"valid"`` uses no padding; ``"same"`` gives
``ceil(size / stride)`` outputs and pads ``max((out - 1) * stride + window -
size, 0)`` in total, the smaller half before.

>>> window_geometry(5, 3, 2, "same")   # (outputs, padding before, padding after)
(3, 1, 1)
>>> window_geometry(5, 3, 2, "valid")
(2, 0, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

PADDINGS = ("valid", "same")


def window_geometry(size: int, window: int, stride: int, padding: str) -> tuple[int, int, int]:
    """(outputs, padding before, padding after) along one axis."""
    if padding == "same":
        out = (size + stride - 1) // stride
        total = max((out - 1) * stride + window - size, 0)
        return out, total // 2, total - total // 2
    return (size - window) // stride + 1, 0, 0


window_geometry_compiled = numba.njit(cache=True)(window_geometry)


def check_pair(kernel: str, name: str, value: Any) -> tuple[int, int]:
    """``value`` as a pair of positive ints, or a ValueError naming ``kernel`` and ``name``."""
    if not (isinstance(value, Sequence) and len(value) == 2
            and all(isinstance(v, int | np.integer) and v > 0 for v in value)):
        raise ValueError(f"{kernel}: {name} must be a tuple of two positive ints, got {value!r}")
    return int(value[0]), int(value[1])


def check_padding(kernel: str, padding: Any) -> str:
    """``padding`` if it is "valid" or "same", else a ValueError naming ``kernel``."""
    if padding not in PADDINGS:
        raise ValueError(f"{kernel}: padding must be 'valid' or 'same', got {padding!r}")
    return padding


def check_array(kernel: str, name: str, value: Any, ndim: int) -> np.ndarray:
    """``value`` as an array of ``ndim`` dimensions, or a ValueError naming it."""
    array = np.asarray(value)
    if array.ndim != ndim:
        raise ValueError(f"{kernel}: {name} must have {ndim} dimensions, got shape "
                         f"{array.shape}")
    return array


def check_windows(kernel: str, x_shape: tuple, window: tuple[int, int], strides: tuple[int, int],
                  padding: str) -> list[tuple[int, int, int]]:
    """The geometry of both spatial axes of an NHWC input, or a ValueError when a
    "valid" window is larger than the input."""
    geometry = [window_geometry(x_shape[1 + a], window[a], strides[a], padding) for a in (0, 1)]
    if any(g[0] < 1 for g in geometry):
        raise ValueError(f"{kernel}: a {window[0]}x{window[1]} window does not fit in an input "
                         f"of {x_shape[1]}x{x_shape[2]} with padding {padding!r}")
    return geometry
