"""Every search algorithm, with RulePolicy, reaches verified states from a real workload.

Speedups at these tiny shapes are timing noise on a shared machine, so the assertions are about
verification: each accepted step met its exactness requirement, the best path is a chain of recorded
steps from the source, states are distinct, and the budget is respected.
"""

from __future__ import annotations

import pytest

from dataset.records import validate_record
from leir.printer import canonical
from tuner.policies import RulePolicy
from tuner.run import tune
from tuner.search import ALGORITHMS, Budget

BUDGET = 4


def _check_run(search, source) -> None:
    assert search.usage.verifications <= BUDGET
    assert search.usage.accepted >= 1, search.records
    for record in search.records:
        validate_record(record)
        if record["status"] == "verified":
            assert record["verification"]["accepted"]
            assert record["verification"]["outcome"] in ("pass", "equal_pass")
    hashes = [n.hash for n in search.seen.values()]
    assert len(hashes) == len(set(hashes))
    accepted = [n for n in search.seen.values() if n.parent is not None]
    assert accepted and all(n.record["status"] == "verified" for n in accepted)
    previous = source.info.hash
    for node in search.best_path()[1:]:
        assert node.record["parent"]["hash"] == previous
        previous = node.record["child"]["hash"]


@pytest.mark.parametrize("algo", sorted(ALGORITHMS))
def test_algorithm_finds_verified_steps(algo, layer_norm, measurer):
    options = {"width": 2} if algo == "beam" else {}
    search = tune(layer_norm, RulePolicy(seed=0, measured={}), measurer, Budget(verifications=BUDGET),
                  algo=algo, branch=2, options=options)
    _check_run(search, layer_norm)
    deepest = max(n.depth for n in search.seen.values())
    if algo in ("chain", "dfs"):  # these go deep before wide: a verified multi-step chain
        assert deepest >= 2


def test_mcts_with_rule_rollouts_measures_rollout_states(layer_norm, measurer):
    search = tune(layer_norm, RulePolicy(seed=0), measurer, Budget(verifications=BUDGET), algo="mcts",
                  branch=2, options={"rollout_depth": 2, "rollout_policy": RulePolicy(seed=1)})
    _check_run(search, layer_norm)
    assert max(n.depth for n in search.seen.values()) >= 2
    assert search.root.visits >= 1


def test_policy_call_budget_stops_the_search(layer_norm, measurer):
    search = tune(layer_norm, RulePolicy(seed=0), measurer, Budget(policy_calls=1), algo="bfs", branch=1)
    assert search.usage.policy_calls == 1
    # one proposal measured (and timed once more if it would have become the best by >10 %)
    assert search.usage.verifications == 1 + search.usage.confirmations


def test_rule_policy_is_deterministic_and_ranks_by_modelled_gain(layer_norm):
    from tuner.proposals import SearchContext

    first = RulePolicy(seed=3).propose(layer_norm.program, SearchContext())
    second = RulePolicy(seed=3).propose(layer_norm.program, SearchContext())
    assert [(p.strategy, p.step.site.key) for p in first] == [(p.strategy, p.step.site.key) for p in second]
    assert len(first) >= 2
    # the best of each (strategy, block) first, by modelled gain; runners-up after them
    families = [(p.strategy, p.step.site.key.split("[")[0]) for p in first]
    leaders = len(set(families))
    assert len(set(families[:leaders])) == leaders
    scores = [p.score for p in first[:leaders]]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 0


def test_budget_parsing():
    assert Budget.parse("verifications=5,seconds=2.5") == Budget(verifications=5, seconds=2.5)
    assert Budget.parse("calls=3") == Budget(policy_calls=3)
    for bad in ("", "verifications", "nope=3", "seconds=x", "verifications=0"):
        with pytest.raises(ValueError):
            Budget.parse(bad)


def test_an_enabling_step_is_measured_with_the_step_it_enables():
    """x @ W^T: a transpose of W is slower alone (a copy, and W strided), so a beam of one would keep it
    only through the reorder it enables; the search measures that reorder in the same expansion."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from leir.program import load_program, program_hash
    from tests.tuner.test_rule_policy import LINEAR
    from tuner.measure import Measurer

    program = load_program(LINEAR)
    source = Source(SourceInfo("linear@f32#0", "linear", 1, "f32", 0, {}, program_hash(program)), program)
    measurer = Measurer(program, cache=False, repeats=3, min_repeat_ms=5.0)
    try:
        policy = RulePolicy(seed=0, strategies=("layout_transformation", "loop_reorder"))
        search = tune(source, policy, measurer, Budget(verifications=3), algo="beam", branch=1,
                      options={"width": 1})
    finally:
        measurer.close()
    first, second = (n for n in search.best_path()[1:3])
    assert first.step.strategy == "layout_transformation" and first.step.params["layout"] == "transpose:0,1"
    assert second.step.strategy == "loop_reorder" and second.parent is first
    # measured one after the other, in the first expansion (the beam keeps one state per depth)
    assert [r["strategy"] for r in search.records[:2]] == ["layout_transformation", "loop_reorder"]
    assert search.records[1]["parent"]["hash"] == first.hash
    # every operand contiguous along the innermost loop: LLVM vectorises it, the scalar dot product not
    assert second.speedup > 1.5 > first.speedup


class ScriptedTimings:
    """A measurer whose verdicts are real acceptances but whose timings are scripted: timing noise is
    what the confirmation is for, and the real machine cannot be told to be noisy on cue."""

    def __init__(self, readings: list[float]):
        self.readings = list(readings)
        self.calls = 0

    def measure(self, after, before, exactness):
        from dataset.records import verification_json
        from tuner.measure import Measurement

        self.calls += 1
        speedup = self.readings.pop(0)
        verification = verification_json({"outcome": "equal_pass", "speedup_vs_source": speedup}, exactness)
        return Measurement(verification["accepted"], speedup, 1e-3 / speedup, verification, 1e-3)


def test_a_would_be_best_is_timed_twice_and_keeps_the_slower_reading(layer_norm):
    from tuner.search.base import Search

    # first child: 3.0x then 1.4x when re-timed; second child: 1.05x (not above the best by 10 %: once)
    measurer = ScriptedTimings([3.0, 1.4, 1.05])
    search = Search(layer_norm.program, layer_norm.info, RulePolicy(seed=0), measurer,
                    Budget(verifications=10), branch=2)
    proposals = search.proposals(search.root)
    first = search.try_step(search.root, proposals[0])
    assert first.speedup == 1.4 and search.best is first
    second = search.try_step(search.root, proposals[1])
    assert second.speedup == 1.05 and search.best is first
    assert measurer.calls == 3 and search.usage.verifications == 3 and search.usage.confirmations == 1
    assert len(search.records) == 2  # a confirmation is no new step
    for record in search.records:
        validate_record(record)


class AlwaysEnabling:
    """RulePolicy's proposals, every one claiming to enable the next: a run of such claims no lookahead
    vouched for."""

    name = "always-enabling"

    def __init__(self):
        self.inner = RulePolicy(seed=0)

    def describe(self) -> dict:
        return {"name": self.name}

    def propose(self, program, context):
        from dataclasses import replace

        return [replace(p, enables=True) for p in self.inner.propose(program, context)]


def test_a_run_of_enabling_steps_is_followed_at_once_only_as_far_as_the_lookahead_reaches(layer_norm):
    from tuner.search.base import FOLLOW_UP_CHAIN, Search

    measurer = ScriptedTimings([1.0] * 10)
    search = Search(layer_norm.program, layer_norm.info, AlwaysEnabling(), measurer,
                    Budget(verifications=10), branch=1)
    children = search.expand(search.root)
    # the step, then FOLLOW_UP_CHAIN follow-ups each measured at once, then back to the search
    assert len(children) == 1 + FOLLOW_UP_CHAIN == measurer.calls
    assert [n.depth for n in children] == list(range(1, 2 + FOLLOW_UP_CHAIN))


# rows in parallel (bx), the 1.6 MB weight larger than a core's L2 (tuner.cost.L2_BYTES): read again
# per row, it misses
GEMM_ROWS = """input A: f32[48, 256]
param D: f32[256, 1600]
output C: f32[48, 1600]
---
B^{48}_{bx=0}L^{1600}_{a=0}L^{256}_{c=0}[C^{f32,g}_{bx,a}=C^{f32,g}_{bx,a}+A^{f32,g}_{bx,c}*D^{f32,g}_{c,a};];"""


def test_a_register_tile_is_measured_in_one_expansion_split_reorder_unroll():
    """The row split saves nothing alone and its reorder leaves a strided unrolled-to-be loop innermost;
    the search measures the split, the reorder and the unroll one after the other, and the tile is
    faster than the source (LLVM vectorises the output row for every unrolled row at once)."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from leir.program import load_program, program_hash
    from tuner.measure import Measurer

    program = load_program(GEMM_ROWS)
    source = Source(SourceInfo("gemm@f32#0", "gemm", 1, "f32", 0, {}, program_hash(program)), program)
    measurer = Measurer(program, cache=False, repeats=3, min_repeat_ms=5.0)
    try:
        policy = RulePolicy(seed=0, strategies=("loop_split", "loop_reorder", "loop_unrolling"))
        # three steps, and a confirmation of each that would be the best by more than 10 %
        search = tune(source, policy, measurer, Budget(verifications=6), algo="beam", branch=1,
                      options={"width": 1})
    finally:
        measurer.close()
    assert [r["strategy"] for r in search.records[:3]] == ["loop_split", "loop_reorder", "loop_unrolling"]
    split, reorder, unroll = (search.seen[r["child"]["hash"]] for r in search.records[:3])
    assert reorder.parent is split and unroll.parent is reorder
    assert split.step.site.get("loop") == "bx" and 2 <= split.step.params["factor"] <= 7
    inner = split.step.after.body.blocks[0].loops[1].var
    assert unroll.step.site.get("loop") == inner
    # Alone this reads about 20x; in CI a parallel kernel timed beside another test process's unlocked
    # in-process build was read at 1.13x (verifier/cpu_share.py locks only sandbox jobs), so the test asks
    # only that the tile beat the source.
    assert unroll.speedup > 1.0


#: A matrix product with six rows unrolled innermost (``…L_c L_a U_d``), the weight already ``[k, n]``:
#: the state the search reaches first, one recipe away from a register tile.
ROWS_UNROLLED = """input A: f32[12, 64]
param D: f32[64, 1600]
output C: f32[12, 1600]
---
B^{2}_{bx=0}L^{64}_{c=0}L^{1600}_{a=0}U^{6}_{d=0}[C^{f32,g}_{bx*6+d,a}=C^{f32,g}_{bx*6+d,a}+A^{f32,g}_{bx*6+d,c}*D^{f32,g}_{c,a};];
"""


def test_a_planned_register_tile_is_measured_step_after_step_in_one_expansion():
    """None of the recipe's first three steps pays alone (a beam of one would drop each); the policy
    plans all four (``Proposal.then``) and the search measures them one after the other, each from the
    state the previous reached, and the tile verifies bit for bit at every step."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from leir.program import load_program, program_hash
    from tuner.measure import Measurer

    program = load_program(ROWS_UNROLLED)
    source = Source(SourceInfo("rows@f32#0", "rows", 1, "f32", 0, {}, program_hash(program)), program)
    measurer = Measurer(program, target="llvm-host", cache=False, repeats=2, min_repeat_ms=2.0)
    try:
        policy = RulePolicy(seed=0, target="llvm-host")
        search = tune(source, policy, measurer, Budget(verifications=6), algo="beam", branch=1,
                      options={"width": 1})
    finally:
        measurer.close()
    recipe = ["loop_split", "loop_vectorization", "loop_reorder", "cache_read_write"]
    assert [r["strategy"] for r in search.records[:4]] == recipe
    nodes = [search.seen[r["child"]["hash"]] for r in search.records[:4]]
    assert all(later.parent is earlier for earlier, later in zip(nodes, nodes[1:], strict=False))
    assert all(r["verification"]["outcome"] == "equal_pass" for r in search.records[:4])
    assert "V^{16}_{f=0}U^{6}_{d=0}" in canonical(nodes[-1].program.body)
    assert "^{f32,l}" in canonical(nodes[-1].program.body)  # the accumulator, staged locally


class ScriptedVerdicts:
    """A measurer that accepts or rejects on cue: a planned step that does not verify is rare on real
    kernels, which is exactly why it is scripted here."""

    def __init__(self, verdicts: list[bool]):
        self.verdicts = list(verdicts)
        self.calls = 0

    def measure(self, after, before, exactness):
        from dataset.records import verification_json
        from tuner.measure import Measurement

        self.calls += 1
        outcome = "equal_pass" if self.verdicts.pop(0) else "mismatch"
        verification = verification_json({"outcome": outcome, "speedup_vs_source": 1.0}, exactness)
        return Measurement(verification["accepted"], 1.0, 1e-3, verification, 1e-3)


def test_a_plan_stops_at_the_first_step_that_does_not_verify():
    """The steps after a planned step that fails were planned from a state that does not exist."""
    from dataset.records import SourceInfo
    from leir.program import load_program, program_hash
    from tuner.policies.register_tile import register_tile_chains
    from tuner.proposals import Proposal
    from tuner.search.base import Search

    program = load_program(ROWS_UNROLLED)
    chain = register_tile_chains(program, (0,), "llvm-host")[0]
    assert [s.strategy for s in chain.steps] == ["loop_split", "loop_vectorization", "loop_reorder",
                                                 "cache_read_write"]
    info = SourceInfo("rows@f32#0", "rows", 1, "f32", 0, {}, program_hash(program))
    measurer = ScriptedVerdicts([True, True, False, True])
    search = Search(program, info, RulePolicy(seed=0), measurer, Budget(verifications=8), branch=1,
                    max_depth=8, algo="beam", options={})
    first = search.try_step(search.root, Proposal(chain.first.strategy, chain.first, 1.0, "planned"))
    reached = search._follow_plan(first, Proposal(chain.first.strategy, chain.first, 1.0, "planned",
                                                  then=chain.steps[1:]))
    assert [n.step.strategy for n in reached] == ["loop_vectorization"]
    assert measurer.calls == 3  # the reorder failed; the write cache planned after it was never measured
    assert search.records[-1]["status"] == "failed"
