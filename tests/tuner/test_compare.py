"""``tuner.compare``: eager, torch.compile and a kernel timed in one job, interleaved, until a spread bound."""

from __future__ import annotations

import itertools

from frontend import translate_file
from leir.program import dump_program
from tuner.compare import _interleave, run_compare
from workloads.registry import get_workload


def test_rounds_stop_once_every_spread_is_within_the_bound():
    steady = {"a": lambda n: 1.0, "b": lambda n: 2.0}
    samples, rounds, within = _interleave(steady, {"a": 1, "b": 1}, bound=0.05, min_rounds=3, max_rounds=10)
    assert (rounds, within) == (3, True) and samples == {"a": [1.0] * 3, "b": [2.0] * 3}


def test_a_noisy_contestant_runs_to_the_limit_and_says_so():
    noisy_values = itertools.cycle([1.0, 2.0, 4.0])
    contestants = {"steady": lambda n: 1.0, "noisy": lambda n: next(noisy_values)}
    samples, rounds, within = _interleave(contestants, {"steady": 1, "noisy": 1}, bound=0.05, min_rounds=3,
                                          max_rounds=7)
    assert (rounds, within) == (7, False) and len(samples["noisy"]) == 7


def test_order_alternates_between_rounds():
    seen: list[str] = []
    contestants = {name: (lambda n, name=name: seen.append(name) or 1.0) for name in ("k", "e", "c")}
    _interleave(contestants, dict.fromkeys(contestants, 1), bound=1.0, min_rounds=2, max_rounds=2)
    assert seen == ["k", "e", "c", "c", "e", "k"]


def test_one_real_job_times_the_kernel_eager_and_torch_compile():
    info = get_workload("level1/relu")
    program = translate_file(info.path, sets={}).program
    result = run_compare(info.path, {}, dump_program(program), "llvm-host", min_rounds=2, max_rounds=2,
                         min_repeat_ms=2.0)
    assert result["rounds"] == 2 and result["kernel_ms"] > 0 and result["eager_ms"] > 0
    # inductor compiles here (a C++ compiler is installed); a failure would be a note and no column
    assert result["compiled_ms"] and result["compiled_ms"] > 0, result["note"]
    assert result["vs_eager"] == result["eager_ms"] / result["kernel_ms"]
    assert set(result["spread"]) == {"kernel", "eager", "compiled"}
