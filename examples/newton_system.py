"""Newton's method on a nonlinear system with a forward-mode Jacobian (issue 24).

The 1-D Bratu problem  u'' + lam * exp(u) = 0  on (0, 1), u(0) = u(1) = 0, on 40
interior points with central differences: 40 equations in 40 unknowns.  The residual
is plain Python with a loop; ``ad.jacobian(bratu_residual, wrt="u", mode="forward")``
builds its 40 x 40 Jacobian (one tangent run per column, all in one compiled call),
and each Newton step solves J du = -F.  The residual norm falls quadratically: the
number of correct digits roughly doubles per iteration.

Run: python examples/newton_system.py
"""

import math

import numpy as np

import s2s_ad as ad

POINTS = 40
LAM = 2.0  # below the fold at lam = 3.5138...: two solutions; Newton from 0 finds the lower


def bratu_residual(u, lam):
    """F(u): the discretized u'' + lam * exp(u) at each interior point."""
    n = u.shape[0]
    h = 1.0 / (n + 1)
    residual = np.empty(n)
    for i in range(n):
        left = 0.0
        right = 0.0
        if i > 0:
            left = u[i - 1]
        if i < n - 1:
            right = u[i + 1]
        residual[i] = (left - 2.0 * u[i] + right) / (h * h) + lam * math.exp(u[i])
    return residual


def exact_jacobian(u, lam):
    """The Jacobian by hand, to compare: tridiagonal, 1/h^2 (1, -2, 1) + lam e^u."""
    h = 1.0 / (u.shape[0] + 1)
    off = np.ones(u.shape[0] - 1) / (h * h)
    return np.diag(-2.0 / (h * h) + lam * np.exp(u)) + np.diag(off, 1) + np.diag(off, -1)


def bratu_exact(x, lam):
    """The lower solution of the continuous problem: u = -2 log(cosh((x - 1/2) t / 2)
    / cosh(t / 4)), with t the smaller root of t = sqrt(2 lam) cosh(t / 4)."""
    t = 1.0
    for _ in range(100):  # a fixed point iteration, contracting for the lower root
        t = math.sqrt(2.0 * lam) * math.cosh(t / 4.0)
    return -2.0 * np.log(np.cosh((x - 0.5) * t / 2.0) / math.cosh(t / 4.0))


def main() -> None:
    jacobian = ad.jacobian(bratu_residual, wrt="u", mode="forward")
    u = np.zeros(POINTS)
    print(f"Bratu problem, lam = {LAM}, {POINTS} unknowns; Newton with "
          "ad.jacobian(bratu_residual, wrt='u', mode='forward')")
    for iteration in range(10):
        residual = bratu_residual(u, LAM)
        norm = float(np.linalg.norm(residual))
        print(f"iteration {iteration}: |F(u)| = {norm:.3e}")
        if norm < 1e-9:
            break
        u = u - np.linalg.solve(jacobian(u, LAM), residual)
    difference = np.max(np.abs(jacobian(u, LAM) - exact_jacobian(u, LAM)))
    print(f"max |J - J by hand| at the solution = {difference:.1e}")
    x = np.linspace(0.0, 1.0, POINTS + 2)[1:-1]
    error = np.max(np.abs(u - bratu_exact(x, LAM)))
    print(f"max |u - exact solution| = {error:.1e} (the O(h^2) discretization error)")


if __name__ == "__main__":
    main()
