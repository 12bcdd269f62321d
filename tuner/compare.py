"""PyTorch eager, ``torch.compile`` and a tuned kernel timed in ONE sandbox job, interleaved, to a bound.

A tuned kernel's verdict against PyTorch (``fast_1``, ``fast_compile``) is a ratio of two timings; timed
in separate jobs, minutes apart, on a shared machine, the same row read 20 ms and 0.18 ms for eager. Here
the three contestants take turns (K E C, C E K, ...), each turn one repeat of at least ``min_repeat_ms``
(calls per repeat fixed once by a calibrating call), on the same inputs, with the host's CPUs to the job
(``verifier.cpu_share.alone``), and rounds go on until every contestant's spread —
``dataset.effects.noise``, the robust standard deviation over the median — is within ``bound``, or
``max_rounds`` is reached, and the result says which (``within_bound``).

The job runs in a warm sandbox worker (``run_compare``); torch stays in the frontend
(``TorchReference.measure_eager_and_compiled``), TVM in the verifier (``verifier.build``).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

#: Relative spread (robust sigma over the median) every contestant must reach.
SPREAD_BOUND = 0.05
MIN_ROUNDS = 5
MAX_ROUNDS = 30
MIN_REPEAT_MS = 20.0


def _interleave(contestants: dict[str, Callable[[int], float]], calls: dict[str, int], *, bound: float,
                min_rounds: int, max_rounds: int) -> tuple[dict[str, list[float]], int, bool]:
    """Samples (seconds per call) per contestant, the rounds taken, and whether all spreads met ``bound``."""
    from dataset.effects import noise

    names = list(contestants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    rounds, within = 0, False
    while rounds < max_rounds:
        for name in names if rounds % 2 == 0 else reversed(names):
            samples[name].append(contestants[name](calls[name]))
        rounds += 1
        if rounds >= min_rounds:
            within = all(noise(values) <= bound for values in samples.values())
            if within:
                break
    return samples, rounds, within


def _python_repeat(call: Callable[[], Any]) -> Callable[[int], float]:
    def repeat(number: int) -> float:
        start = time.perf_counter()
        for _ in range(number):
            call()
        return (time.perf_counter() - start) / number
    return repeat


def _calls(repeat: Callable[[int], float], min_repeat_ms: float) -> int:
    """Calls per repeat so one lasts ``min_repeat_ms`` (after a warm-up call)."""
    repeat(1)
    return max(1, math.ceil(min_repeat_ms / 1e3 / max(repeat(1), 1e-9)))


def compare_job(path: str, sets: Mapping[str, Any], program_text: str, target: str, *,
                min_repeat_ms: float = MIN_REPEAT_MS, bound: float = SPREAD_BOUND,
                min_rounds: int = MIN_ROUNDS, max_rounds: int = MAX_ROUNDS, seed: int = 0) -> dict[str, Any]:
    """The job itself (runs in the worker): median ms per call of ``kernel``, ``eager`` and ``compiled``
    (``None`` when ``torch.compile`` failed: ``note`` says why), every spread, rounds, ``within_bound``."""
    from leir.program import load_program
    from verifier.build import build
    from verifier.cpu_share import alone
    from verifier.inputs import make_inputs
    from verifier.reference import TorchSourceReference

    program = load_program(program_text)
    reference = TorchSourceReference(path, dict(sets))
    arrays = make_inputs(program, seed=seed, params=reference.params(), domains=reference.input_domains())
    kernel = build(program, target=target, cache=False)

    def kernel_repeat(number: int) -> float:
        return float(kernel.time(arrays, number=number, repeat=1, min_repeat_ms=0)[0])

    def timer(eager: Callable[[], Any], compiled: Callable[[], Any] | None, note: str) -> dict[str, Any]:
        contestants = {"kernel": kernel_repeat, "eager": _python_repeat(eager)}
        if compiled is not None:
            contestants["compiled"] = _python_repeat(compiled)
        with alone():
            calls = {name: _calls(repeat, min_repeat_ms) for name, repeat in contestants.items()}
            samples, rounds, within = _interleave(contestants, calls, bound=bound, min_rounds=min_rounds,
                                                  max_rounds=max_rounds)
        return {"note": note, "samples": samples, "rounds": rounds, "within_bound": within}

    measured = reference.measure_eager_and_compiled(arrays, timer)
    return summarise(measured, bound)


def summarise(measured: Mapping[str, Any], bound: float) -> dict[str, Any]:
    """Medians (ms), spreads and the two ratios from a job's samples."""
    from dataset.effects import noise

    samples: Mapping[str, list[float]] = measured["samples"]
    ms = {name: statistics.median(values) * 1e3 for name, values in samples.items()}
    kernel = ms["kernel"]
    return {"kernel_ms": kernel, "eager_ms": ms.get("eager"), "compiled_ms": ms.get("compiled"),
            "vs_eager": ms["eager"] / kernel if "eager" in ms else None,
            "vs_compiled": ms["compiled"] / kernel if "compiled" in ms else None,
            "spread": {name: round(noise(values), 4) for name, values in samples.items()},
            "bound": bound, "rounds": measured["rounds"], "within_bound": measured["within_bound"],
            "note": measured["note"]}


#: ``torch.compile`` builds with a C++ compiler in the job: minutes on a loaded machine.
COMPARE_TIMEOUT_S = 900.0
COMPARE_MEMORY_MB = 12_288


def run_compare(path: str | Path, sets: Mapping[str, Any], program_text: str, target: str, *,
                pool: Any = None, timeout: float = COMPARE_TIMEOUT_S, **options: Any) -> dict[str, Any]:
    """``compare_job`` in a warm sandbox worker (the verifier's pool by default); ``RuntimeError`` with the
    worker's error when it fails."""
    from verifier.verify import default_pool

    result = (pool or default_pool()).run(compare_job, str(path), dict(sets), program_text, target,
                                          timeout=timeout, memory_limit_mb=COMPARE_MEMORY_MB, **options)
    if not result.ok:
        raise RuntimeError(f"compare job for {path} failed ({result.status.value}): {result.error}")
    value: dict[str, Any] = result.value
    return value
