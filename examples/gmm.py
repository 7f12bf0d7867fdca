"""The ADBench Gaussian-mixture objective, written with index loops, and its gradient.

Run: python examples/gmm.py

The loop form is what a user of s2s_ad writes: s2s_ad differentiates it as
written, and Numba compiles both the objective and the gradient.  The tests
(tests/test_workloads.py) and the benchmarks import it from here.
"""

import math
import time

import numpy as np

import s2s_ad as ad


def gmm_objective(alphas, means, icf, x, wishart_gamma, wishart_m):
    """The ADBench GMM objective (the C++/loop formulation).

    Component k has precision factor Q_k = L_k with diagonal exp(icf[k, :d]) and strictly
    lower entries icf[k, d:] stored column by column. The objective is
        -N d/2 log(2 pi) + sum_i logsumexp_k(alpha_k + sum(icf[k, :d])
                                             - |Q_k (x_i - mu_k)|^2 / 2)
        - N logsumexp(alpha) + log Wishart prior(Q).
    """
    n = x.shape[0]
    d = x.shape[1]
    k = alphas.shape[0]
    sum_qs = np.zeros(k)
    for ik in range(k):
        for j in range(d):
            sum_qs[ik] += icf[ik, j]
    qx = np.zeros(d)
    main_term = np.zeros(k)
    slse = 0.0
    for i in range(n):
        for ik in range(k):
            for j in range(d):
                qx[j] = math.exp(icf[ik, j]) * (x[i, j] - means[ik, j])
            lparams = d
            for col in range(d):
                centred = x[i, col] - means[ik, col]
                for row in range(col + 1, d):
                    qx[row] += icf[ik, lparams] * centred
                    lparams += 1
            sqnorm = 0.0
            for j in range(d):
                sqnorm += qx[j] * qx[j]
            main_term[ik] = alphas[ik] + sum_qs[ik] - 0.5 * sqnorm
        top = main_term[0]
        for ik in range(1, k):
            if main_term[ik] > top:
                top = main_term[ik]
        total = 0.0
        for ik in range(k):
            total += math.exp(main_term[ik] - top)
        slse += top + math.log(total)
    top_alpha = alphas[0]
    for ik in range(1, k):
        if alphas[ik] > top_alpha:
            top_alpha = alphas[ik]
    total_alpha = 0.0
    for ik in range(k):
        total_alpha += math.exp(alphas[ik] - top_alpha)
    lse_alphas = top_alpha + math.log(total_alpha)
    # The Wishart prior on the precision factors.
    dof = d + wishart_m + 1
    prior = 0.0
    for ik in range(k):
        frobenius = 0.0
        for j in range(d):
            diagonal = math.exp(icf[ik, j])
            frobenius += diagonal * diagonal
        for j in range(d, icf.shape[1]):
            frobenius += icf[ik, j] * icf[ik, j]
        prior += 0.5 * wishart_gamma * wishart_gamma * frobenius - wishart_m * sum_qs[ik]
    log_gamma = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(1, d + 1):
        log_gamma += math.lgamma(0.5 * dof + 0.5 * (1 - j))
    normaliser = dof * d * (math.log(wishart_gamma) - 0.5 * math.log(2.0)) - log_gamma
    constant = -n * d * 0.5 * math.log(2.0 * math.pi)
    return constant + slse - n * lse_alphas + prior - k * normaliser


def gmm_data(n=1000, d=10, k=25, seed=0):
    rng = np.random.default_rng(seed)
    alphas = rng.normal(0.0, 1.0, k)
    means = rng.uniform(0.0, 1.0, (k, d))
    icf = rng.uniform(-0.3, 0.3, (k, d * (d + 1) // 2))
    x = rng.uniform(0.0, 1.0, (n, d))
    return alphas, means, icf, x, 1.0, 0


def main() -> None:
    args = gmm_data()
    gmm = ad.differentiable(gmm_objective, wrt=("alphas", "means", "icf"))
    value, (d_alphas, d_means, d_icf) = ad.value_and_gradient(gmm)(*args)
    start = time.perf_counter()
    ad.value_and_gradient(gmm)(*args)
    elapsed = time.perf_counter() - start
    print(f"GMM objective (d=10, K=25, N=1000): {value:.6f}")
    print(f"gradient norms: alphas {np.linalg.norm(d_alphas):.4f}, "
          f"means {np.linalg.norm(d_means):.4f}, icf {np.linalg.norm(d_icf):.4f}")
    print(f"one value-and-gradient call: {elapsed * 1e3:.1f} ms")
    print(ad.explain(gmm))


if __name__ == "__main__":
    main()
