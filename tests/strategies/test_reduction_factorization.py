"""reduction_factorization: a reduction becomes partial reductions and a combine (N; E for max/min)."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason

WORKLOADS = ["level1/layer_norm", "level1/matmul", "level1/softmax"]


@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_factors_a_reduction_of_a_workload(workload_id):
    program = workload(workload_id)
    sites = candidates(program, "reduction_factorization")
    assert sites
    site = sites[-1]
    factor = site.params[0].values[-1]
    step = apply_strategy(program, "reduction_factorization", site, {"factor": factor})
    assert step.exactness.value == "N"
    assert len(step.after.body.blocks) == len(program.body.blocks) + 1
    combine = step.after.body.blocks[site.path[0] + 1]
    assert combine.loops[-1].extent == factor
    check_step(step)


def test_a_max_reduction_is_combined_with_max():
    program = workload("level1/softmax")  # D=max(D,A) over L^{256}_{a}
    step = apply_strategy(program, "reduction_factorization", Site((0,), (("loop", "a"),)), {"factor": 8})
    text = canonical(step.after.body)
    assert "L^{32}_{a=0}L^{8}_{" in text and "D^{f32,g}_{tx}=max(D^{f32,g}_{tx}," in text
    check_step(step)


def test_splitting_a_max_reduction_is_exact():
    """max does not round: any grouping of the partial maxima gives the same bits, so the step is E
    (and verifies bitwise), not N with a "rounding differs" sentence; a sum stays N."""
    program = workload("level1/softmax")  # D=max(D,A) over L^{256}_{a}; E=E+exp(...) over L^{256}_{a}
    step = apply_strategy(program, "reduction_factorization", Site((0,), (("loop", "a"),)), {"factor": 8})
    assert step.exactness.value == "E"
    assert step.trace.exactness.startswith("Exact (E): max does not round")
    assert "rounding differs" not in step.trace.exactness
    check_step(step)  # equal_pass required for E
    summed = apply_strategy(program, "reduction_factorization", Site((1,), (("loop", "a"),)), {"factor": 8})
    assert summed.exactness.value == "N" and "rounding differs" in summed.trace.exactness


def test_refuses_recurrences_spatial_loops_and_multi_statement_blocks():
    cumsum = workload("level1/cumsum")
    assert candidates(cumsum, "reduction_factorization") == []
    site = Site((0,), (("loop", "a"),))
    assert "not a reduction" in refusal_reason(cumsum, "reduction_factorization", site, {"factor": 2})
    matmul = workload("level1/matmul")
    assert_refused(matmul, "reduction_factorization", Site((0,), (("loop", "a"),)))
    two = leir("input A: f32[4, 8]\noutput C: f32[4]\noutput D: f32[4, 8]\n---\n"
               "L^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+A^{f32,g}_{i,a};"
               "D^{f32,g}_{i,a}=A^{f32,g}_{i,a};];")
    assert candidates(two, "reduction_factorization") == []
