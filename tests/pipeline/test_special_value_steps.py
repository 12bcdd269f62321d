"""N steps are verified again on special and large-magnitude inputs during generation (issue 40, bug 4).

``expand_powsimp`` on softmax turns exp(A-D) into exp(A)*exp(-D), which overflows to inf*0 = NaN where
the parent stays finite; ``together`` on SiLU turns x/(1+exp(-x)) into a quotient of exp(x) terms that is
inf/inf = NaN from x >= 89 in f32. Both pass on the seeded normal inputs and must be recorded failures.
"""

from __future__ import annotations

import functools

import pytest

from dataset.generation import GenerationConfig, generate
from dataset.records import load_records

from .helpers import sources


@pytest.fixture(scope="module")
def verify_pair():
    from steptp_cli.dataset_commands import make_verify

    verify, pool = make_verify(workers=1, cache=False)
    yield verify, functools.partial(verify, special_values=True)
    pool.close()


def _run(path, verify, verify_special, workload, strategy):
    config = GenerationConfig(depth=1, seed=0, strategies=(strategy,))
    generate(sources((workload,)), config, path, verify=verify, verify_special=verify_special)
    return [r for r in load_records(path) if r["strategy"] == strategy]


@pytest.mark.parametrize(("workload", "strategy"), [("level1/softmax", "expand_powsimp"),
                                                    ("level1/silu", "together")])
def test_an_overflow_prone_rewrite_is_a_recorded_failure(tmp_path, verify_pair, workload, strategy):
    verify, verify_special = verify_pair
    records = _run(tmp_path / "steps.jsonl", verify, verify_special, workload, strategy)
    assert records, f"{strategy} has no site on {workload}"
    failed = [r for r in records if r["status"] == "failed" and r["failure"]["kind"] == "special_values"]
    assert failed, [(r["status"], r["failure"]) for r in records]
    record = failed[0]
    assert record["exactness"] == "N" and record["verification"]["outcome"] == "pass"
    assert record["verification"]["accepted"] is False
    assert record["verification"]["result"]["special_values_check"]["outcome"] != "pass"
    assert "special and large-magnitude inputs" in record["failure"]["reason"]


def test_an_exact_step_is_not_verified_twice_and_a_safe_n_step_passes(tmp_path, verify_pair):
    """reduction_factorization of the sum in softmax is N and safe on special values; of the max it is E
    (no second run)."""
    verify, verify_special = verify_pair
    records = _run(tmp_path / "steps.jsonl", verify, verify_special, "level1/softmax",
                   "reduction_factorization")
    by_exactness = {r["exactness"]: r for r in records if r["status"] == "verified"}
    assert "special_values_check" not in by_exactness["E"]["verification"]["result"]
    assert by_exactness["N"]["verification"]["result"]["special_values_check"]["outcome"] in ("pass", "equal_pass")
