"""s2s_ad: source-to-source reverse-mode automatic differentiation, compiled by Numba.

>>> import math
>>> import s2s_ad as ad
>>> @ad.differentiable
... def f(x, y):
...     return math.sin(x) * y + x ** 2
>>> ad.gradient(f)(1.0, 2.0)
(3.0806046117362795, 0.8414709848078965)
"""

from .api import (
    DifferentiableFunction,
    deferred_errors,
    differentiable,
    gradient,
    pullback,
    value_and_gradient,
    value_with_pullback,
)
from .errors import (
    ArgumentError,
    IntegerArgumentWarning,
    JitError,
    NonDifferentiableError,
    ParallelLoopWarning,
    ZeroDerivativeWarning,
)
from .forward_mode import jacobian, jvp
from .higher_order import hessian, hvp
from .introspect import Diagnostic, Explanation, diagnose, explain, source
from .kernels import (
    backend,
    custom_grad,
    get_backend,
    list_gradients,
    list_kernels,
    list_tangents,
    register_gradient,
    register_kernel,
    register_tangent,
    run_kernel,
    set_backend,
    unregister_gradient,
    unregister_kernel,
    unregister_tangent,
)
from .markers import (
    derivative,
    differentiable_function,
    recompute_in_pullback,
    with_derivative,
    without_derivative,
)
from .runtime.threads import prange
from .structures import map_leaves, move, no_derivative, zero_tangent

__all__ = [
    "ArgumentError",
    "Diagnostic",
    "DifferentiableFunction",
    "Explanation",
    "JitError",
    "NonDifferentiableError",
    "ZeroDerivativeWarning",
    "IntegerArgumentWarning",
    "ParallelLoopWarning",
    "deferred_errors",
    "derivative",
    "diagnose",
    "differentiable",
    "differentiable_function",
    "explain",
    "gradient",
    "hessian",
    "hvp",
    "jacobian",
    "jvp",
    "map_leaves",
    "move",
    "no_derivative",
    "prange",
    "pullback",
    "recompute_in_pullback",
    "source",
    "value_and_gradient",
    "value_with_pullback",
    "backend",
    "custom_grad",
    "get_backend",
    "list_gradients",
    "list_kernels",
    "list_tangents",
    "register_gradient",
    "register_kernel",
    "register_tangent",
    "run_kernel",
    "set_backend",
    "unregister_gradient",
    "unregister_kernel",
    "unregister_tangent",
    "with_derivative",
    "without_derivative",
    "zero_tangent",
]
