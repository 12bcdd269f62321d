"""N steps are verified again on special and large-magnitude inputs during generation (issue 40, bug 4).

``expand_powsimp`` on softmax turns exp(A-D) into exp(A)*exp(-D), which overflows to inf*0 = NaN where
the parent stays finite; ``together`` on SiLU turns x/(1+exp(-x)) into a quotient of exp(x) terms that is
inf/inf = NaN from x >= 89 in f32. Both pass on the seeded normal inputs and must be recorded failures.

``expand_factorization`` on layer norm expands the variance sum of (x-mean)^2 into x^2 - 2*x*mean + mean^2:
on inputs near 1000 that cancels catastrophically (error ~6e-2 where the parent's is ~1e-3), which no
scattered special value shows; the large-offset inputs of the same second verification do (issue 40).
"""

from __future__ import annotations

import pytest

from dataset.generation import GenerationConfig, generate, second_verification
from dataset.records import load_records

from .helpers import sources


@pytest.fixture(scope="module")
def verify_pair():
    from steptp_cli.dataset_commands import make_verify

    verify, pool = make_verify(workers=1, cache=False)
    yield verify, second_verification(verify)
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


def test_a_cancelling_variance_expansion_fails_on_large_offset_inputs(tmp_path, verify_pair):
    verify, verify_special = verify_pair
    records = _run(tmp_path / "steps.jsonl", verify, verify_special, "level1/layer_norm", "expand_factorization")
    assert len(records) == 1, [(r["status"], r["failure"]) for r in records]
    record = records[0]
    assert record["exactness"] == "N" and record["verification"]["outcome"] == "pass"  # seeded inputs: fine
    assert record["status"] == "failed" and record["verification"]["accepted"] is False
    check = record["verification"]["result"]["special_values_check"]
    assert check["outcome"] == "fail"
    assert "large-offset inputs" in check["error"] and "catastrophic cancellation" in check["error"]
    assert record["failure"]["kind"] == "special_values"
    assert "on large-offset inputs the program is much less accurate" in record["failure"]["reason"]


def test_safe_layer_norm_steps_pass_on_large_offset_inputs(tmp_path, verify_pair):
    """Splitting the layer norm's reductions (N, reassociated sums) stays as accurate as the parent there."""
    verify, verify_special = verify_pair
    config = GenerationConfig(depth=1, seed=0, strategies=("reduction_factorization",), params_per_site=1)
    generate(sources(("level1/layer_norm",)), config, tmp_path / "steps.jsonl", verify=verify,
             verify_special=verify_special)
    records = [r for r in load_records(tmp_path / "steps.jsonl") if r["exactness"] == "N"]
    assert records
    for record in records:
        assert record["status"] == "verified", record["failure"]
        assert record["verification"]["result"]["special_values_check"]["outcome"] in ("pass", "equal_pass")
