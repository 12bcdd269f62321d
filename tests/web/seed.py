"""A small, fully known dataset for the review-page tests: real states, steps with chosen statuses, reviews.

The source state is the real frontend's translation of a built-in workload and one step is the real
engine's; the other steps reuse real states with chosen labels, so every count a page shows is known
exactly in advance.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from curation.models import (
    Decision,
    ProgramState,
    Review,
    ReviewStatus,
    Step,
    Verification,
    VerificationStatus,
    Workload,
)
from curation.services import workloads
from curation.services.roles import Role
from tests.backend.fixtures import builtin, engine_step, user


@dataclass
class Seeded:
    workload: Workload
    other: Workload
    source: ProgramState
    steps: dict[str, Step] = field(default_factory=dict)


def _state(workload: Workload, like: ProgramState, tag: str, parent: ProgramState, depth: int) -> ProgramState:
    return ProgramState.objects.create(workload=workload, program_hash=f"{tag:0<8}{like.program_hash[8:]}",
                                       tensors=like.tensors, leir=like.leir, parent=parent, depth=depth)


def _step(name: str, workload: Workload, before: ProgramState, after: ProgramState, strategy: str, level: str,
          verification: str, review: str = ReviewStatus.UNREVIEWED, trace: str = "") -> Step:
    return Step.objects.create(
        step_id=f"seed-{name}", workload=workload, before=before, after=after, strategy=strategy, number=1,
        level=level, site={"path": [0]}, params={}, exactness="E", trace={}, depth=after.depth,
        trace_text=trace or f"In block 1 the {strategy} rewrite keeps the {name} footprint contiguous",
        verification_status=verification, review_status=review)


def seed() -> Seeded:
    """Two workloads (levels 1 and 2), six steps, two reviewers who agree on one step and not on another.

    Tree of level1/layer_norm: source → a (engine loop_unrolling, equal pass) → b (loop_tiling, pass)
    and source → c (loop_tiling, fail); b → a closes a cycle (loop_reorder, pending).
    """
    workload = builtin("level1/layer_norm")
    other = builtin("level2/gemm_gelu")
    source = workloads.source_state(workload)
    real = engine_step(workload)  # loop_unrolling, equal pass, source → its real after-state
    a = real.after
    b = _state(workload, a, "b", a, 2)
    c = _state(workload, source, "c", source, 1)
    seeded = Seeded(workload, other, source, {"unroll": real})
    seeded.steps["tile_ab"] = _step("tile_ab", workload, a, b, "loop_tiling", "loop", VerificationStatus.PASS)
    seeded.steps["tile_c"] = _step("tile_c", workload, source, c, "loop_tiling", "loop", VerificationStatus.FAIL)
    seeded.steps["cycle"] = _step("cycle", workload, b, a, "loop_reorder", "loop", VerificationStatus.PENDING)
    other_source = workloads.source_state(other)
    d = _state(other, other_source, "d", other_source, 1)
    e = _state(other, other_source, "e", other_source, 1)
    seeded.steps["fuse_1"] = _step("fuse_1", other, other_source, d, "operator_fusion", "graph",
                                   VerificationStatus.EQUAL_PASS, ReviewStatus.APPROVED,
                                   trace="In block 2 fusing the producer into the gelu consumer saves bytes")
    seeded.steps["fuse_2"] = _step("fuse_2", other, other_source, e, "operator_fusion", "graph",
                                   VerificationStatus.EQUAL_PASS, ReviewStatus.DISPUTED)
    Verification.objects.create(state=a, step=real, parent=source, target="llvm", toolchain="tvm=test",
                                outcome="equal_pass", speedup_vs_parent=1.25, speedup_vs_source=1.25)
    Verification.objects.create(state=b, step=seeded.steps["tile_ab"], parent=a, target="llvm",
                                toolchain="tvm=test", outcome="pass", speedup_vs_parent=2.0,
                                speedup_vs_source=2.5)
    ann, bob = user("ann", Role.REVIEWER), user("bob", Role.REVIEWER)
    for reviewer in (ann, bob):  # both approve fuse_1 …
        Review.objects.create(step=seeded.steps["fuse_1"], reviewer=reviewer, decision=Decision.APPROVE,
                              step_version=1)
    Review.objects.create(step=seeded.steps["fuse_2"], reviewer=ann, decision=Decision.APPROVE, step_version=1)
    Review.objects.create(step=seeded.steps["fuse_2"], reviewer=bob, decision=Decision.REJECT,  # … not fuse_2
                          reason="trivial_or_shortcut", step_version=1)
    seeded.steps["unroll"].assigned_to.add(ann)
    return seeded
