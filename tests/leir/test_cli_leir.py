"""``steptp check / fmt / run`` through ``steptp_cli.main.main`` with real files."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from steptp_cli.main import main

GOOD = (
    "# row sums times a column index\n"
    "input A: f64[4, 3]\n"
    "output C: f64[4]\n"
    "---\n"
    "B^{4}_{i=0}L^{3}_{j=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+A^{f64,g}_{i,j}*j;];\n"
)
BAD = (
    "input A: f64[4]\n"
    "param W: f64[4, 3]\n"
    "output C: f64[4]\n"
    "---\n"
    "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i+1}+Q^{f64,g}_{i}*k;];\n"
)
WARN_ONLY = "input A: f64[4]\nparam W: f64[2]\noutput C: f64[4]\n---\nB^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i};];\n"


@pytest.fixture
def files(tmp_path):
    paths = {}
    for name, text in (("good", GOOD), ("bad", BAD), ("warn", WARN_ONLY)):
        p = tmp_path / f"{name}.leir"
        p.write_text(text)
        paths[name] = p
    return paths


def test_check_ok_exit_0(files, capsys):
    assert main(["check", str(files["good"])]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "ok (0 error(s), 0 warning(s))" in captured.err


def test_check_errors_exit_1_compiler_style(files, capsys):
    assert main(["check", str(files["bad"])]) == 1
    out = capsys.readouterr().out.splitlines()
    path = str(files["bad"])
    # a signature-level diagnostic points at its declaration line, so it comes first in source order
    assert out[0] == f"{path}:2:7: warning: param W is declared in the signature but never used [unused-tensor]"
    assert out[2] == "  " + " " * 6 + "^"
    out = out[3:]
    assert out[0] == (
        f"{path}:5:27: error: index 0 of A (`i+1`) takes values in [1, 4] but that dimension has size 4 "
        "[index-out-of-bounds]"
    )
    assert out[1] == "  B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i+1}+Q^{f64,g}_{i}*k;];"
    assert out[2] == "  " + " " * 26 + "^" + "~" * (len("A^{f64,g}_{i+1}") - 1)
    assert out[3].startswith(f"{path}:5:43: error: intermediate Q is read before") and "[read-before-write]" in out[3]
    assert out[6].startswith(f"{path}:5:57: error: loop variable k") and out[8].endswith("^")


def test_check_warnings_only_exit_0(files, capsys):
    assert main(["check", str(files["warn"])]) == 0
    assert "warning:" in capsys.readouterr().out


def test_check_json(files, capsys):
    assert main(["check", "--json", str(files["bad"])]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    codes = [d["code"] for d in report["diagnostics"]]
    assert codes == ["unused-tensor", "index-out-of-bounds", "read-before-write", "unknown-loop-var"]
    assert report["diagnostics"][0]["line"] == 2 and report["diagnostics"][0]["column"] == 7
    assert report["diagnostics"][1]["line"] == 5 and report["diagnostics"][1]["column"] == 27
    assert main(["check", "--json", str(files["good"])]) == 0
    good = json.loads(capsys.readouterr().out)
    assert good["ok"] is True and good["statements"][0]["kind"] == "reduce"
    assert good["statements"][0]["reduce_vars"] == ["j"]
    assert [t["name"] for t in good["tensors"]] == ["A", "C"]


def test_check_syntax_error_exit_1(tmp_path, capsys):
    p = tmp_path / "syn.leir"
    p.write_text("output C: f64[4]\n---\nB^{4}_{i=0}[C^{f64,g}_{i}=;];\n")
    assert main(["check", str(p)]) == 1
    out = capsys.readouterr().out
    assert out.startswith(f"{p}:3:") and "[syntax]" in out


def test_check_stdin(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(BAD))
    assert main(["check", "-"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("<stdin>:2:7: warning:") and "\n<stdin>:5:27: error:" in out


def test_usage_errors_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "missing.leir")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["check"]) == 2
    assert main(["fmt", "-", "-i"]) == 2
    assert main(["fmt", "--pretty", "--canonical", "x.leir"]) == 2


def test_fmt_pretty_canonical_and_in_place(files, capsys):
    assert main(["fmt", "--canonical", str(files["good"])]) == 0
    canonical = capsys.readouterr().out
    assert canonical.startswith("# row sums times a column index\n")
    assert canonical.rstrip("\n").endswith("B^{4}_{i=0}L^{3}_{j=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+A^{f64,g}_{i,j}*j;];")
    assert main(["fmt", str(files["good"])]) == 0
    pretty = capsys.readouterr().out
    assert pretty != canonical and "\n  C^{f64,g}_{i}" in pretty
    assert main(["fmt", "-i", "--canonical", str(files["good"])]) == 0
    assert files["good"].read_text() == canonical
    assert main(["fmt", "-i", str(files["good"])]) == 0
    assert files["good"].read_text() == pretty


def test_fmt_bare_body(tmp_path, capsys):
    p = tmp_path / "body.leir"
    p.write_text("B^{4}_{i=0}[\n  C^{f64,g}_{i} = A^{f64,g}_{i} ;\n];\n")
    assert main(["fmt", "--canonical", str(p)]) == 0
    assert capsys.readouterr().out == "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i};];\n"


def test_run_with_inputs(files, tmp_path, capsys):
    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, A=a)
    out = tmp_path / "out.npz"
    assert main(["run", str(files["good"]), "--inputs", str(inputs), "--out", str(out)]) == 0
    assert "C: float64[4]" in capsys.readouterr().out
    with np.load(out) as result:
        assert list(result.files) == ["C"]
        np.testing.assert_allclose(result["C"], a @ np.arange(3.0))


def test_run_random_inputs_deterministic_and_all(files, tmp_path):
    o1, o2 = tmp_path / "a.npz", tmp_path / "b.npz"
    assert main(["run", str(files["good"]), "--out", str(o1), "--seed", "3", "--all"]) == 0
    assert main(["run", str(files["good"]), "--out", str(o2), "--seed", "3", "--all"]) == 0
    with np.load(o1) as r1, np.load(o2) as r2:
        assert sorted(r1.files) == ["A", "C"]
        assert np.array_equal(r1["C"], r2["C"])


def test_run_invalid_program_or_inputs_exit_1(files, tmp_path, capsys):
    out = tmp_path / "o.npz"
    assert main(["run", str(files["bad"]), "--out", str(out)]) == 1
    assert "[index-out-of-bounds]" in capsys.readouterr().out
    inputs = tmp_path / "in.npz"
    np.savez(inputs, A=np.zeros((5, 3)))
    assert main(["run", str(files["good"]), "--inputs", str(inputs), "--out", str(out)]) == 1
    assert "shape" in capsys.readouterr().err
    assert not out.exists()
    assert main(["run", str(files["good"]), "--inputs", str(tmp_path / "none.npz"), "--out", str(out)]) == 2


def test_check_names_the_spot_inside_a_broken_loop_header(tmp_path, capsys):
    path = tmp_path / "header.leir"
    path.write_text(GOOD.replace("B^{4}_{i=0}", "B^{4}_{i= )0}"))
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{path}:5:11: error: unexpected ')' in loop header; expected one of: '0' (every loop starts at 0) [syntax]"
    assert out[2] == "  " + " " * 10 + "^"
