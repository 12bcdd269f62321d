"""``steptp tune`` end to end on a .leir file, and ReplayPolicy reproducing the written run."""

from __future__ import annotations

import json

from dataset.records import load_records
from leir.program import dump_program, program_hash
from steptp_cli.main import main
from tests.strategies.helpers import workload
from tests.tuner.conftest import source_of
from tuner.policies import ReplayPolicy
from tuner.run import tune
from tuner.search import Budget


def test_tune_cli_writes_a_loadable_trajectory_and_replay_reproduces_it(tmp_path, capsys, measurer):
    program = workload("level1/layer_norm")
    path = tmp_path / "ln.leir"
    path.write_text(dump_program(program), encoding="utf-8")
    out = tmp_path / "run.jsonl"
    code = main(["tune", str(path), "--algo", "chain", "--policy", "rule", "--budget", "verifications=2",
                 "--repeats", "2", "--min-repeat-ms", "2", "--no-cache", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    records = list(load_records(out))  # validated against the schema
    summary = json.loads((tmp_path / "run.summary.json").read_text())
    usage = summary["usage"]
    # a would-be new best is timed twice (Search._confirm): one record, two verifications
    assert usage["verifications"] == 2 and len(records) == 2 - usage["confirmations"] >= 1
    assert all(r["status"] == "verified" for r in records)
    assert records[0]["parent"]["hash"] == program_hash(program)
    assert all(b["parent"]["hash"] == a["child"]["hash"] for a, b in zip(records, records[1:], strict=False))
    assert summary["config"]["tuner"]["algo"] == "chain"
    err = capsys.readouterr().err
    assert f"[chain] accepted {len(records)}  verifications 2/2" in err

    replayed = tune(source_of("level1/layer_norm"), ReplayPolicy(out), measurer, Budget(verifications=4),
                    algo="chain")
    assert [r["child"]["hash"] for r in replayed.records] == [r["child"]["hash"] for r in records]


def test_tune_cli_usage_errors(tmp_path, capsys):
    assert main(["tune", "level1/layer_norm", "--budget", "bogus=1", "-o", str(tmp_path / "r.jsonl")]) == 2
    assert "budget item" in capsys.readouterr().err
    assert main(["tune", "level1/layer_norm", "--policy", "llm", "-o", str(tmp_path / "r.jsonl")]) == 2
    assert "--url" in capsys.readouterr().err
    assert main(["tune", "level1/layer_norm", "--policy", "replay", "-o", str(tmp_path / "r.jsonl")]) == 2
