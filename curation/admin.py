"""Django admin: read-mostly views of the dataset for administrators (roles are groups, tokens are in
``Auth Token``). Reviews and edits go through the API so optimistic locking and the audit trail apply."""

from django.contrib import admin

from curation.models import AuditEvent, Export, ProgramState, Review, Step, Trajectory, Verification, Workload


@admin.register(Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ("name", "level", "origin", "dtype", "created_at")
    list_filter = ("level", "origin", "dtype")
    search_fields = ("name",)


@admin.register(ProgramState)
class ProgramStateAdmin(admin.ModelAdmin):
    list_display = ("program_hash", "workload", "depth", "created_at")
    search_fields = ("program_hash", "workload__name")
    raw_id_fields = ("workload", "parent")


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ("step_id", "strategy", "level", "exactness", "verification_status", "review_status",
                    "version")
    list_filter = ("level", "exactness", "verification_status", "review_status", "origin")
    search_fields = ("step_id", "strategy", "workload__name")
    raw_id_fields = ("workload", "before", "after")
    readonly_fields = ("version", "record")


@admin.register(Verification)
class VerificationAdmin(admin.ModelAdmin):
    list_display = ("state", "target", "outcome", "toolchain", "created_at")
    list_filter = ("target", "outcome")
    raw_id_fields = ("state", "step", "parent")


@admin.register(Review)
class ReviewAdmin(admin.ModelAdmin):
    list_display = ("step", "reviewer", "decision", "reason", "adjudication", "created_at")
    list_filter = ("decision", "reason", "adjudication")
    raw_id_fields = ("step",)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("step", "user", "field", "at")
    raw_id_fields = ("step",)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # the trail is append-only


@admin.register(Trajectory)
class TrajectoryAdmin(admin.ModelAdmin):
    list_display = ("workload", "algorithm", "policy", "status", "best_speedup", "created_at")
    list_filter = ("algorithm", "policy", "status")


@admin.register(Export)
class ExportAdmin(admin.ModelAdmin):
    list_display = ("name", "status", "progress", "seed", "created_at")
    list_filter = ("status",)
