"""Activations and losses: plain NumPy functions that s2s_ad differentiates.

Each is written in the subset of Python the compiler reads, so it can be used
inside any differentiated function or layer and runs on both paths.

>>> import numpy as np
>>> relu(np.array([-1.0, 2.0]))
array([0., 2.])
>>> float(mean_squared_error(np.array([1.0, 2.0]), np.array([1.0, 4.0])))
2.0
"""

from __future__ import annotations

import numpy as np

import s2s_ad as ad


def identity(x: np.ndarray) -> np.ndarray:
    """``x`` itself: the default activation of a layer.

    >>> identity(2.0)
    2.0
    """
    return x


def relu(x: np.ndarray) -> np.ndarray:
    """``max(x, 0)`` element-wise (its derivative at 0 is taken to be 0).

    >>> relu(np.array([-1.0, 0.5]))
    array([0. , 0.5])
    """
    return np.maximum(x, 0.0)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-x))`` element-wise.

    >>> float(sigmoid(np.array([0.0]))[0])
    0.5
    """
    return 1.0 / (1.0 + np.exp(-x))


def tanh(x: np.ndarray) -> np.ndarray:
    """The hyperbolic tangent element-wise.

    >>> float(tanh(np.array([0.0]))[0])
    0.0
    """
    return np.tanh(x)


def softmax_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> np.floating:
    """The mean over the batch of ``-log softmax(logits)[label]``.

    ``logits`` is ``[batch, classes]`` and ``labels`` holds integer class
    indices ``[batch]``.  The row maxima are subtracted first (for stability);
    they cancel in the result, so cutting their derivative is exact.

    >>> logits = np.array([[0.0, 0.0], [0.0, 0.0]])
    >>> round(float(softmax_cross_entropy(logits, np.array([0, 1]))), 6)
    0.693147
    """
    batch = logits.shape[0]
    classes = logits.shape[1]
    shifted = logits - ad.without_derivative(np.max(logits, axis=1, keepdims=True))
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    picked = np.take(np.ravel(log_probs), np.arange(batch) * classes + labels)
    return -np.mean(picked)


def mean_squared_error(predicted: np.ndarray, expected: np.ndarray) -> np.floating:
    """The mean of ``(predicted - expected) ** 2`` over every entry.

    >>> float(mean_squared_error(np.array([0.0, 1.0]), np.array([1.0, 1.0])))
    0.5
    """
    error = predicted - expected
    return np.mean(error * error)
