"""Building differentiable functions and checkpointing (SPEC section 5).

``make_recomputed_in_gradient`` wraps a function so that its pullback runs it
again instead of keeping its intermediates; ``ad.recompute_in_pullback`` is
the built-in form, compiled by Numba.

    python examples/checkpointing.py
"""

import math

import numpy as np

import s2s_ad as ad


def make_recomputed_in_gradient(original):
    return ad.differentiable_function(
        lambda x: (original(x), lambda v: ad.pullback(original, x)(v)))


def square_body(x):
    print("  Computing square...")
    return x * x


square = make_recomputed_in_gradient(square_body)


@ad.recompute_in_pullback
def smooth_layer(x, w):
    print("  Applying the smooth layer...")
    return np.tanh(x * w)


def loss(x, w):
    return np.sum(smooth_layer(x, w) ** 2)


def main() -> None:
    print("Running original computation...")
    value, backprop = ad.value_with_pullback(lambda x: square(math.cos(x)), 10.0)
    print("Running backpropagation...")
    print("Gradient =", backprop(1.0))

    print("\nThe built-in form, compiled:")
    x, w = np.linspace(-1.0, 1.0, 5), 0.7
    value, grads = ad.value_and_gradient(loss)(x, w)
    print("loss =", round(value, 6), " d/dw =", round(grads[1], 6))
    print("path:", ad.explain(loss, x, w).path)


if __name__ == "__main__":
    main()
