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
        answer = json.loads(ANSWER.match(row["completion"])["answer"])
        assert 2 <= len(answer) <= 3
        assert all(set(a) == set(ANSWER_KEYS) for a in answer)
        assert "Propose" in row["prompt"] and f"{len(answer)} different" in row["prompt"]


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
