"""The balancing policy: seeded, order-independent, caps and groups as declared."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter

from dataset.filtering import (
    DEFAULT,
    TRIVIALLY_GAMEABLE,
    FilterPolicy,
    Group,
    apply_policy,
    get_policy,
)


def _records(counts: dict[str, int], status="verified"):
    rows = []
    for number, (name, n) in enumerate(counts.items(), 1):
        for i in range(n):
            rows.append({"step_id": hashlib.sha256(f"{name}{i}".encode()).hexdigest(), "strategy": name,
                         "number": number, "status": status})
    return rows


def test_default_policy_caps_downsamples_and_halves_as_declared():
    records = _records({"operator_fission": 400, "loop_unrolling": 400, "loop_tiling": 400})
    result = apply_policy(records, DEFAULT, seed=1)
    assert result.before == {"operator_fission": 400, "loop_unrolling": 400, "loop_tiling": 400}
    assert result.after["loop_tiling"] == 250  # cap
    assert result.after["loop_unrolling"] == 125  # easy: half rate (≈200) up to 125
    assert 20 <= result.after["operator_fission"] <= 25  # gameable: 10 % (≈40) up to 25
    assert "operator_fission" in TRIVIALLY_GAMEABLE and len(TRIVIALLY_GAMEABLE) == 13


def test_keep_probability_is_honoured_without_a_cap():
    policy = FilterPolicy("half", groups=(Group("g", ("s",), keep=0.5, cap=None),))
    kept = apply_policy(_records({"s": 2000}), policy, seed=0).after["s"]
    assert 900 <= kept <= 1100


def test_same_seed_same_kept_set_whatever_the_input_order():
    records = _records({"loop_unrolling": 300, "loop_tiling": 300, "apart": 50})
    first = [r["step_id"] for r in apply_policy(records, DEFAULT, seed=7).kept]
    shuffled = list(records)
    random.Random(3).shuffle(shuffled)
    second = [r["step_id"] for r in apply_policy(shuffled, DEFAULT, seed=7).kept]
    assert sorted(first) == sorted(second)
    other_seed = [r["step_id"] for r in apply_policy(records, DEFAULT, seed=8).kept]
    assert sorted(other_seed) != sorted(first)


def test_failed_steps_are_never_kept():
    records = _records({"loop_tiling": 10}, status="failed") + _records({"loop_reorder": 3})
    result = apply_policy(records, get_policy("all"))
    assert result.after == {"loop_reorder": 3}


# ------------------------------------------------------------------------------ selection by benefit


def _effect(verdict, speedup=1.0, follow_up=None):
    return {"target": "llvm", "estimate": {"parent": {}, "child": {}, "speedup": speedup, "verdict": verdict},
            "measured": None, "verdict": verdict, "follow_up": follow_up}


def _mixed():
    """loop_tiling steps of every effect category, and old records (no effect) of loop_reorder."""
    rows = []
    plan = [("faster", 40, None), ("neutral", 10, {"step_id": "f" * 64, "strategy": "loop_vectorization",
                                                   "speedup": 1.8}),
            ("neutral", 100, None), ("slower", 20, None)]
    for verdict, n, follow_up in plan:
        for i in range(n):
            rows.append({"step_id": hashlib.sha256(f"{verdict}{follow_up}{i}".encode()).hexdigest(),
                         "strategy": "loop_tiling", "number": 11, "status": "verified",
                         "effect": _effect(verdict, 1.5 if verdict == "faster" else 1.0, follow_up)})
    for i in range(5):
        rows.append({"step_id": hashlib.sha256(f"failed{i}".encode()).hexdigest(), "strategy": "loop_tiling",
                     "number": 11, "status": "failed", "effect": None})
    rows += _records({"loop_reorder": 30})
    return rows


def test_the_default_policy_selects_by_benefit():
    from dataset.benefit import category

    records = _mixed()
    result = apply_policy(records, DEFAULT, seed=2)
    kept = Counter(category(r) for r in result.kept)
    assert kept["faster"] == 40 and kept["enabling"] == 10  # every beneficial and credited step
    assert 0 < kept["neutral"] <= 0.1 * len(result.kept)  # neutral ones capped to 10 % of the kept set
    assert kept["slower"] == 0 and kept["failed"] == 0  # harmful and failed: never in the SFT set ...
    negatives = Counter(category(r) for r in result.negatives)
    assert negatives == {"slower": 20, "failed": 5}  # ... only as negatives
    # records without an effect are balanced as before (loop_reorder is "easy": half rate, cap 125)
    old = apply_policy(_records({"loop_reorder": 30}), DEFAULT, seed=2)
    assert [r["step_id"] for r in result.kept if r["strategy"] == "loop_reorder"] == \
        [r["step_id"] for r in old.kept]
    assert result.effects_before["loop_tiling"]["neutral"] == 100
    assert result.effects_after["loop_tiling"]["neutral"] == kept["neutral"]
    assert result.effects_before["loop_reorder"] == {"unknown": 30}


def test_filter_prints_the_effects_before_and_after_and_writes_negatives(tmp_path, capsys):
    """On records without effects (schema version 1) the kept set is as before, failed steps go to the
    negatives file, and the effects table counts them."""
    from dataset.records import dumps
    from steptp_cli.main import main

    from .helpers import unverified_run

    steps = unverified_run(tmp_path / "steps.jsonl", depth=1, workloads=("level1/softmax", "level1/layer_norm"))
    rows = [json.loads(line) for line in steps.read_text().splitlines()]
    for index, record in enumerate(rows):
        if index % 7 == 3:  # as a refused step is recorded
            record.update(status="failed", child=None, trace=None, exactness=None,
                          failure={"stage": "apply", "kind": "refused", "reason": "refused"})
        elif record["status"] == "unverified":
            exact = record["exactness"] == "E"
            record.update(status="verified", verification={
                "required": "equal_pass" if exact else "pass", "accepted": True, "outcome": "pass",
                "equal_pass": exact, "max_abs_error": 0.0, "max_rel_error": 0.0, "tolerances": {},
                "seconds": 1.0, "versions": {}, "unhonoured_loops": [], "result": {"outcome": "pass"}})
    failed = sum(1 for r in rows if r["status"] == "failed")
    marked = tmp_path / "marked.jsonl"
    marked.write_text("".join(dumps(r) + "\n" for r in rows))
    kept, negatives = tmp_path / "kept.jsonl", tmp_path / "neg.jsonl"
    assert main(["filter", str(marked), "-o", str(kept), "--negatives", str(negatives)]) == 0
    out = capsys.readouterr().out
    assert "effects (before>kept)" in out
    total = out.splitlines()[-1].split()
    assert total[0] == "total" and total[-1] == str(failed) and total[5] == f"{failed}>0"
    assert len(negatives.read_text().splitlines()) == failed
    expected = apply_policy(rows, DEFAULT, seed=0).kept
    assert [json.loads(line)["step_id"] for line in kept.read_text().splitlines()] == \
        [r["step_id"] for r in expected]
