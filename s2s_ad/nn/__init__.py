"""Neural-network layers, losses and optimisers built on s2s_ad's public API.

Models are frozen dataclasses of layers; gradients are taken with respect to
the whole model (a structure of the same class holding the cotangents).

>>> import numpy as np
>>> import s2s_ad as ad
>>> from s2s_ad import nn
>>> model = nn.Dense.init(2, 1, seed=0, dtype=np.float64)
>>> x, y = np.ones((4, 2)), np.zeros((4, 1))
>>> grad = ad.gradient(lambda m: nn.mean_squared_error(m(x), y))(model)
>>> model = nn.SGD(model, learning_rate=0.1).update(model, along=grad)
"""

from .convolution import Conv2D, MaxPool2D
from .functional import identity, mean_squared_error, relu, sigmoid, softmax_cross_entropy, tanh
from .initializers import glorot_uniform
from .layers import (
    ActivationDiscarding,
    Dense,
    Flatten,
    Layer,
    applied_for_backpropagation,
    has_parameters,
    sequenced,
)
from .optimizers import SGD, Adam

__all__ = [
    "SGD",
    "ActivationDiscarding",
    "Adam",
    "Conv2D",
    "Dense",
    "Flatten",
    "Layer",
    "MaxPool2D",
    "applied_for_backpropagation",
    "glorot_uniform",
    "has_parameters",
    "identity",
    "mean_squared_error",
    "relu",
    "sequenced",
    "sigmoid",
    "softmax_cross_entropy",
    "tanh",
]
