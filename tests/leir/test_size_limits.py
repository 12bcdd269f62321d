"""Extents that parse but are too large, and the messages of issue 45 (items 4 and 5), through the CLI.

An extent of 10^29 passed ``check``, then failed inside TVMScript in ``lower`` and with an
``OverflowError`` in ``run``; 10^12 made ``run`` die with a ``MemoryError``. The checker now states the
limit at the loop's line and column, and the interpreter refuses work beyond its budget before it
allocates anything (docs/leir.md §7).
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leir.checker import check
from leir.interpreter import MAX_EXECUTIONS, InterpreterError, run
from leir.limits import MAX_EXTENT, spell_int, statement_executions
from leir.program import load_program
from steptp_cli.main import main

REPO = Path(__file__).resolve().parents[2]


def _extent_program(extent: int) -> str:
    return ("input A: f32[4]\noutput C: f32[4]\n---\n"
            f"B^{{4}}_{{tx=0}}L^{{{extent}}}_{{a=0}}[\n  C^{{f32,g}}_{{tx}} = C^{{f32,g}}_{{tx}}+A^{{f32,g}}_{{tx}};\n];\n")


@pytest.mark.parametrize("extent", [10**12, 10**29])
@pytest.mark.parametrize("command", ["check", "lower", "run"])
def test_a_too_large_extent_is_refused_at_its_loop_by_every_command(tmp_path: Path, capsys, extent: int,
                                                                    command: str):
    source = tmp_path / "big.leir"
    source.write_text(_extent_program(extent))
    args = [command, str(source)] + (["--out", str(tmp_path / "out.npz")] if command == "run" else [])
    assert main(args) == 1
    captured = capsys.readouterr()
    said = captured.out + captured.err
    if extent < 2**63:  # parses as an i64; the checker refuses it at the loop
        assert f"4:13: error: loop a has extent {spell_int(extent)}; the largest extent is 2,147,483,647" in said
        assert "[extent-too-large]" in said
    else:  # beyond i64 the parser refuses it at its digits, before converting them
        assert "does not fit i64" in said and ("4:16: error" in said or "line 4, column 16" in said)
    assert "Traceback" not in said and "TVMScript" not in said
    assert not (tmp_path / "out.npz").exists()


def test_the_limit_is_the_int32_one_at_its_edge():
    at, beyond = load_program(_extent_program(MAX_EXTENT)), load_program(_extent_program(MAX_EXTENT + 1))
    assert "extent-too-large" not in [d.code for d in check(at).errors]
    assert [d.code for d in check(beyond).errors] == ["extent-too-large"]


NESTED_10_12 = ("input A: f32[4]\noutput C: f32[4]\n---\n"
                "B^{4}_{tx=0}L^{1000}_{a=0}L^{1000000}_{c=0}L^{250}_{d=0}[\n"
                "  C^{f32,g}_{tx} = C^{f32,g}_{tx}+A^{f32,g}_{tx};\n];\n")


def test_extents_within_the_limit_that_nest_to_10_12_executions_are_refused_before_allocating():
    program = load_program(NESTED_10_12)
    assert not check(program).errors and statement_executions(program.body) == 10**12
    with pytest.raises(InterpreterError) as raised:
        run(program, {"A": np.ones(4, dtype=np.float32)})
    message = str(raised.value)
    assert message.startswith("the program executes 1,000,000,000,000 statements")
    assert "c 1,000,000 (line 4, column 27)" in message and f"{MAX_EXECUTIONS:,}" in message


def test_run_refuses_a_huge_nest_quickly_in_little_memory(tmp_path: Path):
    """The CLI checks the budget before it makes the random inputs: one second, no MemoryError."""
    source = tmp_path / "nested.leir"
    source.write_text(NESTED_10_12.replace("input A: f32[4]", "input A: f32[4]\ninput W: f32[200000000]")
                      .replace("A^{f32,g}_{tx};", "A^{f32,g}_{tx}*W^{f32,g}_{c};"))

    def limit_memory() -> None:  # 1.5 GB: the 800 MB input W alone would not fit beside numpy and torch
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    done = subprocess.run([sys.executable, "-m", "steptp_cli.main", "run", str(source), "--out",
                          str(tmp_path / "o.npz")], cwd=REPO, capture_output=True, text=True, timeout=120,
                         preexec_fn=limit_memory)
    assert done.returncode == 1, done.stderr
    assert "the program executes 1,000,000,000,000 statements" in done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr


def test_a_long_sequential_loop_within_the_budget_runs_without_materialising_its_range():
    program = load_program("input A: f32[2]\noutput C: f32[2, 70000]\n---\n"
                           "B^{2}_{tx=0}L^{70000}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(a<1,0,C^{f32,g}_{tx,a-1})"
                           "*0.5+A^{f32,g}_{tx};];\n")
    out = run(program, {"A": np.array([1.0, -2.0], dtype=np.float32)})["C"]
    assert out.shape == (2, 70000) and np.allclose(out[:, -1], [2.0, -4.0])


# ---------------------------------------------------------------------------------------- messages


def test_a_5000_digit_signature_dimension_gives_a_one_line_message(tmp_path: Path, capsys):
    source = tmp_path / "sig.leir"
    source.write_text("input A: f32[" + "9" * 5000 + "]\noutput C: f32[4]\n---\n"
                      "B^{4}_{tx=0}[\n  C^{f32,g}_{tx} = A^{f32,g}_{tx};\n];\n")
    assert main(["check", str(source)]) == 1
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert "dimension 0 of A has 5,000 digits (999999…); a dimension may be at most 2,147,483,647" in said
    assert len(said) < 500  # was 5,250 characters, the message alone 5,073


def test_a_signature_dimension_above_the_limit_is_a_short_bad_signature():
    program = load_program("input A: f32[3000000000]\noutput C: f32[4]\n---\n"
                           "B^{4}_{tx=0}[C^{f32,g}_{tx}=A^{f32,g}_{tx};];\n")
    (found,) = check(program).errors
    assert found.code == "bad-signature" and "at most 2,147,483,647" in found.message


@pytest.mark.parametrize("literal", ["7", "3000000000", "9223372036854775808", "9" * 5000])
def test_an_out_of_range_literal_index_is_index_out_of_bounds(literal: str):
    program = load_program("input A: f32[4]\noutput C: f32[4]\n---\n"
                           f"B^{{4}}_{{tx=0}}[C^{{f32,g}}_{{tx}}=A^{{f32,g}}_{{{literal}}};];\n")
    codes = [d.code for d in check(program).errors]
    assert codes == ["index-out-of-bounds"]
    assert len(check(program).errors[0].message) < 200


def test_a_literal_divisor_is_named_as_such_not_as_a_tensor_value():
    program = load_program("input A: i32[4]\noutput C: i32[4]\n---\n"
                           "B^{4}_{tx=0}[C^{i32,g}_{A^{i32,g}_{tx}//0}=A^{i32,g}_{tx};];\n")
    (found,) = check(program).errors
    assert found.code == "zero-divisor"
    assert "is zero (`0`)" in found.message and "tensor" not in found.message
    gathered = load_program("input A: i32[4]\noutput C: i32[4]\n---\n"
                            "B^{4}_{tx=0}[C^{i32,g}_{tx//A^{i32,g}_{tx}}=A^{i32,g}_{tx};];\n")
    (found,) = check(gathered).errors
    assert "read from a tensor" in found.message
