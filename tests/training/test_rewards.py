"""The verifier-backed reward: every rung of its ladder, hostile answers, the cache, the HTTP server."""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request

import pytest

from dataset.records import load_records
from dataset.rendering import answered_records, render
from leir.program import program_from_json, program_hash
from rewards import REWARDS, PromptError, VerifierReward, parse_prompt
from rewards.scoring import verified_score
from rewards.server import make_server

from .data import steps_file


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    records = list(load_records(steps_file(tmp_path_factory.mktemp("rw") / "steps.jsonl")))
    rows = list(render(records, "prompt-completion"))
    return rows, answered_records(records)


@pytest.fixture(scope="module")
def reward():
    with VerifierReward(workers=1) as scorer:
        yield scorer


def _answer(ir: str, strategy: str, think: str = "x") -> list[dict]:
    body = json.dumps({"transformed_IR": ir, "applied_strategy": strategy})
    return [{"role": "assistant", "content": f"<think>{think}</think><answer>{body}</answer>"}]


def test_every_prompt_reads_back_as_its_parent_program(rendered):
    rows, records = rendered
    for row, record in zip(rows, records, strict=True):
        program, target = parse_prompt(row["prompt"])
        assert program_hash(program) == program_hash(program_from_json(record["parent"]["program"]))
        assert target == "llvm"
    with pytest.raises(PromptError):
        parse_prompt("Say hello.")


def test_reference_answers_verify_and_the_reward_varies_with_the_answer(rendered, reward):
    rows, records = rendered
    row, record = rows[0], records[0]
    parent_ir = record["parent"]["program"]["leir"]
    child_ir = record["child"]["program"]["leir"]
    wrong_strategy = "operator_fusion" if record["strategy"] != "operator_fusion" else "loop_binding"
    cases = {
        "accepted": row["completion"],
        "off_format": [{"role": "assistant", "content": "the answer is 42"}],
        "invalid_ir": _answer("this is not LEIR ((", record["strategy"]),
        "no_change": _answer(parent_ir, record["strategy"]),
        "unknown_strategy": _answer(child_ir, "make_it_fast"),
        "not_a_legal_step": _answer(child_ir, wrong_strategy),
    }
    rewards = reward([row["prompt"]] * len(cases), list(cases.values()))
    stages = [s.stage for s in reward.last_scores]
    assert stages == list(cases), [s.reason for s in reward.last_scores]
    assert rewards == [REWARDS[stage] for stage in cases]
    assert reward.last_scores[0].outcome in ("equal_pass", "pass")
    assert len(set(rewards)) == len(rewards)  # every rung scores differently


def test_hostile_answers_score_low_quickly_and_never_raise(rendered, reward):
    rows, records = rendered
    prompt, record = rows[0]["prompt"], records[0]
    child_ir = record["child"]["program"]["leir"]
    extent = re.search(r"\^\{(\d+)\}", child_ir)
    assert extent
    hostile = [
        "\x00\xff garbage <answer> {{{{ </answer>",
        _answer("(" * 20000 + ")" * 20000, record["strategy"]),  # nesting past the parser's recursion
        _answer(child_ir.replace(f"^{{{extent[1]}}}", "^{4000000000}", 1), record["strategy"]),  # huge extent
        _answer(f"L^{{100000000}}_{{zz=0}}[{child_ir}];", record["strategy"]),  # a huge loop around it all
        [{"role": "assistant", "content": "<think>" + "y" * 300_000 + "</think>"}],
        _answer(child_ir, record["strategy"], think="<answer>{\"transformed_IR\": 3}</answer>"),
        [{"role": "assistant", "content": None}],
    ]
    start = time.monotonic()
    rewards = reward([prompt] * len(hostile), hostile)
    assert time.monotonic() - start < 60
    assert all(value <= REWARDS["not_a_legal_step"] for value in rewards[:5]), reward.last_scores
    stages = [score.stage for score in reward.last_scores]
    assert stages[:5] == ["off_format", "invalid_ir", "invalid_ir", "too_costly", "off_format"], stages
    assert reward([{"role": "user", "content": "not our prompt"}], [rows[0]["completion"]]) == [0.0]
    assert reward.last_scores[0].stage == "error"


def test_scores_are_cached_by_program_hash(rendered):
    rows, _ = rendered
    with VerifierReward(workers=1, cache=True) as scorer:
        first = scorer([rows[1]["prompt"]] * 2, [rows[1]["completion"]] * 2)
        assert [s.cached for s in scorer.last_scores] == [False, True]
        again = scorer([rows[1]["prompt"]], [rows[1]["completion"]])
        assert scorer.last_scores[0].cached and again == first[:1]


def test_verification_outcomes_map_to_the_ladder():
    from rewards.scoring import Screened

    def screened(exactness):
        return Screened(parent=None, proposed=None, strategy="s", exactness=exactness,  # type: ignore[arg-type]
                        key=("p", "c", "s", "llvm", True))

    assert verified_score(screened("E"), {"outcome": "equal_pass"}, time=False).stage == "accepted"
    assert verified_score(screened("E"), {"outcome": "pass"}, time=False).stage == "not_bitwise_equal"
    assert verified_score(screened("N"), {"outcome": "pass"}, time=False).stage == "accepted"
    assert verified_score(screened("N"), {"outcome": "fail"}, time=False).stage == "fail"
    assert verified_score(screened("N"), {"outcome": "timeout"}, time=False).reward == REWARDS["fail"]
    faster = verified_score(screened("N"), {"outcome": "pass", "speedup_vs_parent": 2.0}, time=True)
    slower = verified_score(screened("N"), {"outcome": "pass", "speedup_vs_parent": 0.5}, time=True)
    assert faster.reward == 1.5 and slower.reward == 0.5
    assert verified_score(screened("N"), {"outcome": "pass", "unhonoured_loops": [{}]}, time=False).stage == "fail"


def test_the_reward_server_scores_over_http(rendered, reward):
    rows, _ = rendered
    server = make_server(reward, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        body = json.dumps({"prompts": [rows[0]["prompt"]] * 2,
                           "completions": [rows[0]["completion"], "nonsense"]}).encode()
        request = urllib.request.Request(f"{url}/score", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
        assert answer["rewards"] == [1.0, 0.0]
        assert answer["scores"][1]["stage"] == "off_format"
        bad = urllib.request.Request(f"{url}/score", data=b'{"prompts": 1}')
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(bad, timeout=30)
        assert error.value.code == 400
    finally:
        server.shutdown()
        server.server_close()


def test_with_timing_an_accepted_answer_earns_its_measured_speedup(rendered):
    import math

    rows, _ = rendered
    with VerifierReward(workers=1, time=True, cache=False) as scorer:
        [value] = scorer([rows[0]["prompt"]], [rows[0]["completion"]])
        score = scorer.last_scores[0]
    assert score.stage == "accepted" and score.speedup is not None and score.speedup > 0
    assert value == pytest.approx(1.0 + 0.5 * max(-1.0, min(1.0, math.log2(score.speedup))))
