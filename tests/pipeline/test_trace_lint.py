"""Reasoning computed from the numbers, and the checker that reads it back (``steptp lint``).

Each claim kind has a test where the text contradicts the record and the checker says so; the records
come from a real generation (level1/softmax through the frontend, the llvm cost model's features).
"""

from __future__ import annotations

import copy
import json

import pytest

from dataset.claims import agrees, checked_text, claim_problems, shown
from dataset.effect_reasoning import EFFECT, SELECTION, write_reasoning
from dataset.records import dumps, load_records
from dataset.trace_lint import lint, shared_rationales
from steptp_cli.main import main


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """``steptp generate level1/softmax --depth 2`` (unverified, with the cost model's estimates)."""
    path = tmp_path_factory.mktemp("lint") / "steps.jsonl"
    assert main(["generate", "level1/softmax", "--depth", "2", "--seed", "2", "--breadth-cap", "2",
                 "--max-steps-per-state", "12", "--no-verify", "--no-progress", "-o", str(path)]) == 0
    return path


@pytest.fixture
def records(generated):
    return list(load_records(generated))


def _messages(records):
    return [p.message for p in lint(records)]


def _one(records, strategy=None):
    return next(r for r in records if r["trace"] and (strategy is None or r["strategy"] == strategy))


def _replace(record, old, new):
    rationale = record["trace"]["rationale"]
    assert old in rationale, (old, rationale)
    record["trace"]["rationale"] = rationale.replace(old, new, 1)


def test_a_generated_file_lints_clean_and_every_rationale_states_its_effect(records):
    assert records and _messages(records) == []
    for record in records:
        lines = record["trace"]["rationale"].split("\n")
        assert sum(line.startswith(EFFECT) for line in lines) == 1
        assert sum(line.startswith(SELECTION) for line in lines) == 1
    said = " ".join(r["trace"]["rationale"] for r in records)
    assert "Verdict: no gain" in said and "Verdict: slower" in said and "Verdict: faster" in said


def test_the_cli_lints_a_generated_file_and_fails_on_a_contradiction(generated, tmp_path, capsys):
    assert main(["lint", str(generated)]) == 0
    out = capsys.readouterr().out
    assert "0 problem(s) in 0 record(s)" in out and "distinct rationale(s)" in out
    records = list(load_records(generated))
    record = _one(records)
    verdict = record["effect"]["verdict"]
    record["effect"]["verdict"] = "faster" if verdict != "faster" else "slower"
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(dumps(r) + "\n" for r in records))
    assert main(["lint", str(broken)]) == 1
    out = capsys.readouterr().out
    assert f"{record['step_id'][:12]}: effect: states the verdict" in out
    assert main(["lint", str(tmp_path / "missing.jsonl")]) == 2


def test_reasoning_is_idempotent(records):
    again = copy.deepcopy(records)
    assert write_reasoning(again) == 0 and again == records


def test_a_feature_number_that_differs_from_the_record_is_a_problem(records):
    record = next(r for r in records if " → " in r["trace"]["rationale"].split(EFFECT)[1].split("modelled")[0])
    before = record["effect"]["estimate"]["parent"]["bytes_moved"]
    if f"bytes moved {shown(before)} → " in record["trace"]["rationale"]:
        _replace(record, f"bytes moved {shown(before)} → ", f"bytes moved {shown(before + 1000)} → ")
    else:
        _replace(record, f"bytes moved {shown(before)}", f"bytes moved {shown(before + 1000)}")
    assert any("bytes moved" in m for m in _messages(records))


def test_a_modelled_time_and_a_speedup_are_checked_at_the_precision_shown(records):
    record = _one(records)
    speedup = record["effect"]["estimate"]["speedup"]
    _replace(record, f"an estimated {shown(speedup)}x", f"an estimated {shown(speedup * 1.5)}x")
    assert any("the estimated speedup" in m for m in _messages(records))


def test_saying_no_gain_for_a_slower_step_is_a_problem(records):
    record = next(r for r in records if r["effect"]["verdict"] == "slower")
    _replace(record, "Verdict: slower", "Verdict: no gain")
    assert any("states the verdict 'no gain'" in m for m in _messages(records))


def test_a_rationale_without_its_effect_or_selection_is_a_problem(records):
    record = _one(records)
    own, effect, selection = record["trace"]["rationale"].split("\n")
    record["trace"]["rationale"] = own
    messages = _messages(records)
    assert any("does not state the step's effect" in m for m in messages)
    assert any("why this step was selected" in m for m in messages)
    record["trace"]["rationale"] = "\n".join((own, EFFECT + "Verdict: unknown, neither estimated nor measured.",
                                              selection))
    assert any("does not state the estimated speedup" in m for m in _messages(records))


def test_a_number_no_check_reads_is_a_problem(records):
    record = _one(records)
    _replace(record, "Verdict:", "It saves 42 cycles. Verdict:")
    assert any("the number 42" in m for m in _messages(records))


def test_a_measured_effect_is_stated_with_its_noise_and_checked(records):
    record = next(r for r in records if r["effect"]["estimate"])
    record["effect"]["measured"] = {"parent_seconds": 2e-3, "child_seconds": 1e-3, "speedup": 2.0,
                                    "noise": 0.0123, "repeats": 7, "verdict": "faster", "confidence": 0.98}
    record["effect"]["verdict"] = "faster"
    write_reasoning(records)
    assert "measured 2x over 7 repeats (noise 1.23%, confidence 0.98): faster." in record["trace"]["rationale"]
    assert "Verdict: faster (measured 2x)" in record["trace"]["rationale"]
    assert _messages(records) == []
    record["effect"]["measured"]["noise"] = 0.05
    assert any("the noise (%) 1.23" in m for m in _messages(records))


def test_a_follow_up_is_credited_only_when_the_record_has_one(records):
    record = next(r for r in records if r["effect"]["verdict"] != "faster")
    follower = next(r for r in records if r["step_id"] != record["step_id"])
    record["effect"]["follow_up"] = {"step_id": follower["step_id"], "strategy": follower["strategy"],
                                     "speedup": 2.5}
    write_reasoning(records)
    text = record["trace"]["rationale"]
    own = "With no gain of its own" if record["effect"]["verdict"] == "neutral" else "Slower on its own"
    assert (f"{own}, it is credited as enabling: the verified faster follow-up "
            f"{follower['strategy']} (step {follower['step_id'][:12]}) at 2.5x.") in text
    assert _messages(records) == []
    other = "Slower on its own" if own != "Slower on its own" else "With no gain of its own"
    _replace(record, own, other)
    assert any(f"says {other!r}, but the step's verdict is" in m for m in _messages(records))
    _replace(record, other, own)
    record["effect"]["follow_up"] = None  # the text names a follow-up the record does not have
    assert any("but the record credits none" in m for m in _messages(records))
    assert any("does not state that no follow-up is credited" in m for m in _messages(records))


def test_the_selection_line_names_the_rank_and_the_best_candidate(records):
    record = next(r for r in records if "ranked 2 of" in r["trace"]["rationale"])
    _replace(record, "ranked 2 of", "ranked 1 of")
    assert any("states the rank 1, the record has 2" in m for m in _messages(records))
    other = next(r for r in records if "the best, " in r["trace"]["rationale"] and r is not record)
    best = other["trace"]["rationale"].split("the best, ")[1].split(",")[0]
    _replace(other, f"the best, {best},", "the best, loop_nothing,")
    assert any("names the best loop_nothing" in m for m in _messages(records))


def test_two_records_share_a_rationale_only_with_the_same_state_and_strategy(records):
    assert shared_rationales(records) == []
    first = _one(records)
    twin = next(r for r in records if r["parent"]["hash"] != first["parent"]["hash"] and r["trace"])
    twin["trace"]["rationale"] = first["trace"]["rationale"]
    (problem,) = shared_rationales(records)
    assert problem.step_id == twin["step_id"] and first["step_id"][:12] in problem.message
    sibling = {**copy.deepcopy(first), "step_id": "f" * 64}  # same state and strategy: allowed
    assert [p.step_id for p in shared_rationales([first, sibling])] == []


# ------------------------------------------------------------------------- the strategies' own claims


def _record(records, **estimate_child):
    record = copy.deepcopy(next(r for r in records if r["effect"]["estimate"]))
    record["effect"]["estimate"]["child"].update(estimate_child)
    return record


def test_stays_in_cache_needs_a_footprint_within_the_targets_l1(records):
    record = _record(records)
    fits = ("One tile touches about 4096 bytes of tensor data, within the 32 KiB L1 data cache of the llvm "
            "target, so it stays in cache while the tile is computed.")
    assert claim_problems(fits, record) == []
    too_big = fits.replace("about 4096 bytes", "about 65536 bytes")
    assert any("more than the 32768-byte L1" in p for p in claim_problems(too_big, record))
    assert checked_text(too_big, record) == ""
    wrong_size = fits.replace("32 KiB", "64 KiB")
    assert any("names a 64 KiB L1" in p for p in claim_problems(wrong_size, record))
    misses = "One tile touches about 4096 bytes, so the tile does not stay in L1 while it is computed."
    assert any("within the 32768-byte L1" in p for p in claim_problems(misses, record))
    assert any("without stating a footprint" in p for p in claim_problems("The data stays in cache.", record))
    record["effect"]["target"] = "cuda"  # the sentence names its target: llvm's L1 still decides it
    assert claim_problems(fits, record) == []
    assert any("without a known cache size" in p for p in claim_problems("It stays in cache (about 64 bytes).",
                                                                           record))


def test_contiguous_along_is_checked_against_the_before_state(records):
    record = next(r for r in records if r["strategy"] == "loop_reorder")
    claimed = record["trace"]["rationale"].split(" is contiguous along ")
    tensor, var = claimed[0].split()[-1], claimed[1].split(",")[0].split(".")[0]
    assert claim_problems(f"{tensor} is contiguous along {var}.", record) == []
    problems = claim_problems(f"{tensor} is contiguous along zz.", record)
    assert problems == [f"contiguous: claims '{tensor} is contiguous along zz', but no reference to {tensor} "
                        "has stride 1 along zz"]


def test_a_contiguous_load_needs_an_innermost_stride_of_one(records):
    text = "Eight lanes (one contiguous load or store instead of 8 scalar ones)."
    assert claim_problems(text, _record(records, innermost_stride=1)) == []
    assert any("innermost stride is 4" in p for p in claim_problems(text, _record(records, innermost_stride=4)))


def test_fewer_instructions_must_match_the_modelled_vector_width(records):
    text = "The 64 iterations become 64 lanes (one contiguous load), so the block issues about 8x fewer instructions."
    good = _record(records, vector_width=8, innermost_stride=1)
    good["effect"]["estimate"]["parent"]["vector_width"] = 1
    assert claim_problems(text, good) == []
    bad = _record(records, vector_width=8, innermost_stride=1)
    bad["effect"]["estimate"]["parent"]["vector_width"] = 1
    wrong = text.replace("about 8x", "about 64x")
    assert any("vector width goes from 1 to 8" in p for p in claim_problems(wrong, bad))
    assert checked_text(wrong, bad) == "The 64 iterations become 64 lanes (one contiguous load)."


def test_enabling_credit_is_reworded_and_claimed_only_with_a_follow_up(records):
    record = _record(records)
    record["effect"]["follow_up"] = None
    text = "An enabling step: the factor can be hoisted. This enables fusion."
    assert len(claim_problems(text, record)) == 2
    assert checked_text(text, record) == "Meant to enable a later step: the factor can be hoisted. This can enable fusion."
    record["effect"]["follow_up"] = {"step_id": "a" * 64, "strategy": "loop_split", "speedup": 2.0}
    assert claim_problems(text, record) == []


@pytest.mark.parametrize(("value", "text"), [(2.0, "2"), (0.706914, "0.707"), (78.384, "78.4"), (1186.4, "1186"),
                                             (0.0123, "0.0123"), (12.84, "12.8")])
def test_numbers_are_shown_to_three_significant_digits_and_read_back(value, text):
    assert shown(value) == text and agrees(text, value)
    assert not agrees(text, value * 1.01 + 0.01)
    assert not agrees(text, value * 0.99 - 0.01)


def test_version_1_records_have_no_reasoning_and_lint_says_so(records):
    record = json.loads(json.dumps(_one(records)))
    record["trace"]["rationale"] = record["trace"]["rationale"].split("\n")[0]
    messages = [p.message for p in lint([record])]
    assert "the rationale does not state the step's effect (one 'Effect:' line)" in messages


def test_a_faster_step_with_a_follow_up_names_it_too(records):
    record = next(r for r in records if r["effect"]["verdict"] == "faster")
    follower = next(r for r in records if r["step_id"] != record["step_id"])
    record["effect"]["follow_up"] = {"step_id": follower["step_id"], "strategy": follower["strategy"],
                                     "speedup": 1.75}
    write_reasoning(records)
    assert (f"It also enables the verified faster follow-up {follower['strategy']} (step "
            f"{follower['step_id'][:12]}) at 1.75x.") in record["trace"]["rationale"]
    assert _messages(records) == []
    _replace(record, "at 1.75x", "at 1.8x")
    assert any("the follow-up's speedup 1.8" in m for m in _messages(records))


def test_a_feature_change_is_shown_with_the_digits_it_takes_to_show_as_one(records):
    record = next(r for r in records if r["effect"]["estimate"])
    record["effect"]["estimate"]["parent"]["reuse_per_element"] = 2.00584
    record["effect"]["estimate"]["child"]["reuse_per_element"] = 2.00777
    write_reasoning(records)
    assert "reuse per element 2.006 → 2.008" in record["trace"]["rationale"]
    assert _messages(records) == []


def test_checking_the_strategys_text_twice_changes_nothing(records):
    for record in records:
        own = record["trace"]["rationale"].split("\n")[0]
        assert checked_text(own, record) == own


def test_a_selection_of_a_file_lints_clean_only_as_partial_and_what_it_holds_still_binds(
        records, tmp_path, capsys):
    """A filter's output or an export split keeps some of a state's candidates: their selection lines
    name counts and ranks the file no longer shows, which ``--partial`` accepts, while the candidates the
    file still holds bind the line."""
    by_state: dict[tuple[str, str], list[dict]] = {}
    for record in records:
        by_state.setdefault((record["parent"]["hash"], record["status"]), []).append(record)
    group = max(by_state.values(), key=len)
    assert len(group) >= 3
    selection = [r for r in records if r not in group] + group[::2]  # every other candidate of one state
    path = tmp_path / "selection.jsonl"
    path.write_text("".join(dumps(r) + "\n" for r in selection), encoding="utf-8")
    assert main(["lint", str(path)]) == 1
    assert "lint it with --partial" in capsys.readouterr().err
    assert main(["lint", "--partial", str(path)]) == 0

    kept = group[::2]
    ranked_line = next(r for r in kept if " candidates by speedup from " in r["trace"]["rationale"])
    stated = ranked_line["trace"]["rationale"].split("Selection: ranked ")[1].split(" candidates")[0]
    position, _of, _count, status = stated.split()
    _replace(ranked_line, f"ranked {stated} ", f"ranked 1 of 1 {status} ")  # fewer than the file holds
    assert any("the file alone has" in p.message for p in lint(selection, partial=True))
