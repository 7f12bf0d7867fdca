"""One training step of the checkpointed-CNN example, s2s_ad against PyTorch.

The model of ``examples/checkpointed_cnn.py`` (Conv2D 5x5x3->6, MaxPool2D 2x2,
Flatten, Dense 216->10, softmax cross-entropy, SGD) on a float32 batch of
``[10, 16, 16, 3]`` images: forward, gradient with respect to the whole model,
and the SGD update.  Both tools are timed with the convolution checkpointed
(s2s_ad: ``discarding_activations()``; PyTorch: ``torch.utils.checkpoint``) and
plain.  PyTorch is optional: its rows are left out if it does not import.

    python benchmarks/cnn_step.py            # prints a Markdown table
    python benchmarks/cnn_step.py --batch 64 --repeats 200
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import s2s_ad as ad
from s2s_ad import nn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from checkpointed_cnn import Model, loss  # noqa: E402  (the example's model, not copied)


def s2s_ad_step(images: np.ndarray, labels: np.ndarray, discarding: bool) -> Callable[[], float]:
    conv = nn.Conv2D.init((5, 5, 3, 6), seed=0)
    model = Model(conv.discarding_activations() if discarding else conv, nn.MaxPool2D(),
                  nn.Flatten(), nn.Dense.init(216, 10, seed=1))
    optimizer = nn.SGD(model, learning_rate=0.1)
    value_and_grad = ad.value_and_gradient(loss, wrt=("model",))
    state = [model]

    def step() -> float:
        value, grad = value_and_grad(state[0], images, labels)
        state[0] = optimizer.update(state[0], along=grad)
        return float(value)

    return step


def torch_step(images: np.ndarray, labels: np.ndarray, discarding: bool) -> Callable[[], float]:
    import torch
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 6, 5)
    pool, dense = torch.nn.MaxPool2d(2), torch.nn.Linear(216, 10)
    params = [*conv.parameters(), *dense.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.1)
    x = torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))
    y = torch.from_numpy(labels)

    def step() -> float:
        optimizer.zero_grad()
        h = checkpoint(conv, x, use_reentrant=False) if discarding else conv(x)
        out = torch.nn.functional.cross_entropy(dense(pool(h).flatten(1)), y)
        out.backward()
        optimizer.step()
        return float(out.detach())

    return step


def timed(step: Callable[[], float], repeats: int) -> tuple[float, float]:
    """Median and minimum seconds per call, after two warm-up calls (compiles)."""
    step()
    step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def cpu_name() -> str:
    """The CPU's model name (Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    images = rng.standard_normal((args.batch, 16, 16, 3)).astype(np.float32)
    labels = rng.integers(0, 10, size=args.batch)
    rows = []
    tools = [("s2s_ad", s2s_ad_step)]
    try:
        import torch
        torch.set_num_threads(1)
        tools.append((f"PyTorch {torch.__version__} (1 thread)", torch_step))
    except ImportError:
        print("PyTorch is not installed: its rows are left out", file=sys.stderr)
    for name, make in tools:
        for discarding in (True, False):
            median, best = timed(make(images, labels, discarding), args.repeats)
            what = "checkpointed conv" if discarding else "plain"
            rows.append(f"| {name} | {what} | {median * 1e3:.3f} | {best * 1e3:.3f} |")
    print(f"One training step, batch {args.batch}, float32; {args.repeats} timed steps "
          f"after 2 warm-up steps.\n")
    print("| tool | model | median ms/step | best ms/step |\n|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nMachine: {cpu_name()}, {os.cpu_count()} logical CPUs, "
          f"Python {platform.python_version()}, NumPy {np.__version__}; "
          f"command: python {' '.join(sys.argv)}")


if __name__ == "__main__":
    main()
