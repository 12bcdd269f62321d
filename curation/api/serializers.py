"""API representations: plain, flat, and the same field names as the models and the step record."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from curation.models import (
    AuditEvent,
    Decision,
    Export,
    ProgramState,
    RejectReason,
    Review,
    Step,
    Trajectory,
    Verification,
    Workload,
)
from curation.services.tuning import POLICIES, TARGET_LABELS, TUNING_TARGET, algorithm_names


class WorkloadSerializer(serializers.ModelSerializer):
    class Meta:
        model = Workload
        fields = ["id", "name", "level", "origin", "dtype", "default_shapes", "provenance", "licence", "tags",
                  "translation_status", "translation_error", "generation_status", "generation_message",
                  "created_at"]


class WorkloadDetailSerializer(WorkloadSerializer):
    class Meta(WorkloadSerializer.Meta):
        fields = [*WorkloadSerializer.Meta.fields, "source"]


class WorkloadUploadSerializer(serializers.Serializer):
    """An upload: answered 202 with the workload ``queued``; a worker translates it (poll the detail)."""

    name = serializers.CharField(max_length=200)
    #: A textarea in the browsable API, so a pasted file keeps its lines.
    source = serializers.CharField(trim_whitespace=False,
                                   style={"base_template": "textarea.html", "rows": 16})
    level = serializers.IntegerField(min_value=1, max_value=3, default=1)
    dtype = serializers.ChoiceField(choices=["f32", "f64", "f16"], default="f32")
    sets = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    licence = serializers.CharField(max_length=100, required=False, default="", allow_blank=True)


class StateSerializer(serializers.ModelSerializer):
    workload = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = ProgramState
        fields = ["id", "workload", "program_hash", "tensors", "leir", "parent", "depth", "tokens",
                  "created_at"]


class StepSerializer(serializers.ModelSerializer):
    workload = serializers.SlugRelatedField(slug_field="name", read_only=True)
    before_hash = serializers.CharField(source="before.program_hash", read_only=True)
    after_hash = serializers.CharField(source="after.program_hash", read_only=True)

    class Meta:
        model = Step
        fields = ["id", "step_id", "workload", "before", "after", "before_hash", "after_hash", "strategy",
                  "number", "level", "site", "params", "exactness", "trace_text", "origin", "depth",
                  "verification_status", "review_status", "effect", "version", "created_at", "updated_at"]


class StepDetailSerializer(StepSerializer):
    before_leir = serializers.CharField(source="before.leir", read_only=True)
    after_leir = serializers.CharField(source="after.leir", read_only=True)
    tensors = serializers.JSONField(source="after.tensors", read_only=True)

    class Meta(StepSerializer.Meta):
        fields = [*StepSerializer.Meta.fields, "trace", "before_leir", "after_leir", "tensors"]


class StepEditSerializer(serializers.Serializer):
    """A change to a step: the version it was read at, and the trace and/or the transformed LEIR."""

    version = serializers.IntegerField(min_value=1)
    trace_text = serializers.CharField(required=False)
    after_leir = serializers.CharField(required=False)

    def validate(self, attrs):
        if "trace_text" not in attrs and "after_leir" not in attrs:
            raise serializers.ValidationError("send trace_text and/or after_leir")
        return attrs


class VerificationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Verification
        fields = ["id", "state", "step", "parent", "target", "device", "seed", "toolchain", "outcome",
                  "max_abs_error", "max_rel_error", "median_seconds", "speedup_vs_parent",
                  "speedup_vs_source",
                  "speedup_vs_torch", "error_class", "log_excerpt", "result", "created_at"]


class ReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Review
        fields = ["id", "step", "reviewer", "decision", "reason", "comment", "step_version", "adjudication",
                  "created_at"]


class ReviewCreateSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Decision.choices)
    reason = serializers.ChoiceField(choices=RejectReason.choices, required=False, default="",
                                     allow_blank=True)
    comment = serializers.CharField(required=False, default="", allow_blank=True)
    version = serializers.IntegerField(min_value=1, required=False)
    settle = serializers.BooleanField(required=False, default=False,
                                      help_text="curators only: this one decision settles the step")


class AuditEventSerializer(serializers.ModelSerializer):
    user = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "step", "user", "at", "field", "old", "new", "step_version"]


class TrajectorySerializer(serializers.ModelSerializer):
    workload = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = Trajectory
        fields = ["id", "workload", "algorithm", "policy", "budget", "target", "seed", "status", "steps",
                  "best_speedup", "best_state", "error", "created_at", "finished_at"]


class TrajectoryDetailSerializer(TrajectorySerializer):
    """One run with what its page shows: the explored tree (flat, parent by hash) and the series of the
    best speedup after each verification."""

    explored = serializers.ListField(child=serializers.DictField(), read_only=True)
    series = serializers.ListField(child=serializers.DictField(), read_only=True)

    class Meta(TrajectorySerializer.Meta):
        fields = [*TrajectorySerializer.Meta.fields, "explored", "series"]


class WorkloadNameField(serializers.SlugRelatedField):
    """A workload by name; a name with a NUL byte names none (PostgreSQL refuses it in any query)."""

    def to_internal_value(self, data: object) -> Workload:
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data.replace("\x00", "\\x00"))
        workload: Workload = super().to_internal_value(data)
        return workload


class TrajectoryCreateSerializer(serializers.Serializer):
    """What a curator sends to start a run (the service checks the budget and the workload's source)."""

    workload = WorkloadNameField(slug_field="name", queryset=Workload.objects.all())
    #: choices filled from ``tuner.search.ALGORITHMS`` when the serializer is made (the tuner loads late)
    algorithm = serializers.ChoiceField(choices=[], default="beam")
    policy = serializers.ChoiceField(choices=list(POLICIES), default="rule")
    budget = serializers.DictField(child=serializers.FloatField(min_value=0), required=False,
                                   default=lambda: {"verifications": 40})
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)
    target = serializers.ChoiceField(choices=list(TARGET_LABELS), default=TUNING_TARGET)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["algorithm"].choices = algorithm_names()


class ExportSerializer(serializers.ModelSerializer):
    class Meta:
        model = Export
        fields = ["id", "name", "filters", "split_policy", "formats", "seed", "status", "progress", "files",
                  "manifest", "lint", "error", "created_at", "finished_at"]
        read_only_fields = ["status", "progress", "files", "manifest", "lint", "error", "created_at",
                            "finished_at"]


class ExportCreateSerializer(serializers.Serializer):
    """What a curator sends to start an export (validated here; the service re-checks the rules)."""

    name = serializers.CharField(max_length=120)
    filters = serializers.DictField(required=False, default=dict)
    split_policy = serializers.DictField(required=False, default=dict)
    formats = serializers.ListField(child=serializers.ChoiceField(choices=["messages", "prompt-completion",
                                                                           "parquet", "preference"]),
                                    min_length=1, required=False,
                                    default=lambda: ["messages", "prompt-completion", "parquet"])
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)


class UserSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = get_user_model()
        fields = ["id", "username", "email", "is_active", "role"]

    def get_role(self, user) -> str:
        from curation.services.roles import role_of

        return role_of(user).label


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["none", "viewer", "reviewer", "curator", "admin"])
