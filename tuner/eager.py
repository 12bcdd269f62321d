"""PyTorch eager's time per call for a problem file, measured inside a sandbox worker.

Why a worker: the final measurement (``verify`` against ``TorchSourceReference`` with timing) times eager
in a sandbox worker, so the probe that picks shapes by eager's time uses the same kind of process and the
same protocol. In ``bench/tune.py``'s own process (which also holds TVM's runtime and the search's pool
threads) the probe once read 12–24 ms, under heavy load, for a module the worker timed at 0.2 ms; on a
quiet machine the two agree (``level2/conv2d_groupnorm_silu``: 0.059 vs 0.072 ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Timing protocol of the probe: a shape choice needs the order of magnitude, not the final figure.
PROBE_REPEATS = 3
PROBE_MIN_REPEAT_MS = 10.0


def eager_ms_job(path: str, sets: Mapping[str, Any]) -> float:
    """The job itself (runs in the worker): median ms per forward call of the file's model at ``sets``,
    timed by ``TorchSourceReference.time_eager``, the final check's own eager timing."""
    from verifier.cpu_share import alone
    from verifier.reference import TorchSourceReference

    reference = TorchSourceReference(path, sets)
    arrays = reference.inputs()
    with alone():
        stats, _ = reference.time_eager(arrays, repeats=PROBE_REPEATS, min_repeat_ms=PROBE_MIN_REPEAT_MS)
    return float(stats.median * 1e3)


def eager_ms(path: str | Path, sets: Mapping[str, Any], *, pool: Any = None) -> float:
    """Eager ms per call of ``path`` at ``sets``, timed in a warm sandbox worker (the verifier's pool by
    default). Raises ``RuntimeError`` with the worker's error when the module cannot run at those sizes."""
    from verifier.verify import default_pool

    result = (pool or default_pool()).run(eager_ms_job, str(path), dict(sets))
    if not result.ok:
        raise RuntimeError(f"eager probe of {path} failed ({result.status.value}): {result.error}")
    return float(result.value)
