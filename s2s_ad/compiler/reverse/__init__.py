"""The forward, pullback and fused stages (reverse): ANF -> primal, forward, pullback
and fused value-and-gradient.

The forward function returns the value and the residuals the pullback reads;
the pullback runs the adjoint blocks in reverse order:

>>> import math
>>> import s2s_ad as ad
>>> def f(x, y):
...     return math.sin(x) * y
>>> print(ad.source(f, 1.0, 2.0, stage="forward"))
def f_forward(x, y):
    # line 2: return math.sin(x) * y
    sin_x = math.sin(x)
    result = sin_x * y
    return (result, (x, sin_x, y))
>>> print(ad.source(f, 1.0, 2.0, stage="pullback"))
def f_pullback(residuals, d_value):
    x, sin_x, y = residuals
    # cotangents start at zero
    d_sin_x = 0.0
    d_x = 0.0
    d_result = 0.0
    d_y = 0.0
    # the cotangent of the result seeds the pullback
    d_result += d_value
    # adjoint of line 2: return math.sin(x) * y
    d_sin_x += d_result * y
    d_y += d_result * sin_x
    d_x += d_sin_x * math.cos(x)
    return (d_x, d_y)

The parts: ``context`` (state shared by all, passed down), ``saving``
(residuals and tapes), ``arrays`` (item reads and writes, broadcasting back),
``calls`` (Python functions, custom derivatives, hooks), ``statements``
(assignments), ``parallel`` (``prange`` loops run in parallel), ``control`` (blocks,
branches, loops), ``assemble`` (the four functions).  Each imports only the parts listed before it.
"""

from s2s_ad.compiler.reverse.assemble import Generated, reverse

__all__ = ["Generated", "reverse"]
