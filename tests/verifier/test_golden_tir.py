"""The lowering's output kept byte for byte: ``steptp lower`` of a sample of programs against golden files.

The programs under ``golden_tir/`` (built-in workloads translated by the frontend, corpus rows, states
after ``loop_parallelization``, and two hand-written ones that exercise every CPU and cuda loop rule) were
written, with their golden TIR and unhonoured-loop lists, by the lowering before it was split by job. A
refactor of the lowering must keep them identical; a deliberate change rewrites them with
``STEPTP_WRITE_GOLDEN=1 pytest tests/verifier/test_golden_tir.py`` and says why in its commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from leir.program import load_program
from steptp_cli.main import main

GOLDEN = Path(__file__).parent / "golden_tir"
PROGRAMS = sorted(path.stem for path in GOLDEN.glob("*.leir"))
#: Programs also lowered for cuda (the rest for llvm only).
CUDA = ("corpus_softmax_f64", "cuda_bindings", "gemm_bias_relu", "mixed_cpu_rules", "softmax_parallel")
CASES = [(name, "llvm") for name in PROGRAMS] + [(name, "cuda") for name in CUDA]


def _compare(produced: str, golden: Path) -> None:
    if os.environ.get("STEPTP_WRITE_GOLDEN") == "1":
        golden.write_text(produced)
    assert produced == golden.read_text(), f"{golden.name} differs from its golden file"


def test_the_sample_covers_workloads_corpus_rows_and_stepped_states():
    assert len(PROGRAMS) >= 8 and set(CUDA) <= set(PROGRAMS)


@pytest.mark.parametrize(("name", "target"), CASES, ids=[f"{n}-{t}" for n, t in CASES])
def test_steptp_lower_prints_the_golden_tir(name, target, capsys):
    assert main(["lower", str(GOLDEN / f"{name}.leir"), "--target", target]) == 0
    _compare(capsys.readouterr().out, GOLDEN / f"{name}.{target}.tir")


def test_the_unhonoured_loops_are_the_golden_ones():
    from verifier.lowering import lower

    reported = {f"{name}.{target}": [loop.to_json() for loop in lower(
        load_program((GOLDEN / f"{name}.leir").read_text()), target).unhonoured_loops]
        for name, target in CASES}
    _compare(json.dumps(reported, indent=1, sort_keys=True) + "\n", GOLDEN / "unhonoured_loops.json")
