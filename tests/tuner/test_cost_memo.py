"""``program_cost`` keeps each top-level block's cost per block object: what it finds again must be
what it would compute afresh, for every state a policy call makes, on every target."""

from __future__ import annotations

from frontend import translate_file
from leir.ast import Program, Signature, TensorDecl
from leir.program import load_program
from tuner import cost
from tuner.cost import program_cost
from tuner.policies.base import engine_steps
from workloads.registry import get_workload


def _fresh(program: Program, target: str) -> cost.CostBreakdown:
    cost._BLOCK_COSTS.clear()
    return program_cost(program, target)


def test_kept_block_costs_equal_fresh_ones_for_every_step_of_a_many_block_state():
    program = translate_file(get_workload("level2/gemm_batchnorm_eval_relu").path).program
    assert len(program.body.blocks) >= 3
    steps = list(engine_steps(program, "h", seed=0, params_per_site=2))
    assert len(steps) > 20
    for target in ("llvm", "cuda"):
        warm = [program_cost(step.after, target) for step in steps]  # blocks shared between states
        fresh = [_fresh(step.after, target) for step in steps]
        assert warm == fresh
    # the untouched blocks of a step are the parent's own objects, which is what makes the memo pay
    shared = [sum(a is b for a, b in zip(s.after.body.blocks, program.body.blocks, strict=False)) for s in steps]
    assert max(shared) >= len(program.body.blocks) - 1


def test_a_block_costs_what_the_shapes_of_its_tensors_make_it_not_what_it_cost_in_another_program():
    small = load_program("""input A: f32[8, 16]
output C: f32[8, 16]
---
B^{8}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];""")
    wide = (8, 1024 * 1024)  # A alone is 32 MiB: a block touching it streams it through memory
    signature = Signature(tuple(TensorDecl(d.name, d.role, d.dtype, wide if d.name == "A" else d.shape)
                                for d in small.signature.tensors))
    large = Program(signature, small.body)  # the very same block objects
    assert large.body.blocks[0] is small.body.blocks[0]
    assert program_cost(small).streamed == (0.0,)
    assert program_cost(large).streamed[0] > 0
    assert program_cost(large) == _fresh(large, "llvm") and program_cost(small) == _fresh(small, "llvm")
