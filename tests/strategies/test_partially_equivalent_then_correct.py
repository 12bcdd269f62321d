"""partially_equivalent_then_correct: two padded stencils on one concatenated input, seam corrected."""

from __future__ import annotations

import pytest

from leir.printer import canonical
from strategies import NotApplicableError, Site, apply_strategy, candidates, get_strategy

from .helpers import assert_interpreter_agrees, assert_verifies, leir, workload
from .math_checks import assert_same_steps_byte_for_byte, assert_verifier_rejects, mutated

STRATEGY = "partially_equivalent_then_correct"
WORKLOADS = ["level2/siamese_conv1d", "level2/local_contrast_norm", "level2/ssim_map",
             "level2/triplet_conv2d_margin"]


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("workload_id", WORKLOADS)
def test_fuses_two_padded_convolutions_and_corrects_the_seam(workload_id, dtype):
    program = workload(workload_id, dtype)
    sites = candidates(program, STRATEGY)
    assert sites, f"{workload_id} has no pair of look-alike padded stencils"
    step = apply_strategy(program, STRATEGY, sites[-1])
    text = canonical(step.after.body)
    assert text.count("-if_then_else(") == 2  # one fix-up per output, each on its side of the seam
    assert_interpreter_agrees(step)
    assert_verifies(step)


def test_wrong_seam_correction_is_rejected_by_the_verifier():
    program = workload("level2/siamese_conv1d")
    step = apply_strategy(program, STRATEGY, 0)
    assert canonical(step.after.body).count("if_then_else(18<=") == 1  # the first output's correction
    wrong = mutated(step, "if_then_else(18<=", "if_then_else(19<=")
    assert_verifier_rejects(wrong, program)


def test_other_names_and_a_block_in_between_still_match():
    program = leir("input Xa: f32[3, 6]\ninput Xb: f32[3, 6]\nparam Kw: f32[3]\noutput Yo: f32[3, 6]\n"
                   "output Zo: f32[3, 6]\noutput Qq: f32[3]\n---\n"
                   "L^{3}_{r=0}L^{8}_{k=0}[Pa^{f32,g}_{r,k}=if_then_else(1<=k<7,Xa^{f32,g}_{r,k-1},0);];"
                   "L^{3}_{r=0}L^{6}_{k=0}L^{3}_{w=0}[Yo^{f32,g}_{r,k}=Yo^{f32,g}_{r,k}+Kw^{f32,g}_{w}*Pa^{f32,g}_{r,k+w};];"
                   "L^{3}_{r=0}[Qq^{f32,g}_{r}=Kw^{f32,g}_{r}*2;];"
                   "L^{3}_{r=0}L^{8}_{k=0}[Pb^{f32,g}_{r,k}=if_then_else(1<=k<7,Xb^{f32,g}_{r,k-1},0);];"
                   "L^{3}_{r=0}L^{6}_{k=0}L^{3}_{w=0}[Zo^{f32,g}_{r,k}=Zo^{f32,g}_{r,k}+Kw^{f32,g}_{w}*Pb^{f32,g}_{r,k+w};];")
    (site,) = candidates(program, STRATEGY)
    assert site.get("axis") == "k" and site.path == (1,) and site.get("with") == 4
    step = apply_strategy(program, STRATEGY, site)
    assert "L^{12}_{k=0}L^{3}_{w=0}" in canonical(step.after.body)  # 6 data + 6 outputs' windows
    assert_interpreter_agrees(step)


REFUSALS = {
    "no padding": ("input A: f32[8]\ninput Q: f32[8]\nparam W: f32[3]\noutput C: f32[6]\noutput D: f32[6]\n---\n"
                   "L^{8}_{c=0}[F^{f32,g}_{c}=if_then_else(0<=c<8,A^{f32,g}_{c},0);];"
                   "L^{6}_{c=0}L^{3}_{f=0}[C^{f32,g}_{c}=C^{f32,g}_{c}+F^{f32,g}_{c+f}*W^{f32,g}_{f};];"
                   "L^{8}_{c=0}[G^{f32,g}_{c}=if_then_else(0<=c<8,Q^{f32,g}_{c},0);];"
                   "L^{6}_{c=0}L^{3}_{f=0}[D^{f32,g}_{c}=D^{f32,g}_{c}+G^{f32,g}_{c+f}*W^{f32,g}_{f};];"),
    "padded differently": ("input A: f32[8]\ninput Q: f32[8]\nparam W: f32[3]\noutput C: f32[8]\n"
                           "output D: f32[8]\n---\n"
                           "L^{10}_{c=0}[F^{f32,g}_{c}=if_then_else(1<=c<9,A^{f32,g}_{c-1},0);];"
                           "L^{8}_{c=0}L^{3}_{f=0}[C^{f32,g}_{c}=C^{f32,g}_{c}+F^{f32,g}_{c+f}*W^{f32,g}_{f};];"
                           "L^{10}_{c=0}[G^{f32,g}_{c}=if_then_else(2<=c<10,Q^{f32,g}_{c-2},0);];"
                           "L^{8}_{c=0}L^{3}_{f=0}[D^{f32,g}_{c}=D^{f32,g}_{c}+G^{f32,g}_{c+f}*W^{f32,g}_{f};];"),
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_refuses_pairs_without_a_common_padding_seam(rule):
    program = leir(REFUSALS[rule])
    assert candidates(program, STRATEGY) == []
    with pytest.raises(NotApplicableError, match=rule):
        get_strategy(STRATEGY).apply(program, Site((1,), (("axis", "c"), ("with", 3))), {})


def test_same_program_gives_the_same_steps_byte_for_byte():
    program = workload("level2/siamese_conv1d")
    assert_same_steps_byte_for_byte(program, STRATEGY)
