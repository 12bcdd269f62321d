"""The cost model counts every loop as what the lowering's kernel runs it as, on the CPU.

The lowering's side is read off the TVMScript it writes (``to_tvmscript`` on ``llvm``): the ``for``
heads around each statement's ``T.sblock`` (``range``, ``T.parallel``, ``T.vectorized``, ``T.unroll``).
The model's side is ``tuner.cost.modelled_loop_kinds``, what it divides work by. Both call
``verifier.loop_mapping.map_block`` today; this test fails if either stops following it — the writer
emitting a head the mapping did not decide, or the model re-modelling a loop by hand.

The sample: built-in workloads translated by the frontend, corpus rows, states after
``loop_parallelization`` and ``loop_vectorization`` steps, the golden-TIR programs (racy ``P`` and ``V``
loops, nested parallel and vector loops) and random programs with random loop kinds.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from leir import ast as A
from leir.corpus import load_corpus
from leir.program import load_program
from strategies.engine import apply_strategy, candidates
from tests.strategies.helpers import workload
from tests.verifier.programs import Generated, leir_programs
from tuner.cost import modelled_loop_kinds
from verifier.loop_mapping import path_label
from verifier.lowering import to_tvmscript

GOLDEN = Path(__file__).parents[1] / "verifier" / "golden_tir"
WORKLOADS = ("level1/softmax", "level1/layer_norm", "level1/cumsum", "level1/conv2d", "level1/avg_pool2d",
             "level2/gemm_bias_relu", "level2/conv2d_bias_relu", "level2/bmm_bmm")
CORPUS_EVERY = 8  # every 8th corpus row: 49 programs of both dtypes and every level
STEPS = ("loop_parallelization", "loop_vectorization")

_FOR = re.compile(r"^( *)for \w+ in (range|T\.parallel|T\.vectorized|T\.unroll|T\.thread_binding)\(")
_SBLOCK = re.compile(r"^( *)with T\.sblock\(\"(.+)\"\):")
_RUNS_AS = {"range": "serial", "T.parallel": "parallel", "T.vectorized": "vector", "T.unroll": "unrolled",
            "T.thread_binding": "bound"}


def lowered_loop_kinds(program: A.Program) -> dict[tuple[int, ...], tuple[str, ...]]:
    """What the kernel runs each statement's enclosing loops as, read off the lowering's text."""
    labels = {f"{stmt.target.name}_{path_label(path)}": path for path, stmt, _ in A.statements(program.body)}
    found: dict[tuple[int, ...], tuple[str, ...]] = {}
    open_loops: list[tuple[int, str]] = []  # (indent, runs as) of the for lines enclosing this line
    for line in to_tvmscript(program, "llvm").splitlines():
        indent = len(line) - len(line.lstrip(" "))
        while open_loops and open_loops[-1][0] >= indent:
            open_loops.pop()
        if match := _FOR.match(line):
            open_loops.append((indent, _RUNS_AS[match.group(2)]))
        elif (match := _SBLOCK.match(line)) and match.group(2) in labels:
            found[labels[match.group(2)]] = tuple(kind for _indent, kind in open_loops)
    return found


def _assert_agree(program: A.Program, name: str) -> None:
    lowered = lowered_loop_kinds(program)
    modelled = modelled_loop_kinds(program, "llvm")
    assert set(lowered) == {path for path, _stmt, _loops in A.statements(program.body)}, name
    for path, loops in ((path, loops) for path, _stmt, loops in A.statements(program.body)):
        assert len(lowered[path]) == len(loops), (name, path)
        assert modelled[path] == lowered[path], (name, path, [lp.kind for lp in loops])


@cache
def _sample() -> tuple[tuple[str, A.Program], ...]:
    programs = [(f"golden:{path.stem}", load_program(path.read_text())) for path in sorted(GOLDEN.glob("*.leir"))]
    programs += [(f"workload:{name}", workload(name)) for name in WORKLOADS]
    programs += [(f"corpus:{entry.id}", entry.program) for entry in load_corpus()[::CORPUS_EVERY]]
    stepped = []
    for name, program in programs:
        for strategy in STEPS:
            for site in range(min(2, len(candidates(program, strategy)))):
                after = apply_strategy(program, strategy, site).after
                stepped.append((f"{name}+{strategy}:{site}", after))
                if strategy == "loop_parallelization" and candidates(after, "loop_vectorization"):
                    stepped.append((f"{name}+{strategy}:{site}+V", apply_strategy(
                        after, "loop_vectorization", 0).after))
    return tuple(programs + stepped)


def test_the_sample_has_every_kind_of_loop_and_stepped_states():
    sample = _sample()
    assert sum("+loop_parallelization" in name for name, _ in sample) >= 20
    assert sum("+loop_vectorization" in name or name.endswith("+V") for name, _ in sample) >= 10
    kinds = {kind for _name, program in sample for loops in lowered_loop_kinds(program).values()
             for kind in loops}
    assert kinds == {"serial", "parallel", "vector", "unrolled"}


@pytest.mark.parametrize("part", range(4))
def test_the_cost_model_counts_each_loop_as_the_lowering_runs_it(part):
    sample = _sample()
    for name, program in sample[part::4]:
        _assert_agree(program, name)


def test_a_model_that_takes_kinds_as_written_would_be_caught():
    """The comparison can fail: on the sample, loops written ``P``/``V``/``B`` that the kernel runs
    otherwise (a race axis, a nested parallel or vector loop, a thread axis) tell a model that counts
    kinds as written from the lowering."""
    as_written = {"P": "parallel", "V": "vector", "U": "unrolled", "B": "parallel", "L": "serial"}
    differ = [name for name, program in _sample()
              for path, _stmt, loops in A.statements(program.body)
              if tuple(as_written[lp.kind] for lp in loops) != lowered_loop_kinds(program)[path]]
    assert any(name.startswith("golden:mixed_cpu_rules") for name in differ)
    assert any(name.startswith("corpus:") for name in differ)  # the corpus's tx axes run serially


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(leir_programs())
def test_random_programs_with_random_loop_kinds_agree(generated: Generated):
    _assert_agree(generated.program, generated.text)
