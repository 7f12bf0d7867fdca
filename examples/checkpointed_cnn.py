"""Checkpointing a convolution, as in Swift's differentiable-programming tutorial.

The model is Conv2D (5x5 filter, 3 -> 6 channels) wrapped with
``discarding_activations()``, MaxPool2D 2x2, Flatten and Dense 216 -> 10.  The
wrapped convolution keeps none of its activations for the pullback: it runs
again during backpropagation, so "Applying Conv2D layer..." is printed twice
per training step, once by the forward run and once by backpropagation.
Trained 5 steps of SGD on random ``[10, 16, 16, 3]`` images with integer
labels and ``softmax_cross_entropy``.  Run it with
``python examples/checkpointed_cnn.py``.
"""

from dataclasses import dataclass

import numpy as np

import s2s_ad as ad
from s2s_ad import nn


@dataclass(frozen=True)
class AnnouncedConv2D(nn.Conv2D):
    """A Conv2D that says when it runs."""

    def __call__(self, x: np.ndarray) -> np.ndarray:
        print("Applying Conv2D layer...")
        return nn.Conv2D.__call__(self, x)


@dataclass(frozen=True)
class Model(nn.Layer):
    conv: nn.Layer
    pool: nn.MaxPool2D
    flatten: nn.Flatten
    dense: nn.Dense

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.dense(self.flatten(self.pool(self.conv(x))))


def loss(model: Model, images: np.ndarray, labels: np.ndarray) -> np.floating:
    return nn.softmax_cross_entropy(model(images), labels)


def make_model(seed: int = 0) -> Model:
    conv = AnnouncedConv2D.init(filter_shape=(5, 5, 3, 6), seed=seed)
    return Model(conv.discarding_activations(), nn.MaxPool2D(pool_size=(2, 2), strides=(2, 2)),
                 nn.Flatten(), nn.Dense.init(6 * 6 * 6, 10, seed=seed + 1))


def main() -> list[float]:
    rng = np.random.default_rng(0)
    images = rng.standard_normal((10, 16, 16, 3)).astype(np.float32)
    labels = rng.integers(0, 10, size=10)
    model = make_model()
    optimizer = nn.SGD(model, learning_rate=0.1)
    step_of = ad.value_and_gradient(loss, wrt=("model",))
    losses = []
    for step in range(1, 6):
        print(f"Step {step}")
        value, grad = step_of(model, images, labels)
        print(f"Loss: {float(value):.6f}")
        losses.append(float(value))
        model = optimizer.update(model, along=grad)
    return losses


if __name__ == "__main__":
    main()
