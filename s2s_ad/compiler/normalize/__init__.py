"""Stage 2, normalize: structured control flow, then A-normal form.

``control`` turns early returns, break and continue into flags; ``statements``
and ``expressions`` flatten the body into one operation per statement.
"""

from s2s_ad.compiler.normalize.statements import NormalFunction, normalize

__all__ = ["NormalFunction", "normalize"]
