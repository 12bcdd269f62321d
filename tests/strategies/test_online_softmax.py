"""#42: a softmax's statistics become one online pass; the normalisation reads the last elements."""

from __future__ import annotations

import pytest

from strategies import candidates

from .helpers import workload
from .streaming_checks import (
    assert_docstring_pair_is_real,
    assert_rejected,
    assert_step_verifies,
    mutated,
    step_on,
)

NAME = "online_softmax"
WORKLOADS = ["level1/softmax", "level1/sdpa_causal", "level2/gqa_sdpa_causal"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_online_softmax_of_a_workload_verifies(workload_id, dtype):
    step = step_on(workload_id, dtype, NAME)
    assert "Numerically equivalent (N)" in step.trace.exactness
    assert "read in one pass instead of two" in step.trace.rationale
    assert_step_verifies(step)


def test_log_softmax_is_not_a_softmax_but_is_a_41_site():
    program = workload("level1/log_softmax")
    assert candidates(program, NAME) == []
    assert candidates(program, "normal_loop_summation_on_exp_to_prefix_summation_on_exp")


def test_wrong_initial_value_is_rejected():
    step = step_on("level1/softmax", "f32", NAME)
    # the first running sum starts from 1 instead of 0 (the rescale multiplies it by exp(M_0-M_0)=1)
    wrong = mutated(step, "if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))",
                    "if_then_else(a-1<0,1,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))")
    assert_rejected(step, wrong)


EPILOGUE = """input Q: f64[3, 7]
output Y: f64[3, 7]
output Z: f64[3, 7]
---
L^{3}_{r=0}L^{7}_{c=0}[Hi^{f64,g}_{r}=max(Hi^{f64,g}_{r},Q^{f64,g}_{r,c}/2);];
L^{3}_{r=0}L^{7}_{c=0}[Tot^{f64,g}_{r}=Tot^{f64,g}_{r}+exp(Q^{f64,g}_{r,c}/2-Hi^{f64,g}_{r});];
L^{3}_{u=0}L^{7}_{w=0}[Z^{f64,g}_{u,w}=Q^{f64,g}_{u,w}*3;Y^{f64,g}_{u,w}=exp(Q^{f64,g}_{u,w}/2-Hi^{f64,g}_{u})/Tot^{f64,g}_{u};Z^{f64,g}_{u,w}=Z^{f64,g}_{u,w}+Y^{f64,g}_{u,w};];
"""


def test_matches_a_softmax_with_other_names_a_scaled_input_and_extra_statements():
    from leir.printer import canonical
    from strategies import apply_strategy

    from .helpers import assert_interpreter_agrees, leir

    program = leir(EPILOGUE)
    (site,) = candidates(program, NAME)
    step = apply_strategy(program, NAME, site)
    assert "Y^{f64,g}_{u,w}=exp(Q^{f64,g}_{u,w}/2-Hi^{f64,g}_{u,6})/Tot^{f64,g}_{u,6}" in canonical(step.after.body)
    assert_interpreter_agrees(step)


def test_the_docstring_pair_is_a_real_step():
    assert_docstring_pair_is_real(NAME)
