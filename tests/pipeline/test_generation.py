"""steptp generate's engine: breadth-first, deterministic, resumable, every record valid, failures recorded."""

from __future__ import annotations

import json

import pytest

from dataset.generation import GenerationConfig, generate
from dataset.planning import param_choices, plan_steps
from dataset.records import load_records, validation_errors
from dataset.trace_lint import lint
from leir.ast import Program
from leir.program import program_from_json, program_hash
from strategies import Level, Site, Strategy, TraceBuilder, all_strategies
from strategies.base import Exactness, ParamSpec
from strategies.traces import Trace, grounding_problems

from .helpers import WORKLOADS, sources, unverified_run


def _lines(path):
    return path.read_text().splitlines()


def test_every_record_matches_the_schema_and_every_trace_is_grounded(tmp_path):
    """The grounding check over everything generated: all registered strategies, depth 2, four workloads."""
    path = unverified_run(tmp_path / "steps.jsonl")
    records = list(load_records(path))  # validates each line against the schema
    assert records, "nothing was generated"
    strategies = {r["strategy"] for r in records}
    assert strategies == {s.name for s in all_strategies()} & strategies  # only registered ones
    assert any(r["depth"] == 2 for r in records), "no step from a state reached by an earlier step"
    for record in records:
        assert record["status"] != "failed" or record["failure"]["kind"] != "trace_grounding", record["failure"]
        if record["trace"] is None:
            continue
        trace = Trace.from_json(record["trace"])
        parent = program_from_json(record["parent"]["program"])
        child = program_from_json(record["child"]["program"])
        assert grounding_problems(trace, parent, child) == [], (record["strategy"], record["site"])
        assert record["trace"]["text"] == trace.render()
        assert program_hash(parent) == record["parent"]["hash"]
        assert program_hash(child) == record["child"]["hash"]
    assert lint(records) == []  # no trace states a number or a claim its record contradicts


def test_same_sources_and_seed_give_the_same_file_byte_for_byte(tmp_path):
    first = unverified_run(tmp_path / "a.jsonl", seed=3)
    second = unverified_run(tmp_path / "b.jsonl", seed=3)
    assert first.read_bytes() == second.read_bytes()


def test_states_are_deduplicated_and_step_ids_are_unique(tmp_path):
    records = list(load_records(unverified_run(tmp_path / "s.jsonl")))
    ids = [r["step_id"] for r in records]
    assert len(ids) == len(set(ids))
    # A state is expanded once: all steps from one parent hash sit at one depth.
    depth_of: dict[str, int] = {}
    for r in records:
        assert depth_of.setdefault(r["parent"]["hash"], r["depth"]) == r["depth"]


def test_breadth_cap_bounds_the_states_expanded_per_source_and_depth(tmp_path):
    records = list(load_records(unverified_run(tmp_path / "s.jsonl", breadth_cap=2)))
    parents_at_depth2: dict[str, set[str]] = {}
    for r in records:
        if r["depth"] == 2:
            parents_at_depth2.setdefault(r["source"]["id"], set()).add(r["parent"]["hash"])
    assert parents_at_depth2 and all(len(p) <= 2 for p in parents_at_depth2.values())


def test_an_interrupted_run_resumes_without_writing_a_step_twice(tmp_path):
    full = unverified_run(tmp_path / "full.jsonl", seed=5)
    lines = _lines(full)
    assert len(lines) > 4
    partial = tmp_path / "partial.jsonl"
    # Interrupted mid-write: some complete lines, then half a line.
    partial.write_text("\n".join(lines[: len(lines) // 2]) + "\n" + lines[len(lines) // 2][:40])
    unverified_run(partial, seed=5)
    assert partial.read_bytes() == full.read_bytes()
    unverified_run(partial, seed=5)  # a finished run resumed again writes nothing
    assert partial.read_bytes() == full.read_bytes()


def test_params_are_enumerated_when_few_and_sampled_deterministically_when_many():
    import random

    site = Site((0,), params=(ParamSpec("f", (2, 4, 8)), ParamSpec("order", ("a", "b"))))
    assert param_choices(site, 6, random.Random(0)) == [
        {"f": 2, "order": "a"}, {"f": 2, "order": "b"}, {"f": 4, "order": "a"}, {"f": 4, "order": "b"},
        {"f": 8, "order": "a"}, {"f": 8, "order": "b"}]
    drawn = param_choices(site, 2, random.Random("x"))
    assert drawn == param_choices(site, 2, random.Random("x")) and len(drawn) == 2
    assert len({tuple(d.items()) for d in drawn}) == 2
    for choice in drawn:
        assert choice["f"] in (2, 4, 8) and choice["order"] in ("a", "b")


def test_max_steps_per_state_keeps_a_subset_balanced_over_strategies():
    program = sources(("level2/conv2d_groupnorm_silu",))[0].program
    full = plan_steps(program, program_hash(program), all_strategies(), seed=0)
    if len(full.steps) < 4:
        return
    limited = plan_steps(program, program_hash(program), all_strategies(), seed=0, max_steps=3)
    assert len(limited.steps) == 3
    again = plan_steps(program, program_hash(program), all_strategies(), seed=0, max_steps=3)
    assert [(s.strategy.name, s.site_index) for s in limited.steps] == \
        [(s.strategy.name, s.site_index) for s in again.steps]
    kept_strategies = {s.strategy.name for s in limited.steps}
    assert len(kept_strategies) == min(3, len({s.strategy.name for s in full.steps}))


# ---- strategies with bugs: generation records them and carries on


class _Broken(Strategy):
    """Test double base: one site on every program; subclasses break in one place each."""

    level = Level.LOOP
    exactness = Exactness.E

    def candidates(self, program: Program) -> list[Site]:
        return [Site((0,), where="block 1")]

    def check(self, program, site, params=None):
        return None

    def apply(self, program, site, params):
        return program

    def explain(self, before, site, params, after) -> Trace:
        t = TraceBuilder()
        return t.build("a", "b", "c", "d")


class RaisesInCandidates(_Broken):
    number, name = 901, "raises_in_candidates"

    def candidates(self, program):
        raise ZeroDivisionError("a bug in candidates")


class RaisesInApply(_Broken):
    number, name = 902, "raises_in_apply"

    def apply(self, program, site, params):
        return {}["missing"]


class ChangesNothing(_Broken):
    number, name = 903, "changes_nothing"


class QuotesWhatIsNotThere(_Broken):
    number, name = 904, "quotes_what_is_not_there"

    def apply(self, program, site, params):
        from strategies.loop.loop_unrolling import LoopUnrolling

        unroll = LoopUnrolling()
        return unroll.apply(program, unroll.candidates(program)[0], {})

    def explain(self, before, site, params, after):
        t = TraceBuilder()
        return t.build(f"quotes {t.before('Z^{f32,g}_{q}')}", "b", "c", "d")


class NonJsonParameter(QuotesWhatIsNotThere):
    number, name = 906, "non_json_parameter"

    def candidates(self, program):
        return [Site((0,), params=(ParamSpec("how", (frozenset({1}),)),), where="block 1")]

    def explain(self, before, site, params, after):
        return TraceBuilder().build("a", "b", "c", "d")


def test_strategy_bugs_become_failure_records_and_generation_goes_on(tmp_path):
    path = tmp_path / "s.jsonl"
    broken = [RaisesInCandidates(), RaisesInApply(), ChangesNothing(), QuotesWhatIsNotThere(),
              NonJsonParameter()]
    summary = generate(sources(("level1/layer_norm",)), GenerationConfig(depth=1), path, verify=None,
                       strategies=[*broken, *all_strategies()])
    records = list(load_records(path))
    failures = {r["strategy"]: r["failure"] for r in records if r["status"] == "failed"}
    assert failures["raises_in_candidates"]["stage"] == "candidates"
    assert "ZeroDivisionError: a bug in candidates" in failures["raises_in_candidates"]["reason"]
    assert "test_generation.py" in failures["raises_in_candidates"]["traceback"]
    assert failures["raises_in_apply"]["kind"] == "exception"
    assert "KeyError" in failures["raises_in_apply"]["reason"]
    assert failures["changes_nothing"]["kind"] == "refused"
    assert failures["changes_nothing"]["reason"].startswith("[no-change] changes nothing")  # the stable code
    assert failures["quotes_what_is_not_there"]["kind"] == "trace_grounding"
    assert failures["quotes_what_is_not_there"]["reason"].startswith("[ungrounded-trace] ")
    assert "could not be recorded: TypeError" in failures["non_json_parameter"]["reason"]
    assert summary.failed == 5
    assert any(r["status"] == "unverified" for r in records)  # the real strategies still ran


@pytest.fixture(scope="module")
def verify_two_workers():
    """``verifier.verify`` on one warm pool of two sandbox workers, shared by this module's tests."""
    from steptp_cli.dataset_commands import make_verify

    verify, pool = make_verify(workers=2, cache=False)
    yield verify
    pool.close()


def test_a_step_whose_kernel_differs_from_its_parent_is_a_failure_record(tmp_path, verify_two_workers):
    """A deliberately wrong 'exact' rewrite (x -> x*1.5): the verifier's fail outcome lands on the record."""
    from leir.ast import Assign, BinOp, Body, Num, Paren
    from leir.rewrite import with_body
    class Scales(_Broken):
        number, name = 905, "scales_an_output"

        def apply(self, program, site, params):
            def scale(item):
                return Assign(item.target, BinOp("*", Paren(item.value), Num("1.5")))

            blocks = program.body.blocks
            return with_body(program, Body((*blocks[:-1], _map_block(blocks[-1], scale))))

    path = tmp_path / "s.jsonl"
    generate(sources(("level1/softmax",)), GenerationConfig(depth=1), path, verify=verify_two_workers,
             strategies=[Scales()])
    (record,) = load_records(path)
    assert record["status"] == "failed", record["failure"]
    assert record["failure"]["stage"] == "verification", record["failure"]
    assert record["verification"]["outcome"] == "fail" and not record["verification"]["accepted"]
    assert record["verification"]["max_abs_error"] > 0


def _map_block(block, fn):
    from leir.ast import Block

    return Block(block.loops, tuple(_map_block(i, fn) if isinstance(i, Block) else fn(i) for i in block.items))


def test_verified_steps_of_exact_strategies_are_equal_pass(tmp_path, verify_two_workers):
    path = tmp_path / "v.jsonl"
    generate(sources(("level1/layer_norm",)), GenerationConfig(depth=1, max_steps_per_state=6), path,
             verify=verify_two_workers, workers=2)
    records = list(load_records(path))
    assert records
    for r in records:
        assert validation_errors(r) == []
        assert r["verification"] is not None
        if r["status"] == "verified":
            assert r["verification"]["accepted"]
            want = "equal_pass" if r["exactness"] == "E" else ("pass", "equal_pass")
            assert r["verification"]["outcome"] in want
            assert r["verification"]["result"]["parent_hash"] == r["parent"]["hash"]
            assert r["verification"]["versions"]["tvm"]
        else:
            assert r["failure"]["reason"]
    assert sum(r["status"] == "verified" for r in records) >= 0.95 * len(records)
    assert lint(records) == []
    json.dumps(records)  # plain JSON all the way down


def test_workloads_used_here_exist():
    assert len(sources(WORKLOADS)) == len(WORKLOADS)


#: What the verifier measured rather than decided: allowed to differ between two runs.
MEASURED = ("build_seconds", "run_seconds", "time_seconds", "hardware", "log_excerpt", "cache_hit", "timing",
            "parent_timing", "source_timing", "torch_timing")


def test_parallel_verification_writes_records_in_plan_order(tmp_path, verify_two_workers):
    config = GenerationConfig(depth=1, max_steps_per_state=4, seed=9)
    runs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.jsonl"
        generate(sources(("level1/layer_norm",)), config, path, verify=verify_two_workers, workers=2)
        records = list(load_records(path))
        for r in records:
            r["verification"]["seconds"] = None
            for key in MEASURED:
                r["verification"]["result"].pop(key, None)
        runs.append(records)
    assert runs[0] == runs[1] and len(runs[0]) >= 2
