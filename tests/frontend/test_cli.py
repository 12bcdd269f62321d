"""``steptp translate``: files written, --set, --dtype, --target-neutral, exit codes, determinism."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leir.program import load_program
from steptp_cli.main import main

from .sources import LINEAR_RELU, UNSUPPORTED, write

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def linear_file(tmp_path):
    return write(tmp_path, "linear_relu.py", LINEAR_RELU)


def test_translate_writes_leir_and_npz(linear_file, tmp_path):
    out = tmp_path / "out.leir"
    assert main(["translate", str(linear_file), "-o", str(out)]) == 0
    program = load_program(out.read_text())
    sig = {d.name: d for d in program.signature.tensors}
    roles = [d.role for d in program.signature.tensors]
    assert roles == ["input", "param", "param", "param", "output"]
    assert sig["A"].shape == (64, 32) and sig["A"].dtype == "f32"
    values = np.load(tmp_path / "out.npz")
    params = [d for d in program.signature.tensors if d.role == "param"]
    assert sorted(values.files) == sorted(d.name for d in params)
    for decl in params:
        assert values[decl.name].shape == decl.shape
        assert values[decl.name].dtype == np.float32


def test_set_overrides_constants_including_class_time_uses(linear_file, tmp_path):
    out = tmp_path / "small.leir"
    assert main(["translate", str(linear_file), "--set", "N=4", "--set", "OUT=3", "--dtype", "f64",
                 "-o", str(out)]) == 0
    program = load_program(out.read_text())
    shapes = {d.role + d.name: d.shape for d in program.signature.tensors}
    assert shapes["inputA"] == (4, 32)
    (output,) = program.signature.by_role("output")
    assert output.shape == (4, 6) and output.dtype == "f64"  # HIDDEN = OUT * 2 at class definition


def test_unknown_constant_is_a_usage_error(linear_file, capsys):
    assert main(["translate", str(linear_file), "--set", "NOPE=3"]) == 2
    assert "NOPE" in capsys.readouterr().err


def test_missing_file_is_a_usage_error(tmp_path):
    assert main(["translate", str(tmp_path / "absent.py")]) == 2


def test_unsupported_operator_exits_1_with_location(tmp_path, capsys):
    path = write(tmp_path, "bad.py", UNSUPPORTED)
    assert main(["translate", str(path), "-o", str(tmp_path / "bad.leir")]) == 1
    err = capsys.readouterr().err
    assert "lgamma" in err and f"{path}:8" in err
    assert not (tmp_path / "bad.leir").exists()


def test_target_neutral_has_only_serial_loops(linear_file, tmp_path):
    out = tmp_path / "neutral.leir"
    assert main(["translate", str(linear_file), "--target-neutral", "-o", str(out)]) == 0
    program = load_program(out.read_text())
    kinds = {loop.kind for block in program.body.blocks for loop in block.loops}
    assert kinds == {"L"}


def test_same_file_gives_byte_identical_outputs(linear_file, tmp_path):
    first, second = tmp_path / "a.leir", tmp_path / "b.leir"
    assert main(["translate", str(linear_file), "-o", str(first)]) == 0
    assert main(["translate", str(linear_file), "-o", str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    assert first.with_suffix(".npz").read_bytes() == second.with_suffix(".npz").read_bytes()


def test_stdout_when_no_output_file(linear_file, capsys):
    assert main(["translate", str(linear_file), "--set", "N=2"]) == 0
    text = capsys.readouterr().out
    assert load_program(text).signature.get("A").shape == (2, 32)


def test_identical_across_processes_and_hash_seeds(linear_file, tmp_path):
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"p{seed}.leir"
        env = dict(os.environ, PYTHONHASHSEED=seed)
        command = [sys.executable, "-m", "steptp_cli.main", "translate", str(linear_file), "-o", str(out)]
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append((out.read_bytes(), out.with_suffix(".npz").read_bytes()))
    assert outputs[0] == outputs[1]


def test_half_precision_signature(linear_file, tmp_path):
    out = tmp_path / "half.leir"
    assert main(["translate", str(linear_file), "--dtype", "f16", "--set", "N=4", "-o", str(out)]) == 0
    program = load_program(out.read_text())
    assert {d.dtype for d in program.signature.tensors} == {"f16"}
    values = np.load(tmp_path / "half.npz")
    assert values.files and all(values[name].dtype == np.float16 for name in values.files)


def test_translate_keeps_dead_blocks_on_request(tmp_path):
    source = REPO / "workloads" / "level1" / "max_dim.py"
    kept, dropped = tmp_path / "kept.leir", tmp_path / "dropped.leir"
    assert main(["translate", str(source), "--keep-dead-blocks", "-o", str(kept)]) == 0
    assert main(["translate", str(source), "-o", str(dropped)]) == 0
    full, lean = load_program(kept.read_text()), load_program(dropped.read_text())
    assert len(full.body.blocks) == len(lean.body.blocks) + 1  # the unused argmax block
    assert full.body.blocks[0] == lean.body.blocks[0]


def test_input_shape_shrinks_get_inputs_for_translate_and_verify(tmp_path):
    from .test_loading import LITERAL_SIZES

    source = write(tmp_path, "literal.py", LITERAL_SIZES)
    out = tmp_path / "literal.leir"
    shapes = ["--input-shape", "0=2,3,8,8", "--input-shape", "1=2", "--input-shape", "2=3"]
    assert main(["translate", str(source), *shapes, "-o", str(out)]) == 0
    text = out.read_text()
    assert "f32[2, 3, 8, 8]" in text and "input 0=2,3,8,8" in text
    assert main(["verify", str(out), "--source", str(source), *shapes, "--no-cache"]) == 0
