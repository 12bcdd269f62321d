"""An export is ready to train on and to evaluate: the folder loads with no config name, rows carry
``meta``, the card states row lengths, and ``steptp evaluate`` runs on the exported test split."""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from curation.services import exports
from curation.services.roles import Role
from curation.services.steps import import_records
from dataset.records import load_records
from steptp_cli.main import main
from tests.training.data import steps_file

from .fixtures import user

pytestmark = pytest.mark.django_db
FRACTIONS = {"train": 0.5, "test": 0.5}


def _seed_with_both_splits() -> int:
    workloads = ("level1/softmax", "level2/gemm_bias_relu")
    return next(seed for seed in range(100)
                if {exports.split_of(w, seed, FRACTIONS) for w in workloads} == {"train", "test"})


@pytest.fixture
def export(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    records = [r for r in load_records(steps_file(tmp_path / "steps.jsonl")) if r["status"] == "verified"]
    import_records(records)
    made = exports.create_export(user("cat", Role.CURATOR), name="train-ready", seed=_seed_with_both_splits(),
                                 enqueue=False, filters={"all_verified": True},
                                 formats=["messages", "prompt-completion", "parquet", "preference"],
                                 split_policy={"fractions": FRACTIONS})
    return exports.run_export(made.pk)


def test_the_folder_loads_without_a_config_name_and_rows_carry_meta(export, caplog, monkeypatch, tmp_path):
    import datasets

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    root = Path(export.directory)
    with caplog.at_level(logging.WARNING):
        loaded = datasets.load_dataset(str(root), cache_dir=str(tmp_path / "cache"))
    assert not [r for r in caplog.records if "split" in r.getMessage().lower()], caplog.text
    assert {name: split.num_rows for name, split in loaded.items()} == export.manifest["splits"]
    train = loaded["train"]
    assert set(train.column_names) == {"messages", "meta"}
    assert train.features["meta"]["speedup"].dtype == "float64"
    for row in train:
        assert row["meta"]["strategy"] in row["messages"][2]["content"]
    completions = datasets.load_dataset(str(root), "prompt_completion", cache_dir=str(tmp_path / "cache"))
    assert [t["role"] for t in completions["test"][0]["prompt"]] == ["system", "user"]


def test_preference_pairs_are_exported_per_split_never_crossing_it(export):
    root = Path(export.directory)
    workloads_of = {}
    for split in export.manifest["splits"]:
        rows = [json.loads(line) for line in (root / "messages" / f"{split}.jsonl").read_text().splitlines()]
        workloads_of[split] = {row["meta"]["workload"] for row in rows}
    pairs = 0
    for path in sorted((root / "preference").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            pairs += 1
            assert row["meta"]["workload"] in workloads_of[path.stem]
            assert row["meta"]["rejected_kind"] in ("slower", "neutral")
            assert row["meta"]["rejected_speedup"] < row["meta"]["chosen_speedup"]
            assert row["chosen"] != row["rejected"]
    assert pairs > 0


def test_the_card_gives_the_row_lengths_and_the_max_length_a_trainer_needs(export):
    card = export.card
    assert "  default: true" in card and "## Row lengths (tokens)" in card
    table = [line for line in card.splitlines() if line.startswith(("| train |", "| test |"))]
    lengths = [line for line in table if line.count("|") == 13]
    assert len(lengths) == 2
    for line in lengths:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows, low, p50, high, needed = int(cells[1]), int(cells[2]), int(cells[3]), int(cells[6]), int(cells[11])
        assert rows > 0 and low <= p50 <= high <= needed < high + 64 and needed % 64 == 0
        assert int(cells[7]) > 0  # these rows are longer than TRL's default max_length of 1,024


class _Model(BaseHTTPRequestHandler):
    """A chat endpoint that answers each prompt with the exported reference answer for it."""

    answers: dict[str, str] = {}

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        prompt = body["messages"][-1]["content"]
        reply = {"id": "x", "object": "chat.completion", "model": "ref",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": self.answers.get(prompt, "no idea")}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def test_steptp_evaluate_runs_on_the_exported_test_split(export, tmp_path, capsys):
    root = Path(export.directory)
    split = root / "records" / "test.jsonl"
    records = list(load_records(split))
    assert len(records) == export.manifest["splits"]["test"]
    rows = [json.loads(line) for line in (root / "messages" / "test.jsonl").read_text().splitlines()]
    assert [r["step_id"] for r in records] == [row["meta"]["step_id"] for row in rows]
    _Model.answers = {row["messages"][1]["content"]: row["messages"][2]["content"] for row in rows}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        report = tmp_path / "report.json"
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert main(["evaluate", str(split), "--url", url, "--model", "ref", "--json", str(report)]) == 0
    finally:
        server.shutdown()
        server.server_close()
    overall = json.loads(report.read_text())["overall"]
    assert overall["prompts"] == len(records)
    assert overall["legal_step"] == 1.0 and overall["same_strategy"] == 1.0 and overall["pass"] == 1.0
