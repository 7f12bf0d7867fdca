"""The problems of ``problems.py`` for the peer tools, and hand-written Numba gradients.

Every peer is optional: ``available_tools()`` imports what is installed and says
why the rest is skipped.  Each ``make_*`` returns ``{problem name: grad(*args)}``
where ``grad`` returns a tuple of floats, one per differentiated parameter, so
the runner can compare and time every tool the same way.

How each peer is written (the idiomatic way to get a fast gradient of a loop):

- autograd: the same Python loops, with ``autograd.numpy`` in place of ``math``
  (autograd traces Python, so loops and branches work as written).
- JAX: ``jax.jit(jax.grad(f), static_argnums=n)`` with the loops as
  ``lax.fori_loop`` and branches as ``jnp.where``.  Reverse mode through
  ``lax.while_loop`` is not supported by JAX, so Kepler's Newton solve runs a
  fixed 50 iterations and freezes the iterate once converged (the same values
  as the early ``break``, at up to 50 / ~5 times the work).
- PyTorch: 0-d float64 tensors, the same Python loops, ``backward()``.

The array problems (``gmm``, ``mlp``) are written vectorised for every peer
(``make_array_*``): s2s_ad differentiates the loop-form GMM, but no tracing
framework would be used that way.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np
from loop_peers import jax_array_grad, make_loop_jax, make_loop_torch
from problems import lower_gather_index

# --------------------------------------------------------------------------------------
# Hand-written reverse mode in Numba (the "what would an expert write" baseline)
# --------------------------------------------------------------------------------------


@numba.njit(cache=False)
def oscillator_grad_by_hand(k, c, a, n):
    dt = 0.01
    xs = np.empty(n)
    vs = np.empty(n)
    x = 1.0
    v = 0.0
    for i in range(n):
        xs[i] = x
        vs[i] = v
        acc = -k * x - c * v - a * x * x * x
        x = x + dt * v
        v = v + dt * acc
    d_loss = 1.0 / n
    d_x = 0.0
    d_v = 0.0
    d_k = 0.0
    d_c = 0.0
    d_a = 0.0
    for i in range(n - 1, -1, -1):
        x = xs[i]
        v = vs[i]
        d_x += d_loss * 2.0 * (x + dt * v)
        d_acc = dt * d_v
        d_v_pre = d_v + dt * d_x
        d_x_pre = d_x
        d_k -= x * d_acc
        d_c -= v * d_acc
        d_a -= x * x * x * d_acc
        d_x_pre += (-k - 3.0 * a * x * x) * d_acc
        d_v_pre -= c * d_acc
        d_x = d_x_pre
        d_v = d_v_pre
    return d_k, d_c, d_a


@numba.njit(cache=False)
def rosenbrock_chain_grad_by_hand(p, q, n):
    xs = np.empty(n + 1)
    x = p
    xs[0] = x
    for i in range(n):
        x = p + q * math.sin(x) + 0.1 * math.cos(0.001 * i)
        xs[i + 1] = x
    d_total = 1.0 / n
    d_p = 0.0
    d_q = 0.0
    d_x = 0.0          # cotangent of x after iteration i (= x_next of iteration i)
    for i in range(n - 1, -1, -1):
        x = xs[i]
        x_next = xs[i + 1]
        r = 200.0 * (x_next - x * x) * d_total
        d_next = d_x + r
        d_p += d_next
        d_q += math.sin(x) * d_next
        d_x = d_next * q * math.cos(x) - 2.0 * x * r - 2.0 * (1.0 - x) * d_total
    return d_p + d_x, d_q


@numba.njit(cache=False)
def smooth_energy_grad_by_hand(x, lam):
    """d2 recomputed in the reverse loop; three scatters per step."""
    n = x.shape[0]
    d_x = np.zeros(n)
    d_lam = 0.0
    for i in range(n - 2, 0, -1):
        d2 = x[i - 1] - 2.0 * x[i] + x[i + 1]
        g = 2.0 * lam * d2
        d_lam += d2 * d2
        d_x[i] += 2.0 * (x[i] - 1.0) - 2.0 * g
        d_x[i - 1] += g
        d_x[i + 1] += g
    return d_x, d_lam


@numba.njit(cache=False)
def rosenbrock_index_grad_by_hand(x):
    d_x = np.zeros(x.shape[0])
    for i in range(x.shape[0] - 2, -1, -1):
        r = x[i + 1] - x[i] * x[i]
        d_x[i + 1] += 200.0 * r
        d_x[i] += -400.0 * r * x[i] - 2.0 * (1.0 - x[i])
    return d_x


@numba.njit(cache=False)
def _sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


@numba.njit(cache=False)
def lstm_grad_by_hand(main_params, extra_params, state, sequence):
    """Tapes, per step, layer and bit: the layer's input, old hidden and cell state,
    its four gates, tanh of the new cell state and the new hidden state."""
    layers = state.shape[0] // 2
    c, b = sequence.shape
    tape = np.empty((c - 1, layers, 9, b))   # x, hidden, cell, f, i, o, change, tanh, out
    s = state.copy()
    for t in range(c - 1):
        for layer in range(layers):
            h = 2 * layer
            for j in range(b):
                x = sequence[t, j] * extra_params[0, j] if layer == 0 else tape[t, layer - 1, 8, j]
                forget = _sigmoid(x * main_params[h, j] + main_params[h + 1, j])
                ingate = _sigmoid(s[h, j] * main_params[h, b + j] + main_params[h + 1, b + j])
                outgate = _sigmoid(x * main_params[h, 2 * b + j] + main_params[h + 1, 2 * b + j])
                change = math.tanh(s[h, j] * main_params[h, 3 * b + j]
                                   + main_params[h + 1, 3 * b + j])
                row = tape[t, layer]
                row[0, j], row[1, j], row[2, j] = x, s[h, j], s[h + 1, j]
                row[3, j], row[4, j], row[5, j], row[6, j] = forget, ingate, outgate, change
                s[h + 1, j] = s[h + 1, j] * forget + ingate * change
                row[7, j] = math.tanh(s[h + 1, j])
                s[h, j] = outgate * row[7, j]
                row[8, j] = s[h, j]
    d_main = np.zeros_like(main_params)
    d_extra = np.zeros_like(extra_params)
    d_s = np.zeros_like(state)
    d_x = np.empty(b)
    d_total = -1.0 / ((c - 1) * b)
    for t in range(c - 2, -1, -1):
        top = tape[t, layers - 1, 8]
        sum_exp = 2.0
        sum_gold = 0.0
        for j in range(b):
            sum_exp += math.exp(top[j] * extra_params[1, j] + extra_params[2, j])
            sum_gold += sequence[t + 1, j]
        for j in range(b):
            ypred = top[j] * extra_params[1, j] + extra_params[2, j]
            d_y = d_total * (sequence[t + 1, j] - math.exp(ypred) / sum_exp * sum_gold)
            d_extra[1, j] += d_y * top[j]
            d_extra[2, j] += d_y
            d_x[j] = d_y * extra_params[1, j]
        for layer in range(layers - 1, -1, -1):
            h = 2 * layer
            row = tape[t, layer]
            for j in range(b):
                x, hid, cell_old = row[0, j], row[1, j], row[2, j]
                forget, ingate, outgate, change = row[3, j], row[4, j], row[5, j], row[6, j]
                tanh_cell = row[7, j]
                d_hid = d_s[h, j] + d_x[j]
                d_cell = d_s[h + 1, j] + d_hid * outgate * (1.0 - tanh_cell * tanh_cell)
                d_zf = d_cell * cell_old * forget * (1.0 - forget)
                d_zi = d_cell * change * ingate * (1.0 - ingate)
                d_zo = d_hid * tanh_cell * outgate * (1.0 - outgate)
                d_zc = d_cell * ingate * (1.0 - change * change)
                d_main[h, j] += d_zf * x
                d_main[h + 1, j] += d_zf
                d_main[h, b + j] += d_zi * hid
                d_main[h + 1, b + j] += d_zi
                d_main[h, 2 * b + j] += d_zo * x
                d_main[h + 1, 2 * b + j] += d_zo
                d_main[h, 3 * b + j] += d_zc * hid
                d_main[h + 1, 3 * b + j] += d_zc
                d_s[h, j] = d_zi * main_params[h, b + j] + d_zc * main_params[h, 3 * b + j]
                d_s[h + 1, j] = d_cell * forget
                d_x[j] = d_zf * main_params[h, j] + d_zo * main_params[h, 2 * b + j]
        for j in range(b):
            d_extra[0, j] += d_x[j] * sequence[t, j]
    return d_main, d_extra


def make_hand_numba() -> dict[str, Callable]:
    return {"oscillator": oscillator_grad_by_hand,
            "rosenbrock_chain": rosenbrock_chain_grad_by_hand,
            "smooth_energy": smooth_energy_grad_by_hand,
            "rosenbrock_index": rosenbrock_index_grad_by_hand,
            "lstm": lstm_grad_by_hand}


# --------------------------------------------------------------------------------------
# autograd
# --------------------------------------------------------------------------------------


def make_autograd() -> dict[str, Callable]:
    import autograd
    import autograd.numpy as anp

    def duffing_force(x, v, k, c, a):
        return -k * x - c * v - a * x * x * x

    def oscillator(k, c, a, n):
        x = 1.0
        v = 0.0
        dt = 0.01
        loss = 0.0
        for _ in range(n):
            acc = duffing_force(x, v, k, c, a)
            x = x + dt * v
            v = v + dt * acc
            loss = loss + x * x
        return loss / n

    def rosenbrock_chain(p, q, n):
        x = p
        total = 0.0
        for i in range(n):
            x_next = p + q * anp.sin(x) + 0.1 * math.cos(0.001 * i)
            total = total + 100.0 * (x_next - x * x) ** 2 + (1.0 - x) ** 2
            x = x_next
        return total / n

    def kepler(e, m0, n):
        total = 0.0
        for i in range(n):
            m = m0 + 0.001 * i
            big_e = m
            it = 0
            while it < 50:
                step = (big_e - e * anp.sin(big_e) - m) / (1.0 - e * anp.cos(big_e))
                big_e = big_e - step
                it += 1
                if anp.abs(step) < 1e-12:
                    break
            total = total + anp.cos(big_e)
        return total / n

    def logistic_branches(r, w, n):
        x = 0.3
        loss = 0.0
        for _ in range(n):
            x_new = r * x * (1.0 - x)
            if x_new > 0.5:
                loss = loss + w * (x_new - 0.5) ** 2
                x = x_new - 0.01 * w * (x_new - 0.5)
                continue
            loss = loss + anp.exp(-w * x_new)
            x = x_new
        return loss / n

    def wrap(f: Callable, nparams: int) -> Callable:
        g = autograd.grad(lambda params, n: f(*params, n))

        def grad(*args):
            return tuple(float(v) for v in g(tuple(args[:nparams]), args[nparams]))
        return grad

    return {"oscillator": wrap(oscillator, 3), "rosenbrock_chain": wrap(rosenbrock_chain, 2),
            "kepler": wrap(kepler, 2), "logistic_branches": wrap(logistic_branches, 2)}


# --------------------------------------------------------------------------------------
# JAX
# --------------------------------------------------------------------------------------


def make_jax() -> dict[str, Callable]:
    import jax

    functions = jax_functions()

    def wrap(f: Callable, nparams: int) -> Callable:
        g = jax.jit(jax.grad(f, argnums=tuple(range(nparams))), static_argnums=nparams)

        def grad(*args):
            out = g(*args)
            return tuple(float(v) for v in jax.block_until_ready(out))
        return grad

    return {"oscillator": wrap(functions["oscillator"], 3),
            "rosenbrock_chain": wrap(functions["rosenbrock_chain"], 2),
            "kepler": wrap(functions["kepler"], 2),
            "logistic_branches": wrap(functions["logistic_branches"], 2)}


def jax_functions() -> dict[str, Callable]:
    """The scalar problems in JAX (``f(*params, n)``, ``n`` static), undifferentiated."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")

    def oscillator(k, c, a, n):
        dt = 0.01

        def step(i, s):
            x, v, loss = s
            acc = -k * x - c * v - a * x * x * x
            x = x + dt * v
            v = v + dt * acc
            return x, v, loss + x * x
        _, _, loss = lax.fori_loop(0, n, step, (1.0, 0.0, 0.0))
        return loss / n

    def rosenbrock_chain(p, q, n):
        def step(i, s):
            x, total = s
            x_next = p + q * jnp.sin(x) + 0.1 * jnp.cos(0.001 * i)
            total = total + 100.0 * (x_next - x * x) ** 2 + (1.0 - x) ** 2
            return x_next, total
        _, total = lax.fori_loop(0, n, step, (p, 0.0))
        return total / n

    def kepler(e, m0, n):
        def solve(i, total):
            m = m0 + 0.001 * i

            def newton(_, s):
                big_e, done = s
                step = (big_e - e * jnp.sin(big_e) - m) / (1.0 - e * jnp.cos(big_e))
                big_e = jnp.where(done, big_e, big_e - step)
                return big_e, done | (jnp.abs(step) < 1e-12)
            big_e, _ = lax.fori_loop(0, 50, newton, (m, False))
            return total + jnp.cos(big_e)
        return lax.fori_loop(0, n, solve, 0.0) / n

    def logistic_branches(r, w, n):
        def step(i, s):
            x, loss = s
            x_new = r * x * (1.0 - x)
            high = x_new > 0.5
            loss = loss + jnp.where(high, w * (x_new - 0.5) ** 2, jnp.exp(-w * x_new))
            x = jnp.where(high, x_new - 0.01 * w * (x_new - 0.5), x_new)
            return x, loss
        _, loss = lax.fori_loop(0, n, step, (0.3, 0.0))
        return loss / n

    return {"oscillator": oscillator, "rosenbrock_chain": rosenbrock_chain, "kepler": kepler,
            "logistic_branches": logistic_branches}


# --------------------------------------------------------------------------------------
# PyTorch
# --------------------------------------------------------------------------------------


def make_torch() -> dict[str, Callable]:
    import torch

    torch.set_num_threads(1)

    def oscillator(k, c, a, n):
        x = torch.tensor(1.0, dtype=torch.float64)
        v = torch.tensor(0.0, dtype=torch.float64)
        dt = 0.01
        loss = 0.0
        for _ in range(n):
            acc = -k * x - c * v - a * x * x * x
            x = x + dt * v
            v = v + dt * acc
            loss = loss + x * x
        return loss / n

    def rosenbrock_chain(p, q, n):
        x = p
        total = 0.0
        for i in range(n):
            x_next = p + q * torch.sin(x) + 0.1 * math.cos(0.001 * i)
            total = total + 100.0 * (x_next - x * x) ** 2 + (1.0 - x) ** 2
            x = x_next
        return total / n

    def kepler(e, m0, n):
        total = 0.0
        for i in range(n):
            m = m0 + 0.001 * i
            big_e = m
            it = 0
            while it < 50:
                step = (big_e - e * torch.sin(big_e) - m) / (1.0 - e * torch.cos(big_e))
                big_e = big_e - step
                it += 1
                if abs(step.item()) < 1e-12:
                    break
            total = total + torch.cos(big_e)
        return total / n

    def logistic_branches(r, w, n):
        x = 0.3
        loss = 0.0
        for _ in range(n):
            x_new = r * x * (1.0 - x)
            if x_new.item() > 0.5:
                loss = loss + w * (x_new - 0.5) ** 2
                x = x_new - 0.01 * w * (x_new - 0.5)
                continue
            loss = loss + torch.exp(-w * x_new)
            x = x_new
        return loss / n

    def wrap(f: Callable, nparams: int) -> Callable:
        def grad(*args):
            params = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
                      for a in args[:nparams]]
            f(*params, args[nparams]).backward()
            return tuple(float(p.grad) for p in params)
        return grad

    return {"oscillator": wrap(oscillator, 3), "rosenbrock_chain": wrap(rosenbrock_chain, 2),
            "kepler": wrap(kepler, 2), "logistic_branches": wrap(logistic_branches, 2)}


PEERS = {"autograd": ("autograd", lambda: {**make_autograd(), **make_array_autograd()}),
         "jax": ("jax", lambda: {**make_jax(), **make_array_jax(), **make_loop_jax()}),
         "torch": ("torch", lambda: {**make_torch(), **make_array_torch(),
                                     **make_loop_torch()})}


def available_peers(wanted: set[str] | None = None
                    ) -> tuple[dict[str, dict[str, Callable]], dict[str, str], dict[str, str]]:
    """(tools, versions, skipped): the installed peers' gradient functions (of those in
    ``wanted``, default all), their versions, and why each missing one is skipped."""
    import importlib

    tools: dict[str, dict[str, Callable]] = {}
    versions: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for name, (module, make) in PEERS.items():
        if wanted is not None and name not in wanted:
            continue
        try:
            mod = importlib.import_module(module)
            tools[name] = make()
            versions[name] = _version(module, mod)
            if name == "jax":
                versions["jaxlib"] = _version("jaxlib", mod)
        except Exception as exc:  # an optional peer: any import failure means skip
            skipped[name] = f"{type(exc).__name__}: {exc}"
    return tools, versions, skipped


def _version(dist: str, module) -> str:
    from importlib import metadata
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return getattr(module, "__version__", "?")


# --------------------------------------------------------------------------------------
# Array problems, vectorised the way each framework is meant to be used.  Every
# ``grad(*args)`` returns a tuple of float64 NumPy arrays, one per ``wrt`` array.
# --------------------------------------------------------------------------------------


def gmm_constants(n: int, d: int, k: int, wishart_gamma: float, wishart_m: int) -> float:
    """The parameter-free terms of the GMM objective (Wishart normaliser, 2 pi)."""
    dof = d + wishart_m + 1
    log_gamma = 0.25 * d * (d - 1) * math.log(math.pi)
    log_gamma += sum(math.lgamma(0.5 * dof + 0.5 * (1 - j)) for j in range(1, d + 1))
    normaliser = dof * d * (math.log(wishart_gamma) - 0.5 * math.log(2.0)) - log_gamma
    return -n * d * 0.5 * math.log(2.0 * math.pi) - k * normaliser


def make_array_jax() -> dict[str, Callable]:
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.scipy.special import logsumexp

    def gmm(alphas, means, icf, x, wishart_gamma, wishart_m):
        n, d = x.shape
        k = alphas.shape[0]
        index = lower_gather_index(d)
        diag = icf[:, :d]
        lower = jnp.concatenate([icf[:, d:], jnp.zeros((k, 1))], axis=1)[:, index]
        lower = lower.reshape(k, d, d)
        centred = x[:, None, :] - means[None, :, :]                    # N, K, d
        qx = jnp.exp(diag) * centred + jnp.einsum("kij,nkj->nki", lower, centred)
        main_term = alphas + jnp.sum(diag, axis=1) - 0.5 * jnp.sum(qx * qx, axis=2)
        slse = jnp.sum(logsumexp(main_term, axis=1))
        frobenius = jnp.sum(jnp.exp(diag) ** 2, axis=1) + jnp.sum(icf[:, d:] ** 2, axis=1)
        prior = jnp.sum(0.5 * wishart_gamma ** 2 * frobenius
                        - wishart_m * jnp.sum(diag, axis=1))
        return (gmm_constants(n, d, k, wishart_gamma, wishart_m) + slse
                - n * logsumexp(alphas) + prior)

    def mlp(w1, b1, w2, b2, inputs, labels):
        hidden = jnp.maximum(inputs @ w1 + b1, 0.0)
        logits = hidden @ w2 + b2
        lse = logsumexp(logits, axis=1)
        return jnp.mean(lse - jnp.sum(labels * logits, axis=1))

    def lstm(main_params, extra_params, state, sequence):
        layers = state.shape[0] // 2
        b = sequence.shape[1]

        def step(carry, pair):
            s, total = carry
            x, gold = pair
            x = x * extra_params[0]
            rows = []
            for layer in range(layers):
                hidden, cell = lstm_cell(jnp, main_params[2 * layer], main_params[2 * layer + 1],
                                         s[2 * layer], s[2 * layer + 1], x, b)
                rows += [hidden, cell]
                x = hidden
            return (jnp.stack(rows), total + lstm_prediction_term(jnp, extra_params, x, gold)), None

        (_, total), _ = lax.scan(step, (state, 0.0), (sequence[:-1], sequence[1:]))
        return -total / ((sequence.shape[0] - 1) * b)

    loops = array_loop_peers(jnp)
    loops["lstm"] = (lstm, 2)

    def wrap(f: Callable, nwrt: int, static: tuple[int, ...]) -> Callable:
        return jax_array_grad(jax, f, nwrt, static)

    grad_gmm = wrap(gmm, 3, (4, 5))
    return {"gmm": grad_gmm, "gmm_vectorised": lambda *args: grad_gmm(*args[:-1]),
            "mlp": wrap(mlp, 4, ()),
            **{name: wrap(f, nwrt, ()) for name, (f, nwrt) in loops.items()}}


def make_array_torch() -> dict[str, Callable]:
    import torch

    def gmm(alphas, means, icf, x, wishart_gamma, wishart_m, index):
        n, d = x.shape
        k = alphas.shape[0]
        diag = icf[:, :d]
        lower = torch.cat([icf[:, d:], icf.new_zeros(k, 1)], dim=1)[:, index]
        lower = lower.reshape(k, d, d)
        centred = x[:, None, :] - means[None, :, :]
        qx = torch.exp(diag) * centred + torch.einsum("kij,nkj->nki", lower, centred)
        main_term = alphas + diag.sum(dim=1) - 0.5 * (qx * qx).sum(dim=2)
        slse = torch.logsumexp(main_term, dim=1).sum()
        frobenius = (torch.exp(diag) ** 2).sum(dim=1) + (icf[:, d:] ** 2).sum(dim=1)
        prior = (0.5 * wishart_gamma ** 2 * frobenius - wishart_m * diag.sum(dim=1)).sum()
        return (gmm_constants(n, d, k, wishart_gamma, wishart_m) + slse
                - n * torch.logsumexp(alphas, dim=0) + prior)

    def mlp(w1, b1, w2, b2, inputs, labels):
        hidden = torch.relu(inputs @ w1 + b1)
        logits = hidden @ w2 + b2
        return (torch.logsumexp(logits, dim=1) - (labels * logits).sum(dim=1)).mean()

    def loop_grad(f: Callable, nwrt: int) -> Callable:
        def grad(*args):
            params = [torch.tensor(a, dtype=torch.float64, requires_grad=True)
                      for a in args[:nwrt]]
            f(*params, *(torch.from_numpy(a) for a in args[nwrt:])).backward()
            return tuple(p.grad.numpy() if p.grad.ndim else p.grad.item() for p in params)
        return grad

    def grad_gmm(alphas, means, icf, x, wishart_gamma, wishart_m):
        params = [torch.tensor(a, requires_grad=True) for a in (alphas, means, icf)]
        index = torch.from_numpy(lower_gather_index(x.shape[1]))
        gmm(*params, torch.from_numpy(x), wishart_gamma, wishart_m, index).backward()
        return tuple(p.grad.numpy() for p in params)

    def grad_mlp(w1, b1, w2, b2, inputs, labels):
        params = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
        mlp(*params, torch.from_numpy(inputs), torch.from_numpy(labels)).backward()
        return tuple(p.grad.numpy() for p in params)

    return {"gmm": grad_gmm, "gmm_vectorised": lambda *args: grad_gmm(*args[:-1]),
            "mlp": grad_mlp,
            **{name: loop_grad(f, nwrt) for name, (f, nwrt) in array_loop_peers(torch).items()}}


def make_array_autograd() -> dict[str, Callable]:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    def gmm(params, x, wishart_gamma, wishart_m):
        alphas, means, icf = params
        n, d = x.shape
        k = alphas.shape[0]
        index = lower_gather_index(d)
        diag = icf[:, :d]
        lower = anp.concatenate([icf[:, d:], anp.zeros((k, 1))], axis=1)[:, index]
        lower = anp.reshape(lower, (k, d, d))
        centred = x[:, None, :] - means[None, :, :]
        qx = anp.exp(diag) * centred + anp.einsum("kij,nkj->nki", lower, centred)
        main_term = alphas + anp.sum(diag, axis=1) - 0.5 * anp.sum(qx * qx, axis=2)
        slse = anp.sum(logsumexp(main_term, axis=1))
        frobenius = anp.sum(anp.exp(diag) ** 2, axis=1) + anp.sum(icf[:, d:] ** 2, axis=1)
        prior = anp.sum(0.5 * wishart_gamma ** 2 * frobenius
                        - wishart_m * anp.sum(diag, axis=1))
        return (gmm_constants(n, d, k, wishart_gamma, wishart_m) + slse
                - n * logsumexp(alphas) + prior)

    def mlp(params, inputs, labels):
        w1, b1, w2, b2 = params
        hidden = anp.maximum(anp.dot(inputs, w1) + b1, 0.0)
        logits = anp.dot(hidden, w2) + b2
        return anp.mean(logsumexp(logits, axis=1) - anp.sum(labels * logits, axis=1))

    def wrap(f: Callable, nwrt: int) -> Callable:
        g = autograd.grad(lambda params, *rest: f(params, *rest))

        def grad(*args):
            return tuple(g(tuple(args[:nwrt]), *args[nwrt:]))
        return grad

    loops = {name: (lambda params, *rest, f=f: f(*params, *rest), nwrt)
             for name, (f, nwrt) in array_loop_peers(anp).items()}
    grad_gmm = wrap(gmm, 3)
    return {"gmm": grad_gmm, "gmm_vectorised": lambda *args: grad_gmm(*args[:-1]),
            "mlp": wrap(mlp, 4),
            **{name: wrap(f, nwrt) for name, (f, nwrt) in loops.items()}}


def array_loop_peers(xp) -> dict[str, tuple[Callable, int]]:
    """The array-indexed loop problems, vectorised with the array module ``xp``
    (``jax.numpy``, ``torch`` or ``autograd.numpy``): {name: (function, how many
    leading arguments are differentiated)}."""

    def smooth_energy(x, lam):
        d2 = x[:-2] - 2.0 * x[1:-1] + x[2:]
        return xp.sum(lam * d2 * d2 + (x[1:-1] - 1.0) ** 2)

    def rosenbrock_index(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] * x[:-1]) ** 2 + (1.0 - x[:-1]) ** 2)

    def stencil_2d(u, kappa):
        centre = u[1:-1, 1:-1]
        lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * centre
        well = centre * centre - 1.0
        return xp.sum(kappa * lap * lap + well * well)

    def dense_loops(w, b, x, y):
        err = xp.tanh(x @ w.T + b) - y
        return xp.sum(err * err)

    def lstm(main_params, extra_params, state, sequence):
        """A Python loop over time steps, vectorised over the bits (JAX uses lax.scan)."""
        layers = state.shape[0] // 2
        b = sequence.shape[1]
        hidden = [state[2 * layer] for layer in range(layers)]
        cell = [state[2 * layer + 1] for layer in range(layers)]
        total = 0.0
        for t in range(sequence.shape[0] - 1):
            x = sequence[t] * extra_params[0]
            for layer in range(layers):
                hidden[layer], cell[layer] = lstm_cell(
                    xp, main_params[2 * layer], main_params[2 * layer + 1],
                    hidden[layer], cell[layer], x, b)
                x = hidden[layer]
            total = total + lstm_prediction_term(xp, extra_params, x, sequence[t + 1])
        return -total / ((sequence.shape[0] - 1) * b)

    return {"smooth_energy": (smooth_energy, 2), "rosenbrock_index": (rosenbrock_index, 1),
            "stencil_2d": (stencil_2d, 2), "dense_loops": (dense_loops, 2),
            "lstm": (lstm, 2)}


def lstm_cell(xp, weight, bias, hidden, cell, x, b: int) -> tuple:
    """One ADBench LSTM layer on vectors of ``b`` bits (diagonal weights):
    the new (hidden, cell)."""
    forget = 1.0 / (1.0 + xp.exp(-(x * weight[:b] + bias[:b])))
    ingate = 1.0 / (1.0 + xp.exp(-(hidden * weight[b:2 * b] + bias[b:2 * b])))
    outgate = 1.0 / (1.0 + xp.exp(-(x * weight[2 * b:3 * b] + bias[2 * b:3 * b])))
    change = xp.tanh(hidden * weight[3 * b:] + bias[3 * b:])
    cell = cell * forget + ingate * change
    return outgate * xp.tanh(cell), cell


def lstm_prediction_term(xp, extra_params, x, gold):
    """sum(gold * log-softmax prediction), with ADBench's + 2 in the logsumexp."""
    ypred = x * extra_params[1] + extra_params[2]
    return xp.sum(gold * (ypred - xp.log(xp.sum(xp.exp(ypred)) + 2.0)))
