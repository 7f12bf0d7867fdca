"""Functions with known findings for `s2s-ad check`.

A comment `# expect: SEVERITY at 'TEXT': FRAGMENT` marks each finding: it is
reported on that line, at the column where TEXT starts, and its message
contains FRAGMENT.
"""

import math

import s2s_ad as ad


@ad.differentiable
def unused(x, y):  # expect: warning at 'y)': parameter 'y'
    return x * 2.0


@ad.differentiable
def rounded(x, y):
    return x + round(y)  # expect: warning at 'round': 'round'


@ad.differentiable
def truncated(x, n):
    return x * 3.0 + int(n)  # expect: warning at 'int': 'int'


@ad.differentiable
def floored(x, n):
    return x * math.floor(n)  # expect: warning at 'math.floor': 'floor'


@ad.differentiable
def refused(x):
    try:  # expect: error at 'try': 'try'
        return x * 2.0
    finally:
        pass


@ad.differentiable
def clean(x, y):
    return math.sin(x) * y


def not_decorated(x, y):
    return x * 2.0
