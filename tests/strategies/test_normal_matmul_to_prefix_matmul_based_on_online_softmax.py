"""#44 (designed here): the matmul of an online softmax's output becomes a normalised prefix recurrence."""

from __future__ import annotations

import pytest

from leir.ast import Program
from leir.printer import canonical
from strategies import candidates
from strategies.math.streaming import score_passes

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
    from strategies import apply_strategy

    from .helpers import assert_interpreter_agrees, leir

    program = leir(CORPUS_FORM)
    (site,) = candidates(program, NAME)
    step = apply_strategy(program, NAME, site)
    assert canonical(step.after.body.blocks[-1]) == "B^{2}_{tx=0}L^{3}_{a=0}[C^{f64,g}_{tx,a}=J^{f64,g}_{tx,a,3};];"
    assert_interpreter_agrees(step)


# ------------------------------------- the second form: #43's unnormalised output, so #42 → #43 → #44

CHAIN = ("online_softmax", "flashattention_wo_tiling")
CHAIN_WORKLOADS = ["level1/sdpa_causal", "level2/gqa_sdpa_causal"]


def chain_step(workload_id: str, dtype: str, before=None):
    """#44 at its site on ``before`` (default: the workload after #42 then #43), which is the second form."""
    from strategies import apply_strategy

    program = before if before is not None else step_on(workload_id, dtype, CHAIN[1], after=CHAIN[:1]).after
    sites = [s for s in candidates(program, NAME) if s.get("running") is not None]
    assert len(sites) == 1, sites
    return apply_strategy(program, NAME, sites[0])


def normalised_rule(step) -> None:
    """The rule the second form follows, read off the parent: the factor gains S_{k-1}·…/S_k, the weight
    …/S_k (inside the same guards), the epilogue loses its division, nothing else changes."""
    from leir.ast import Block, IfThenElse

    before_stream = step.before.body.blocks[step.site.path[0]]
    after_stream = step.after.body.blocks[step.site.path[0]]
    old_factor, old_weight, old_update = stream_parts_of(before_stream)
    factor, weight, update = stream_parts_of(after_stream)
    assert update == old_update and factor.target == old_factor.target and weight.target == old_weight.target
    from strategies.math.streaming import shifted

    s_ref = before_stream.items[1].target
    s_k, s_prev = canonical(s_ref), canonical(shifted(s_ref, s_ref.indices[-1].name))
    old_rescale = old_factor.value.otherwise.otherwise
    assert isinstance(factor.value, IfThenElse) and factor.value.cond == old_factor.value.cond
    assert factor.value.otherwise.cond == old_factor.value.otherwise.cond
    rescale = factor.value.otherwise.otherwise
    assert rescale.op == "/" and canonical(rescale.right) == s_k
    assert canonical(rescale.left.right) == canonical(old_rescale)
    assert canonical(rescale.left.left) == s_prev
    assert weight.value.cond == old_weight.value.cond
    assert canonical(weight.value.otherwise) == f"{canonical(old_weight.value.otherwise)}/{s_k}"
    # the epilogue is the old numerator alone; every other block is untouched
    changed = [j for j, (a, b) in enumerate(zip(step.before.body.blocks, step.after.body.blocks, strict=True))
               if a != b]
    assert len(changed) == 2 and changed[0] == step.site.path[0]
    old_epi, new_epi = step.before.body.blocks[changed[1]], step.after.body.blocks[changed[1]]
    assert isinstance(new_epi, Block) and new_epi.loops == old_epi.loops
    assert new_epi.items[0].target == old_epi.items[0].target
    assert new_epi.items[0].value == old_epi.items[0].value.left


def epilogue_of(program, running: str) -> int:
    """The one top-level block other than the stream that reads the running output."""
    from leir.analysis import reads

    (index,) = [j for j, b in enumerate(program.body.blocks)
                if running in reads(b) and not any(not hasattr(it, "target") for it in b.items)]
    return index


def stream_parts_of(stream):
    from leir.ast import Block

    nested = next(item for item in stream.items if isinstance(item, Block))
    position = stream.items.index(nested)
    return stream.items[position - 2], stream.items[position - 1], nested.items[0]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", CHAIN_WORKLOADS)
def test_online_softmax_then_flash_attention_then_prefix_matmul_verifies(workload_id, dtype):
    """The issue's full sequence #42 → #43 → #44 with apply_strategy; the final program is checked
    against its parent (#43's result) and against the source, in f32 and f64."""
    from verifier.verify import verify

    step = chain_step(workload_id, dtype)
    normalised_rule(step)
    scores = SCORES[workload_id]
    assert score_passes(step.before, scores) == 1 and score_passes(step.after, scores) == 1
    assert "/" not in canonical(step.after.body.blocks[epilogue_of(step.after, step.site.get("running"))])
    assert_step_verifies(step)
    source = workload(workload_id, dtype)
    assert score_passes(source, scores) == 3
    result = verify(step.after, parent=source, reference="parent", cache=False)
    assert result.outcome.value == "pass", (result.error, result.notes)
    # the chain ends where #42 → #44 ends: the two finishes agree on the normalised form
    direct = step_on(workload_id, dtype, NAME, after=CHAIN[:1]).after
    assert canonical(step.after.body) == canonical(direct.body)


def _commute_everything(program):
    """The same program with every ``+``, ``*`` and ``==`` of the stream block's statements written the
    other way round (and the same values): the match is structural, not on #43's spelling."""
    from leir.ast import BinOp, Body, Compare, Program
    from leir.rewrite import map_item_exprs, transform

    def flip(node):
        if isinstance(node, BinOp) and node.op in {"+", "*"}:
            return BinOp(node.op, node.right, node.left)
        if isinstance(node, Compare) and node.ops == ("==",):
            return Compare(tuple(reversed(node.operands)), node.ops)
        return None

    (site,) = [s for s in candidates(program, NAME) if s.get("running") is not None]
    blocks = list(program.body.blocks)
    index = site.path[0]
    head = blocks[index]
    from leir.ast import Block

    blocks[index] = Block(head.loops, head.items[:2] + tuple(
        map_item_exprs(it, lambda n: transform(n, flip)) for it in head.items[2:]))
    return Program(program.signature, Body(tuple(blocks)))


@pytest.mark.parametrize("workload_id", CHAIN_WORKLOADS)
def test_second_form_is_matched_on_the_tree_not_the_spelling(workload_id):
    flash_state = step_on(workload_id, "f64", CHAIN[1], after=CHAIN[:1]).after
    flipped = _commute_everything(flash_state)
    assert canonical(flipped.body) != canonical(flash_state.body)
    step = chain_step(workload_id, "f64", before=flipped)
    normalised_rule(step)
    assert_step_verifies(step)


def test_factor_without_the_previous_running_sum_is_rejected():
    step = chain_step("level1/sdpa_causal", "f32")
    factor, _, _ = stream_parts(step)
    rescale = factor.value.otherwise.otherwise  # S_{k-1}*exp(M_{k-1}-M_k)/S_k
    # divides by S_k but forgets to multiply by S_{k-1}: the old partial output is not re-weighted
    wrong = canonical(rescale).replace(f"{canonical(rescale.left.left)}*", "", 1)
    assert wrong != canonical(rescale)
    assert_rejected(step, mutated(step, canonical(rescale), wrong))


def test_keeping_the_epilogue_division_is_rejected():
    step = chain_step("level1/sdpa_causal", "f32")
    index = epilogue_of(step.before, step.site.get("running"))
    old_epi = step.before.body.blocks[index].items[0].value  # R_{..,K-1}/S_{..,K-1}
    new_epi = step.after.body.blocks[index].items[0]
    text = canonical(new_epi)
    assert_rejected(step, mutated(step, text, text.replace(canonical(old_epi.left), canonical(old_epi))))


@pytest.mark.parametrize("workload_id", CHAIN_WORKLOADS)
def test_second_form_is_deterministic(workload_id):
    from .math_checks import assert_same_steps_byte_for_byte

    assert_same_steps_byte_for_byte(step_on(workload_id, "f32", CHAIN[1], after=CHAIN[:1]).after, NAME)


def _second_form(program):
    return [s for s in candidates(program, NAME) if s.get("running") is not None]


@pytest.mark.parametrize("workload_id", CHAIN_WORKLOADS)
def test_second_form_has_no_site_where_there_is_no_deferred_division(workload_id):
    """Not on the source, not on #42's result (a plain matmul: the first form's site), not on #44's own
    result (no division left), not when the running output has another reader."""
    from leir.ast import Assign, Block, Body, Program

    source = workload(workload_id)
    online = step_on(workload_id, "f32", "online_softmax").after
    assert _second_form(source) == [] and _second_form(online) == []
    assert candidates(online, NAME)  # the first form applies there
    finished = chain_step(workload_id, "f32")
    assert _second_form(finished.after) == []
    # R read by a second block as well: dividing R inside the stream would change that reader
    flash_state = finished.before
    epilogue = flash_state.body.blocks[epilogue_of(flash_state, finished.site.get("running"))]
    assert canonical(epilogue.items[0].value).count("/") == 1
    extra = Block(epilogue.loops, (Assign(epilogue.items[0].target, epilogue.items[0].value.left),))
    shared = Program(flash_state.signature, Body(flash_state.body.blocks + (extra,)))
    assert _second_form(shared) == []


def test_the_second_docstring_pair_is_a_real_step():
    """The docstring's '#43's result' example, rewritten by #44, prints as the docstring's After."""
    import re

    from leir.inference import infer_signature
    from leir.parser import parse_body
    from strategies import get_strategy

    doc = type(get_strategy(NAME)).__doc__ or ""
    before = re.search(r"Before \(#43's result\): ``(.*?)``", doc)
    after = re.search(r"After:  ``(.*?)``", doc)
    assert before and after
    body = parse_body(before.group(1))
    step = chain_step("", "", before=Program(infer_signature(body), body))
    assert canonical(step.after.body) == after.group(1)
    assert canonical(step.before.body) == re.search(
        r"After:  ``(.*?)``", type(get_strategy(CHAIN[1])).__doc__).group(1)
