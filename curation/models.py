"""Database models: Workload, ProgramState, Step, Verification, Review, AuditEvent, Trajectory, Export.

The database is the source of truth for every result (tasks write here, never only to a Celery result
backend). Rules that protect the data live in the database as constraints — one state per content hash
and workload, one verification per state + target + seed + toolchain, valid status values — so no code
path (a view, a task, a shell session) can break them. Indexes follow the queries the API and the review
queue make at 100,000+ steps: filter by strategy/level/exactness/statuses, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from verifier.result import Outcome as VerifierOutcome

if TYPE_CHECKING:
    from enum import EnumMeta, StrEnum

    from leir.ast import Program

    class _ChoicesMeta(EnumMeta):
        values: list[str]
        choices: list[tuple[str, str]]

    class TextChoices(StrEnum, metaclass=_ChoicesMeta):
        """``models.TextChoices`` as mypy sees it: Django is untyped here (no django-stubs), and without
        this the members would read as the ``(value, label)`` tuples they are written as."""

        @property
        def label(self) -> str: ...

        @property
        def value(self) -> str: ...
else:
    TextChoices = models.TextChoices


def _choices_check(field: str, choices: type[models.TextChoices], name: str) -> models.CheckConstraint:
    return models.CheckConstraint(condition=Q(**{f"{field}__in": choices.values}), name=name)


class Origin(TextChoices):
    BUILTIN = "builtin", "built-in suite"
    UPLOAD = "upload", "uploaded file"
    API = "api", "API call"


class TranslationStatus(TextChoices):
    """Where a workload's source is on the way to its LEIR source state (uploads translate on a queue)."""

    QUEUED = "queued", "queued"
    TRANSLATING = "translating", "translating"
    TRANSLATED = "translated", "translated"
    FAILED = "failed", "failed"


class GenerationStatus(TextChoices):
    """The last generation asked for from the workload page or the API ("" when none was)."""

    NONE = "", "not asked for"
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class Workload(models.Model):
    """A source program (a PyTorch module file in KernelBench convention) and its provenance."""

    name = models.CharField(max_length=200, unique=True, help_text="level1/softmax, or an upload's name")
    level = models.PositiveSmallIntegerField(default=1)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.BUILTIN)
    source = models.TextField(help_text="the PyTorch source text")
    dtype = models.CharField(max_length=8, default="f32")
    default_shapes = models.JSONField(default=dict, blank=True)
    provenance = models.TextField(blank=True)
    licence = models.CharField(max_length=100, blank=True)
    tags = models.JSONField(default=list, blank=True)
    translation_error = models.TextField(blank=True, help_text="why the source did not translate, if not")
    translation_status = models.CharField(max_length=16, choices=TranslationStatus.choices,
                                          default=TranslationStatus.TRANSLATED)
    generation_status = models.CharField(max_length=16, choices=GenerationStatus.choices, blank=True,
                                         default=GenerationStatus.NONE)
    #: One line: how many steps the last generation stored, or why it failed.
    generation_message = models.CharField(max_length=300, blank=True)
    #: When the translation / generation state last changed (or a running task last reported): a state a
    #: lost worker left "running" is told apart by no live worker having started before it.
    translation_since = models.DateTimeField(null=True, blank=True)
    generation_since = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["level", "name"]
        constraints = [_choices_check("origin", Origin, "workload_origin_valid"),
                       _choices_check("translation_status", TranslationStatus, "workload_translation_valid"),
                       _choices_check("generation_status", GenerationStatus, "workload_generation_valid")]

    def __str__(self) -> str:
        return self.name

    @property
    def translation_pending(self) -> bool:
        return self.translation_status in (TranslationStatus.QUEUED, TranslationStatus.TRANSLATING)

    @property
    def generation_pending(self) -> bool:
        return self.generation_status in (GenerationStatus.QUEUED, GenerationStatus.RUNNING)


class ProgramState(models.Model):
    """One LEIR program: signature plus canonical body, unique by content hash within its workload."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="states")
    program_hash = models.CharField(max_length=64)
    #: The signature in the public data's JSON form: a list of {name, role, dtype, shape}.
    tensors = models.JSONField()
    leir = models.TextField(help_text="canonical LEIR body")
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="children")
    depth = models.PositiveIntegerField(default=0)
    #: Qwen token counts of the LEIR, the TIR and the CUDA it lowers to (filled when measured).
    tokens = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workload", "program_hash"],
                                               name="state_hash_per_workload")]
        indexes = [models.Index(fields=["program_hash"], name="state_hash_idx")]

    def __str__(self) -> str:
        return f"{self.workload.name}@{self.program_hash[:12]}"

    def as_program_json(self) -> dict[str, Any]:
        return {"tensors": self.tensors, "leir": self.leir}

    def as_program(self) -> Program:
        """The stored state parsed back into a ``leir.ast.Program`` (what pages, tasks and the tuner use)."""
        from leir.program import program_from_json

        return program_from_json(self.as_program_json())


class Exactness(TextChoices):
    E = "E", "exact"
    N = "N", "numerically equivalent"


class StepOrigin(TextChoices):
    ENGINE = "engine", "strategy engine"
    MODEL = "model", "model proposal"
    HUMAN = "human", "human edit"


class VerificationStatus(TextChoices):
    PENDING = "pending", "pending"
    QUEUED = "queued", "queued"
    EQUAL_PASS = "equal_pass", "equal pass"
    PASS = "pass", "pass"
    FAIL = "fail", "fail"
    ERROR = "error", "error"


class ReviewStatus(TextChoices):
    UNREVIEWED = "unreviewed", "unreviewed"
    IN_REVIEW = "in_review", "in review"
    DISPUTED = "disputed", "disputed (needs a curator)"
    APPROVED = "approved", "approved"
    REJECTED = "rejected", "rejected"


class Step(models.Model):
    """A before-state → after-state rewrite with its strategy, site, parameters and reasoning trace.

    ``version`` is the optimistic lock: every change bumps it, and a writer holding an older version is
    refused with the current one (HTTP 409 in the API) instead of overwriting it.
    """

    step_id = models.CharField(max_length=64, unique=True, help_text="the step record's id")
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="steps")
    before = models.ForeignKey(ProgramState, on_delete=models.CASCADE, related_name="steps_out")
    after = models.ForeignKey(ProgramState, on_delete=models.CASCADE, related_name="steps_in")
    strategy = models.CharField(max_length=80)
    number = models.PositiveSmallIntegerField()
    level = models.CharField(max_length=16)
    site = models.JSONField(default=dict)
    params = models.JSONField(default=dict, blank=True)
    exactness = models.CharField(max_length=1, choices=Exactness.choices)
    trace = models.JSONField(default=dict, help_text="the structured trace: four parts and their quotes")
    trace_text = models.TextField()
    origin = models.CharField(max_length=16, choices=StepOrigin.choices, default=StepOrigin.ENGINE)
    depth = models.PositiveIntegerField(default=1)
    verification_status = models.CharField(max_length=16, choices=VerificationStatus.choices,
                                           default=VerificationStatus.PENDING)
    review_status = models.CharField(max_length=16, choices=ReviewStatus.choices,
                                     default=ReviewStatus.UNREVIEWED)
    #: The step record exactly as the engine wrote it (provenance, generator version, raw verification).
    record = models.JSONField(default=dict, blank=True)
    #: The step's effect (the record's ``effect``: estimate, measurement, verdict, follow-up).
    effect = models.JSONField(default=dict, blank=True,
                              help_text="estimated and measured effect of the step, with its verdict")
    version = models.PositiveIntegerField(default=1)
    assigned_to = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="assigned_steps")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            _choices_check("exactness", Exactness, "step_exactness_valid"),
            _choices_check("origin", StepOrigin, "step_origin_valid"),
            _choices_check("verification_status", VerificationStatus, "step_verification_status_valid"),
            _choices_check("review_status", ReviewStatus, "step_review_status_valid"),
            models.CheckConstraint(condition=~Q(before=models.F("after")), name="step_changes_state"),
        ]
        indexes = [
            models.Index(fields=["strategy", "-id"], name="step_strategy_idx"),
            models.Index(fields=["level", "-id"], name="step_level_idx"),
            models.Index(fields=["verification_status", "review_status", "-id"], name="step_status_idx"),
            models.Index(fields=["workload", "-id"], name="step_workload_idx"),
            models.Index(fields=["exactness", "-id"], name="step_exactness_idx"),
            # covers the dashboard's one grouped query: an index-only scan instead of reading every trace
            models.Index(fields=["strategy", "level", "workload", "verification_status", "review_status"],
                         name="step_dashboard_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.strategy} on {self.workload.name} ({self.step_id[:12]})"


#: The verifier's outcomes, stored as they are (``verifier.result.Outcome``); the database refuses others.
OUTCOMES: tuple[str, ...] = tuple(o.value for o in VerifierOutcome)


class Verification(models.Model):
    """One verification of a state on one target, with the toolchain that produced it."""

    state = models.ForeignKey(ProgramState, on_delete=models.CASCADE, related_name="verifications")
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="verifications")
    #: The state the outputs were compared with bitwise (the step's before-state), if any.
    parent = models.ForeignKey(ProgramState, null=True, blank=True, on_delete=models.SET_NULL,
                               related_name="+")
    target = models.CharField(max_length=16, default="llvm")
    device = models.CharField(max_length=200, blank=True)
    seed = models.IntegerField(default=0)
    toolchain = models.CharField(max_length=120, help_text="e.g. tvm=0.27|tvm_ffi=0.1.14")
    outcome = models.CharField(max_length=20)
    max_abs_error = models.FloatField(null=True, blank=True)
    max_rel_error = models.FloatField(null=True, blank=True)
    #: The full ``VerificationResult.to_json()``: per-output errors and bounds, timings, speedups, notes.
    result = models.JSONField(default=dict)
    median_seconds = models.FloatField(null=True, blank=True)
    speedup_vs_parent = models.FloatField(null=True, blank=True)
    speedup_vs_source = models.FloatField(null=True, blank=True)
    speedup_vs_torch = models.FloatField(null=True, blank=True)
    error_class = models.CharField(max_length=80, blank=True, help_text="the verifier's typed error, if any")
    log_excerpt = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # two partial indexes rather than nulls_distinct=False, which only PostgreSQL 15+ enforces
            models.UniqueConstraint(fields=["state", "parent", "target", "seed", "toolchain"],
                                    condition=Q(parent__isnull=False), name="one_verification_per_key"),
            models.UniqueConstraint(fields=["state", "target", "seed", "toolchain"],
                                    condition=Q(parent__isnull=True), name="one_unparented_verification"),
            models.CheckConstraint(condition=Q(outcome__in=OUTCOMES), name="verification_outcome_valid"),
        ]
        indexes = [models.Index(fields=["outcome"], name="verification_outcome_idx")]

    def __str__(self) -> str:
        return f"{self.state} on {self.target}: {self.outcome}"


class Decision(TextChoices):
    APPROVE = "approve", "approve"
    REJECT = "reject", "reject"
    SKIP = "skip", "skip"


class RejectReason(TextChoices):
    NONE = "", "—"
    WRONG_LABEL = "wrong_strategy_label", "wrong strategy label"
    NOT_GROUNDED = "trace_not_grounded", "trace not grounded"
    NOT_EQUIVALENT = "not_equivalent", "not equivalent"
    TRIVIAL = "trivial_or_shortcut", "trivial or shortcut"
    OTHER = "other", "other"


class Review(models.Model):
    """One reviewer's decision on one version of a step; several per step measure agreement."""

    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews")
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.CharField(max_length=32, choices=RejectReason.choices, blank=True, default="")
    comment = models.TextField(blank=True)
    step_version = models.PositiveIntegerField()
    #: A curator's adjudication settles a disagreement; it counts over the ordinary reviews.
    adjudication = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            _choices_check("decision", Decision, "review_decision_valid"),
            _choices_check("reason", RejectReason, "review_reason_valid"),
            models.CheckConstraint(condition=~Q(decision="reject") | ~Q(reason=""), name="reject_has_reason"),
        ]
        indexes = [models.Index(fields=["reviewer", "-created_at"], name="review_reviewer_idx")]


class AuditEvent(models.Model):
    """One change to a step: who, when, which field, from → to. Written for every change, never edited."""

    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="audit_events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    at = models.DateTimeField(auto_now_add=True)
    field = models.CharField(max_length=40)
    old = models.TextField(blank=True)
    new = models.TextField(blank=True)
    step_version = models.PositiveIntegerField()

    class Meta:
        ordering = ["at", "id"]
        indexes = [models.Index(fields=["step", "at"], name="audit_step_idx")]


class RunStatus(TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class Trajectory(models.Model):
    """A tuner run over one workload: algorithm, policy, budget, its ordered steps and best speedup."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="trajectories")
    algorithm = models.CharField(max_length=20)
    policy = models.CharField(max_length=40)
    budget = models.JSONField(default=dict)
    target = models.CharField(max_length=16, default="llvm")
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    steps = models.JSONField(default=list, help_text="ordered step ids of the best path")
    explored = models.JSONField(default=list, blank=True, help_text="the explored tree, for the run page")
    series = models.JSONField(default=list, blank=True,
                              help_text="best speedup after each verification: [{verifications, seconds, "
                                        "best_speedup}], written while the run goes")
    best_speedup = models.FloatField(null=True, blank=True)
    best_state = models.ForeignKey(ProgramState, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [_choices_check("status", RunStatus, "trajectory_status_valid")]


class Export(models.Model):
    """A dataset export: its filters, split policy and formats, progress, files and dataset card."""

    name = models.CharField(max_length=120)
    filters = models.JSONField(default=dict, blank=True)
    split_policy = models.JSONField(default=dict, blank=True)
    formats = models.JSONField(default=list)
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    progress = models.FloatField(default=0.0)
    #: [{name, bytes, sha256}] of the files written, relative to ``directory``.
    files = models.JSONField(default=list, blank=True)
    manifest = models.JSONField(default=dict, blank=True)
    card = models.TextField(blank=True)
    lint = models.JSONField(default=dict, blank=True)
    directory = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            _choices_check("status", RunStatus, "export_status_valid"),
            models.CheckConstraint(condition=Q(progress__gte=0) & Q(progress__lte=1),
                                   name="export_progress_range"),
        ]


class WorkerHeartbeat(models.Model):
    """A Celery worker's latest sign of life (``curation.services.workers``): who serves which queues.

    Workers write it every ``STEPTP_HEARTBEAT_SECONDS``; one silent for three intervals counts as gone, so
    ``/healthz``, ``/status/`` and the dashboard can say that a queue with work waiting has no worker.
    """

    name = models.CharField(max_length=200, unique=True)
    queues = models.JSONField(default=list)
    pid = models.IntegerField()
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.name} ({', '.join(self.queues)})"
