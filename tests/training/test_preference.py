"""Preference rows: a state's best step against worse ones of the same state, in TRL's forms."""

from __future__ import annotations

import json

import pytest

from dataset.benefit import speedup
from dataset.preference import preference_pairs, render_preference
from dataset.records import load_records
from steptp_cli.main import main

from .data import steps_file


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    return steps_file(tmp_path_factory.mktemp("pref") / "steps.jsonl")


@pytest.fixture(scope="module")
def records(steps):
    return list(load_records(steps))


def test_pairs_stay_in_one_state_and_the_chosen_step_is_strictly_better(records):
    pairs = preference_pairs(records)
    assert {kind for _, kind, _ in pairs} == {"failed", "slower", "neutral"}
    for chosen, kind, rejected in pairs:
        assert chosen["parent"]["hash"] == rejected["parent"]["hash"]
        assert chosen["source"]["id"] == rejected["source"]["id"]  # so never across workload splits
        assert chosen["status"] == "verified"
        if kind == "failed":
            assert rejected["status"] == "failed"
        else:
            assert rejected["status"] == "verified" and rejected["effect"]["verdict"] == kind
            assert speedup(rejected) < speedup(chosen)


def test_preference_rows_are_conversational_prompt_chosen_rejected(records):
    rows = list(render_preference(records))
    assert rows
    for row in rows:
        assert set(row) == {"prompt", "chosen", "rejected", "meta"}
        assert [t["role"] for t in row["prompt"]] == ["system", "user"]
        assert [t["role"] for t in row["chosen"]] == [t["role"] for t in row["rejected"]] == ["assistant"]
        assert row["chosen"] != row["rejected"]
        assert row["chosen"][0]["content"].startswith("<think>")
    failed = [r for r in rows if r["meta"]["rejected_kind"] == "failed"]
    assert failed and all(r["meta"]["rejected_failure"].startswith("fail: outputs differ") for r in failed)


def test_unpaired_rows_label_each_step_once(records):
    rows = list(render_preference(records, "unpaired"))
    ids = [r["meta"]["step_id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert {r["label"] for r in rows} == {True, False}
    for row in rows:
        assert set(row) == {"prompt", "completion", "label", "meta"}
        assert row["label"] == (row["meta"]["label_reason"] == "chosen")


def test_cli_renders_preference_rows_deterministically(steps, tmp_path):
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        assert main(["render", str(steps), "--format", "preference", "--seed", "1", "-o", str(out)]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    rows = [json.loads(line) for line in outputs[0].decode().splitlines()]
    assert rows and all("rejected" in r for r in rows)
    one = tmp_path / "one.jsonl"
    assert main(["render", str(steps), "--format", "preference", "--pairs-per-state", "1", "-o", str(one)]) == 0
    assert len(one.read_text().splitlines()) < len(rows)


def test_unknown_preference_format_is_refused(records):
    with pytest.raises(ValueError, match="unknown preference format"):
        list(render_preference(records, "pairs"))


def test_metadata_rows_carry_the_answered_step(steps, tmp_path):
    out = tmp_path / "meta.jsonl"
    assert main(["render", str(steps), "--format", "prompt-completion", "--metadata", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    by_id = {r["step_id"]: r for r in load_records(steps)}
    for row in rows:
        record = by_id[row["meta"]["step_id"]]
        assert row["meta"]["strategy"] == record["strategy"]
        assert record["child"]["program"]["leir"] in row["completion"][0]["content"]
        assert row["meta"]["workload"] == record["source"]["workload"]
    assert main(["render", str(steps), "--metadata", "--multi-answer", "2", "-o", str(out)]) == 2


def test_chains_of_steps_render_as_multi_turn_conversations(steps, records, tmp_path):
    from dataset.trajectories import chains

    paths = chains(records)
    assert paths and all(len(p) >= 2 for p in paths)
    for path in paths:
        for before, after in zip(path, path[1:], strict=False):
            assert before["child"]["hash"] == after["parent"]["hash"]
        assert path[0]["parent"]["depth"] == 0
    out = tmp_path / "traj.jsonl"
    assert main(["render", str(steps), "--format", "trajectory", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == len(paths)
    for row, path in zip(rows, paths, strict=True):
        roles = [t["role"] for t in row["messages"]]
        assert roles == ["system", "user"] + ["assistant", "user"] * (len(path) - 1) + ["assistant"]
        assert row["meta"]["steps"] == [r["step_id"] for r in path]
        for turn, record in zip(row["messages"][2::2], path, strict=True):
            assert record["child"]["program"]["leir"] in turn["content"]
        assert "Apply exactly one more" in row["messages"][3]["content"]
