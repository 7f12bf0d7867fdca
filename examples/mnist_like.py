"""A small CNN learns to read 8x8 handwritten digits.

Data: scikit-learn's digits (1,797 images of 8x8 pixels; ``pip install
s2s_ad[examples]``) when it imports, else a synthetic digits-like set made
here (ten random stroke prototypes, shifted by a pixel and noised).  The model
is Conv2D 3x3x1x8 ('same', relu), MaxPool2D 2x2, Flatten, Dense 128 -> 10,
trained with Adam on mini-batches of 32; one line per epoch.  It reaches 95.8%
test accuracy on scikit-learn's digits in 4 epochs (99-100% on the synthetic
set), in about 10 s with a cold compile cache and 2 s after.
Run it with ``python examples/mnist_like.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

import s2s_ad as ad
from s2s_ad import nn


@dataclass(frozen=True)
class DigitNet(nn.Layer):
    conv: nn.Conv2D
    pool: nn.MaxPool2D
    flatten: nn.Flatten
    dense: nn.Dense

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.dense(self.flatten(self.pool(self.conv(x))))


def loss(model: DigitNet, images: np.ndarray, labels: np.ndarray) -> np.floating:
    return nn.softmax_cross_entropy(model(images), labels)


def synthetic_digits(count: int = 1800, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``count`` 8x8 images in ten classes: a random stroke pattern per class,
    shifted by up to one pixel and noised; values in [0, 16] like sklearn's."""
    rng = np.random.default_rng(seed)
    prototypes = (rng.random((10, 10, 10)) < 0.3) * 16.0
    labels = rng.integers(0, 10, size=count)
    shifts = rng.integers(0, 3, size=(count, 2))
    images = np.stack([prototypes[k, r:r + 8, c:c + 8] for k, (r, c) in zip(labels, shifts,
                                                                                strict=True)])
    images = np.clip(images + rng.normal(0.0, 3.0, images.shape), 0.0, 16.0)
    return images, labels


def load_digits() -> tuple[np.ndarray, np.ndarray, str]:
    """Images ``[n, 8, 8]`` in [0, 16], integer labels, and where they came from."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        return (*synthetic_digits(), "synthetic digits (scikit-learn is not installed)")
    digits = sklearn_digits()
    return digits.images, digits.target, "scikit-learn's 8x8 digits"


def accuracy(model: DigitNet, images: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(np.argmax(model(images), axis=1) == labels))


def main(epochs: int = 4, batch: int = 32, seed: int = 0) -> float:
    images, labels, origin = load_digits()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels))
    x = (images[order] / 16.0).astype(np.float32)[..., None]  # NHWC, one channel
    y = labels[order]
    split = len(y) * 4 // 5
    x_train, y_train, x_test, y_test = x[:split], y[:split], x[split:], y[split:]
    print(f"{origin}: {split} training and {len(y) - split} test images")
    model = DigitNet(nn.Conv2D.init((3, 3, 1, 8), padding="same", activation=nn.relu, seed=seed),
                     nn.MaxPool2D(), nn.Flatten(), nn.Dense.init(128, 10, seed=seed + 1))
    optimizer = nn.Adam(model, learning_rate=0.01)
    step_of = ad.value_and_gradient(loss, wrt=("model",))
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        shuffled = rng.permutation(split)
        losses = []
        for first in range(0, split - batch + 1, batch):
            chosen = shuffled[first:first + batch]
            value, grad = step_of(model, x_train[chosen], y_train[chosen])
            model = optimizer.update(model, along=grad)
            losses.append(float(value))
        test_accuracy = accuracy(model, x_test, y_test)
        print(f"epoch {epoch}: mean training loss {np.mean(losses):.4f}, "
              f"test accuracy {test_accuracy:.1%} ({time.perf_counter() - start:.1f} s)")
    return test_accuracy


if __name__ == "__main__":
    main()
