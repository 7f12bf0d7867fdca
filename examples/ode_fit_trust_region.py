"""Fit an ODE model with a trust-region Newton method: ``scipy.optimize.minimize``
with ``method="trust-ncg"``, the gradient from ``ad.gradient`` and Hessian-vector
products from ``ad.hvp`` (forward mode over the generated gradient code), against
L-BFGS-B with the same gradient.

The model is a Lotka-Volterra predator-prey system integrated by RK4 in a Python
loop; the data are its solution at known rates plus noise.  From a start 10% off
both methods reach the same fit, trust-ncg in fewer iterations; from 30% off
L-BFGS-B's line searches leave the region where the model makes sense, and
trust-ncg still converges.

Run: ``python examples/ode_fit_trust_region.py``
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

import s2s_ad as ad

STEPS_PER_SAMPLE = 4
DT = 0.05


def simulate(rates, prey0, predators0, samples):
    """Populations at ``samples`` times, RK4 with ``STEPS_PER_SAMPLE`` steps between."""
    alpha, beta, delta, gamma = rates[0], rates[1], rates[2], rates[3]
    prey, predators = prey0, predators0
    path = np.zeros((samples, 2))
    for k in range(samples):
        for _ in range(STEPS_PER_SAMPLE):
            a1 = alpha * prey - beta * prey * predators
            b1 = delta * prey * predators - gamma * predators
            x2, y2 = prey + 0.5 * DT * a1, predators + 0.5 * DT * b1
            a2 = alpha * x2 - beta * x2 * y2
            b2 = delta * x2 * y2 - gamma * y2
            x3, y3 = prey + 0.5 * DT * a2, predators + 0.5 * DT * b2
            a3 = alpha * x3 - beta * x3 * y3
            b3 = delta * x3 * y3 - gamma * y3
            x4, y4 = prey + DT * a3, predators + DT * b3
            a4 = alpha * x4 - beta * x4 * y4
            b4 = delta * x4 * y4 - gamma * y4
            prey = prey + DT / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
            predators = predators + DT / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4)
        path[k, 0] = prey
        path[k, 1] = predators
    return path


def misfit(rates, observed):
    """Half the sum of squared differences between the model and the data."""
    path = simulate(rates, 1.0, 0.5, observed.shape[0])
    gap = path - observed
    return 0.5 * np.sum(gap * gap)


def fit(loss, start, observed) -> tuple:
    """trust-ncg with ``ad.hvp`` and L-BFGS-B, both with ``ad.gradient``, from ``start``."""
    gradient = ad.gradient(loss)

    def hessp(rates, direction, data):  # minimize passes args= on
        return ad.hvp(loss, (rates, data), (direction, None))

    newton = minimize(loss, start, args=(observed,), jac=gradient, hessp=hessp,
                      method="trust-ncg", options={"gtol": 1e-8})
    quasi = minimize(loss, start, args=(observed,), jac=gradient, method="L-BFGS-B",
                     options={"gtol": 1e-8, "ftol": 1e-15})
    return newton, quasi


def main() -> None:
    truth = np.array([1.1, 0.9, 0.8, 0.7])
    rng = np.random.default_rng(0)
    clean = simulate(truth, 1.0, 0.5, 60)
    observed = clean + 0.01 * rng.standard_normal(clean.shape)
    loss = ad.differentiable(misfit, wrt=["rates"])
    print(f"true rates: {np.array2string(truth, precision=4)}")
    for off in (0.1, 0.3):
        start = truth * np.array([1.0 + off, 1.0 - off, 1.0 + off, 1.0 - off])
        newton, quasi = fit(loss, start, observed)
        print(f"start {off:.0%} off:")
        for name, result in (("trust-ncg + ad.hvp", newton), ("L-BFGS-B", quasi)):
            print(f"  {name:<19} rates {np.array2string(result.x, precision=4)}, "
                  f"misfit {result.fun:.6e}, {result.nit} iterations")
    hessian = ad.hessian(loss)(newton.x, observed)
    print(f"Hessian at the fit: symmetric to {np.max(np.abs(hessian - hessian.T)):.1e}, "
          f"eigenvalues {np.array2string(np.linalg.eigvalsh(hessian), precision=3)}")


if __name__ == "__main__":
    main()
