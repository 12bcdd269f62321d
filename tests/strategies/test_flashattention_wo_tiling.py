"""#43: softmax and the matmul of its output become one streaming pass with a rescaled running output."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies.math.streaming import score_passes

from .streaming_checks import (
    assert_docstring_pair_is_real,
    assert_rejected,
    assert_step_verifies,
    mutated,
    step_on,
    stream_parts,
)

NAME = "flashattention_wo_tiling"
WORKLOADS = ["level1/sdpa_causal", "level1/sdpa_masked_scaled", "level2/gqa_sdpa_causal"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_flash_attention_of_a_workload_verifies(workload_id, dtype):
    step = step_on(workload_id, dtype, NAME)
    stream = step.after.body.blocks[step.site.path[0]]
    assert any(not hasattr(item, "target") for item in stream.items), "the running output is a nested block"
    assert_step_verifies(step)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_after_online_softmax_the_score_tensor_is_read_once(dtype):
    step = step_on("level1/sdpa_causal", dtype, NAME, after=("online_softmax",))
    assert score_passes(step.before, "G") == 2 and score_passes(step.after, "G") == 1
    assert_step_verifies(step)


def test_missing_rescale_of_the_running_output_is_rejected():
    step = step_on("level1/sdpa_causal", "f32", NAME)
    factor, _, update = stream_parts(step)
    carried = update.value.left.otherwise  # R_{k-1}*A_k
    assert canonical(carried.right) == canonical(factor.target)
    # the old partial output is no longer rescaled when the running max grows
    assert_rejected(step, mutated(step, canonical(carried), canonical(carried.left)))


def test_the_docstring_pair_is_a_real_step():
    assert_docstring_pair_is_real(NAME)
