"""What the compiler knows of a ``run_kernel(name, *inputs, **attrs)`` call before
the reverse pass: the kernel's name and the kind of its result.

>>> import gast
>>> from s2s_ad.kinds import ArrayKind
>>> call = gast.parse("run_kernel('conv2d', x, w)", mode="eval").body
>>> kernel_name(call), kernel_result_kind(call, [ArrayKind(4), ArrayKind(4)])
('conv2d', float array4)
"""

from __future__ import annotations

import gast

from s2s_ad.kernels.registry import output_ndim
from s2s_ad.kinds import ArrayKind, Kind


def kernel_name(call: gast.Call) -> str | None:
    """The kernel a ``run_kernel`` call names, when it is a constant string."""
    first = call.args[0] if call.args else None
    if isinstance(first, gast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def kernel_result_kind(call: gast.Call, input_kinds: list[Kind | None]) -> Kind | None:
    """The kind of the call's result: a float array of the kernel's declared
    ``output_ndim`` (a float for 0), or, undeclared, the kind of its first input."""
    name = kernel_name(call)
    ndim = None if name is None else output_ndim(name)
    if ndim is None:
        return input_kinds[0] if input_kinds else "unknown"
    return "float" if ndim == 0 else ArrayKind(ndim)
