"""The scaled tolerance, both ways: correct long f32 reductions pass, wrong programs fail on small inputs.

Every case is a real TVM build run through ``verifier.verify`` (or, where the inputs must be chosen by
hand — NaN and inf at known places —, through ``build`` + ``Kernel.run`` + ``bounded_compare``); the
references are the PyTorch sources of the workloads or the interpreter run on the correct program.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from leir.program import load_program
from verifier.reference import InterpreterReference, TorchSourceReference
from verifier.result import Outcome
from verifier.verify import verify

REPO = Path(__file__).resolve().parents[2]
WORKLOADS = REPO / "workloads" / "level1"


def _translated(name: str, sets: dict[str, int]):
    from frontend.translate import translate_file

    return translate_file(WORKLOADS / f"{name}.py", sets=sets, dtype="f32")


def _verify_against_torch(name: str, sets: dict[str, int], **kwargs):
    translation = _translated(name, sets)
    reference = TorchSourceReference(WORKLOADS / f"{name}.py", sets, "f32")
    return verify(translation.program, reference=reference, params=translation.values, cache=False, **kwargs)


def _scaled_pass(result) -> None:
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.tolerance == "scaled"
    assert 0.0 <= result.max_error_ratio <= 1.0
    for data in result.outputs.values():
        assert data["method"] == "scaled" and data["bound_at_worst"] > 0.0


# ------------------------------------------------------------------------- correct programs pass


def test_cumsum_over_32768_elements_passes_where_the_fixed_tolerance_failed():
    result = _verify_against_torch("cumsum", {"BATCH": 2, "LENGTH": 32768})
    _scaled_pass(result)
    # the public case: the kernel's sequential f32 scan is 1e-3 away from PyTorch's — a correct result
    assert result.max_abs_error > 1e-4
    (data,) = result.outputs.values()
    assert data["count_at_worst"] > 1  # the bound is a number of roundings of what was combined


def test_mse_over_half_a_million_elements_passes():
    result = _verify_against_torch("mse_loss", {"BATCH": 128, "DIM": 4096})
    _scaled_pass(result)
    assert result.max_rel_error > 1e-4  # beyond the old f32 tolerance, inside the bound of 524,288 terms
    (data,) = result.outputs.values()
    assert data["count_at_worst"] > 1e5  # of the order of the 524,288 additions


def test_long_dot_products_pass():
    result = _verify_against_torch("matmul", {"M": 4, "K": 65536, "N": 4})
    _scaled_pass(result)


def test_the_bound_has_its_own_budget_above_the_interpreters():
    """4.2M statement executions: too many to interpret as a reference, few enough for the bound."""
    from verifier.reference import BOUND_MAX_ITERATIONS, INTERPRETER_MAX_ITERATIONS, iteration_count

    sets = {"M": 8, "K": 65536, "N": 8}
    executions = iteration_count(_translated("matmul", sets).program)
    assert INTERPRETER_MAX_ITERATIONS < executions <= BOUND_MAX_ITERATIONS
    _scaled_pass(_verify_against_torch("matmul", sets))
    fixed = _verify_against_torch("matmul", sets, max_bound_iterations=0)
    assert fixed.tolerance == "fixed"
    assert any("error bound not evaluated" in note for note in fixed.notes)


def test_softmax_over_a_long_row_passes():
    result = _verify_against_torch("softmax", {"BATCH": 2, "DIM": 65536})
    _scaled_pass(result)


def test_long_reductions_pass_with_special_values_and_nan_inf_positions_match():
    """Hand-placed NaN and ±inf in the inputs: the pattern must agree exactly, the rest within the bound."""
    from verifier.build import build
    from verifier.verify import bounded_compare

    sets = {"BATCH": 4, "LENGTH": 8192}
    translation = _translated("cumsum", sets)
    program = translation.program
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((4, 8192)) * 1000).astype(np.float32)
    x[1, 100] = np.nan  # a NaN poisons the rest of its row's prefix sums
    x[2, 5000] = np.inf
    x[3, 10], x[3, 20] = np.inf, -np.inf  # inf - inf: NaN from there on
    arrays = {"A": x}
    kernel = build(program)
    outputs = kernel.run(arrays)
    reference = TorchSourceReference(WORKLOADS / "cumsum.py", sets, "f32")
    expected = reference.outputs(arrays)
    comparisons = bounded_compare(program, program, outputs, expected, arrays)
    (comparison,) = comparisons.values()
    assert comparison.ok and comparison.method == "scaled", comparison
    out = next(iter(outputs.values()))
    assert np.isnan(out[1, 100:]).all() and np.isfinite(out[1, :100]).all()
    assert np.isposinf(out[2, 5000:]).all() and np.isnan(out[3, 20:]).all()
    # and a kernel that lost one NaN is caught by the pattern rule, whatever the bound
    broken = {k: v.copy() for k, v in outputs.items()}
    next(iter(broken.values()))[1, 4000] = 0.0
    (lost,) = bounded_compare(program, program, broken, expected, arrays).values()
    assert not lost.ok and lost.nonfinite_mismatches == 1


def test_special_values_mode_passes_on_a_long_reduction():
    result = _verify_against_torch("sum_dim", {"BATCH": 4, "DIM1": 4096, "DIM2": 8}, special_values=True)
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.tolerance == "scaled"


# --------------------------------------------------------------------- wrong programs fail (small)

ROWSUM = """input A: f32[4, 64]
output C: f32[4]
---
B^{4}_{tx=0}L^{64}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a};];
"""
CUMSUM = """input A: f32[4, 64]
output C: f32[4, 64]
---
B^{4}_{tx=0}L^{64}_{a=0}[C^{f32,g}_{tx,a}=if_then_else(a-1<0,0,C^{f32,g}_{tx,a-1})+A^{f32,g}_{tx,a};];
"""
MEAN = """input A: f32[4, 64]
output C: f32[4]
---
B^{4}_{tx=0}L^{64}_{a=0}[D^{f32,g}_{tx}=D^{f32,g}_{tx}+A^{f32,g}_{tx,a};];
B^{4}_{tx=0}[C^{f32,g}_{tx}=D^{f32,g}_{tx}/64;];
"""
RMS_NORM = """input A: f32[4, 64]
output C: f32[4, 64]
---
B^{4}_{tx=0}L^{64}_{a=0}[D^{f32,g}_{tx}=D^{f32,g}_{tx}+A^{f32,g}_{tx,a}*A^{f32,g}_{tx,a};];
B^{4}_{tx=0}L^{64}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}/sqrt(D^{f32,g}_{tx}/64+EPS);];
"""
SQUARE_COLSUM = """input A: f32[16, 16]
output C: f32[16]
---
B^{16}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a};];
"""
SCALE = """input A: f32[4, 16]
output C: f32[4, 16]
---
B^{4}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*3;];
"""

WRONG = {
    # C_a = C_{a-1} + A_{a-1}: every prefix shifted by one element
    "off-by-one index": (CUMSUM, CUMSUM.replace("+A^{f32,g}_{tx,a};", "+if_then_else(a-1<0,0,A^{f32,g}_{tx,a-1});")),
    # the last of 64 terms never added
    "dropped term": (ROWSUM, ROWSUM.replace("L^{64}_{a=0}", "L^{63}_{a=0}")),
    "wrong rescale x(1+1e-3)": (MEAN, MEAN.replace("/64;", "/64*1.001;")),
    # eps 1e-5 against 1e-4 on inputs whose mean square is ~1e-4: the normalisation moves by ~30%
    "wrong eps in a norm": (RMS_NORM.replace("EPS", "0.00001"), RMS_NORM.replace("EPS", "0.0001")),
    "wrong axis": (SQUARE_COLSUM, SQUARE_COLSUM.replace("A^{f32,g}_{tx,a}", "A^{f32,g}_{a,tx}")),
    # a rescale of 1e-5 on a one-operation program: under the old 1e-4 tolerance, far over a few ulps
    "wrong rescale x(1+1e-5)": (SCALE, SCALE.replace("*3;", "*3.00003;")),
}


@pytest.mark.parametrize("case", sorted(WRONG))
def test_wrong_program_fails_on_small_inputs(case: str):
    correct_text, wrong_text = WRONG[case]
    correct, wrong = load_program(correct_text), load_program(wrong_text)
    if case == "dropped term":
        assert wrong != correct
    params = {}
    if case == "wrong eps in a norm":
        params = {"A": (np.random.default_rng(3).standard_normal((4, 64)) * 1e-2).astype(np.float32)}
    reference = InterpreterReference(correct)
    right = verify(correct, reference=reference, params=params, cache=False)
    _scaled_pass(right)
    result = verify(wrong, reference=reference, params=params, cache=False)
    assert result.outcome is Outcome.FAIL, result.summary()
    assert result.tolerance == "scaled" and result.max_error_ratio > 1.0
    bad = [d for d in result.outputs.values() if d["mismatches"]]
    assert bad and bad[0]["error_at_worst"] > bad[0]["bound_at_worst"]


def test_wrong_rescale_slips_under_the_fixed_tolerance_but_not_the_scaled_one():
    """Why the floor is a few ulps, not 1e-4: a 1e-5 error in a one-multiply program is a wrong program."""
    from verifier.compare import compare

    correct, wrong = (load_program(text) for text in WRONG["wrong rescale x(1+1e-5)"])
    result = verify(wrong, reference=InterpreterReference(correct), cache=False)
    (data,) = result.outputs.values()
    expected = np.float32(3.0) * np.ones(4, np.float32)
    assert compare(expected * np.float32(1 + 1e-5), expected, "f32").ok  # the fixed rule lets it through
    assert result.outcome is Outcome.FAIL and data["max_rel_error"] < 1e-4


def test_cli_shows_the_bound_in_text_and_json(tmp_path: Path, monkeypatch, capsys):
    import json

    from steptp_cli.main import main as steptp

    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    program = tmp_path / "mean.leir"
    program.write_text(MEAN)
    assert steptp(["verify", str(program), "--reference", "interpreter"]) == 0
    text = capsys.readouterr().out
    assert "tolerance: scaled" in text and "worst error/bound" in text and "vs bound" in text
    wrong = tmp_path / "wrong.leir"
    wrong.write_text(WRONG["wrong rescale x(1+1e-3)"][1])
    code = steptp(["verify", str(wrong), "--against", str(program), "--reference", "interpreter", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["outcome"] == "fail"
    assert data["tolerance"] == "scaled" and data["max_error_ratio"] > 1
    (output,) = data["outputs"].values()
    assert output["method"] == "scaled" and output["error_at_worst"] > output["bound_at_worst"] > 0


def test_cli_max_bound_iterations_moves_the_limit_of_the_scaled_rule(tmp_path: Path, monkeypatch, capsys):
    """260 statement executions: bounded under a limit of 300, the fixed rule (with a note) under 100."""
    import json

    from steptp_cli.main import main as steptp

    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    program = tmp_path / "mean.leir"
    program.write_text(MEAN)
    runs = {}
    for limit in ("300", "100"):
        assert steptp(["verify", str(program), "--reference", "interpreter", "--json",
                       "--max-bound-iterations", limit]) == 0
        runs[limit] = json.loads(capsys.readouterr().out)
    assert runs["300"]["tolerance"] == "scaled"
    assert runs["100"]["tolerance"] == "fixed"
    assert any("260 statement executions > 100" in note for note in runs["100"]["notes"])
