"""Layers: differentiable structures (frozen dataclasses) with ``__call__``.

A layer's array fields are its parameters; its configuration (activation,
strides, padding, sizes) lives in fields marked ``ad.no_derivative``, which are
fixed in the generated code.  Layers are *frozen*: training never changes a
layer in place; an optimiser's ``update`` returns a new model, and
``dataclasses.replace`` makes a modified copy.

>>> import numpy as np
>>> layer = Dense.init(3, 2, seed=0, dtype=np.float64)
>>> layer(np.ones((4, 3))).shape
(4, 2)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import s2s_ad as ad

from .functional import identity
from .initializers import Seed, generator, glorot_uniform


class Layer:
    """The base of layers: subclasses are dataclasses defining ``__call__(self, x)``.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Scale(Layer):
    ...     factor: float
    ...     def __call__(self, x):
    ...         return self.factor * x
    >>> Scale(2.0)(3.0)
    6.0
    """

    def discarding_activations(self) -> ActivationDiscarding:
        """This layer wrapped so that its activations are recomputed in the pullback
        instead of kept (Swift's ``discardingActivations``): less memory, more time.

        >>> Flatten().discarding_activations()
        ActivationDiscarding(layer=Flatten())
        """
        return ActivationDiscarding(self)


@ad.recompute_in_pullback
def _recomputed_call(layer: Layer, x: np.ndarray) -> np.ndarray:
    return layer(x)


@dataclass(frozen=True)
class ActivationDiscarding(Layer):
    """A layer whose call keeps none of the wrapped layer's intermediates: the
    pullback runs the wrapped layer's forward again (``ad.recompute_in_pullback``).
    """

    layer: Layer

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return _recomputed_call(self.layer, x)


@dataclass(frozen=True)
class Dense(Layer):
    """``activation(x @ weight + bias)``: a fully connected layer on ``[batch, in]``.

    >>> layer = Dense(np.eye(2), np.zeros(2))
    >>> layer(np.array([[1.0, -2.0]]))
    array([[ 1., -2.]])
    """

    weight: np.ndarray
    bias: np.ndarray
    activation: Callable = ad.no_derivative(default=identity)

    @classmethod
    def init(cls, inputs: int, outputs: int, activation: Callable = identity,
             seed: Seed = 0, dtype: Any = np.float32) -> Dense:
        """A layer of ``inputs -> outputs`` units: Glorot-uniform weights, zero bias.

        >>> Dense.init(4, 3, seed=1).weight.shape
        (4, 3)
        """
        weight = glorot_uniform((inputs, outputs), inputs, outputs, generator(seed), dtype)
        return cls(weight, np.zeros(outputs, dtype=dtype), activation)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.activation(x @ self.weight + self.bias)


@dataclass(frozen=True)
class Flatten(Layer):
    """``[batch, ...] -> [batch, features]``.

    >>> Flatten()(np.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.reshape(x, (x.shape[0], -1))


def sequenced(x: Any, *layers: Callable) -> Any:
    """``x`` passed through ``layers`` in order: ``sequenced(x, f, g) == g(f(x))``.

    Not yet usable inside a differentiated function (the compiler refuses
    ``*layers`` and calling items of a tuple): there, call the layers in turn,
    ``self.dense(self.flatten(self.conv(x)))``.

    >>> sequenced(2.0, lambda v: v + 1.0, lambda v: 3.0 * v)
    9.0
    """
    for layer in layers:
        x = layer(x)
    return x


def has_parameters(model: Any) -> bool:
    """Whether ``model`` holds a float leaf that is differentiated (a parameter).

    >>> has_parameters(Flatten()), has_parameters(Dense(np.eye(2), np.zeros(2)))
    (False, True)
    """
    found = []
    ad.map_leaves(lambda leaf: found.append(leaf) or leaf, model)
    return bool(found)


def _applied(model: Layer, x: np.ndarray) -> np.ndarray:
    return model(x)


_APPLIED = ad.differentiable(_applied, wrt=("model", "x"))
_APPLIED_TO_INPUT = ad.differentiable(_applied, wrt=("x",))


def applied_for_backpropagation(model: Layer, x: np.ndarray
                                ) -> tuple[np.ndarray, Callable[[np.ndarray], tuple]]:
    """``(model(x), backprop)``, where ``backprop(d_output)`` returns
    ``(d_model, d_input)``: the cotangents of the model (a structure like it;
    a zero tangent for a model without parameters) and of the (float) input.

    >>> layer = Dense(np.eye(2), np.zeros(2))
    >>> out, backprop = applied_for_backpropagation(layer, np.ones((1, 2)))
    >>> d_layer, d_x = backprop(np.ones((1, 2)))
    >>> d_layer.bias, d_x
    (array([1., 1.]), array([[1., 1.]]))
    """
    if has_parameters(model):
        return ad.value_with_pullback(_APPLIED, model, x)
    out, pullback = ad.value_with_pullback(_APPLIED_TO_INPUT, model, x)
    return out, lambda d_output: (ad.zero_tangent(model), pullback(d_output))
