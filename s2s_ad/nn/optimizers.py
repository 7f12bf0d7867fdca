"""Optimisers: ``update(model, along=gradient)`` returns the moved model.

Models are frozen dataclasses (or any differentiable structure); an optimiser
keeps its own state (velocities, moment estimates) as tangents shaped like
the model, and moves the model with ``ad.move``, which leaves fields marked
``ad.no_derivative`` untouched.

>>> import numpy as np
>>> params = {"w": np.array([1.0, 2.0])}
>>> SGD(params, learning_rate=0.5).update(params, along={"w": np.array([2.0, 2.0])})
{'w': array([0., 1.])}
"""

from __future__ import annotations

from typing import Any

import numpy as np

import s2s_ad as ad


class SGD:
    """Stochastic gradient descent with optional (heavy-ball) momentum:
    ``v = momentum * v - learning_rate * g``, ``model = model + v``.

    >>> opt = SGD(1.0, learning_rate=0.1, momentum=0.9)
    >>> x = opt.update(1.0, along=1.0)
    >>> float(round(opt.update(x, along=1.0), 6))
    0.71
    """

    def __init__(self, model: Any, learning_rate: float = 0.01, momentum: float = 0.0):
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.velocity = ad.zero_tangent(model)

    def update(self, model: Any, along: Any) -> Any:
        """The model moved one step against the gradient ``along``."""
        if self.momentum == 0.0:
            return ad.move(model, by=along, scale=-self.learning_rate)
        mu, lr = self.momentum, self.learning_rate
        self.velocity = ad.map_leaves(lambda v, g: mu * v - lr * g, self.velocity, along)
        return ad.move(model, by=self.velocity)


class Adam:
    """Adam (Kingma and Ba, 2015): steps of ``-lr * m_hat / (sqrt(v_hat) + epsilon)``
    from bias-corrected running means of the gradient and of its square.

    >>> opt = Adam(1.0, learning_rate=0.1)
    >>> float(round(opt.update(1.0, along=3.0), 6))
    0.9
    """

    def __init__(self, model: Any, learning_rate: float = 0.001, beta1: float = 0.9,
                 beta2: float = 0.999, epsilon: float = 1e-8):
        self.learning_rate = learning_rate
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.first = ad.zero_tangent(model)
        self.second = ad.zero_tangent(model)
        self.steps = 0

    def update(self, model: Any, along: Any) -> Any:
        """The model moved one Adam step for the gradient ``along``."""
        b1, b2, eps = self.beta1, self.beta2, self.epsilon
        self.steps += 1
        self.first = ad.map_leaves(lambda m, g: b1 * m + (1.0 - b1) * g, self.first, along)
        self.second = ad.map_leaves(lambda v, g: b2 * v + (1.0 - b2) * g * g, self.second, along)
        m_scale = 1.0 / (1.0 - b1 ** self.steps)
        v_scale = 1.0 / (1.0 - b2 ** self.steps)
        step = ad.map_leaves(lambda m, v: (m * m_scale) / (np.sqrt(v * v_scale) + eps),
                          self.first, self.second)
        return ad.move(model, by=step, scale=-self.learning_rate)
