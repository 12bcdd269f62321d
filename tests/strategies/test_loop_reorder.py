"""loop_reorder: loops swap; E when no reduction changes order, N when two reduction axes swap."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import Site, apply_strategy, candidates

from .helpers import leir, workload
from .loop_checks import assert_refused, check_step, refusal_reason


@pytest.mark.parametrize("workload_id", ["level1/conv2d", "level1/matmul", "level1/softmax"])
def test_exact_reorders_of_workloads(workload_id):
    program = workload(workload_id)
    exact = [s for s in candidates(program, "loop_reorder")
             if apply_strategy(program, "loop_reorder", s).exactness.value == "E"]
    assert exact
    step = apply_strategy(program, "loop_reorder", exact[-1])
    assert canonical(step.after.body) != canonical(step.before.body)
    check_step(step)


def test_swapping_two_reduction_axes_is_numerically_equivalent():
    program = workload("level1/layer_norm")  # F=F+A over L^{16}_{a}L^{64}_{c}
    site = Site((0,), (("inner", "c"), ("outer", "a")))
    step = apply_strategy(program, "loop_reorder", site)
    assert step.exactness.value == "N"
    assert "L^{64}_{c=0}L^{16}_{a=0}" in canonical(step.after.body)
    assert "Numerically equivalent (N)" in step.trace.exactness
    check_step(step)
    elementwise = [s for s in candidates(program, "loop_reorder") if s.path == (4,)]
    assert apply_strategy(program, "loop_reorder", elementwise[0]).exactness.value == "E"


def test_refuses_reorders_that_change_what_a_statement_reads():
    # Y reads X transposed: swapping i and j changes which X elements exist when Y reads them
    exchange = leir("input A: f32[4, 4]\noutput Y: f32[4, 4]\n---\n"
                    "L^{4}_{i=0}L^{4}_{j=0}[X^{f32,g}_{i,j}=A^{f32,g}_{i,j};Y^{f32,g}_{i,j}=X^{f32,g}_{j,i};];")
    site = Site((0,), (("inner", "j"), ("outer", "i")))
    assert_refused(exchange, "loop_reorder", site)
    assert "exchange values through a tensor" in refusal_reason(exchange, "loop_reorder", site)
    # a running sum over both loops read by a second statement: the partial values it sees would change
    prefix = leir("input A: f32[4, 4]\noutput Y: f32[4, 4]\n---\n"
                  "L^{4}_{i=0}L^{4}_{j=0}[S^{f32,g}=S^{f32,g}+A^{f32,g}_{i,j};Y^{f32,g}_{i,j}=S^{f32,g};];")
    assert candidates(prefix, "loop_reorder") == []
    assert "depends on earlier iterations along i and j" in refusal_reason(prefix, "loop_reorder", site)
    parallel = leir("input A: f32[4, 4]\noutput C: f32[4, 4]\n---\n"
                    "P^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i,j};];")
    assert_refused(parallel, "loop_reorder", site)


_THREE_AXES = ("input A: f32[4, 8, 6, 5]\noutput C: f32[4, 5]\n---\n"
               "L^{4}_{a=0}L^{8}_{c=0}L^{6}_{d=0}L^{5}_{e=0}[C^{f32,g}_{a,e}=C^{f32,g}_{a,e}+A^{f32,g}_{a,c,d,e};];")


def test_the_exactness_names_the_reduction_axes_not_the_swapped_loops():
    """C reduces along c and d only: exchanging a (spatial) with d reorders c and d, so the step is N,
    and the trace names c and d as the reduction axes, not a."""
    step = apply_strategy(leir(_THREE_AXES), "loop_reorder", Site((0,), (("inner", "d"), ("outer", "a"))))
    assert step.exactness.value == "N"
    assert "C reduces along c and d" in step.trace.exactness
    assert "along both a and d" not in step.trace.exactness
    check_step(step)


def test_exchanging_two_spatial_loops_around_reduction_loops_is_exact():
    """a and e are spatial; the reduction loops c and d between them keep their order: E, not N."""
    step = apply_strategy(leir(_THREE_AXES), "loop_reorder", Site((0,), (("inner", "e"), ("outer", "a"))))
    assert step.exactness.value == "E"
    assert "C reduces" not in step.trace.exactness
    check_step(step)
