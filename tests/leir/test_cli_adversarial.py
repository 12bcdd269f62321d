"""No escapes: every command, on every adversarial input, exits 0, 1 or 2 without a traceback (issue 7).

Exit 3 is reserved for steptp's own bugs. The inputs cover each way a file can be hostile: unreadable
bytes, nothing at all, a bare body, literals of thousands of digits, expressions and loop nests at and
beyond the limits of docs/leir.md §7, and programs every checker rule refuses.
"""

from __future__ import annotations

import random

import pytest

from steptp_cli.main import main

A = "A^{f32,g}_{i}"
SIG = "input A: f32[4]\noutput C: f32[4]\n---\n"


def _stmt(value: str) -> str:
    return SIG + f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={value};];\n"


def _right_nested(n: int) -> str:
    value = A
    for _ in range(n):
        value = f"{A}-({value})"
    return value


INPUTS: dict[str, bytes | str] = {
    "not_utf8": b"input A: f32[4]\n\xff\xfe---\n",
    "random_bytes": random.Random(3).randbytes(4000),
    "empty": "",
    "comments_only": "# nothing here\n\n",
    "header_without_separator": "input A: f32[4]\noutput C: f32[4]\n",
    "duplicate_declaration": "input A: f32[4]\ninput A: f32[4]\noutput C: f32[4]\n---\n"
                             "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];\n",
    "bare_body": "B^{4}_{tx=0}[C^{f32,g}_{tx}=exp(A^{f32,g}_{tx});];\n",
    "bare_body_gather_shape": "L^{4}_{i=0}[C^{f32,g}_{G^{i32,g}_{i}}=A^{f32,g}_{i};];\n",
    "literal_5000_digits": _stmt(A + "+" + "9" * 5000),
    "index_literal_5000_digits": SIG + "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{" + "9" * 5000 + "};];\n",
    "extent_5000_digits": SIG + "L^{" + "9" * 5000 + "}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];\n",
    "sum_400": _stmt("+".join([A] * 400)),
    "sum_900": _stmt("+".join([A] * 900)),
    "sum_1200": _stmt("+".join([A] * 1200)),
    "parens_350": _stmt("(" * 350 + A + ")" * 350),
    "right_nested_350": _stmt(_right_nested(350)),
    "calls_200": _stmt("exp(" * 200 + A + ")" * 200),
    "blocks_120": SIG + "".join(f"L^{{1}}_{{j{k}=0}}[" for k in range(120))
                  + "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];" + "];" * 120 + "\n",
    "reserved_loop_name": SIG + "L^{4}_{inf=0}[C^{f32,g}_{inf}=A^{f32,g}_{inf};];\n",
    "zero_divisor_index": _stmt("A^{f32,g}_{i//0+4}"),
    "float_modulo": _stmt(A + "%2.5"),
    "i8_literal_200": "input A: i8[4]\noutput C: i8[4]\n---\nL^{4}_{i=0}[C^{i8,g}_{i}=A^{i8,g}_{i}+200;];\n",
    "u64_min_reduction": "input A: u64[4]\noutput C: u64[]\n---\nL^{4}_{i=0}[C^{u64,g}=min(C^{u64,g},A^{u64,g}_{i});];\n",
    "int_power_of_i": "output C: i32[4]\n---\nL^{4}_{i=0}[C^{i32,g}_{i}=2**i;];\n",
    "syntax_error": _stmt(A + " $ 2"),
    "square_index": SIG.replace("f32[4]\n", "f32[5]\n", 1) + "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{(i-2)*(i-2)};];\n",
}

COMMANDS = ("check", "fmt", "run", "lower", "tokens", "verify", "translate")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("adversarial")
    paths = {}
    for name, content in INPUTS.items():
        path = root / f"{name}.leir"
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        paths[name] = path
    return paths


def _argv(command: str, path, tmp_path) -> list[str]:
    if command == "run":
        return ["run", str(path), "--out", str(tmp_path / "out.npz")]
    if command == "verify":
        return ["verify", str(path), "--no-cache", "--timeout", "120"]
    if command == "translate":
        source = tmp_path / "model.py"
        source.write_bytes(path.read_bytes())
        return ["translate", str(source)]
    return [command, str(path)]


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_every_command_answers_every_input_without_escaping(name, files, tmp_path, capfd):
    for command in COMMANDS:
        code = main(_argv(command, files[name], tmp_path))
        out, err = capfd.readouterr()
        assert code in (0, 1, 2), f"{command} {name}: exit {code}\n{err[-2000:]}"
        assert "Traceback" not in out + err, f"{command} {name}\n{err[-2000:]}"


def test_the_same_inputs_get_the_same_kind_of_answer_in_every_command(files, tmp_path, capfd):
    """What one command refuses as unreadable, none reads; what check accepts, lower and run accept."""
    for name in ("not_utf8", "random_bytes"):
        codes = set()
        for command in ("check", "fmt", "run", "lower", "tokens", "verify"):
            codes.add(main(_argv(command, files[name], tmp_path)))
            _, err = capfd.readouterr()
            if name == "not_utf8":
                assert "not UTF-8" in err, command
        assert len(codes) == 1, (name, codes)
    for name in ("bare_body", "sum_900", "square_index", "u64_min_reduction", "parens_350"):
        assert main(["check", str(files[name])]) == 0, name
        for command in ("run", "lower", "tokens", "verify"):
            assert main(_argv(command, files[name], tmp_path)) == 0, (command, name)
        err = capfd.readouterr().err
        if name == "bare_body":
            assert "inferred from the body: input  A: f32[4]; output C: f32[4]" in err


@pytest.mark.parametrize("command", ["check", "fmt", "run", "lower", "verify"])
def test_a_loop_extent_of_5000_digits_is_refused_with_its_position(command, files, tmp_path, capfd):
    assert main(_argv(command, files["extent_5000_digits"], tmp_path)) == 1
    out, err = capfd.readouterr()
    said = out + err
    assert "4:4: error: loop extent 9999" in said or "line 4, column 4: loop extent 9999" in said, said[-2000:]
    assert "does not fit i64" in said and "Traceback" not in said
    assert len(said) < 2000  # the 5,000 digits are cut, not echoed
