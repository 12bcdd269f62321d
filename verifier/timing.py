"""Timing of built kernels (TVM's evaluator through ``Kernel.time``) and of PyTorch eager, the same way.

The protocol, identical for every program timed in one verification (the state, its parent, the source
program, the eager PyTorch module) so that their ratios mean something on a shared, noisy machine:

* a warm-up, discarded: page faults, lazy initialisation, caches, and above all the thread pools —
  PyTorch's OpenMP pool runs its first few dozen calls ~1000x slower on this loaded 2-core machine
  (measured: 20 ms instead of 15 us for a small ``bmm``), so the warm-up runs for ``WARMUP_MS`` or
  ``WARMUP_CALLS`` calls, whichever comes first, never a single call;
* ``repeats`` repeats, each averaging as many calls as it takes to last ``min_repeat_ms`` (TVM's
  ``min_repeat_ms`` does this for kernels; ``time_callable`` does the same for Python callables);
* the median of the repeats is *the* time; the IQR and standard deviation say how much to trust it;
* the kernels of one verification (state, parent, source) are timed together, their repeats interleaved
  (``time_kernels``), before any PyTorch forward in the job, so a drift in load cannot favour one of them.

Timing runs on *fresh* inputs (a different seed from the checked ones), and ``verify`` re-checks the
timed binary's output on those inputs, so a kernel cannot pass on one input set and be timed on another.
"""

from __future__ import annotations

import math
import os
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from verifier.result import TimingStats
from verifier.sandbox import kernel_threads, usable_cores

DEFAULT_REPEATS = 7
DEFAULT_MIN_REPEAT_MS = 50.0
WARMUP_MS = 2000.0
WARMUP_CALLS = 200


def stats(samples: list[float], number: int) -> TimingStats:
    """Median, IQR, stdev and mean of per-call times (seconds)."""
    values = np.asarray(samples, dtype=np.float64)
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return TimingStats(median=float(median), iqr=float(q3 - q1), stdev=float(values.std()),
                       mean=float(values.mean()), number=int(number), repeats=len(samples),
                       samples=[float(v) for v in values])


def time_kernel(kernel: Any, arrays: Mapping[str, np.ndarray], *, repeats: int = DEFAULT_REPEATS,
                min_repeat_ms: float = DEFAULT_MIN_REPEAT_MS) -> TimingStats:
    """Time one built ``Kernel`` with TVM's evaluator (``time_kernels`` of one)."""
    return time_kernels([kernel], arrays, repeats=repeats, min_repeat_ms=min_repeat_ms)[0]


def time_kernels(kernels: Sequence[Any], arrays: Mapping[str, np.ndarray], *,
                 repeats: int = DEFAULT_REPEATS,
                 min_repeat_ms: float = DEFAULT_MIN_REPEAT_MS) -> list[TimingStats]:
    """Time built kernels on the same inputs, their repeats interleaved (A B C, C B A, A B C, ...).

    A verification's rewards are ratios (state over parent, source over state). Timed back to back, a
    change in the machine's load between two of them — another job starting, a thread pool still spinning
    after a PyTorch forward — lands on one side of the ratio only; interleaved repeat by repeat, in
    alternating order, it lands on all of them alike. Each kernel gets a discarded warm-up, then one
    calibrating run of ``min_repeat_ms`` fixes its calls per repeat, so every repeat lasts about
    ``min_repeat_ms`` and the evaluator does not re-probe inside the timed repeats.
    """
    warmup_ms = int(min(WARMUP_MS, 4 * min_repeat_ms))
    for kernel in kernels:
        kernel.time(arrays, number=1, repeat=1, min_repeat_ms=warmup_ms)
    numbers = [calls_per_repeat(kernel.time(arrays, number=1, repeat=1, min_repeat_ms=int(min_repeat_ms))[0],
                                min_repeat_ms) for kernel in kernels]
    samples: list[list[float]] = [[] for _ in kernels]
    order = list(range(len(kernels)))
    for repeat in range(repeats):
        for index in order if repeat % 2 == 0 else reversed(order):
            samples[index] += kernels[index].time(arrays, number=numbers[index], repeat=1, min_repeat_ms=0)
    return [stats(values, number=number) for values, number in zip(samples, numbers, strict=True)]


def calls_per_repeat(seconds_per_call: float, min_repeat_ms: float) -> int:
    """How many calls make a repeat last ``min_repeat_ms`` (at least one)."""
    return max(1, math.ceil(min_repeat_ms / 1e3 / max(seconds_per_call, 1e-9)))


def time_callable(func: Callable[[], Any], *, repeats: int = DEFAULT_REPEATS,
                  min_repeat_ms: float = DEFAULT_MIN_REPEAT_MS) -> TimingStats:
    """Time a Python callable with the evaluator's protocol (for PyTorch eager)."""
    deadline = time.perf_counter() + WARMUP_MS / 1e3
    for _ in range(WARMUP_CALLS):
        func()
        if time.perf_counter() > deadline:
            break
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            func()
        elapsed = time.perf_counter() - start
        if elapsed * 1e3 >= min_repeat_ms or number >= 1 << 20:
            break
        number = max(number * 2, int(number * (min_repeat_ms / 1e3) / max(elapsed, 1e-9)) + 1)
    samples = [elapsed / number]
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(number):
            func()
        samples.append((time.perf_counter() - start) / number)
    return stats(samples, number=number)


@lru_cache(maxsize=1)
def hardware() -> dict[str, Any]:
    """The machine a timing was taken on: CPU model (from /proc/cpuinfo), core count, the threads a parallel
    kernel runs on (TVM's pool, which a sandbox worker sizes to the usable cores), architecture."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": usable_cores(), "threads": kernel_threads(), "machine": platform.machine(),
            "gpu": gpu_name()}


def gpu_name() -> str | None:
    """The first NVIDIA GPU's name when a driver is present (no CUDA import), else ``None``."""
    try:
        with open("/proc/driver/nvidia/gpus/" + sorted(os.listdir("/proc/driver/nvidia/gpus"))[0]
                  + "/information") as info:
            for line in info:
                if line.startswith("Model:"):
                    return line.split(":", 1)[1].strip()
    except (OSError, IndexError):
        return None
    return None


def speedup(baseline: TimingStats | None, candidate: TimingStats | None) -> float | None:
    """How many times faster ``candidate`` is than ``baseline`` (median over median)."""
    if baseline is None or candidate is None or candidate.median <= 0:
        return None
    return baseline.median / candidate.median
