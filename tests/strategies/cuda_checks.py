"""The cuda half of a memory step's verification: no GPU here, so the step must lower and compile.

On the CPU every scope is a global buffer, so an ``s``/``l`` step that verifies on llvm proves the
arithmetic only; whether the lowering accepts the on-chip placement (one kernel, one copy per block or
thread, no whole-tensor fill, the shared-memory limit) is decided by ``lower(program, "cuda")`` and
nvcc, which both run here.
"""

from __future__ import annotations

from strategies import AppliedStep


def assert_builds_for_cuda(step: AppliedStep) -> None:
    from verifier.build import build
    from verifier.lowering import lower

    lowered = lower(step.after, "cuda")
    assert "T.thread_binding" in lowered.source
    build(lowered, "cuda")
