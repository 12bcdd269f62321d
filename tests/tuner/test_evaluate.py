"""Single-step evaluation against the scripted OpenAI-compatible server, on records from a real run."""

from __future__ import annotations

import json

import pytest

from dataset.rendering import prompt_text
from steptp_cli.dataset_commands import make_verify
from tests.tuner.test_llm_policy import ScriptedServer, _answer
from tuner.evaluate import evaluate_single, rates_table
from tuner.policies import LLMPolicy, RulePolicy
from tuner.run import tune
from tuner.search import Budget


@pytest.fixture(scope="module")
def records(layer_norm, measurer):
    """Two verified steps of a real run, the first an exact one (graded up to ``equal_pass``)."""
    # a would-be new best is timed twice (Search._confirm), so the budget leaves room for that
    search = tune(layer_norm, RulePolicy(seed=0), measurer, Budget(verifications=6), algo="chain")
    assert all(r["status"] == "verified" for r in search.records)
    exact = next(r for r in search.records if r["exactness"] == "E")
    return [exact, next(r for r in search.records if r is not exact)]


@pytest.fixture(scope="module")
def verify():
    fn, pool = make_verify(workers=1, cache=False)
    yield fn
    pool.close()


@pytest.fixture
def server():
    s = ScriptedServer()
    yield s
    s.close()


def test_ladder_rates_per_strategy(server, records, verify):
    right = records[0]["child"]["program"]["leir"]
    # A different, valid program that computes something else: the second state's IR with its first
    # addition turned into a subtraction.
    wrong = records[1]["child"]["program"]["leir"].replace("+", "-", 1)
    assert wrong != records[1]["child"]["program"]["leir"]
    strategies = [records[0]["strategy"], records[1]["strategy"]]
    server.script += [("ok", _answer(right, strategies[0]), "stop"), ("ok", _answer(wrong, strategies[1]), "stop")]
    policy = LLMPolicy(server.url, "m", timeout=5, retries=0)
    report = evaluate_single(records, policy, verify)
    assert server.requests[0]["body"]["messages"][1]["content"] == prompt_text(records[0])
    first, second = report["items"]
    assert first["level"] == "equal_pass" and first["legal_step"]
    assert second["level"] in ("execute", "different") and not second["legal_step"]
    overall = report["overall"]
    assert overall["prompts"] == 2 and overall["answered"] == 1.0 and overall["different"] == 1.0
    assert overall["equal_pass"] == 0.5 and overall["legal_step"] == 0.5
    assert sum(report["by_strategy"][name]["prompts"] for name in set(strategies)) == 2
    table = rates_table(report)
    assert all(name in table for name in strategies) and "50.0%" in table
    json.dumps(report)


def test_failures_count_as_not_answered(server, records, verify):
    server.script += [("ok", "<answer>{broken", "length"), ("status", 503), ("status", 503)]
    policy = LLMPolicy(server.url, "m", timeout=5, retries=1, backoff=0.01)
    report = evaluate_single(records, policy, verify)
    kinds = [i["failure"] for i in report["items"]]
    assert kinds == ["truncated", "endpoint_error"]
    assert report["overall"]["answered"] == 0.0
