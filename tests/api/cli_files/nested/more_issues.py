"""A second file with a finding, found by `s2s-ad check` on the directory."""

import s2s_ad as ad


@ad.differentiable
def half_used(a, b, c):  # expect: warning at 'c)': parameter 'c'
    return a * b
