"""The balancing policy: seeded, order-independent, caps and groups as declared."""

from __future__ import annotations

import hashlib
import random

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
