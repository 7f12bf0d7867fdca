"""The anf stage (normalize): structured control flow, then A-normal form.

``control`` turns early returns, break and continue into flags; ``statements``
and ``expressions`` flatten the body into one operation per statement.

>>> import math
>>> import s2s_ad as ad
>>> def f(x, y):
...     return math.sin(x) * y
>>> print(ad.source(f, 1.0, 2.0, stage="anf"))
def f(x, y):
    # line 2: return math.sin(x) * y
    sin_x = math.sin(x)
    result = sin_x * y
    return result
"""

from s2s_ad.compiler.normalize.statements import NormalFunction, normalize
from s2s_ad.compiler.normalize.versions import split_versions

__all__ = ["NormalFunction", "normalize", "split_versions"]
