"""What generated code imports at run time, by topic: ``from s2s_ad import runtime as rt``.

Every helper here runs both from Python and inside Numba-compiled code, with
the same results.  May import NumPy and Numba only: no compiler, no rules.
"""

from .arrays import *  # noqa: F403  (the helpers generated code calls as rt.<name>)
from .indexing import *  # noqa: F403
from .scalar import *  # noqa: F403
