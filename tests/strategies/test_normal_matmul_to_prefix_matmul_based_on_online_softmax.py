"""#44 (designed here): the matmul of an online softmax's output becomes a normalised prefix recurrence."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from leir.strategies import candidates
from leir.strategies.math.streaming import score_passes

from .helpers import workload
from .streaming_checks import (
    assert_docstring_pair_is_real,
    assert_rejected,
    assert_step_verifies,
    mutated,
    step_on,
    stream_parts,
)

NAME = "normal_matmul_to_prefix_matmul_based_on_online_softmax"
WORKLOADS = ["level1/sdpa_causal", "level1/sdpa_masked_scaled", "level2/gqa_sdpa_causal"]
SCORES = {"level1/sdpa_causal": "G", "level1/sdpa_masked_scaled": "H", "level2/gqa_sdpa_causal": "Y"}


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_prefix_matmul_after_online_softmax_verifies(workload_id, dtype):
    step = step_on(workload_id, dtype, NAME, after=("online_softmax",))
    scores = SCORES[workload_id]
    assert score_passes(step.before, scores) == 2 and score_passes(step.after, scores) == 1
    # the output is the last prefix element: no division after the stream
    write = canonical(step.after.body.blocks[step.site.path[0] + 1])
    assert "/" not in write
    assert_step_verifies(step)


def test_needs_an_online_softmax():
    assert candidates(workload("level1/sdpa_causal"), NAME) == []


@pytest.mark.parametrize("workload_id", ["level1/sdpa_causal", "level2/gqa_sdpa_causal"])
@pytest.mark.parametrize("last", ["flashattention_wo_tiling", NAME])
def test_online_softmax_then_flash_attention_verifies_against_the_source(workload_id, last):
    """The issue's sequence: online softmax, then the streaming matmul; checked against the source."""
    from verifier.verify import verify

    source = workload(workload_id)
    final = step_on(workload_id, "f32", last, after=("online_softmax",)).after
    result = verify(final, parent=source, reference="parent", cache=False)
    assert result.outcome.value == "pass", (result.error, result.notes)


def test_missing_running_sum_ratio_is_rejected():
    step = step_on("level1/sdpa_causal", "f32", NAME, after=("online_softmax",))
    factor, _, _ = stream_parts(step)
    ratio = factor.value.otherwise.otherwise  # S_{k-1}*exp(M_{k-1}-M_k)/S_k
    assert ratio.op == "/" and ratio.left.op == "*"
    # keeps the max rescale but forgets S_{k-1}/S_k: the old partial output is not renormalised
    assert_rejected(step, mutated(step, canonical(ratio), canonical(ratio.left.right)))


def test_the_docstring_pair_is_a_real_step():
    assert_docstring_pair_is_real(NAME)


CORPUS_FORM = """input A: f64[2, 4]
input G: f64[4, 3]
output C: f64[2, 3]
---
B^{2}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f64,g}_{tx,a-1}),A^{f64,g}_{tx,a});F^{f64,g}_{tx,a}=if_then_else(a-1<0,1,F^{f64,g}_{tx,a-1})*exp(if_then_else(a-1<0,-inf,D^{f64,g}_{tx,a-1})-D^{f64,g}_{tx,a})+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,a});];
B^{2}_{tx=0}L^{4}_{a=0}[E^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,3})/F^{f64,g}_{tx,3};];
B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+E^{f64,g}_{tx,c}*G^{f64,g}_{c,a};];
"""


def test_accepts_the_reference_datas_online_softmax_form():
    """The public data's online softmax (sum started from 1, no -inf guard) is an online softmax too."""
    from leir.strategies import apply_strategy

    from .helpers import assert_interpreter_agrees, leir

    program = leir(CORPUS_FORM)
    (site,) = candidates(program, NAME)
    step = apply_strategy(program, NAME, site)
    assert canonical(step.after.body.blocks[-1]) == "B^{2}_{tx=0}L^{3}_{a=0}[C^{f64,g}_{tx,a}=J^{f64,g}_{tx,a,3};];"
    assert_interpreter_agrees(step)
