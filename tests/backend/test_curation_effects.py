"""A step's effect in the app: imported from the record, served by the API, shown, exported, reset by edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from curation.models import ReviewStatus, Step, VerificationStatus
from curation.services import edits, exports
from curation.services.export_records import collect_records
from curation.services.roles import Role
from curation.services.steps import import_step_file
from dataset.effect_reasoning import EDITED_SELECTION
from dataset.generation import GenerationConfig, generate
from dataset.records import dumps, load_records
from dataset.trace_lint import lint, record_problems
from tuner.effect import feature_function

from .fixtures import builtin, user

pytestmark = pytest.mark.django_db


@pytest.fixture
def steps_file(tmp_path) -> Path:
    from steptp_cli.dataset_commands import load_sources

    builtin("level1/softmax")
    path = tmp_path / "steps.jsonl"
    sources = load_sources(["level1/softmax"], warn=lambda text: None)
    generate(sources, GenerationConfig(depth=1, seed=0, max_steps_per_state=6), path, verify=None,
             features=feature_function("llvm"), target="llvm")
    return path


def test_imported_steps_keep_their_effect_and_a_reimport_updates_it(steps_file):
    report = import_step_file(steps_file)
    assert report.created >= 3
    records = {r["step_id"]: r for r in load_records(steps_file)}
    stored = list(Step.objects.all())
    assert stored and all(s.effect == records[s.step_id]["effect"] for s in stored)
    assert all(s.effect["estimate"]["parent"]["work"] > 0 for s in stored)
    # a later pass links a follow-up: importing the file again brings it in, nothing else changes
    changed = dict(records[stored[0].step_id])
    changed["effect"] = {**changed["effect"], "follow_up": {"step_id": stored[1].step_id, "strategy": "x",
                                                            "speedup": 2.0}}
    steps_file.write_text(dumps(changed) + "\n")
    again = import_step_file(steps_file)
    assert again.created == 0 and again.unchanged == 1
    assert Step.objects.get(pk=stored[0].pk).effect["follow_up"]["speedup"] == 2.0


def test_the_api_the_review_page_and_the_export_carry_the_effect(steps_file, settings, tmp_path):
    import_step_file(steps_file)
    step = Step.objects.order_by("id").first()
    viewer = user("vic", Role.VIEWER)
    api = APIClient()
    api.force_authenticate(viewer)
    served = api.get(f"/api/steps/{step.pk}/").json()
    assert served["effect"] == step.effect
    listed = api.get("/api/steps/").json()["results"]
    assert all("effect" in row for row in listed)

    page = Client()
    page.force_login(viewer)
    html = page.get(reverse("step", args=[step.pk])).content.decode()
    assert 'id="effect-verdict"' in html and f">{step.effect['verdict']}</strong>" in html
    assert "Cost model estimate" in html and "bytes_moved" in html

    Step.objects.update(verification_status=VerificationStatus.PASS, review_status=ReviewStatus.APPROVED,
                        exactness="N")
    settings.VAR_DIR = tmp_path
    curator = user("cat", Role.CURATOR)
    export = exports.create_export(curator, name="effects", split_policy={"fractions": {"train": 1.0}},
                                   seed=1, enqueue=False)
    export = exports.run_export(export.pk)
    assert export.status == "done"
    rows = [json.loads(line) for line in (Path(export.directory) / "steps" / "train.jsonl").read_text().splitlines()]
    by_id = {s.step_id: s for s in Step.objects.all()}
    assert rows and all(row["effect"] == by_id[row["step_id"]].effect for row in rows)
    # an export split holds a selection of each state's candidates: its traces still agree with its numbers
    exported = collect_records(Step.objects.filter(step_id__in=[row["step_id"] for row in rows]))
    assert len(exported) == len(rows) and lint(exported, partial=True) == []
    assert any(f["name"] == "steps/train.jsonl" for f in export.files)


def test_editing_the_after_state_makes_the_effect_unknown(steps_file):
    import_step_file(steps_file)
    step = Step.objects.filter(strategy="loop_unrolling").first() or Step.objects.first()
    reviewer = user("ann", Role.REVIEWER)
    text = step.after.leir.replace("L^{", "U^{", 1) if "L^{" in step.after.leir else step.before.leir
    if text in (step.after.leir, step.before.leir):
        pytest.skip("no one-token edit of this after-state")
    fresh = edits.edit_after_leir(reviewer, step, expected_version=step.version, leir_text=text)
    assert fresh.effect["verdict"] == "unknown" and fresh.effect["estimate"] is None
    assert fresh.effect["follow_up"] is None
    # the trace no longer quotes the engine's numbers or its rank; what it says now, lint confirms
    assert EDITED_SELECTION in fresh.trace_text and EDITED_SELECTION in fresh.trace["rationale"]
    assert "Verdict: unknown" in fresh.trace_text and "Verdict: unknown" not in step.trace_text
    exported = {"step_id": fresh.step_id, "status": "verified", "strategy": fresh.strategy,
                "parent": {"hash": "before", "depth": 0}, "trace": {"text": fresh.trace_text},
                "review": {"origin": fresh.origin}, "effect": fresh.effect}
    assert record_problems(exported, [exported]) == []
    assert record_problems({**exported, "review": {"origin": "engine"}}, [exported]) != []
    assert fresh.effect["target"] == step.effect["target"] == "llvm"
