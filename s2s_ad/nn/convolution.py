"""Convolution and pooling layers on NHWC input ``[batch, height, width, channels]``.

They call the ops of :mod:`s2s_ad.kernels` (``conv2d``, ``max_pool2d``), whose
registered gradients make them differentiable on both paths.  Padding is
"valid" or "same", as in TensorFlow.

>>> import numpy as np
>>> conv = Conv2D.init(filter_shape=(3, 3, 1, 2), padding="same", seed=0, dtype=np.float64)
>>> conv(np.ones((1, 4, 4, 1))).shape
(1, 4, 4, 2)
>>> MaxPool2D()(np.ones((1, 4, 4, 2))).shape
(1, 2, 2, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import s2s_ad as ad
from s2s_ad import kernels

from .functional import identity
from .initializers import Seed, generator, glorot_uniform
from .layers import Layer


@dataclass(frozen=True)
class Conv2D(Layer):
    """``activation(conv2d(x, filter) + bias)`` with a ``[h, w, in, out]`` filter.

    >>> layer = Conv2D(np.ones((1, 1, 1, 1)), np.zeros(1), strides=(2, 2))
    >>> layer(np.ones((1, 4, 4, 1))).shape
    (1, 2, 2, 1)
    """

    filter: np.ndarray
    bias: np.ndarray
    strides: tuple[int, int] = ad.no_derivative(default=(1, 1))
    padding: str = ad.no_derivative(default="valid")
    activation: Callable = ad.no_derivative(default=identity)

    @classmethod
    def init(cls, filter_shape: tuple[int, int, int, int], strides: tuple[int, int] = (1, 1),
             padding: str = "valid", activation: Callable = identity, seed: Seed = 0,
             dtype: Any = np.float32) -> Conv2D:
        """A layer with a Glorot-uniform filter of ``filter_shape`` and a zero bias.

        >>> Conv2D.init((5, 5, 3, 6)).filter.shape
        (5, 5, 3, 6)
        """
        height, width, inputs, outputs = filter_shape
        area = height * width
        weights = glorot_uniform(filter_shape, area * inputs, area * outputs,
                                 generator(seed), dtype)
        return cls(weights, np.zeros(outputs, dtype=dtype), tuple(strides), padding, activation)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        convolved = kernels.conv2d(x, self.filter, strides=self.strides, padding=self.padding)
        return self.activation(convolved + self.bias)


@dataclass(frozen=True)
class MaxPool2D(Layer):
    """The maximum over ``pool_size`` windows moved by ``strides``; no parameters.

    >>> MaxPool2D(pool_size=(2, 2), strides=(1, 1))(np.ones((1, 3, 3, 1))).shape
    (1, 2, 2, 1)
    """

    pool_size: tuple[int, int] = ad.no_derivative(default=(2, 2))
    strides: tuple[int, int] = ad.no_derivative(default=(2, 2))
    padding: str = ad.no_derivative(default="valid")

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return kernels.max_pool2d(x, self.pool_size, self.strides, self.padding)
