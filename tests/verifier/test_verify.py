"""verify(): outcomes on real LEIR programs built by TVM, the cache, timing, inputs and the CLI."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from leir.program import load_program, program_hash
from steptp_cli.main import main as steptp
from verifier import verify as verify_mod
from verifier.cache import ResultCache
from verifier.inputs import fresh_seed, generate_tensor, index_bounds, make_inputs
from verifier.result import Outcome, VerificationResult
from verifier.sandbox import WorkerPool
from verifier.verify import verify

MATMUL = """input A: f64[8, 16]
input C: f64[16, 4]
output D: f64[8, 4]
---
B^{8}_{tx=0}L^{4}_{a=0}L^{16}_{c=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}*C^{f64,g}_{c,a};];
"""
# The same computation with the outer loop parallel: must be bitwise identical.
MATMUL_PARALLEL = MATMUL.replace("B^{8}_{tx=0}", "P^{8}_{tx=0}")

EXP_SQUARE = """input A: f64[64]
output C: f64[64]
---
B^{64}_{tx=0}[C^{f64,g}_{tx}=exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx});];
"""
# exp(2a) instead of exp(a)^2: equal within f64 tolerance, not bit for bit.
EXP_TWICE = EXP_SQUARE.replace("exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx})", "exp(A^{f64,g}_{tx}+A^{f64,g}_{tx})")
# A wrong rewrite.
EXP_WRONG = EXP_SQUARE.replace("exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx})", "exp(A^{f64,g}_{tx})")

# Output declared with the wrong shape: the checker refuses it.
BAD_SHAPE = MATMUL.replace("output D: f64[8, 4]", "output D: f64[8, 5]")

GATHER = """input A: f64[5]
input I: i64[100]
output C: f64[100]
---
B^{100}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{I^{i64,g}_{tx}};];
"""


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1, warm_modules=verify_mod.WARM_MODULES, timeout=120, memory_limit_mb=2048) as workers:
        yield workers.start()


def _verify(text: str, pool: WorkerPool, parent: str | None = None, **kwargs) -> VerificationResult:
    kwargs.setdefault("cache", False)
    return verify(load_program(text), parent=load_program(parent) if parent else None, pool=pool, **kwargs)


# ------------------------------------------------------------------------------------------- outcomes


def test_parallel_rewrite_is_an_equal_pass(pool):
    result = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, reference="parent")
    assert result.outcome is Outcome.EQUAL_PASS
    assert result.bitwise_equal_parent is True
    assert result.reference == "parent"
    assert result.max_abs_error == 0.0
    assert result.versions["tvm"].startswith("0.27") and "tvm_ffi" in result.versions
    assert result.hardware["cpu"]
    assert result.program_hash == program_hash(load_program(MATMUL_PARALLEL))
    assert result.parent_hash == program_hash(load_program(MATMUL))


def test_reassociated_rewrite_passes_within_tolerance_but_not_bitwise(pool):
    result = _verify(EXP_TWICE, pool, parent=EXP_SQUARE, reference="parent", seed=3)
    assert result.outcome is Outcome.PASS
    assert result.bitwise_equal_parent is False
    assert 0.0 < result.max_rel_error <= 1e-9


def test_wrong_rewrite_fails_with_errors_reported(pool):
    result = _verify(EXP_WRONG, pool, parent=EXP_SQUARE, reference="parent")
    assert result.outcome is Outcome.FAIL
    assert result.outputs["C"]["mismatches"] > 0
    assert result.max_abs_error > 1e-3


def test_check_error_never_reaches_the_sandbox(pool):
    jobs = verify_mod.counters["jobs"]
    result = _verify(BAD_SHAPE, pool)
    assert result.outcome is Outcome.CHECK_ERROR
    assert "D" in result.error
    assert verify_mod.counters["jobs"] == jobs


def test_default_reference_is_the_interpreter_for_small_programs(pool):
    result = _verify(MATMUL, pool, special_values=True)
    assert result.reference == "interpreter"
    assert result.outcome is Outcome.PASS
    assert result.max_rel_error <= 1e-9
    gather = _verify(GATHER, pool, seed=4)
    assert gather.reference == "interpreter" and gather.outcome is Outcome.PASS


def test_without_reference_or_parent_the_outcome_is_execute(pool):
    result = _verify(MATMUL, pool, reference="none")
    assert result.outcome is Outcome.EXECUTE
    assert result.reference == "none"


def test_cuda_is_built_here_and_reported_as_build_only(pool):
    from verifier.targets import runs_here

    result = _verify(MATMUL, pool, target="cuda", reference="none")
    if runs_here("cuda"):  # a GPU worker: the kernel runs
        assert result.outcome is Outcome.EXECUTE
    else:
        assert result.outcome is Outcome.BUILD
        assert any("GPU worker" in note for note in result.notes)
    assert result.target == "cuda"


def test_large_programs_skip_the_interpreter_and_say_so(pool):
    result = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, max_interpreter_iterations=10)
    assert any("interpreter reference skipped" in note for note in result.notes)
    assert result.reference == "parent"
    assert result.outcome is Outcome.EQUAL_PASS


# ---------------------------------------------------------------------------------------------- cache


def test_second_verification_is_a_cache_hit_without_a_sandbox_job(pool, tmp_path: Path):
    cache = ResultCache(tmp_path)
    first = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, reference="parent", cache=cache)
    assert not first.cache_hit
    jobs, started = verify_mod.counters["jobs"], pool.started
    second = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, reference="parent", cache=cache)
    assert second.cache_hit
    assert verify_mod.counters["jobs"] == jobs and pool.started == started
    second.cache_hit = False
    assert second == first
    # a different seed is a different verification
    third = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, reference="parent", cache=cache, seed=1)
    assert not third.cache_hit and verify_mod.counters["jobs"] == jobs + 1


# --------------------------------------------------------------------------------------------- timing


def test_timing_records_stats_speedups_and_rechecks_the_timed_binary(pool):
    result = _verify(MATMUL_PARALLEL, pool, parent=MATMUL, reference="parent", time=True,
                     source=load_program(MATMUL), repeats=3, min_repeat_ms=2)
    assert result.outcome is Outcome.EQUAL_PASS
    assert result.timing is not None and result.timing.repeats == 3
    assert result.timing.median > 0 and result.timing.iqr >= 0
    assert result.parent_timing is not None and result.source_timing is not None
    assert result.speedup_vs_parent == pytest.approx(result.parent_timing.median / result.timing.median)
    assert result.speedup_vs_source is not None
    assert result.timed_output_ok is True
    assert result.hardware["cpu"] and result.hardware["cores"] >= 1
    assert result.hardware["threads"] == int(os.environ.get("TVM_NUM_THREADS") or result.hardware["cores"])
    # the JSON form round-trips, timings included
    assert VerificationResult.loads(result.dumps()) == result


class _Recording:
    """A real built kernel that also records each ``time`` call it receives, as (name, number, repeat)."""

    def __init__(self, name: str, kernel, calls: list):
        self.name, self.kernel, self.calls = name, kernel, calls

    def time(self, arrays, *, number, repeat, min_repeat_ms):
        self.calls.append((self.name, number, repeat, min_repeat_ms))
        return self.kernel.time(arrays, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms)


def test_time_kernels_interleaves_repeats_in_alternating_order_after_a_calibration():
    from verifier.build import build
    from verifier.timing import time_kernels

    program = load_program(MATMUL)
    arrays = make_inputs(program, seed=1)
    calls: list = []
    kernels = [_Recording(name, build(load_program(text)), calls)
               for name, text in (("state", MATMUL_PARALLEL), ("parent", MATMUL), ("source", MATMUL))]
    stats = time_kernels(kernels, arrays, repeats=4, min_repeat_ms=3)
    # warm-up, then one calibrating repeat of min_repeat_ms each, then the timed repeats: fixed call
    # counts, no re-probing (min_repeat_ms 0), in the order A B C, C B A, A B C, C B A
    assert [c[0] for c in calls[:6]] == ["state", "parent", "source"] * 2
    assert all(c[1:3] == (1, 1) and c[3] == 3 for c in calls[3:6])
    timed = calls[6:]
    assert [c[0] for c in timed] == ["state", "parent", "source", "source", "parent", "state"] * 2
    numbers = {c[0]: c[1] for c in timed}
    assert all(c[1] == numbers[c[0]] and c[2:] == (1, 0) for c in timed)
    assert [s.repeats for s in stats] == [4, 4, 4] and all(s.median > 0 for s in stats)
    assert [s.number for s in stats] == [numbers["state"], numbers["parent"], numbers["source"]]
    # the calibrated count makes a repeat last about min_repeat_ms: one call of a microsecond kernel
    # would not (a tenth of it at least: a calibrating call slowed by the other test process's kernels,
    # which use both cores, calibrates a lower count)
    assert all(s.number * s.median >= 0.003 * 0.1 for s in stats)


# --------------------------------------------------------------------------------------------- inputs


def test_inputs_are_deterministic_per_seed_and_differ_across_seeds():
    program = load_program(MATMUL)
    a = make_inputs(program, seed=5)
    b = make_inputs(program, seed=5)
    c = make_inputs(program, seed=6)
    assert list(a) == ["A", "C"]
    assert all(a[k].tobytes() == b[k].tobytes() for k in a)
    assert a["A"].tobytes() != c["A"].tobytes()
    assert a["A"].dtype == np.float64 and a["A"].shape == (8, 16)
    assert fresh_seed(5) != 5 and fresh_seed(5) == fresh_seed(5)


def test_gather_indices_are_bounded_by_the_indexed_dimension():
    program = load_program(GATHER)
    arrays = make_inputs(program, seed=0, special_values=True)
    assert arrays["I"].dtype == np.int64
    assert arrays["I"].min() >= 0 and arrays["I"].max() <= 4
    assert {0, 4} <= set(arrays["I"].tolist())  # special values hit both edges
    compound = load_program(GATHER.replace("input A: f64[5]", "input A: f64[9]")
                            .replace("_{I^{i64,g}_{tx}}", "_{I^{i64,g}_{tx}*2+1}"))
    assert index_bounds(compound, {"A": (9,)}) == {"I": 4}  # I*2+1 <= 8


def test_special_values_mix_in_zeros_negatives_and_large_magnitudes():
    plain = generate_tensor("A", "f32", (4096,), seed=1)
    special = generate_tensor("A", "f32", (4096,), seed=1, special_values=True)
    assert np.abs(plain).max() < 100
    finite = special[np.isfinite(special)]
    assert np.abs(finite).max() >= 1e5 and (finite == 0).any() and (finite < 0).any()
    assert np.isnan(special).sum() == 1 and np.isposinf(special).sum() == 1 and np.isneginf(special).sum() == 1
    no_inf = generate_tensor("A", "f32", (4096,), seed=1, special_values=True, infinities=False)
    assert np.isnan(no_inf).sum() == 1 and not np.isinf(no_inf).any()
    changed = np.count_nonzero(plain != special)
    assert 4096 // 16 < changed < 4096 // 4  # about one in eight
    ints = generate_tensor("K", "i32", (1000,), seed=1)
    assert ints.dtype == np.int32 and ints.min() >= -4 and ints.max() <= 4
    flags = generate_tensor("M", "bool", (1000,), seed=1)
    assert flags.dtype == np.bool_ and 0 < flags.sum() < 1000


def test_params_override_generated_values_and_are_checked():
    program = load_program(MATMUL)
    weights = np.arange(64, dtype=np.float32).reshape(16, 4)
    arrays = make_inputs(program, seed=0, params={"C": weights})
    assert arrays["C"].dtype == np.float64 and np.array_equal(arrays["C"], weights)
    with pytest.raises(ValueError, match="shape"):
        make_inputs(program, params={"C": np.zeros((4, 16))})


def test_log_arguments_are_positive():
    program = load_program(EXP_SQUARE.replace("exp(A^{f64,g}_{tx})*exp(A^{f64,g}_{tx})", "log(A^{f64,g}_{tx})"))
    assert make_inputs(program, seed=0)["A"].min() > 0
    # special values: positive but for the few edge positions (NaN, +inf, 0, -1) that meet log's edges
    special = make_inputs(program, seed=0, special_values=True)["A"]
    assert np.count_nonzero(~(special > 0)) <= 3


# ------------------------------------------------------------------------------------------------ CLI


def test_cli_verify_json_and_exit_codes(tmp_path: Path, monkeypatch, capsys):
    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    parent = tmp_path / "mm.leir"
    parent.write_text(MATMUL)
    child = tmp_path / "mm_parallel.leir"
    child.write_text(MATMUL_PARALLEL)
    # params beside the file are picked up automatically (and are part of the cache key).
    np.savez(tmp_path / "mm_parallel.npz", C=np.zeros((16, 4)))
    assert steptp(["verify", str(child), "--against", str(parent), "--reference", "parent", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "equal_pass" and data["cache_hit"] is False
    assert steptp(["verify", str(child), "--against", str(parent), "--reference", "parent"]) == 0
    out = capsys.readouterr().out
    assert "outcome: equal_pass  (cached)" in out
    bad = tmp_path / "bad.leir"
    bad.write_text(BAD_SHAPE)
    assert steptp(["verify", str(bad)]) == 1
    assert "check_error" in capsys.readouterr().out
    assert steptp(["verify", str(tmp_path / "missing.leir")]) == 2
    assert steptp(["verify", str(child), "--set", "N=3"]) == 2


# ------------------------------------------------------------------------------------- PyTorch source

REPO = Path(__file__).resolve().parents[2]


def test_cli_torch_source_reference_with_params_and_eager_timing(tmp_path: Path, monkeypatch, capsys):
    from frontend.translate import translate_file
    from leir.program import dump_program

    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    source = REPO / "workloads" / "level1" / "linear.py"
    translation = translate_file(source, sets={"BATCH": 4}, dtype="f32")
    assert translation.values  # the weight and bias are params
    leir_file = tmp_path / "linear.leir"
    leir_file.write_text(dump_program(translation.program))
    np.savez(tmp_path / "linear.npz", **translation.values)
    code = steptp(["verify", str(leir_file), "--source", str(source), "--set", "BATCH=4", "--time", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["outcome"] == "pass" and data["reference"] == "torch"
    assert data["max_rel_error"] <= 1e-4
    assert data["torch_timing"]["median"] > 0 and data["speedup_vs_torch"] > 0
    assert data["timed_output_ok"] is True
    # other weights in the .npz are loaded into both the kernel's inputs and the module: still a pass,
    # but a different verification (the params are part of the cache key)
    np.savez(tmp_path / "linear.npz", **{k: v + 1.0 for k, v in translation.values.items()})
    assert steptp(["verify", str(leir_file), "--source", str(source), "--set", "BATCH=4", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["outcome"] == "pass" and again["cache_hit"] is False
    assert again["max_abs_error"] != data["max_abs_error"]


ARGMAX_SOURCE = '''\
import torch
import torch.nn as nn

ROWS = 3
COLS = 5


class Model(nn.Module):
    def forward(self, x):
        return torch.argmax(x * 2.0, dim=1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]
'''


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_cli_torch_source_reference_for_an_integer_output(tmp_path: Path, monkeypatch, capsys, dtype):
    """An i64 output (argmax) is still compared: the model loads in the program's float dtype."""
    from frontend.translate import translate_file
    from leir.program import dump_program

    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "argmax.py"
    source.write_text(ARGMAX_SOURCE)
    translation = translate_file(source, sets={"ROWS": 4}, dtype=dtype)
    assert [d.dtype for d in translation.program.signature.by_role("output")] == ["i64"]
    leir_file = tmp_path / "argmax.leir"
    leir_file.write_text(dump_program(translation.program))
    code = steptp(["verify", str(leir_file), "--source", str(source), "--set", "ROWS=4", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["outcome"] == "pass" and data["reference"] == "torch" and data["notes"] == []
    assert data["outputs"][translation.output_names[0]]["dtype"] == "i64"


TUPLE_SHAPE_SOURCE = '''\
import torch
import torch.nn as nn

BATCH = 3
SHAPE = (5,)


class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(BATCH, *SHAPE)]
'''


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_cli_set_reads_a_tuple_like_translate(tmp_path: Path, monkeypatch, capsys, dtype):
    """``--set SHAPE=(4,)`` reaches the reference as a tuple, as it reached the translation."""
    from frontend.translate import translate_file
    from leir.program import dump_program

    monkeypatch.setenv("STEPTP_CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "tuple_shape.py"
    source.write_text(TUPLE_SHAPE_SOURCE)
    translation = translate_file(source, sets={"SHAPE": (4,)}, dtype=dtype)
    assert [d.shape for d in translation.program.signature.by_role("input")] == [(3, 4)]
    leir_file = tmp_path / "tuple_shape.leir"
    leir_file.write_text(dump_program(translation.program))
    code = steptp(["verify", str(leir_file), "--source", str(source), "--set", "SHAPE=(4,)", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["outcome"] == "pass" and data["notes"] == []
    assert steptp(["verify", str(leir_file), "--source", str(source), "--set", "SHAPE"]) == 2


def test_failures_keep_the_verifier_error_class(pool):
    """A task tells a program failure from infrastructure trouble by the class kept on the result."""

    too_wide = load_program("input A: f32[2048, 1]\noutput C: f32[2048, 1]\n---\n"
                            "B^{2048}_{tx=0}[C^{f32,g}_{tx,0}=A^{f32,g}_{tx,0};];")
    result = verify(too_wide, target="cuda", pool=pool, cache=False)
    assert result.outcome is Outcome.BUILD_ERROR and result.error_class == "GpuLimitError"
    assert VerificationResult.from_json(result.to_json()).error_class == "GpuLimitError"
    ok = _verify(EXP_WRONG, pool, parent=EXP_SQUARE, reference="parent")
    assert ok.error_class is None
