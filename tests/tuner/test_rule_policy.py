"""RulePolicy's ranking: the cost model maps loop kinds as the CPU lowering does, and the ranking spreads
its first proposals over different kinds of steps."""

from __future__ import annotations

from leir.printer import canonical
from leir.program import load_program
from tuner.cost import program_cost
from tuner.policies import RulePolicy
from tuner.policies.rule import spread
from tuner.proposals import SearchContext

HEAD = """input A: f32[64, 128]
input D: f32[128, 96]
output C: f32[64, 96]
---
"""
# C = A @ D with the reduction innermost (D read with a stride of 96 along c) and the frontend's
# ``B^{..}_{tx}`` outer loop, which the CPU lowering runs serially.
MATMUL = HEAD + "B^{64}_{tx=0}L^{96}_{a=0}L^{128}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*D^{f32,g}_{c,a};];"


def _cost(text: str, target: str = "llvm") -> float:
    return program_cost(load_program(text), target).total


def test_a_thread_axis_binding_is_serial_on_the_cpu_and_parallel_on_a_gpu():
    serial = MATMUL.replace("B^{64}_{tx=0}", "L^{64}_{i=0}")
    assert _cost(MATMUL) == _cost(serial)
    assert _cost(MATMUL, "cuda") < _cost(serial, "cuda")
    block_axis = MATMUL.replace("B^{64}_{tx=0}", "B^{64}_{bx=0}").replace("_{tx,", "_{bx,")
    assert _cost(block_axis) < _cost(MATMUL)  # a block axis is a parallel loop on the CPU


def test_parallel_loops_count_once_per_nest_and_outermost_is_cheapest():
    outer = MATMUL.replace("B^{64}_{tx=0}", "P^{64}_{tx=0}")
    inner = MATMUL.replace("L^{96}_{a=0}", "P^{96}_{a=0}")
    nested = outer.replace("L^{96}_{a=0}", "P^{96}_{a=0}")
    assert _cost(outer) < _cost(inner) < _cost(MATMUL)  # a fork-join per entry of an inner loop
    assert _cost(nested) == _cost(outer)  # LLVM runs one parallel level: the inner P is serial


def test_strided_access_along_the_innermost_loop_is_dearer_than_contiguous():
    # the same product with a innermost: D and C move contiguously, A is invariant
    reordered = HEAD + ("B^{64}_{tx=0}L^{128}_{c=0}L^{96}_{a=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}"
                        "+A^{f32,g}_{tx,c}*D^{f32,g}_{c,a};];")
    assert _cost(reordered) < _cost(MATMUL)
    vectorised = reordered.replace("L^{96}_{a=0}", "V^{96}_{a=0}")
    assert _cost(vectorised) < _cost(reordered)


def test_rule_policy_makes_the_serial_outer_loop_parallel_first():
    proposals = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    assert proposals[0].strategy == "loop_parallelization"
    assert "P^{96}_{a=0}" in canonical(proposals[0].step.after.body)
    assert proposals[0].score > 0.4
    # a thread-axis binding runs serially here: modelled as no gain, behind every step that gains
    bindings = [p for p in proposals if p.strategy == "loop_binding" and "t" in str(p.step.params)]
    assert all(p.score <= 0.0 for p in bindings)
    # deterministic for a seed
    again = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    assert [(p.strategy, p.step.site.key, sorted(p.step.params.items())) for p in proposals] == \
        [(p.strategy, p.step.site.key, sorted(p.step.params.items())) for p in again]


def test_spread_puts_one_step_per_strategy_and_block_first():
    ranked = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    families = [(p.strategy, p.step.site.key.split("[")[0]) for p in ranked]
    leaders = len(set(families))
    assert len(set(families[:leaders])) == leaders  # no family twice before every family had a turn
    assert spread(ranked) == ranked  # already spread: a fixed point
    assert sorted(map(id, spread(list(reversed(ranked))))) == sorted(map(id, ranked))  # a permutation


def test_a_split_is_scored_by_the_vector_loop_it_enables():
    # a contiguous innermost loop of 64: too long for one vector loop, vectorisable after a split
    text = """input A: f32[32, 64]
output C: f32[32, 64]
---
B^{32}_{tx=0}L^{64}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];"""
    proposals = RulePolicy(seed=0).propose(load_program(text), SearchContext())
    splits = [p for p in proposals if p.strategy == "loop_split"]
    assert not any(p.strategy == "loop_vectorization" for p in proposals)  # not possible in one step
    best = max(splits, key=lambda p: p.score)
    assert best.step.params["factor"] == 16  # the widest vector loop, added even if sampling missed it
    assert best.score > 0.3 and "vector loop" in best.rationale
    assert all(p.score < best.score for p in splits if p.step.params["factor"] < 8)  # fewer lanes filled
