"""The learned policy: a ranking model fitted on fitting workloads' step records (``tuner.learned``),
reproducible to the byte, refusing held-out records, and ranking real proposals in a real search."""

from __future__ import annotations

import json
import random

import pytest

from dataset.effects import effect_json, estimate_json
from steptp_cli.main import main
from tests.tuner.conftest import source_of
from tuner import learned
from tuner.effect import program_features
from tuner.policies import RulePolicy
from tuner.policies.learned import LearnedPolicy
from tuner.proposals import SearchContext
from tuner.run import tune
from tuner.search import Budget
from tuner.splits import workload_split


def _records(workload_id: str, limit: int = 12) -> list[dict]:
    """Records of real engine steps from ``workload_id``'s source, each with the effect estimate
    ``steptp generate`` writes (parent and child features of the cost model)."""
    source = source_of(workload_id)
    parent = program_features(source.program)
    out = []
    for index, proposal in enumerate(RulePolicy(seed=0).propose(source.program, SearchContext())[:limit]):
        assert proposal.step is not None
        estimate = estimate_json(parent, program_features(proposal.step.after))
        out.append({"step_id": f"{workload_id}#{index}", "status": "verified", "strategy": proposal.strategy,
                    "source": {"workload": workload_id}, "effect": effect_json("llvm", estimate)})
    return out


@pytest.fixture(scope="module")
def fitting_records() -> list[dict]:
    split = workload_split()
    assert "level1/relu" in split.fitting and "level1/sum_dim" in split.fitting
    return _records("level1/relu") + _records("level1/sum_dim")


def test_the_same_records_and_seed_give_the_same_model_bytes(fitting_records):
    heldout = workload_split().heldout
    first = learned.dumps_model(learned.fit(learned.examples(fitting_records, heldout), seed=0))
    shuffled = list(fitting_records)
    random.Random(1).shuffle(shuffled)
    again = learned.dumps_model(learned.fit(learned.examples(shuffled, heldout), seed=0))
    assert first == again
    model = json.loads(first)
    assert model["training"]["workloads"] == ["level1/relu", "level1/sum_dim"]
    assert len(model["coef"]) == len(model["features"]) == len(model["mean"])
    fewer = learned.dumps_model(learned.fit(learned.examples(fitting_records[:-3], heldout), seed=0))
    assert fewer != first  # the model depends on its data


def test_held_out_records_are_refused(fitting_records, tmp_path, capsys):
    heldout_id = workload_split().heldout[0]
    leaked = [*fitting_records, {**fitting_records[0], "source": {"workload": heldout_id}}]
    with pytest.raises(ValueError, match="held-out workload"):
        learned.examples(leaked, workload_split().heldout)
    # the CLI's own errors: a missing file, a missing model
    assert main(["fit-policy", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "m.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match="not a steptp-step-ranker"):
        learned.load(bad)
    assert main(["tune", "level1/relu", "--policy", "learned", "-o", str(tmp_path / "r.jsonl")]) == 2
    assert "--policy-model" in capsys.readouterr().err


def test_the_learned_policy_ranks_the_rule_policys_candidates(fitting_records):
    model = learned.fit(learned.examples(fitting_records, workload_split().heldout))
    program = source_of("level1/layer_norm").program
    rule = RulePolicy(seed=0).propose(program, SearchContext())
    ranked = LearnedPolicy(model, seed=0).propose(program, SearchContext())

    def keys(proposals):
        return sorted((p.strategy, p.step.site.key, json.dumps(p.step.params, sort_keys=True, default=str))
                      for p in proposals if p.step is not None)

    assert keys(ranked) == keys(rule)
    assert ranked[0].origin == "learned" and ranked[0].rationale.startswith("learned log-speedup")


def test_a_short_real_search_with_the_learned_policy(fitting_records, measurer, layer_norm):
    model = learned.fit(learned.examples(fitting_records, workload_split().heldout))
    search = tune(layer_norm, LearnedPolicy(model, seed=0, measured={}), measurer, Budget(verifications=2),
                  algo="chain", branch=2)
    summary = search.summary()
    assert summary["config"]["tuner"]["policy"]["name"] == "learned"
    assert search.records and all(r["generator"]["config"]["tuner"]["policy"]["name"] == "learned"
                                  for r in search.records)
    spent = summary["time"]
    assert spent["policy"] > 0 and spent["measure"] > 0 and spent["policy_call_max"] <= spent["policy"]
    # build, verification run and timing are parts of the measurements' wall time
    assert 0 < spent["build"] + spent["verification"] + spent["timing"] <= spent["measure"]
    assert spent["timing"] > 0


def test_a_bounded_rule_call_gives_no_lookahead_past_its_bound():
    program = source_of("level1/layer_norm").program
    unbounded = RulePolicy(seed=0).propose(program, SearchContext())
    bounded = RulePolicy(seed=0, lookahead_seconds=0.0).propose(program, SearchContext())
    assert any(p.enables for p in unbounded)  # the lookahead finds enabling steps here
    assert not any(p.enables and not p.then for p in bounded)  # none without it (planned chains aside)
    assert RulePolicy(lookahead_seconds=2.0).describe()["lookahead_seconds"] == 2.0
