"""What :func:`s2s_ad.gradient` returns: a gradient function that can be differentiated
again, by forward mode over its generated code (:mod:`s2s_ad.higher_order`), and
called inside differentiated code (:mod:`s2s_ad.compiler.gradient_calls`).

>>> import s2s_ad as ad
>>> def cube(x):
...     return x ** 3
>>> ad.gradient(cube)
<the gradient of cube>
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar

from .compiler.gradient_calls import forward_derivative
from .compiler.pipeline import Transform
from .compiler.transforms import parsed_function
from .errors import NonDifferentiableError
from .markers import source_function


class GradientOf(functools.partial):
    """What :func:`gradient` returns: the gradient function of ``df``, which
    :func:`~s2s_ad.jvp`, :func:`gradient` and :func:`~s2s_ad.jacobian` differentiate
    again (forward mode over its generated code, :mod:`s2s_ad.higher_order`, which
    sets ``differentiated``, ``jvp_of`` and ``jacobian_of``: its gradient, its jvp and
    its Jacobian, the Hessian of ``df``).  A partial object: calling it adds no
    Python frame (warnings name the caller's line)."""

    differentiated: ClassVar[Callable]
    jvp_of: ClassVar[Callable]
    jacobian_of: ClassVar[Callable]

    def __new__(cls, df: Any, call: Callable) -> GradientOf:  # df: a DifferentiableFunction
        made = super().__new__(cls, call)
        made.df = df
        made.__name__ = f"gradient_of_{df.__name__}"
        made.__s2s_ad_derivative__ = (
            f"'{made.__name__}' (ad.gradient of {df.__name__}) is differentiated again by "
            "ad.jvp and ad.gradient only, for now",
            f"ad.hessian({df.__name__}) gives the Jacobian of its gradient, ad.hvp its "
            "products")
        return made

    def __repr__(self) -> str:
        return f"<the gradient of {self.df.__name__}>"

    def __s2s_ad_callee__(self, kinds: list) -> tuple[Callable, Transform]:
        """Called inside differentiated code with arguments of ``kinds``: the generated
        function the caller differentiates in its place (forward mode for the inner
        derivative), and the transform it was made from.  One number parameter only."""
        params = parsed_function(source_function(self.df.fn)).params
        positions = ([params.index(w) for w in self.df.wrt] if self.df.wrt is not None
                     else [i for i, k in enumerate(kinds) if k == "float"])
        if len(positions) != 1:
            raise NonDifferentiableError(
                f"calling the gradient of '{self.df.__name__}' inside differentiated code "
                "needs one differentiated number parameter (a number result), for now",
                None, "name it: ad.gradient(f, wrt=\"y\")")
        return forward_derivative(source_function(self.df.fn), positions[0], kinds)
