"""Time the built-in conv2d kernels: Numba vs NumPy, and PyTorch's CPU convolution.

    NUMBA_NUM_THREADS=1 python benchmarks/conv_kernels.py [--padding same] [--repeats 7]

An NHWC input [32, 28, 28, 8] and a 3x3x8x16 filter, stride 1.  Every tool runs on
one thread (set before NumPy, Numba and PyTorch are imported).  For each of the
forward, the gradient (dx, dw from dy) and the two together, it prints the best
time of ``--repeats`` runs (each long enough to last >= 50 ms) and the ratios, as a
markdown table.  PyTorch runs in its own NCHW layout (converted once, outside the
timing); its column is left out when it does not import.  The results of the
three are checked to agree first.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402

import s2s_ad as ad  # noqa: E402
from s2s_ad.kernels import numba_kernels, numpy_kernels  # noqa: E402

SHAPE_X, SHAPE_W = (32, 28, 28, 8), (3, 3, 8, 16)


def best_time(fn: Callable[[], object], repeats: int) -> float:
    """The best seconds per call over ``repeats`` runs of a loop lasting >= 50 ms."""
    fn()
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < 0.05:
        fn()
        calls += 1
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def agree(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal to rounding: 1e-12 of the largest magnitude (sums cancel near zero)."""
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


def kernel_cases(module, x, w, dy, padding) -> dict[str, Callable[[], object]]:
    """The three timed operations of one backend's kernels."""
    strides = (1, 1)
    return {
        "forward": lambda: module.conv2d(x, w, strides, padding),
        "gradient (dx, dw)": lambda: module.conv2d_grad(dy, (x, w), strides, padding),
        "forward + gradient": lambda: (module.conv2d(x, w, strides, padding),
                                       module.conv2d_grad(dy, (x, w), strides, padding)),
    }


def torch_cases(x, w, dy, padding) -> dict[str, Callable[[], object]] | None:
    """PyTorch's forward and backward convolution kernels, NCHW, one thread."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    wt = torch.from_numpy(np.ascontiguousarray(w.transpose(3, 2, 0, 1)))
    dyt = torch.from_numpy(np.ascontiguousarray(dy.transpose(0, 3, 1, 2)))
    pad = [1, 1] if padding == "same" else [0, 0]

    def forward():
        return torch.nn.functional.conv2d(xt, wt, padding=pad[0])

    def backward():
        return torch.ops.aten.convolution_backward(dyt, xt, wt, None, [1, 1], pad, [1, 1],
                                                   False, [0, 0], 1, [True, True, False])[:2]

    ours = numpy_kernels.conv2d_grad(dy, (x, w), (1, 1), padding)
    dx, dw = backward()
    agree(forward().numpy().transpose(0, 2, 3, 1), numpy_kernels.conv2d(x, w, (1, 1), padding))
    agree(dx.numpy().transpose(0, 2, 3, 1), ours[0])
    agree(dw.numpy().transpose(2, 3, 1, 0), ours[1])
    return {"forward": forward, "gradient (dx, dw)": backward,
            "forward + gradient": lambda: (forward(), backward())}


def end_to_end(x, w, r, padding) -> float:
    """s2s_ad's compiled value and gradient of ``sum(conv2d(x, w) * r)`` (seconds)."""
    def loss(x, w):
        return np.sum(ad.kernels.conv2d(x, w, padding=padding) * r)
    vg = ad.value_and_gradient(ad.differentiable(loss, jit=True))
    return best_time(lambda: vg(x, w), 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--padding", choices=("valid", "same"), default="valid")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=SHAPE_X), rng.normal(size=SHAPE_W)
    y = numpy_kernels.conv2d(x, w, (1, 1), args.padding)
    dy = rng.normal(size=y.shape)
    agree(numba_kernels.conv2d(x, w, (1, 1), args.padding), y)
    for ours, theirs in zip(numba_kernels.conv2d_grad(dy, (x, w), (1, 1), args.padding),
                            numpy_kernels.conv2d_grad(dy, (x, w), (1, 1), args.padding),
                            strict=True):
        agree(ours, theirs)
    tools = {"NumPy": kernel_cases(numpy_kernels, x, w, dy, args.padding),
             "Numba": kernel_cases(numba_kernels, x, w, dy, args.padding)}
    torch_ops = torch_cases(x, w, dy, args.padding)
    if torch_ops is not None:
        tools["PyTorch"] = torch_ops
    times = {tool: {op: best_time(fn, args.repeats) for op, fn in ops.items()}
             for tool, ops in tools.items()}
    print(f"conv2d, x {list(SHAPE_X)}, w {list(SHAPE_W)}, stride 1, padding "
          f"'{args.padding}', float64, one thread\n")
    header = "| operation | " + " | ".join(f"{t} (ms)" for t in tools) + \
        " | NumPy / Numba |" + (" Numba / PyTorch |" if "PyTorch" in tools else "")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for op in times["Numba"]:
        row = [f"{times[t][op] * 1e3:.2f}" for t in tools]
        row.append(f"{times['NumPy'][op] / times['Numba'][op]:.2f}")
        if "PyTorch" in tools:
            row.append(f"{times['Numba'][op] / times['PyTorch'][op]:.2f}")
        print(f"| {op} | " + " | ".join(row) + " |")
    r = rng.normal(size=y.shape)
    print(f"\ns2s_ad value_and_gradient of sum(conv2d(x, w) * r), compiled: "
          f"{end_to_end(x, w, r, args.padding) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
