"""A step's effect: the cost model's estimate on every step, measured verdicts, and follow-up links."""

from __future__ import annotations

import json

import pytest

from dataset.effects import (
    ESTIMATE_NEUTRAL,
    FEATURE_KEYS,
    estimate_json,
    follow_ups,
    measured_json,
    noise,
    target_family,
)
from dataset.generation import GenerationConfig, generate, link_output_follow_ups
from dataset.records import dumps, load_records
from dataset.trace_lint import lint
from leir.program import load_program
from tuner.effect import feature_function, program_features

from .helpers import sources

# A row-major copy read column by column (strided innermost access) and the same copy read by rows.
STRIDED = """input A: f32[64,128]
output C: f32[128,64]
---
L^{128}_{j=0}L^{64}_{i=0}[C^{f32,g}_{j,i}=A^{f32,g}_{i,j};];
"""
CONTIGUOUS = STRIDED.replace("L^{128}_{j=0}L^{64}_{i=0}", "L^{64}_{i=0}L^{128}_{j=0}")


def _features(**values):
    base = {"bytes_moved": 100, "reuse_per_element": 1.0, "innermost_stride": 1, "parallel_width": 1,
            "vector_width": 1, "work": 10, "model_seconds": 1.0}
    return {**base, **values}


def test_features_read_the_innermost_stride_and_the_bytes_off_the_loop_mapping():
    strided, contiguous = program_features(load_program(STRIDED)), program_features(load_program(CONTIGUOUS))
    assert set(strided) == set(FEATURE_KEYS)
    assert strided["innermost_stride"] == 128 and contiguous["innermost_stride"] == 64  # C's column step
    assert strided["bytes_moved"] == contiguous["bytes_moved"] == 2 * 4 * 64 * 128
    assert strided["reuse_per_element"] == 1.0  # each element read and written once
    assert strided["work"] == 0  # a copy adds no arithmetic
    assert estimate_json(strided, contiguous)["verdict"] in ("faster", "neutral")
    assert program_features(load_program(STRIDED), "cuda")["model_seconds"] > 0


def test_estimate_verdicts_use_the_stated_threshold():
    parent = _features(model_seconds=1.0)
    assert estimate_json(parent, _features(model_seconds=0.5))["verdict"] == "faster"
    assert estimate_json(parent, _features(model_seconds=2.0))["verdict"] == "slower"
    inside = 1.0 / (1.0 + ESTIMATE_NEUTRAL / 2)
    assert estimate_json(parent, _features(model_seconds=inside))["verdict"] == "neutral"
    assert estimate_json(parent, _features(model_seconds=0.5))["speedup"] == 2.0
    with pytest.raises(ValueError, match="features lack"):
        estimate_json(parent, {"work": 1})


def test_measured_verdict_is_neutral_within_the_parents_noise():
    quiet = [1.0, 1.01, 0.99, 1.0, 1.0]
    assert noise(quiet) < 0.02
    faster = measured_json(quiet, [0.5, 0.51, 0.49, 0.5, 0.5])
    assert faster["verdict"] == "faster" and faster["speedup"] == 2.0 and faster["confidence"] == 1.0
    assert faster["repeats"] == 5 and faster["parent_seconds"] == 1.0
    # a 10 % change on a parent that itself varies by about 30 %: neutral
    noisy = [1.0, 1.4, 0.7, 1.0, 1.3, 0.75, 1.0]
    neutral = measured_json(noisy, [x / 1.1 for x in noisy])
    assert neutral["noise"] > 0.15 and neutral["verdict"] == "neutral"
    slower = measured_json(quiet, [2.0, 2.0, 2.1, 1.9, 2.0])
    assert slower["verdict"] == "slower" and 0.5 < slower["confidence"] <= 1.0
    assert measured_json([], [1.0]) is None and measured_json([1.0], [0.0]) is None


def test_target_families():
    assert [target_family(t) for t in ("llvm", "llvm-host", "cuda", None, "c")] == \
        ["llvm", "llvm", "cuda", None, None]


def _record(step: str, parent: str, child: str, verdict: str, speedup: float, status: str = "verified",
            depth: int = 2):
    return {"step_id": step * 64, "status": status, "strategy": f"s_{step}", "parent": {"hash": parent},
            "depth": depth,
            "child": {"hash": child}, "effect": {"verdict": verdict, "estimate": {"speedup": speedup},
                                                 "measured": None}}


def test_follow_up_is_the_fastest_verified_faster_step_from_the_after_state():
    records = [_record("a", "p", "x", "faster", 2.0, depth=1),
               _record("f", "x", "p", "neutral", 1.0),  # back to the source: a is not deeper than f
               _record("b", "x", "y", "faster", 1.5), _record("c", "x", "z", "faster", 3.0),
               _record("d", "x", "w", "faster", 9.0, status="failed"),
               _record("e", "x", "v", "slower", 0.5)]
    links = follow_ups(records)
    assert links["a" * 64] == {"step_id": "c" * 64, "strategy": "s_c", "speedup": 3.0}
    assert links["b" * 64] is None
    assert links["f" * 64] is None  # a's step (depth 1) is not deeper than f (depth 2)


def test_generation_gives_every_step_an_estimate_and_links_follow_ups(tmp_path):
    path = tmp_path / "s.jsonl"
    config = GenerationConfig(depth=2, seed=0, breadth_cap=3, max_steps_per_state=12)
    run = sources(("level1/matmul_tall_skinny", "level1/softmax"))
    generate(run, config, path, verify=None, features=feature_function("llvm"), target="llvm")
    records = list(load_records(path))
    with_child = [r for r in records if r["child"] is not None]
    assert with_child and all(r["effect"]["estimate"] is not None for r in with_child)
    assert all(r["effect"]["target"] == "llvm" and r["effect"]["measured"] is None for r in records)
    assert all(r["effect"]["verdict"] == r["effect"]["estimate"]["verdict"] for r in with_child)
    assert {r["effect"]["verdict"] for r in with_child} >= {"faster", "neutral"}
    # one state's parent features are shared by all its steps
    by_parent: dict[str, set[str]] = {}
    for r in with_child:
        by_parent.setdefault(r["parent"]["hash"], set()).add(json.dumps(r["effect"]["estimate"]["parent"]))
    assert all(len(v) == 1 for v in by_parent.values())
    # an unverified step is no follow-up: none linked; marked verified, the links appear deterministically
    assert all(r["effect"]["follow_up"] is None for r in records)
    path.write_text("".join(dumps({**r, "status": "verified", "verification": _accepted(r)}) + "\n"
                            for r in records if r["child"] is not None))
    assert link_output_follow_ups(path) > 0
    linked = path.read_bytes()
    assert link_output_follow_ups(path) == 0 and path.read_bytes() == linked
    records = list(load_records(path))
    by_id = {r["step_id"]: r for r in records}
    for r in records:
        link = r["effect"]["follow_up"]
        if link is not None:
            follow = by_id[link["step_id"]]
            assert follow["parent"]["hash"] == r["child"]["hash"] and follow["effect"]["verdict"] == "faster"
            assert follow["depth"] == r["depth"] + 1
            assert (f"follow-up {follow['strategy']} (step {follow['step_id'][:12]})"
                    in r["trace"]["rationale"])
    # the rationales were rewritten from the links: credited follow-ups named, every number checked
    assert lint(records) == []
    assert any("it is credited as enabling" in r["trace"]["rationale"] for r in records)


def test_resuming_a_version_1_file_upgrades_it(tmp_path):
    path = tmp_path / "s.jsonl"
    config = GenerationConfig(depth=1, seed=0, max_steps_per_state=4)
    run = sources(("level1/softmax",))
    generate(run, config, path, verify=None)
    old = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(dumps({**{k: v for k, v in r.items() if k != "effect"}, "schema_version": 1})
                            + "\n" for r in old))
    generate(run, config, path, verify=None)  # resumes: nothing new, and the file is upgraded
    assert [r["schema_version"] for r in load_records(path)] == [2] * len(old)


def _accepted(record):
    return {"required": "pass", "accepted": True, "outcome": "pass", "equal_pass": False, "max_abs_error": 0.0,
            "max_rel_error": 0.0, "tolerances": {}, "seconds": 1.0, "versions": {}, "unhonoured_loops": [],
            "result": {"outcome": "pass"}}
