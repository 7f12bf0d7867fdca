"""The built-in ops, and the registration of their kernels, gradients and tangents.

Each op is a thin function calling :data:`run_kernel`, so user code and
``s2s_ad.nn`` call ops, and differentiating an op's caller differentiates the
kernel with its registered gradient (its tangent, in forward mode).  A gradient is
itself a kernel (``conv2d_grad`` ...) with an implementation per backend, run through
a :class:`KernelOp`: NumPy code on the NumPy backend, compiled loops in compiled
code; so is the tangent of ``max_pool2d`` and ``softmax_cross_entropy``, while the
bilinear ``conv2d`` and ``matmul`` are their own tangents (``linear_in``).

>>> import numpy as np
>>> import s2s_ad as ad
>>> x = np.arange(8.0).reshape(1, 2, 2, 2)
>>> ad.gradient(lambda x: np.sum(max_pool2d(x, (2, 2), (2, 2))))(x)[0, :, :, 1]
array([[0., 0.],
       [0., 1.]])
"""

from __future__ import annotations

import numpy as np

from s2s_ad.kernels import numba_kernels, numpy_kernels
from s2s_ad.kernels.gradients import register_gradient
from s2s_ad.kernels.registry import KernelOp, register_kernel, run_kernel
from s2s_ad.kernels.tangents import register_tangent


def conv2d(x: np.ndarray, w: np.ndarray, strides: tuple[int, int] = (1, 1),
           padding: str = "valid") -> np.ndarray:
    """NHWC 2-d convolution: ``x`` [N, H, W, C], filter ``w`` [kh, kw, C, O].

    ``padding`` is "valid" or "same" (as TensorFlow); the output is
    [N, OH, OW, O].

    >>> conv2d(np.ones((1, 3, 3, 1)), np.ones((2, 2, 1, 1)), padding="same")[0, :, :, 0]
    array([[4., 4., 2.],
           [4., 4., 2.],
           [2., 2., 1.]])
    """
    return run_kernel("conv2d", x, w, strides=strides, padding=padding)


def max_pool2d(x: np.ndarray, pool_size: tuple[int, int] = (2, 2),
               strides: tuple[int, int] = (2, 2), padding: str = "valid") -> np.ndarray:
    """The maximum over each ``pool_size`` window of the NHWC ``x``.

    >>> max_pool2d(np.arange(16.0).reshape(1, 4, 4, 1))[0, :, :, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    return run_kernel("max_pool2d", x, pool_size=pool_size, strides=strides, padding=padding)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The product of the matrices ``a`` [M, K] and ``b`` [K, N].

    >>> matmul(np.eye(2), np.array([[1.0], [2.0]]))
    array([[1.],
           [2.]])
    """
    return run_kernel("matmul", a, b)


def softmax_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    """The mean cross-entropy of ``softmax(logits)`` [N, K] against integer ``labels`` [N].

    >>> round(float(softmax_cross_entropy(np.zeros((2, 4)), np.array([0, 3]))), 6)
    1.386294
    """
    return run_kernel("softmax_cross_entropy", logits, labels)


_BUILT_IN = {  # kernel name: (output ndim, input positions the gradient keeps)
    "conv2d": (4, (0, 1)),
    "max_pool2d": (4, (0,)),
    "matmul": (2, (0, 1)),
    "softmax_cross_entropy": (0, (0, 1)),
}
_LINEAR_IN = {"conv2d": (0, 1), "matmul": (0, 1)}  # bilinear: the kernel is its own tangent


def register_built_ins() -> None:
    """Register each built-in kernel, its gradient kernel, for both backends, and the
    gradient (a :class:`KernelOp` running the gradient kernel); and its tangent: bilinear
    kernels are linear in each input, the others have a tangent kernel per backend."""
    for name, (ndim, saved) in _BUILT_IN.items():
        grad_name = f"{name}_grad"
        for backend, module in (("numpy", numpy_kernels), ("numba", numba_kernels)):
            register_kernel(name, backend, getattr(module, name), output_ndim=ndim)
            register_kernel(grad_name, backend, getattr(module, grad_name))
            if name not in _LINEAR_IN:
                register_kernel(f"{name}_tangent", backend, getattr(module, f"{name}_tangent"),
                                output_ndim=ndim)
        register_gradient(name, KernelOp(grad_name), inputs_to_save=saved)
        if name in _LINEAR_IN:
            register_tangent(name, linear_in=_LINEAR_IN[name])
        else:
            register_tangent(name, KernelOp(f"{name}_tangent"))
