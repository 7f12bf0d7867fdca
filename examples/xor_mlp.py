"""The XOR classifier of Swift's differentiable-programming tutorial.

Two Dense layers trained 10 steps of SGD; each step prints the loss and, from
``ad.with_derivative`` hooks that run during backpropagation, the cotangents
``dL/dy_hat`` (of the model's output) and ``dL/dlayer1`` (of the hidden layer's
output).  Run it with ``python examples/xor_mlp.py``.
"""

from dataclasses import dataclass

import numpy as np

import s2s_ad as ad
from s2s_ad import nn


def show_layer1(d: np.ndarray) -> None:
    print("dL/dlayer1 =", np.array2string(d, precision=4, max_line_width=120))


def show_y_hat(d: np.ndarray) -> None:
    print("dL/dy_hat =", np.array2string(d.ravel(), precision=4))


@dataclass(frozen=True)
class Model(nn.Layer):
    layer1: nn.Dense
    layer2: nn.Dense

    def __call__(self, x: np.ndarray) -> np.ndarray:
        h1 = ad.with_derivative(self.layer1(x), lambda d: show_layer1(d))
        return self.layer2(h1)


def loss(model: Model, x: np.ndarray, y: np.ndarray) -> np.floating:
    y_hat = ad.with_derivative(model(x), lambda d: show_y_hat(d))
    return nn.mean_squared_error(y_hat, y)


def main() -> list[float]:
    model = Model(nn.Dense.init(2, 10, activation=nn.relu, seed=11),
                  nn.Dense.init(10, 1, activation=nn.relu, seed=12))
    optimizer = nn.SGD(model, learning_rate=0.02)
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float32)
    y = np.array([[0], [1], [1], [0]], dtype=np.float32)
    losses = []
    differentiable_loss = ad.differentiable(loss, wrt=("model",))
    for step in range(1, 11):
        value, backprop = ad.value_with_pullback(differentiable_loss, model, x, y)
        print(f"step {step}: loss = {float(value):.6f}")
        losses.append(float(value))
        model = optimizer.update(model, along=backprop(np.float32(1.0)))
    return losses


if __name__ == "__main__":
    main()
