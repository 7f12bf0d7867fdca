"""Forward-mode sensitivities of a simulation: few parameters, many outputs (issue 24).

An SIR epidemic, S' = -beta S I, I' = beta S I - gamma I, integrated by classical
Runge-Kutta in a plain Python loop: 3 parameters (the contact rate beta, the recovery
rate gamma, the initially infected fraction i0), 401 outputs (the infected fraction
at every step).  Forward mode gets d I(t) / d parameter for all t from one tangent
run per parameter (``ad.jvp`` with a unit tangent), where reverse mode needs one
pullback per output.  The example checks the sensitivities against central finite
differences and against the Jacobian built by reverse mode (on the Python path, which
needs no compile), and prints both.

Run: python examples/sensitivities.py
"""

import numpy as np

import s2s_ad as ad
from s2s_ad.testing import directional_difference

STEPS = 400
DT = 0.25  # days


def sir_rates(s, i, beta, gamma):
    infections = beta * s * i
    return -infections, infections - gamma * i


def infected_curve(beta, gamma, i0):
    """The infected fraction at each of STEPS + 1 times (RK4 steps of DT days)."""
    s = 1.0 - i0
    i = i0
    curve = np.empty(STEPS + 1)
    curve[0] = i
    for step in range(STEPS):
        ds1, di1 = sir_rates(s, i, beta, gamma)
        ds2, di2 = sir_rates(s + 0.5 * DT * ds1, i + 0.5 * DT * di1, beta, gamma)
        ds3, di3 = sir_rates(s + 0.5 * DT * ds2, i + 0.5 * DT * di2, beta, gamma)
        ds4, di4 = sir_rates(s + DT * ds3, i + DT * di3, beta, gamma)
        s = s + DT / 6.0 * (ds1 + 2.0 * ds2 + 2.0 * ds3 + ds4)
        i = i + DT / 6.0 * (di1 + 2.0 * di2 + 2.0 * di3 + di4)
        curve[step + 1] = i
    return curve


NAMES = ("beta", "gamma", "i0")


def forward_sensitivities(params: tuple) -> np.ndarray:
    """d curve / d parameter, one jvp per parameter: an array (STEPS + 1, 3)."""
    columns = []
    for k in range(len(params)):
        unit = tuple(1.0 if j == k else 0.0 for j in range(len(params)))
        columns.append(ad.jvp(infected_curve, params, unit)[1])
    return np.stack(columns, axis=-1)


def finite_differences(params: tuple, relative: float = 1e-6) -> np.ndarray:
    """The same by central differences (``s2s_ad.testing``), for comparison."""
    columns = [directional_difference(infected_curve, params, {k: 1.0}, relative * abs(value))[0]
               for k, value in enumerate(params)]
    return np.stack(columns, axis=-1)


def main() -> None:
    params = (0.5, 0.2, 0.01)
    curve = infected_curve(*params)
    peak = int(np.argmax(curve))
    forward = forward_sensitivities(params)
    print(f"SIR by RK4, {STEPS} steps: {len(params)} parameters, {curve.size} outputs; "
          f"peak I = {curve[peak]:.5f} on day {peak * DT:g}")
    for k, name in enumerate(NAMES):
        print(f"  d I(peak day) / d {name:5s} = {forward[peak, k]: .6f}")
    differences = finite_differences(params)
    # reverse mode as a reference, on the Python path (jit=False): one pullback per
    # output, with no Numba compile of the pullback for a one-off check
    reference = ad.differentiable(infected_curve, jit=False)
    reverse = np.stack(ad.jacobian(reference, mode="reverse")(*params), axis=-1)
    scale = np.max(np.abs(forward), axis=0)
    fd_error = np.max(np.abs(forward - differences) / scale)
    reverse_error = np.max(np.abs(forward - reverse) / scale)
    print(f"forward mode vs central differences: max relative difference {fd_error:.1e}")
    print(f"forward mode vs reverse mode ({curve.size} pullbacks, jit=False): "
          f"max relative difference {reverse_error:.1e}")
    blocks = ad.jacobian(infected_curve, mode="forward")(*params)  # the same, one call
    same = np.array_equal(np.stack(blocks, axis=-1), forward)
    print(f"ad.jacobian(infected_curve, mode='forward') gives the same columns: {same}")
    assert fd_error < 1e-6 and reverse_error < 1e-12 and same


if __name__ == "__main__":
    main()
