"""The pipeline's CLI: strategies, candidates, apply (traces, refusals), generate, filter, render."""

from __future__ import annotations

import json

import pytest

from dataset.records import load_records
from leir.program import dump_program, load_program, program_hash
from steptp_cli.main import main
from strategies import all_strategies

from .helpers import sources

SMALL = "input A: f32[64, 4]\noutput C: f32[64, 4]\n---\nP^{64}_{i=0}L^{4}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a}*2;];\n"


@pytest.fixture()
def layer_norm(tmp_path):
    path = tmp_path / "ln.leir"
    path.write_text(dump_program(sources(("level1/layer_norm",))[0].program))
    return path


def test_strategies_lists_the_registry(capsys):
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for s in all_strategies():
        assert s.name in out and s.level.value in out
    assert main(["strategies", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["number"] for r in rows] == sorted(s.number for s in all_strategies())


def test_candidates_json_numbers_sites_as_apply_takes_them(layer_norm, capsys):
    assert main(["candidates", str(layer_norm), "--strategy", "loop_unrolling", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and [r["site"] for r in rows] == list(range(len(rows)))
    assert all(r["strategy"] == "loop_unrolling" and r["where"] for r in rows)


def test_apply_writes_the_after_state_and_prints_the_trace(layer_norm, tmp_path, capsys):
    out = tmp_path / "after.leir"
    assert main(["apply", str(layer_norm), "loop_unrolling", "--site", "1", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    after = load_program(out.read_text())
    before = load_program(layer_norm.read_text())
    assert program_hash(after) != program_hash(before)
    assert "Exact (E)" in printed and "becomes" in printed and "block 3" in printed


def test_apply_refusals_exit_1_with_the_reason(tmp_path, layer_norm, capsys):
    small = tmp_path / "small.leir"
    small.write_text(SMALL)
    assert main(["apply", str(small), "loop_unrolling", "--site", "5"]) == 1
    assert "refused: loop_unrolling: [no-such-site] site 5 does not exist (1 candidate(s)" in \
        capsys.readouterr().err
    assert main(["apply", str(small), "loop_unrolling", "--param", "factor=3"]) == 1
    assert "[unknown-param] unknown parameter 'factor'" in capsys.readouterr().err
    assert main(["apply", str(small), "no_such_strategy"]) == 2
    assert "unknown strategy 'no_such_strategy'" in capsys.readouterr().err
    bad = tmp_path / "bad.leir"
    bad.write_text("input A: f32[4]\noutput C: f32[4]\n---\nL^{8}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];\n")
    assert main(["apply", str(bad), "loop_unrolling"]) == 1


def test_generate_filter_render_round_trip(tmp_path, capsys):
    steps, kept, sft = tmp_path / "steps.jsonl", tmp_path / "kept.jsonl", tmp_path / "sft.jsonl"
    src = tmp_path / "s.leir"
    src.write_text(SMALL.replace("P^{64}", "L^{64}"))
    assert main(["generate", str(src), "level1/layer_norm", "--depth", "2", "--seed", "4", "--no-progress",
                 "--no-verify", "-o", str(steps)]) == 0
    records = list(load_records(steps))
    assert {r["source"]["id"] for r in records} == {"s.leir", "level1/layer_norm@f32#0"}
    assert {r["depth"] for r in records} == {1, 2}
    err = capsys.readouterr().err
    assert f"{len(records)} step(s) written" in err
    # Resuming a finished run writes nothing new.
    assert main(["generate", str(src), "level1/layer_norm", "--depth", "2", "--seed", "4", "--no-progress",
                 "--no-verify", "-o", str(steps)]) == 0
    assert f"0 step(s) written, {len(records)} already in" in capsys.readouterr().err
    # Unverified steps are not kept by the default policy; the distribution is printed all the same.
    assert main(["filter", str(steps), "-o", str(kept)]) == 0
    out = capsys.readouterr().out
    assert "policy default" in out and "loop_unrolling" in out and "before" in out
    assert main(["render", str(steps), "--format", "messages", "-o", str(sft)]) == 1  # nothing verified


def test_generate_rejects_unknown_sources_and_strategies(tmp_path, capsys):
    out = str(tmp_path / "x.jsonl")
    assert main(["generate", "level1/no_such_workload", "-o", out, "--no-progress"]) == 2
    assert "unknown workload" in capsys.readouterr().err
    assert main(["generate", "level1/softmax", "--strategy", "nope", "-o", out]) == 2
