"""Warm PyTorch's threaded vector math in a sandbox worker before a PyTorch reference computes anything.

Observed on an AVX-512 Xeon (torch 2.13 with MKL 2024.2, 2 threads): in a sandbox worker that had served
a search's TVM jobs, the first torch computation of the job that built the PyTorch reference, the
frontend's concrete run, computed ``exp`` of a 16384-element tensor correctly on the first half and
wrongly on the half the second OpenMP thread took (relative error up to 8.8e-5, a smooth pattern). The
frontend folded that into a constant the kernel was fed; PyTorch's own forward, moments later, was
right; so a correct kernel failed ``bench/tune.py``'s final check against PyTorch in 5 of 10 runs
(``--only level1/parameter_and_constant --shape-t 1.0``). With a warm-up run first it failed in none of
8 (5 with this module, 3 with ``exp`` alone in its place). The warm-up's own checks never caught a wrong
value in those runs, so what exactly goes wrong inside the math library is not established; what is,
is that results computed after it agreed.

``settle()`` runs every element-wise function PyTorch serves from its vector math library on a tensor
split across every thread, compares each with a float64 evaluation and repeats a function until it
agrees (at most ``ATTEMPTS`` times). Once per process, a few milliseconds after ``import torch``.
"""

from __future__ import annotations

import sys

#: Element-wise ``torch`` functions the CPU build computes with its vector math library, on an input
#: inside every one's domain.
VECTOR_MATH_FUNCTIONS = ("exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
                         "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "erf",
                         "erfc", "sigmoid", "reciprocal")
#: PyTorch's default parallel grain (``at::internal::GRAIN_SIZE``). Its vector math kernels split finer
#: (the failing 16384-element ``exp`` went to two threads), so a tensor of two of these grains per
#: thread reaches every thread whichever grain a function uses.
PARALLEL_GRAIN = 32768
ATTEMPTS = 4
#: float32 agreement asked of each function (a few units in the last place of values in (0, 1]).
RTOL = 2e-6
ATOL = 1e-7

_report: dict[str, int] | None = None


def settle_elements() -> int:
    """Elements per warm-up call: two default grains per thread, so every OpenMP thread takes a chunk."""
    import torch

    return 2 * PARALLEL_GRAIN * torch.get_num_threads()


def settle() -> dict[str, int]:
    """Run every ``VECTOR_MATH_FUNCTIONS`` entry until it agrees with float64 (at most ``ATTEMPTS``).

    Returns, per function, the attempts that disagreed (zero where the first one agreed); the same dict
    on every later call in this process, without running anything again."""
    global _report
    if _report is not None:
        return _report
    import torch

    x = torch.linspace(0.01, 0.99, settle_elements(), dtype=torch.float32)
    exact = x.double()
    report: dict[str, int] = {}
    with torch.no_grad():
        for name in VECTOR_MATH_FUNCTIONS:
            function = getattr(torch, name)
            want = function(exact).float()
            wrong = 0
            while wrong < ATTEMPTS and not torch.allclose(function(x), want, rtol=RTOL, atol=ATOL):
                wrong += 1
            report[name] = wrong
    if any(report.values()):  # into the worker's log, which a job result carries
        print(f"torch_math: attempts that disagreed with float64: {report}", file=sys.stderr)
    _report = report
    return report
