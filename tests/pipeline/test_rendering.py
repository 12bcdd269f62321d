"""SFT rows: one key spelling in prompt and answer, conversational rows that Hugging Face datasets loads."""

from __future__ import annotations

import json
import re

import pytest

from dataset.records import load_records
from dataset.rendering import ANSWER_KEYS, IR_KEY, STRATEGY_KEY, render

from .helpers import unverified_run


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    path = unverified_run(tmp_path_factory.mktemp("ren") / "s.jsonl", depth=1)
    # Rendering takes verified steps; these were generated without the verifier, so mark them as such
    # the way a verified run would (the verifier itself is exercised in test_generation).
    rows = []
    for r in load_records(path):
        if r["status"] == "unverified":
            rows.append(dict(r, status="verified"))
    assert rows
    return rows


ANSWER = re.compile(r"^<think>(?P<think>.+)</think><answer>(?P<answer>.+)</answer>$", re.S)


def test_messages_rows_are_role_content_turns_only_and_the_answer_keys_match_the_prompt(records):
    rows = list(render(records, "messages"))
    assert len(rows) == len(records)
    for row, record in zip(rows, records, strict=True):
        assert list(row) == ["messages"]
        assert [t["role"] for t in row["messages"]] == ["system", "user", "assistant"]
        assert all(set(turn) == {"role", "content"} for turn in row["messages"])
        prompt, answer = row["messages"][1]["content"], row["messages"][2]["content"]
        for key in ANSWER_KEYS:
            assert f'"{key}"' in prompt
        assert "applied_strategies" not in prompt
        match = ANSWER.match(answer)
        assert match, answer[:200]
        assert match["think"] == record["trace"]["text"]
        payload = json.loads(match["answer"])
        assert set(payload) == set(ANSWER_KEYS)
        assert payload[IR_KEY] == record["child"]["program"]["leir"]
        assert payload[STRATEGY_KEY] == record["strategy"]
        assert record["parent"]["program"]["leir"] in prompt
        for tensor in record["parent"]["program"]["tensors"]:
            dims = " x ".join(str(n) for n in tensor["shape"])
            assert f"- {tensor['name']}: " in prompt and f"({tensor['dtype']}), shape {dims}" in prompt


def test_multi_answer_rows_give_k_alternatives_for_one_state(records):
    rows = list(render(records, "prompt-completion", multi_answer=3))
    assert rows
    for row in rows:
        assert set(row) == {"prompt", "completion"}
        assert [t["role"] for t in row["prompt"]] == ["system", "user"]
        assert [t["role"] for t in row["completion"]] == ["assistant"]
        answer = json.loads(ANSWER.match(row["completion"][0]["content"])["answer"])
        assert 2 <= len(answer) <= 3
        assert all(set(a) == set(ANSWER_KEYS) for a in answer)
        user = row["prompt"][1]["content"]
        assert "Propose" in user and f"{len(answer)} different" in user


def test_unverified_and_failed_steps_are_not_rendered(records):
    assert list(render([dict(records[0], status="failed")], "messages")) == []


def test_hugging_face_datasets_loads_the_rendered_file(records, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for fmt, columns in (("messages", ["messages"]), ("prompt-completion", ["prompt", "completion"])):
        path = tmp_path / f"{fmt}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in render(records, fmt)))
        loaded = datasets.load_dataset("json", data_files=str(path), split="train",
                                       cache_dir=str(tmp_path / "cache"))
        assert loaded.column_names == columns
        assert len(loaded) == len(records)
        if fmt == "messages":
            assert loaded[0]["messages"][2]["role"] == "assistant"


# ------------------------------------------------------------------------ ranking by benefit


def _with_effect(record, *, estimate, measured=None):
    verdict = "faster" if (measured or estimate) > 1.05 else "neutral"
    return dict(record, effect={
        "target": "llvm", "estimate": {"parent": {}, "child": {}, "speedup": estimate, "verdict": verdict},
        "measured": None if measured is None else {"parent_seconds": 1.0, "child_seconds": 1.0 / measured,
                                                   "speedup": measured, "noise": 0.01, "repeats": 5,
                                                   "verdict": verdict, "confidence": 0.9},
        "verdict": verdict, "follow_up": None})


def _states(records):
    by_state = {}
    for record in records:
        by_state.setdefault(record["parent"]["hash"], []).append(record)
    return {h: group for h, group in by_state.items() if len(group) >= 3}


def _ranked_records(records):
    """In every state with 3+ steps: estimates 1.00, 1.01, 1.02, ...; the first step also measured at 3.0,
    which outranks every estimate (measured first, else the estimate)."""
    out, best = [], {}
    for state, group in _states(records).items():
        for i, record in enumerate(group):
            measured = 3.0 if i == 0 else None
            out.append(_with_effect(record, estimate=1.0 + 0.01 * i, measured=measured))
        best[state] = [group[0]["step_id"], *[r["step_id"] for r in reversed(group[1:])]]
    return out, best


def _by_child(records, state):
    return {r["child"]["program"]["leir"]: r for r in records if r["parent"]["hash"] == state}


def test_the_default_row_of_a_state_answers_its_best_ranked_step(records):
    ranked_records, best = _ranked_records(records)
    assert best, "no state with three steps"
    rows = list(render(ranked_records, "messages"))
    assert len(rows) == len(best)  # one row per state
    for row, state in zip(rows, best, strict=True):  # states in input order
        answer = json.loads(ANSWER.match(row["messages"][2]["content"])["answer"])
        record = _by_child(ranked_records, state)[answer[IR_KEY]]
        assert record["step_id"] == best[state][0]


def test_multi_answer_returns_the_top_k_in_rank_order(records):
    ranked_records, best = _ranked_records(records)
    rows = list(render(ranked_records, "messages", multi_answer=3))
    assert len(rows) == len(best)
    for row, state in zip(rows, best, strict=True):
        answers = json.loads(ANSWER.match(row["messages"][2]["content"])["answer"])
        children = _by_child(ranked_records, state)
        assert [children[a[IR_KEY]]["step_id"] for a in answers] == best[state][:3]


# ------------------------------------------------------------- what the answer depends on


def test_the_prompt_states_the_target_the_exactness_rule_and_every_strategy_within_budget(records):
    from dataset.rendering import CONTEXT_TOKEN_BUDGET, context_lines, prompt_text
    from strategies import all_strategies
    from verifier.tokens import count_tokens

    prompt = prompt_text(records[0])
    assert "Target: CPU (TVM llvm" in prompt
    assert "exact (E)" in prompt and "bitwise identical" in prompt and "numerically equivalent (N)" in prompt
    for strategy in all_strategies():
        info = strategy.info()
        assert f"- {info.name} ({info.exactness}): " in prompt
    assert "- reduction_factorization (E/N): " in prompt  # per-site exactness, as the registry says
    on_gpu = dict(records[0], verification={"result": {"outcome": "pass", "target": "cuda"}})
    assert "Target: GPU (TVM cuda)" in prompt_text(on_gpu)
    for target in ("llvm", "cuda"):
        used = count_tokens("\n".join(context_lines(target)))
        assert used <= CONTEXT_TOKEN_BUDGET, f"{target}: {used} tokens > {CONTEXT_TOKEN_BUDGET}"
