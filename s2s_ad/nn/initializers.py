"""Seeded parameter initialisation.

>>> w = glorot_uniform((2, 3), fan_in=2, fan_out=3, seed=0, dtype=np.float32)
>>> w.shape, w.dtype, bool(np.all(np.abs(w) <= np.sqrt(6.0 / 5.0)))
((2, 3), dtype('float32'), True)
"""

from __future__ import annotations

import numpy as np

Seed = int | np.random.Generator


def generator(seed: Seed) -> np.random.Generator:
    """A NumPy generator from an integer seed (or the generator itself, passed on).

    >>> bool(generator(0).integers(10) == generator(0).integers(10))
    True
    """
    return np.random.default_rng(seed)


def glorot_uniform(shape: tuple[int, ...], fan_in: int, fan_out: int, seed: Seed = 0,
                   dtype: np.dtype | type = np.float32) -> np.ndarray:
    """An array of ``shape`` drawn uniformly from ``[-l, l]``, ``l = sqrt(6 / (fan_in + fan_out))``
    (Glorot and Bengio, 2010), in ``dtype``.

    >>> glorot_uniform((4,), 1, 1, seed=1, dtype=np.float64).dtype
    dtype('float64')
    """
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return generator(seed).uniform(-limit, limit, size=shape).astype(dtype)
