"""A stored tuner run: the Trajectory row gets the best path, explored tree and speedup; steps imported."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from curation.models import RunStatus, Step, Trajectory
from curation.services.tuning import create_trajectory, run_trajectory
from tests.backend.fixtures import builtin

pytestmark = pytest.mark.django_db

FAST_TIMING = {"cache": False, "repeats": 2, "min_repeat_ms": 2.0}


def test_run_trajectory_stores_the_search(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    workload = builtin("level1/layer_norm")
    trajectory = create_trajectory(workload, algorithm="chain", budget={"verifications": 2})
    done = run_trajectory(trajectory.pk, measure=FAST_TIMING)
    assert done.status == RunStatus.DONE, done.error
    # the source and a verified state per record: two, or one when a would-be best was timed twice
    # (Search._confirm spends a verification without a new state)
    steps = Step.objects.filter(workload=workload)
    assert steps.count() in (1, 2) and len(done.explored) == steps.count() + 1
    assert done.target == "llvm-host"  # the tuner builds for this CPU by default
    if done.best_speedup > 1.0:
        assert done.steps and set(done.steps) <= set(steps.values_list("step_id", flat=True))
        assert done.best_state is not None
        assert done.best_state.program_hash in {n["hash"] for n in done.explored}
    assert (tmp_path / "tuning" / f"trajectory-{done.pk}.summary.json").is_file()


def test_manage_tune_command_and_bad_input(settings, tmp_path, capsys):
    settings.VAR_DIR = tmp_path
    builtin("level1/layer_norm")
    with pytest.raises(Exception, match="budget item"):
        call_command("tune", "--name", "level1/layer_norm", "--budget", "nope=1")
    with pytest.raises(Exception, match="no stored workload"):
        call_command("tune", "--name", "level9/none")
    with pytest.raises(Exception, match="unknown algorithm"):
        call_command("tune", "--name", "level1/layer_norm", "--algo", "annealing")
    with pytest.raises(Exception, match="invalid choice: 'sse9'"):
        call_command("tune", "--name", "level1/layer_norm", "--target", "sse9")
    assert Trajectory.objects.count() == 0


def test_every_entry_point_offers_the_targets_the_verifier_knows():
    """The run form, the API and ``manage.py tune`` take their choices from ``verifier.targets``."""
    from curation.api.serializers import TrajectoryCreateSerializer
    from curation.views.run_form import RunForm
    from tuner.search import ALGORITHMS
    from verifier.targets import TARGETS

    form, api = RunForm(), TrajectoryCreateSerializer()
    assert {name for name, _label in form.fields["target"].choices} == set(TARGETS)
    assert set(api.fields["target"].choices) == set(TARGETS)
    assert form.fields["target"].initial == api.fields["target"].default == "llvm-host"
    assert list(api.fields["algorithm"].choices) == list(ALGORITHMS)
    assert [name for name, _label in form.fields["algorithm"].choices] == list(ALGORITHMS)
    with pytest.raises(ValueError, match="unknown target 'sse9'"):
        create_trajectory(builtin("level1/layer_norm"), budget={"verifications": 1}, target="sse9")


def test_a_failing_run_is_stored_as_failed(settings, tmp_path, monkeypatch):
    settings.VAR_DIR = tmp_path
    monkeypatch.setenv("STEPTP_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("STEPTP_LLM_MODEL", "m")
    workload = builtin("level1/layer_norm")
    trajectory = create_trajectory(workload, algorithm="chain", policy="llm", budget={"verifications": 1})
    monkeypatch.delenv("STEPTP_LLM_URL")  # the endpoint went away between the request and the run
    done = run_trajectory(trajectory.pk, measure=FAST_TIMING)
    assert done.status == RunStatus.FAILED
    assert "STEPTP_LLM_URL" in done.error


def test_the_llm_policy_is_offered_only_with_an_endpoint_and_refused_before_queuing(monkeypatch):
    from curation.views.run_form import RunForm

    monkeypatch.delenv("STEPTP_LLM_URL", raising=False)
    monkeypatch.delenv("STEPTP_LLM_MODEL", raising=False)
    assert [name for name, _ in RunForm().fields["policy"].choices] == ["rule"]
    with pytest.raises(ValueError, match="policy llm needs an endpoint: set STEPTP_LLM_URL"):
        create_trajectory(builtin("level1/layer_norm"), policy="llm", budget={"verifications": 1})
    assert not Trajectory.objects.exists()
    monkeypatch.setenv("STEPTP_LLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("STEPTP_LLM_MODEL", "m")
    assert [name for name, _ in RunForm().fields["policy"].choices] == ["rule", "llm"]
