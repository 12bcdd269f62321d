"""Tuner runs for stored workloads: search from the source state, store the steps and the Trajectory.

``run_trajectory(pk)`` runs ``tuner.run.tune`` on the trajectory's workload with its algorithm, policy
(``rule``; ``llm`` with ``STEPTP_LLM_URL``/``STEPTP_LLM_MODEL``/``STEPTP_LLM_KEY`` from the environment)
and budget, writes the run files under ``$STEPTP_VAR_DIR/tuning/`` (the same files ``steptp tune``
writes), imports the measured steps through the idempotent record import, and records on the row the
best path (step ids), the explored tree, the best speedup and the best state. A failure is stored on the
row (status ``failed``, the error), never lost.

While the run goes, every measurement writes the explored tree, the best speedup so far and one point of
``series`` (best speedup after *k* verifications) to the row, so the run page can poll it: the search
itself does not know about the database, it only calls its ``progress`` hook.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from curation.models import ProgramState, RunStatus, Trajectory, Workload
from curation.services import dispatch
from curation.services.roles import Role, require
from curation.services.steps import import_step_file
from curation.services.workloads import source_state
from verifier.targets import TARGET_LABELS, TUNING_TARGET

if TYPE_CHECKING:
    from tuner.policies.base import Policy
    from tuner.search.base import Search

#: The policies a stored run may use, with what each needs.
POLICIES: dict[str, str] = {"rule": "rule (cost-model ranking)",
                            "llm": "llm (STEPTP_LLM_URL / STEPTP_LLM_MODEL)"}


def llm_endpoint() -> tuple[str, str] | None:
    """``(url, model)`` of the configured OpenAI-compatible endpoint, or ``None`` when there is none."""
    url, model = os.environ.get("STEPTP_LLM_URL"), os.environ.get("STEPTP_LLM_MODEL")
    return (url, model) if url and model else None


def available_policies() -> dict[str, str]:
    """The policies this deployment can run now: ``llm`` only when an endpoint is configured."""
    return {name: label for name, label in POLICIES.items() if name != "llm" or llm_endpoint()}


def algorithm_names() -> list[str]:
    """The search algorithms (``tuner.search.ALGORITHMS``), imported when asked: it loads the engine."""
    from tuner.search import ALGORITHMS

    return list(ALGORITHMS)


class NothingToTune(ValueError):
    """The workload has no source state (its source did not translate)."""


def run_path(trajectory: Trajectory) -> Path:
    return Path(settings.VAR_DIR) / "tuning" / f"trajectory-{trajectory.pk}.jsonl"


def create_trajectory(workload: Workload, *, algorithm: str = "beam", policy: str = "rule",
                      budget: dict[str, Any] | None = None, seed: int = 0, target: str = TUNING_TARGET,
                      user: AbstractBaseUser | None = None) -> Trajectory:
    budget = check_budget({"verifications": 40} if budget is None else budget)
    algorithms = algorithm_names()
    if algorithm not in algorithms:
        raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(algorithms)}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; known: {', '.join(POLICIES)}")
    if policy not in available_policies():  # refused before queuing, not after
        raise ValueError("policy llm needs an endpoint: set STEPTP_LLM_URL and STEPTP_LLM_MODEL "
                         "(and STEPTP_LLM_KEY) for the web app and the workers")
    if target not in TARGET_LABELS:
        raise ValueError(f"unknown target {target!r}; known: {', '.join(TARGET_LABELS)}")
    trajectory: Trajectory = Trajectory.objects.create(workload=workload, algorithm=algorithm, policy=policy,
                                                       budget=budget, seed=seed, target=target,
                                                       created_by=user)
    return trajectory


def start_trajectory(user: AbstractBaseUser, *, workload: Workload, algorithm: str = "beam",
                     policy: str = "rule", budget: dict[str, Any] | None = None, seed: int = 0,
                     target: str = TUNING_TARGET, enqueue: bool = True) -> Trajectory:
    """A curator's run request (web page, API): checked and stored here, run on the ``tune`` queue."""
    require(user, Role.CURATOR, "starting a tuner run")
    if source_state(workload) is None:
        raise NothingToTune(f"{workload.name} has no source state (its source did not translate)")
    trajectory = create_trajectory(workload, algorithm=algorithm, policy=policy, budget=budget, seed=seed,
                                   target=target, user=user)
    if enqueue:
        dispatch.queue_tuning(trajectory.pk)
    return trajectory


def check_budget(budget: dict[str, Any]) -> dict[str, Any]:
    """The budget as stored: only ``tuner.search.Budget`` keys, positive numbers, at least one of them.

    Refused with ``ValueError`` here, when the run is asked for, rather than when a worker starts it.
    """
    from tuner.search import Budget

    if not isinstance(budget, dict):
        raise ValueError("a budget is an object like {\"verifications\": 40}")
    unknown = sorted(set(budget) - set(Budget.KEYS))
    if unknown:
        raise ValueError(f"unknown budget item(s) {', '.join(unknown)}; known: {', '.join(Budget.KEYS)}")
    out: dict[str, Any] = {}
    for key, value in budget.items():
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError(f"budget item {key} must be a positive number, got {value!r}")
        if key != "seconds" and value != int(value):
            raise ValueError(f"budget item {key} must be a whole number, got {value!r}")
        out[key] = float(value) if key == "seconds" else int(value)
    if not out:
        raise ValueError("an empty budget; give at least one of " + ", ".join(Budget.KEYS))
    return out


def _policy(trajectory: Trajectory) -> Policy:
    from tuner.policies import LLMPolicy, RulePolicy

    if trajectory.policy == "llm":
        endpoint = llm_endpoint()
        if endpoint is None:
            raise ValueError("policy llm needs STEPTP_LLM_URL and STEPTP_LLM_MODEL")
        url, model = endpoint
        return LLMPolicy(url, model, api_key=os.environ.get("STEPTP_LLM_KEY"),
                         program_name=trajectory.workload.name, seed=trajectory.seed)
    return RulePolicy(seed=trajectory.seed, measured={})


def explored_tree(search: Search) -> list[dict[str, Any]]:
    """Every state the run reached: hash, parent hash, depth, speedup, and the step that reached it."""
    return [{"hash": n.hash, "parent": n.parent.hash if n.parent else None, "depth": n.depth,
             "speedup": n.speedup, "step_id": n.record["step_id"] if n.record else None,
             "label": n.label()} for n in search.seen.values()]


def series_point(search: Search) -> dict[str, Any]:
    """Where the run stands: verifications used, seconds, best speedup so far."""
    return {"verifications": search.usage.verifications, "seconds": round(search.usage.seconds(), 3),
            "best_speedup": search.best.speedup}


class LiveProgress:
    """The search's ``progress`` hook: after each measurement, the tree and the series go to the row."""

    def __init__(self, trajectory_pk: int) -> None:
        self.pk = trajectory_pk
        self.series: list[dict[str, Any]] = [{"verifications": 0, "seconds": 0.0, "best_speedup": 1.0}]

    def __call__(self, search: Search) -> None:
        point = series_point(search)
        if point["verifications"] > self.series[-1]["verifications"]:
            self.series.append(point)
        Trajectory.objects.filter(pk=self.pk).update(explored=explored_tree(search), series=self.series,
                                                     best_speedup=search.best.speedup)


def tree_of(explored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The flat explored list as nested nodes (``children``), roots first; siblings fastest first."""
    nodes = {entry["hash"]: {**entry, "children": []} for entry in explored}
    roots: list[dict[str, Any]] = []
    for node in nodes.values():
        parent = nodes.get(node["parent"]) if node["parent"] else None
        (parent["children"] if parent else roots).append(node)
    for node in nodes.values():
        node["children"].sort(key=lambda n: (-(n["speedup"] or 0.0), n["hash"]))
    return roots


def best_path_hashes(explored: list[dict[str, Any]], best_hash: str | None) -> set[str]:
    """The hashes on the path from the source to ``best_hash`` (highlighted on the run page)."""
    by_hash = {entry["hash"]: entry for entry in explored}
    path, current = set(), by_hash.get(best_hash or "")
    while current is not None and current["hash"] not in path:
        path.add(current["hash"])
        current = by_hash.get(current["parent"] or "")
    return path


def run_trajectory(trajectory_pk: int, *, options: dict[str, Any] | None = None,
                   measure: dict[str, Any] | None = None) -> Trajectory:
    """Run one stored trajectory (``options`` go to the algorithm, ``measure`` to the ``Measurer``)."""
    from dataset.generation import Source
    from dataset.records import SourceInfo
    from tuner.measure import Measurer
    from tuner.run import tune, write_run
    from tuner.search import Budget

    trajectory: Trajectory = Trajectory.objects.select_related("workload").get(pk=trajectory_pk)
    workload = trajectory.workload
    live = LiveProgress(trajectory.pk)
    trajectory.status, trajectory.error, trajectory.series = RunStatus.RUNNING, "", live.series
    trajectory.save(update_fields=["status", "error", "series"])
    try:
        state = source_state(workload)
        if state is None:
            why = workload.translation_error or "none"
            raise NothingToTune(f"{workload.name} has no source state: {why}")
        program = state.as_program()
        info = SourceInfo(f"{workload.name}@{workload.dtype}#0", workload.name, workload.level,
                          workload.dtype, 0, {}, state.program_hash)
        budget = Budget(**{k: v for k, v in trajectory.budget.items() if k in Budget.KEYS})
        measurer = Measurer(program, target=trajectory.target, **(measure or {}))
        try:
            search = tune(Source(info, program), _policy(trajectory), measurer, budget,
                          algo=trajectory.algorithm, seed=trajectory.seed, options=options, progress=live)
        finally:
            measurer.close()
        path = run_path(trajectory)
        write_run(search, path)
        import_step_file(path)
    except Exception as exc:
        trajectory.status, trajectory.error = RunStatus.FAILED, f"{type(exc).__name__}: {exc}"
        trajectory.finished_at = timezone.now()
        trajectory.save(update_fields=["status", "error", "finished_at"])
        return trajectory
    # every node after the root was reached by a step, so it carries that step's record
    trajectory.steps = [n.record["step_id"] for n in search.best_path()[1:]]  # type: ignore[index]
    trajectory.explored = explored_tree(search)
    final = series_point(search)
    if final["verifications"] > live.series[-1]["verifications"]:
        live.series.append(final)
    trajectory.series = live.series
    trajectory.best_speedup = search.best.speedup
    trajectory.best_state = ProgramState.objects.filter(workload=workload,
                                                        program_hash=search.best.hash).first()
    trajectory.status, trajectory.finished_at = RunStatus.DONE, timezone.now()
    trajectory.save()
    return trajectory
