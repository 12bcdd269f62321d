"""The step record's schema and loader: valid records load, malformed ones fail naming line and field."""

from __future__ import annotations

import json

import pytest

from dataset.records import (
    SCHEMA_VERSION,
    RecordError,
    dumps,
    load_records,
    schema,
    step_id,
    validation_errors,
    verification_json,
)

from .helpers import unverified_run


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    path = unverified_run(tmp_path_factory.mktemp("rec") / "s.jsonl", depth=1)
    return list(load_records(path))


def test_schema_ships_as_package_data_and_names_every_field():
    data = schema()
    assert data["properties"]["schema_version"]["const"] == SCHEMA_VERSION
    for key in ("step_id", "source", "parent", "child", "depth", "strategy", "number", "level", "site",
                "params", "exactness", "trace", "verification", "failure", "effect", "generator"):
        assert key in data["required"]


def test_step_id_is_the_hash_of_parent_strategy_site_and_params(records):
    from strategies import Site

    r = records[0]
    site = Site(tuple(r["site"]["path"]), tuple(sorted(r["site"]["detail"].items())))
    assert step_id(r["parent"]["hash"], r["strategy"], site, r["params"]) == r["step_id"]
    assert step_id(r["parent"]["hash"], r["strategy"], site, {"x": 1}) != r["step_id"]


def test_loader_names_the_line_and_the_field_of_a_bad_record(tmp_path, records):
    bad = dict(records[0], depth=0)
    path = tmp_path / "bad.jsonl"
    path.write_text(dumps(records[0]) + "\n" + dumps(bad) + "\n")
    with pytest.raises(RecordError, match=r"bad.jsonl:2: depth: 0 is less than the minimum"):
        list(load_records(path))
    path.write_text(dumps(records[0]) + "\n{not json\n")
    with pytest.raises(RecordError, match=r":2: not JSON"):
        list(load_records(path))


def test_status_and_failure_must_agree(records):
    r = dict(records[0], status="failed")
    assert any("failure" in p for p in validation_errors(r))
    r = dict(records[0], status="verified")  # verified needs an accepted verification
    assert validation_errors(r)


def test_newer_schema_versions_are_refused_and_versions_are_required(tmp_path, records):
    path = tmp_path / "new.jsonl"
    path.write_text(dumps(dict(records[0], schema_version=SCHEMA_VERSION + 1)) + "\n")
    with pytest.raises(RecordError, match="newer than this steptp reads"):
        list(load_records(path))
    path.write_text(json.dumps({k: v for k, v in records[0].items() if k != "schema_version"}) + "\n")
    with pytest.raises(RecordError, match="schema_version: missing"):
        list(load_records(path))


def test_verification_summary_requires_equal_pass_for_exact_steps():
    result = {"outcome": "pass", "max_abs_error": 1e-7, "max_rel_error": 1e-6,
              "outputs": {"C": {"rtol": 1e-4, "atol": 1e-5, "ok": True}}, "versions": {"tvm": "0.27"},
              "build_seconds": 0.2, "run_seconds": 0.1}
    exact = verification_json(result, "E")
    assert exact["required"] == "equal_pass" and not exact["accepted"]
    assert exact["tolerances"] == {"C": {"rtol": 1e-4, "atol": 1e-5}}
    assert exact["seconds"] == pytest.approx(0.3)
    assert verification_json(result, "N")["accepted"]
    honest = verification_json({**result, "outcome": "equal_pass", "unhonoured_loops": ["P i"]}, "E")
    assert not honest["accepted"] and honest["unhonoured_loops"] == ["P i"]
    assert verification_json({**result, "max_abs_error": float("inf")}, "N")["result"]["max_abs_error"] == "inf"


def test_non_finite_verification_figures_still_make_a_valid_json_record():
    """An error bound of inf (huge special values) must not turn a verified step into an unwritable one."""
    result = {"outcome": "pass", "max_abs_error": float("inf"), "max_rel_error": float("nan"),
              "outputs": {"C": {"rtol": 1e-4, "bound_at_worst": float("inf"), "error_ratio": float("nan")}},
              "versions": {"tvm": "0.27"}}
    verification = verification_json(result, "N")
    text = dumps(verification)  # allow_nan=False: raises on any NaN/inf left
    assert json.loads(text)["tolerances"]["C"]["bound_at_worst"] == "inf"
    assert verification["max_abs_error"] is None and verification["accepted"] is True


def test_a_version_1_record_is_upgraded_with_an_unknown_effect(tmp_path, records):
    old = {k: v for k, v in records[0].items() if k != "effect"}
    old["schema_version"] = 1
    path = tmp_path / "v1.jsonl"
    path.write_text(dumps(old) + "\n")
    (upgraded,) = load_records(path)  # validated against version 2
    assert upgraded["schema_version"] == SCHEMA_VERSION == 2
    assert upgraded["effect"] == {"target": None, "estimate": None, "measured": None, "verdict": "unknown",
                                  "follow_up": None}
    assert {k: v for k, v in upgraded.items() if k not in ("effect", "schema_version")} == \
        {k: v for k, v in old.items() if k != "schema_version"}
    path.write_text(dumps(dict(old, schema_version=2)) + "\n")  # a version-2 record must have its effect
    with pytest.raises(RecordError, match="'effect' is a required property"):
        list(load_records(path))
