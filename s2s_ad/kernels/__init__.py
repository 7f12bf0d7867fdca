"""Ops, kernels and gradient registries, TensorFlow.js style (SPEC section 7).

An op is a function on arrays; a kernel is one backend's implementation of it,
registered per ``(kernel name, backend)``; a gradient is registered per kernel
name, and so is a tangent (forward mode); ``custom_grad`` bypasses the registries.
Built in: ``conv2d``, ``max_pool2d``, ``matmul`` and ``softmax_cross_entropy``, for
the "numpy" and "numba" backends, each with its gradient and tangent.

>>> sorted({name for name, _ in list_kernels()})[:2]
['conv2d', 'conv2d_grad']
"""

from s2s_ad.kernels.gradients import (
    CustomGradFunction,
    Gradient,
    custom_grad,
    gradient_of,
    kernel_table,
    list_gradients,
    register_gradient,
    unregister_gradient,
)
from s2s_ad.kernels.ops import (
    conv2d,
    matmul,
    max_pool2d,
    register_built_ins,
    softmax_cross_entropy,
)
from s2s_ad.kernels.registry import (
    BACKENDS,
    KernelOp,
    backend,
    get_backend,
    kernel_for,
    list_kernels,
    register_kernel,
    run_kernel,
    set_backend,
    unregister_kernel,
)
from s2s_ad.kernels.tangents import (
    Tangent,
    list_tangents,
    register_tangent,
    tangent_of,
    unregister_tangent,
)

register_built_ins()

__all__ = [
    "BACKENDS",
    "CustomGradFunction",
    "Gradient",
    "KernelOp",
    "Tangent",
    "backend",
    "conv2d",
    "custom_grad",
    "get_backend",
    "gradient_of",
    "kernel_for",
    "kernel_table",
    "list_gradients",
    "list_kernels",
    "list_tangents",
    "matmul",
    "max_pool2d",
    "register_gradient",
    "register_kernel",
    "register_tangent",
    "run_kernel",
    "set_backend",
    "softmax_cross_entropy",
    "tangent_of",
    "unregister_gradient",
    "unregister_kernel",
    "unregister_tangent",
]
