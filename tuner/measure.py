"""Measuring a candidate: verify it against its parent and time it against the source, in one job.

``Measurer.measure(after, before)`` calls ``verifier.verify`` with ``time=True`` and the run's source
program, so the state, its parent and the source are built and timed in the same sandbox job on the same
fresh inputs, and ``speedup_vs_source`` — the search's reward — compares like with like. Acceptance is the
dataset's rule (``records.verification_json``): ``equal_pass`` for exact steps, ``pass`` for the others.

On a target that fuses multiply-adds (``llvm-native``) an exact step can match its parent only within the
tolerance because LLVM contracted a product into the sum that now sits in the same statement, not because
the step changed any arithmetic. Such a step is judged once more on the target's contraction-free twin
(``verifier.targets.contraction_free_twin``, no timing): it is accepted when it is bitwise equal to its
parent there, and the record says so (``result["exactness_check"]``) while its outcome stays the timed
build's ``pass``. Without this, every fusion of ``x*w`` into ``+ b`` is lost to the search on that target.

The warm worker reuses what a child shares with its siblings (``verifier.reuse``: the parent's and the
source's kernels, the parent's outputs and error bound on the same inputs) — the same verification, less
work. ``reuse_timings=True`` also reuses the parent's and the source's timings from the first job that
took them; off by default, because then the reward's denominator is no longer timed beside the candidate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dataset.records import verification_json
from leir.ast import Program
from strategies.base import Exactness
from verifier.targets import contraction_free_twin


@dataclass(frozen=True)
class Measurement:
    accepted: bool
    speedup: float | None
    seconds: float | None
    verification: dict[str, Any]
    #: The source program's median seconds, timed in the same job (the reward's denominator).
    source_seconds: float | None = None


class Measurer:
    """Verification plus timing on a warm sandbox pool (``verifier`` is imported only here)."""

    def __init__(self, source: Program, *, target: str = "llvm-host", cache: bool = True, workers: int = 1,
                 repeats: int = 5, min_repeat_ms: float = 20.0, cache_dir: str | None = None,
                 reuse: bool = True, reuse_timings: bool = False):
        from verifier import cache as cache_mod
        from verifier.sandbox import WorkerPool
        from verifier.verify import DEFAULT_MEMORY_LIMIT_MB, DEFAULT_TIMEOUT_S, WARM_MODULES

        self.source = source
        self.target = target
        self.repeats = repeats
        self.min_repeat_ms = min_repeat_ms
        self.reuse = reuse
        self.reuse_timings = reuse_timings
        self.pool = WorkerPool(workers, warm_modules=WARM_MODULES, timeout=DEFAULT_TIMEOUT_S,
                               memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB)
        self.cache = cache_mod.ResultCache(cache_dir) if cache else False
        #: Where an exact step's equal pass is judged when ``target`` contracts multiply-adds.
        self.exact_twin = contraction_free_twin(target)
        self.count = 0

    def settings(self) -> dict[str, Any]:
        settings: dict[str, Any] = {"target": self.target, "repeats": self.repeats,
                                    "min_repeat_ms": self.min_repeat_ms}
        if self.reuse_timings:  # only then: runs without it keep the records they always had
            settings["reuse_timings"] = True
        return settings

    def measure(self, after: Program, before: Program, exactness: Exactness) -> Measurement:
        from verifier.verify import verify

        self.count += 1
        result = verify(after, parent=before, source=self.source, target=self.target, time=True,
                        reference="parent", pool=self.pool, cache=self.cache, repeats=self.repeats,
                        min_repeat_ms=self.min_repeat_ms, reuse=self.reuse,
                        reuse_timings=self.reuse_timings).to_json()
        verification = verification_json(result, exactness)
        if _contraction_may_explain(verification) and self.exact_twin is not None:
            self._judge_on_twin(verification, after, before, self.exact_twin)
        return Measurement(verification["accepted"], _number(result.get("speedup_vs_source")),
                           _median(result.get("timing")), verification,
                           _median(result.get("source_timing")))

    def _judge_on_twin(self, verification: dict[str, Any], after: Program, before: Program,
                       exact_twin: str) -> None:
        """Accept an exact step that is bitwise equal to its parent on ``exact_twin`` (module docstring)."""
        from verifier.verify import verify

        twin = verify(after, parent=before, target=exact_twin, reference="parent", pool=self.pool,
                      cache=self.cache, reuse=self.reuse).to_json()
        verification["result"]["exactness_check"] = {
            "target": exact_twin, "outcome": twin.get("outcome"),
            "max_abs_error": twin.get("max_abs_error"), "error": twin.get("error")}
        verification["accepted"] = twin.get("outcome") == "equal_pass"

    def close(self) -> None:
        self.pool.close()


def _contraction_may_explain(verification: Mapping[str, Any]) -> bool:
    """An exact step that ran, honoured its loops and matched within the tolerance, but not bit for bit."""
    return (not verification["accepted"] and verification["required"] == "equal_pass"
            and verification["outcome"] == "pass" and not verification["unhonoured_loops"])


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _median(timing: Mapping[str, Any] | None) -> float | None:
    return _number(timing.get("median")) if isinstance(timing, Mapping) else None
