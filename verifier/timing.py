"""Timing of built kernels (TVM's evaluator through ``Kernel.time``) and of PyTorch eager, the same way.

The protocol, identical for every program timed in one verification (the state, its parent, the source
program, the eager PyTorch module) so that their ratios mean something on a shared, noisy machine:

* a warm-up, discarded: page faults, lazy initialisation, caches, and above all the thread pools —
  PyTorch's OpenMP pool runs its first few dozen calls ~1000x slower on this loaded 2-core machine
  (measured: 20 ms instead of 15 us for a small ``bmm``), so the warm-up runs for ``WARMUP_MS`` or
  ``WARMUP_CALLS`` calls, whichever comes first, never a single call;
* ``repeats`` repeats, each averaging as many calls as it takes to last ``min_repeat_ms`` (TVM's
  ``min_repeat_ms`` does this for kernels; ``time_callable`` does the same for Python callables);
* the median of the repeats is *the* time; the IQR and standard deviation say how much to trust it.

Timing runs on *fresh* inputs (a different seed from the checked ones), and ``verify`` re-checks the
timed binary's output on those inputs, so a kernel cannot pass on one input set and be timed on another.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import numpy as np

from verifier.result import TimingStats

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
    """Time a built ``Kernel`` with TVM's evaluator: a discarded warm-up, then ``repeats`` repeats."""
    kernel.time(arrays, number=1, repeat=1, min_repeat_ms=int(min(WARMUP_MS, 4 * min_repeat_ms)))
    samples = list(kernel.time(arrays, number=1, repeat=repeats, min_repeat_ms=int(min_repeat_ms)))
    return stats(samples, number=0)  # 0: TVM chose the per-repeat call count to reach min_repeat_ms


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
    """The machine a timing was taken on: CPU model (from /proc/cpuinfo), core count, architecture."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": usable, "machine": platform.machine(), "gpu": gpu_name()}


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
