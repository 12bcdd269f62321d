"""#41: max and sum-of-exp reductions become one pass of prefix recurrences, on every softmax-like workload."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, leir
from .streaming_checks import (
    assert_docstring_pair_is_real,
    assert_rejected,
    assert_step_verifies,
    mutated,
    step_on,
)

NAME = "normal_loop_summation_on_exp_to_prefix_summation_on_exp"
WORKLOADS = ["level1/log_softmax", "level1/cross_entropy", "level1/sdpa_masked_scaled"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_fuses_the_statistics_of_a_workload(workload_id, dtype):
    step = step_on(workload_id, dtype, NAME)
    stats = step.site.path[0]
    assert len(step.after.body.blocks) == len(step.before.body.blocks) - 1
    fused = canonical(step.after.body.blocks[stats])
    assert "-inf" in fused and "exp(" in fused and step.site.get("max") in fused
    assert_step_verifies(step)


def test_missing_rescale_factor_is_rejected():
    step = step_on("level1/log_softmax", "f32", NAME)
    # the running sum no longer shrinks when the running max grows
    wrong = mutated(step, "E^{f32,g}_{tx,c,a-1}*exp(D^{f32,g}_{tx,c,a-1}-D^{f32,g}_{tx,c,a})",
                    "E^{f32,g}_{tx,c,a-1}")
    assert_rejected(step, wrong)


RENAMED = """input Q: f64[3, 5]
output Y: f64[3]
output W: f64[3, 5]
---
L^{3}_{i=0}L^{5}_{j=0}[Mx^{f64,g}_{i}=max(Q^{f64,g}_{i,j}*2,Mx^{f64,g}_{i});];
L^{3}_{k=0}L^{5}_{n=0}[Sm^{f64,g}_{k}=exp(Q^{f64,g}_{k,n}*2-Mx^{f64,g}_{k})+Sm^{f64,g}_{k};];
L^{3}_{i=0}[Y^{f64,g}_{i}=Mx^{f64,g}_{i}+log(Sm^{f64,g}_{i});];
L^{3}_{i=0}L^{5}_{j=0}[W^{f64,g}_{i,j}=Q^{f64,g}_{i,j}-Y^{f64,g}_{i};Y^{f64,g}_{i}=Y^{f64,g}_{i}*1;];
"""


def test_matches_other_names_operand_orders_and_loop_names():
    program = leir(RENAMED)
    (site,) = candidates(program, NAME)
    step = apply_strategy(program, NAME, site)
    text = canonical(step.after.body)
    assert "Mx^{f64,g}_{i,j}=max(if_then_else(j-1<0,-inf,Mx^{f64,g}_{i,j-1}),Q^{f64,g}_{i,j}*2)" in text
    assert "Y^{f64,g}_{i}=Mx^{f64,g}_{i,4}+log(Sm^{f64,g}_{i,4})" in text
    assert_interpreter_agrees(step)


DIFFERENT_X = """input A: f32[2, 4]
input C: f32[2, 4]
output D: f32[2]
---
L^{2}_{i=0}L^{4}_{j=0}[M^{f32,g}_{i}=max(M^{f32,g}_{i},A^{f32,g}_{i,j});];
L^{2}_{i=0}L^{4}_{j=0}[S^{f32,g}_{i}=S^{f32,g}_{i}+exp(C^{f32,g}_{i,j}-M^{f32,g}_{i});];
L^{2}_{i=0}[D^{f32,g}_{i}=S^{f32,g}_{i};];
"""


def test_refuses_when_the_sum_exponentiates_another_value():
    program = leir(DIFFERENT_X)
    assert candidates(program, NAME) == []
    with pytest.raises(NotApplicableError):
        apply_strategy(program, NAME, Site((0,), (("max", "M"), ("sum", "S"), ("axis", "j"))))


def test_refuses_when_the_sum_is_an_output():
    program = leir(DIFFERENT_X.replace("C^{f32,g}_{i,j}-", "A^{f32,g}_{i,j}-")
                   .replace("output D: f32[2]", "output S: f32[2]")
                   .replace("L^{2}_{i=0}[D^{f32,g}_{i}=S^{f32,g}_{i};];\n", "")
                   .replace("input C: f32[2, 4]\n", ""))
    assert candidates(program, NAME) == []


MASKED_PREFIX = """input A: f32[4, 6]
output C: f32[4, 6]
---
L^{4}_{i=0}L^{6}_{j=0}[X^{f32,g}_{i,j}=if_then_else(j<2,-inf,A^{f32,g}_{i,j});];
L^{4}_{i=0}L^{6}_{j=0}[M^{f32,g}_{i}=max(M^{f32,g}_{i},X^{f32,g}_{i,j});];
L^{4}_{i=0}L^{6}_{j=0}[S^{f32,g}_{i}=S^{f32,g}_{i}+exp(X^{f32,g}_{i,j}-M^{f32,g}_{i});];
L^{4}_{i=0}L^{6}_{j=0}[C^{f32,g}_{i,j}=X^{f32,g}_{i,j}-M^{f32,g}_{i}-log(S^{f32,g}_{i});];
"""


def test_rows_that_start_masked_need_the_minus_inf_guard():
    """The corpus' unguarded recurrence gives NaN where the first elements are -inf; the guarded one is exact."""
    program = leir(MASKED_PREFIX)
    step = apply_strategy(program, NAME, 0)
    assert_step_verifies(step)
    guarded = canonical(step.after.body.blocks[1].items[1].value)
    assert guarded.startswith("if_then_else(M^{f32,g}_{i,j}==-inf,0,")
    unguarded = guarded[len("if_then_else(M^{f32,g}_{i,j}==-inf,0,"):-1]
    assert_rejected(step, mutated(step, guarded, unguarded))


def test_the_docstring_pair_is_a_real_step():
    assert_docstring_pair_is_real(NAME)
