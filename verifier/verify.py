"""Verify one LEIR state: check, build, run in the sandbox, compare, optionally time — with a result cache.

This module is the caller's side of the sandbox: it prepares the job and interprets its result; the job
itself, everything that runs inside a sandbox worker, is ``verifier.verify_job``.

``verify(program, parent=..., ...)`` is the one entry point the CLI, Celery tasks, the tuner and the
benchmarks use. The protocol (ARCHITECTURE.md, "Verification protocol"):

1. the checker runs here, in the caller — an invalid program is ``check_error`` with no TVM call;
2. the result cache is consulted (``verifier.cache``); a hit returns at once with ``cache_hit=True``;
3. everything else — building the state (and its parent/source), running it on seeded inputs, running
   the reference, comparing, timing — happens in ONE job (``verifier.verify_job``) in a sandbox worker
   (``verifier.sandbox``), so a segfault, hang or memory blow-up anywhere is an outcome and the caller
   carries on;
4. the outcome: ``pass`` when the outputs match the reference within the tolerance — per element, scaled
   by the rounding-error bound of the computation (``verifier.error_bound``, ``verifier.compare``;
   docs/verification.md) —, ``equal_pass`` when they are also bitwise identical to the parent's on the same
   target and inputs, ``execute`` when there was nothing to compare with, ``build`` when the kernel could
   only be compiled (cuda without a GPU); failures as listed in ``verifier.result.Outcome``.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from leir.ast import Program
from leir.semantics import ProgramInfo
from verifier import cache as cache_mod
from verifier.compare import RULE_VERSION
from verifier.errors import KernelFailure
from verifier.inputs import InputDomain, domains_digest
from verifier.reference import (
    BOUND_MAX_ITERATIONS,
    INTERPRETER_MAX_ITERATIONS,
    InterpreterReference,
    Reference,
    iteration_count,
    params_digest,
)
from verifier.result import Outcome, VerificationResult
from verifier.sandbox import JobResult, JobStatus, WorkerPool
from verifier.verify_job import STAGE_MARK, JobSpec, bounded_compare, error_text, verify_job

#: ``bounded_compare`` is the job's, re-exported for callers that compare outputs themselves.
__all__ = ["DEFAULT_MEMORY_LIMIT_MB", "DEFAULT_TIMEOUT_S", "WARM_MODULES", "bounded_compare", "check_program",
           "counters", "default_pool", "gpu_present", "verify"]

DEFAULT_TIMEOUT_S = float(os.environ.get("STEPTP_VERIFY_TIMEOUT", "300"))
DEFAULT_MEMORY_LIMIT_MB = int(os.environ.get("STEPTP_VERIFY_MEMORY_MB", "4096"))
#: Modules every sandbox worker imports once, so jobs never pay for TVM's import.
WARM_MODULES = ("numpy", "verifier.build", "leir.interpreter")

_STAGE_RE = re.compile(re.escape(STAGE_MARK) + r"(\w+)")

#: Counters a caller (or a test) can read: jobs sent to the sandbox, cache hits.
counters = {"jobs": 0, "cache_hits": 0}

_default_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process-wide warm pool (``STEPTP_VERIFY_WORKERS`` workers, default 1), started on first use."""
    global _default_pool
    with _pool_lock:
        if _default_pool is None:
            _default_pool = WorkerPool(int(os.environ.get("STEPTP_VERIFY_WORKERS", "1")),
                                       warm_modules=WARM_MODULES, timeout=DEFAULT_TIMEOUT_S,
                                       memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB)
        return _default_pool


def gpu_present() -> bool:
    """Whether an NVIDIA driver is visible here (cuda kernels can run only then)."""
    return os.path.exists("/dev/nvidiactl") or os.path.isdir("/proc/driver/nvidia/gpus")



# ------------------------------------------------------------------------------------- the caller


def check_program(program: Program) -> ProgramInfo:
    """The checker's ``ProgramInfo`` for ``program`` (``leir.checker``)."""
    from leir import checker

    return checker.check(program)


def _choose_reference(program: Program, parent: Program | None, source: Program | None,
                      reference: Reference | str | None, notes: list[str],
                      max_iterations: int) -> Reference | None:
    if reference is not None and not isinstance(reference, str):
        return reference
    if reference == "none" or reference == "parent":
        return None
    trusted = source or parent or program
    count = iteration_count(trusted)
    if count > max_iterations:
        notes.append(f"interpreter reference skipped: {count:,} statement executions > {max_iterations:,}"
                     + ("; comparing with the parent instead" if parent is not None else ""))
        return None
    return InterpreterReference(trusted)


def _stage_of(log: str) -> str | None:
    stages = _STAGE_RE.findall(log or "")
    return stages[-1] if stages else None


def _clean_log(log: str) -> str:
    return "\n".join(line for line in (log or "").splitlines() if not line.startswith(STAGE_MARK))[-4000:]


def verify(program: Program, *, parent: Program | None = None, source: Program | None = None,
           target: str = "llvm", seed: int = 0, special_values: bool = False, time: bool = False,
           reference: Reference | str | None = None, params: Mapping[str, np.ndarray] | None = None,
           cache: cache_mod.ResultCache | None | bool = True, pool: WorkerPool | None = None,
           timeout: float | None = None, memory_limit_mb: int | None = None,
           max_interpreter_iterations: int = INTERPRETER_MAX_ITERATIONS,
           max_bound_iterations: int = BOUND_MAX_ITERATIONS,
           repeats: int = 7, min_repeat_ms: float = 50.0, reuse: bool = True,
           reuse_timings: bool = False, equal_skips_bound: bool = False, large_offset: bool = False,
           domains: Mapping[str, InputDomain] | None = None) -> VerificationResult:
    """Verify ``program`` (a step's after-state) against ``parent`` (its before-state) and a reference.

    ``reference``: a ``Reference`` object (e.g. ``TorchSourceReference``), ``"none"``/``"parent"`` to
    compare only with the parent, or ``None`` for the default (the interpreter on the source, parent or
    program itself when small enough, else the parent). ``source`` is the trajectory's first state, used
    for ``speedup_vs_source``. ``cache=True`` uses the default on-disk cache, ``False``/``None`` none.
    ``reuse``: the worker reuses kernels, outputs and error bounds it already computed for the same
    (program, target, inputs) — the same result bytes, less work (``verifier.reuse``); ``reuse_timings``
    also reuses the parent's and the source's timings from earlier jobs on the same inputs (what the worker
    has not timed yet is timed together, interleaved). ``equal_skips_bound``: outputs bitwise equal to the
    parent's skip the error bound, which any tolerance they already meet (an exact step needs only that).
    ``max_interpreter_iterations`` caps the interpreter as a reference, ``max_bound_iterations`` the
    error bound (above it: the fixed per-dtype tolerance; ``0`` forces the fixed one).
    ``large_offset``: float inputs are ``offset + N(0, 1)`` (``verifier.inputs.LARGE_OFFSETS``), and a
    program compared with a different trusted program must also be about as accurate as it there
    (``verifier.accuracy``). ``domains``: the source's input domains (``InputDomain`` by name, what
    ``steptp translate`` writes beside the program); without them a PyTorch source reference gives its
    own, and other programs get the default distribution.
    """
    from leir.program import program_hash
    from verifier.targets import kind as target_kind
    from verifier.targets import runs_here

    versions = cache_mod.toolchain_versions()
    base: dict[str, Any] = dict(target=target, seed=seed, special_values=special_values, versions=versions,
                                program_hash=program_hash(program),
                                parent_hash=program_hash(parent) if parent is not None else None)
    notes: list[str] = []
    chosen = _choose_reference(program, parent, source, reference, notes, max_interpreter_iterations)
    params = {k: np.asarray(v) for k, v in (params or {}).items()}
    reference_id = chosen.identity() if chosen is not None else ("parent" if parent is not None else "none")
    reference_id += f"|compare={RULE_VERSION}|bound<={max_bound_iterations}"
    if equal_skips_bound:
        reference_id += "|equal-skips-bound"
    if source is not None and time:
        reference_id += f"|source={program_hash(source)}"
    if cache is True:
        result_cache: cache_mod.ResultCache | None = cache_mod.ResultCache()
    else:
        result_cache = cache if isinstance(cache, cache_mod.ResultCache) else None
    key = cache_mod.cache_key(program_hash=base["program_hash"], parent_hash=base["parent_hash"],
                              target=target, seed=seed, special_values=special_values, versions=versions,
                              reference=reference_id, params_digest=params_digest(params), timed=time,
                              inputs=("large-offset|" if large_offset else "") + domains_digest(domains))
    if result_cache is not None:
        hit = result_cache.get(key)
        if hit is not None:
            counters["cache_hits"] += 1
            return hit
    # Checked after the lookup: only checked programs are ever stored, and a hit then costs no check.
    try:
        info = check_program(program)
    except Exception as exc:
        return VerificationResult(Outcome.CHECK_ERROR, error=f"checker failed: {error_text(exc)}", **base)
    if not info.ok:
        return VerificationResult(Outcome.CHECK_ERROR, error="; ".join(str(d) for d in info.errors),
                                  log_excerpt="\n".join(str(d) for d in info.diagnostics), **base)
    # ``verifier.targets.runs_here`` is the one place that knows which kernels ``Kernel.run`` can run here.
    runs = runs_here(target)
    if not runs:
        where = "a GPU is present but " if gpu_present() else ""
        notes.append(f"{target_kind(target)} kernel compiled only: {where}running it needs a GPU worker "
                     "(queue verify.cuda)")
    spec = JobSpec(program=program, parent=parent, source=source, target=target, seed=seed,
                    special_values=special_values, time=time, run=runs, reference=chosen, params=params,
                    shapes={name: t.shape for name, t in info.tensors.items()}, repeats=repeats,
                    min_repeat_ms=min_repeat_ms, notes=notes, max_bound_iterations=max_bound_iterations,
                    reuse=reuse, reuse_timings=reuse_timings, equal_skips_bound=equal_skips_bound,
                    large_offset=large_offset, domains=dict(domains or {}))
    worker_pool = pool or default_pool()
    counters["jobs"] += 1
    job = worker_pool.run(verify_job, spec, timeout=timeout,
                          memory_limit_mb=memory_limit_mb if memory_limit_mb is not None else True)
    result = _to_result(job, base, notes, chosen, parent)
    if result_cache is not None and job.worker_started:  # a worker that never started judged nothing
        result_cache.put(key, result)
    return result


def _to_result(job: JobResult, base: dict[str, Any], notes: list[str], chosen: Reference | None,
               parent: Program | None) -> VerificationResult:
    default_reference = chosen.kind if chosen is not None else ("parent" if parent is not None else "none")
    if job.status is JobStatus.OK:
        fields = dict(job.value)
        fields.setdefault("reference", default_reference)
        fields["versions"] = {**base["versions"], **fields.get("versions", {})}
        fields["log_excerpt"] = _clean_log(job.log)
        merged = {**base, **fields}
        merged["outcome"] = Outcome(merged["outcome"])
        return VerificationResult.from_json({**merged, "outcome": merged["outcome"].value})
    stage = _stage_of(job.log)
    where = f" during {stage}" if stage else ""
    outcome = {
        JobStatus.CRASH: Outcome.CRASH,
        JobStatus.TIMEOUT: Outcome.TIMEOUT,
        JobStatus.MEMORY_LIMIT: Outcome.MEMORY_LIMIT,
        JobStatus.ERROR: Outcome.RUNTIME_ERROR,
    }[job.status]
    error = (job.error or "") + where
    if job.status is JobStatus.ERROR and job.traceback:
        notes = notes + ["sandbox job raised: " + job.traceback.strip().splitlines()[-1]]
    from verifier.timing import hardware

    error_class = KernelFailure.__name__  # the program's kernel crashed, hung, ran out of memory or raised
    return VerificationResult(outcome, error=error, notes=list(notes), log_excerpt=_clean_log(job.log),
                              reference=default_reference, hardware=hardware(), error_class=error_class,
                              **base)
