"""REST endpoints: thin DRF views over ``curation.services`` (no business rule lives here).

Every endpoint declares the role each action needs (``roles``); lists use cursor pagination (stable under
inserts at 100,000+ steps); a stale edit answers 409 with the current version.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.http import FileResponse, Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.reverse import reverse

from curation.api import serializers as S
from curation.api.permissions import RolePermission
from curation.models import Export, ProgramState, Review, Trajectory, Verification, Workload
from curation.services import edits, queries, reviews, roles, verification
from curation.services.roles import Role


class NewestFirst(CursorPagination):
    ordering = "-id"
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class Base(viewsets.GenericViewSet):
    permission_classes = [RolePermission]
    pagination_class = NewestFirst
    roles: dict = {}


def _service_errors(exc: Exception):
    if isinstance(exc, roles.PermissionDenied):
        raise DRFPermissionDenied(str(exc))
    raise ValidationError({"detail": str(exc)})


class WorkloadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    """Source programs; curators upload new ones, translated on a worker inside the sandbox.

    ``POST`` answers 202 Accepted with the workload ``queued`` and its URL in ``Location``; ``GET`` on that
    URL shows ``translation_status`` (queued, translating, translated, failed) and, when failed,
    ``translation_error``. What is wrong at once (a taken name, text that is not Python or has no
    ``class Model``) is a 400 with the reason. ``POST …/generate/`` queues depth-1 step generation.
    """

    queryset = Workload.objects.all()
    roles = {"create": Role.CURATOR, "generate": Role.CURATOR}

    def get_serializer_class(self):
        if self.action == "create":
            return S.WorkloadUploadSerializer
        return S.WorkloadDetailSerializer if self.action in ("retrieve", "generate") else S.WorkloadSerializer

    @extend_schema(request=S.WorkloadUploadSerializer, responses={
        202: OpenApiResponse(S.WorkloadDetailSerializer, description="queued; poll the Location"),
        400: OpenApiResponse(description="refused at once: a taken name, not Python, no class Model")})
    def create(self, request):
        from curation.services import uploads

        data = S.WorkloadUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            workload = uploads.submit_upload(request.user, origin="api", **data.validated_data)
        except uploads.NameTaken as exc:
            raise ValidationError({"name": [str(exc)]}) from None
        except (uploads.UploadRefused, roles.PermissionDenied) as exc:
            _service_errors(exc)
        location = reverse("workload-detail", args=[workload.pk], request=request)
        return Response(S.WorkloadDetailSerializer(workload).data, status=status.HTTP_202_ACCEPTED,
                        headers={"Location": location})

    @extend_schema(request=None, responses={
        202: OpenApiResponse(S.WorkloadDetailSerializer, description="generation queued"),
        400: OpenApiResponse(description="no source state yet, or generation already queued or running")})
    @action(detail=True, methods=["post"])
    def generate(self, request, pk=None):
        """Queue depth-1 generation (202); ``generation_status`` on the workload shows how it goes."""
        from curation.services import generation

        try:
            workload = generation.request_generation(request.user, self.get_object())
        except (generation.NothingToGenerate, generation.AlreadyGenerating, roles.PermissionDenied) as exc:
            _service_errors(exc)
        return Response(S.WorkloadDetailSerializer(workload).data, status=status.HTTP_202_ACCEPTED)


class StateViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    queryset = ProgramState.objects.select_related("workload")
    serializer_class = S.StateSerializer


STEP_PARAMETERS = [OpenApiParameter(name, int if name in queries.INTEGER_FILTERS else str,
                                    description=f"filter on {field} (comma: any of)")
                   for name, field in queries.STEP_FILTERS.items()] + [
    OpenApiParameter("q", str, description="full-text search in the reasoning traces")]


class StepViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    """Steps, filterable and searchable; reviewers edit (optimistic locking) and review them."""

    roles = {"partial_update": Role.REVIEWER, "review": Role.REVIEWER, "verify": Role.REVIEWER}

    def get_queryset(self):
        return queries.filter_steps(self.request.query_params)

    def get_serializer_class(self):
        if self.action == "partial_update":
            return S.StepEditSerializer
        if self.action == "review":
            return S.ReviewCreateSerializer
        return S.StepDetailSerializer if self.action == "retrieve" else S.StepSerializer

    @extend_schema(parameters=STEP_PARAMETERS)
    def list(self, request, *args, **kwargs):
        try:
            return super().list(request, *args, **kwargs)
        except queries.InvalidFilter as exc:
            raise ValidationError({"detail": str(exc)}) from None

    @extend_schema(request=S.StepEditSerializer,
                   responses={200: S.StepDetailSerializer, 409: S.StepDetailSerializer})
    def partial_update(self, request, pk=None):
        step = self.get_object()
        data = S.StepEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        version = data.validated_data["version"]
        try:
            if "after_leir" in data.validated_data:
                step = edits.edit_after_leir(request.user, step, expected_version=version,
                                             leir_text=data.validated_data["after_leir"])
                version = step.version
            if "trace_text" in data.validated_data:
                step = edits.edit_trace(request.user, step, expected_version=version,
                                        trace_text=data.validated_data["trace_text"])
        except edits.EditConflict as conflict:
            body = {"detail": str(conflict), "current": S.StepDetailSerializer(conflict.current).data}
            return Response(body, status=status.HTTP_409_CONFLICT)
        except edits.InvalidLeir as bad:
            return Response({"detail": str(bad), "problems": bad.problems},
                            status=status.HTTP_400_BAD_REQUEST)
        except roles.PermissionDenied as exc:
            _service_errors(exc)
        return Response(S.StepDetailSerializer(step).data)

    @extend_schema(request=S.ReviewCreateSerializer, responses={201: S.ReviewSerializer})
    @action(detail=True, methods=["post"])
    def review(self, request, pk=None):
        step = self.get_object()
        data = S.ReviewCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            review = reviews.submit_review(request.user, step, decision=values["decision"],
                                           reason=values["reason"], comment=values["comment"],
                                           step_version=values.get("version"), settle=values["settle"])
        except (reviews.ReviewRefused, roles.PermissionDenied) as exc:
            _service_errors(exc)
        return Response(S.ReviewSerializer(review).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={202: S.StepSerializer},
                   parameters=[OpenApiParameter("target", str, enum=[*verification.TARGETS])])
    @action(detail=True, methods=["post"])
    def verify(self, request, pk=None):
        """Re-run the verification as the step page's button does: ``queued``, a fresh seed, audited."""
        step = self.get_object()
        target = request.query_params.get("target", "llvm")
        if target not in verification.TARGETS:
            raise ValidationError({"target": " or ".join(verification.TARGETS)})
        try:
            step = verification.request_verification(request.user, step, target=target)
        except roles.PermissionDenied as exc:
            _service_errors(exc)
        return Response(S.StepSerializer(step).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses={200: S.AuditEventSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def history(self, request, pk=None):
        from curation.services.audit import history

        return Response(S.AuditEventSerializer(history(self.get_object()), many=True).data)


class VerificationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    queryset = Verification.objects.all()
    serializer_class = S.VerificationSerializer


class ReviewViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    queryset = Review.objects.select_related("reviewer")
    serializer_class = S.ReviewSerializer
    roles = {"read": Role.REVIEWER}


class TrajectoryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    """Tuner runs: curators start them (on the ``tune`` queue); the detail has the explored tree and the
    best-speedup series, updated while the run goes."""

    queryset = Trajectory.objects.select_related("workload")
    roles = {"create": Role.CURATOR}

    def get_serializer_class(self):
        if self.action == "create":
            return S.TrajectoryCreateSerializer
        return S.TrajectoryDetailSerializer if self.action == "retrieve" else S.TrajectorySerializer

    @extend_schema(request=S.TrajectoryCreateSerializer, responses={201: S.TrajectoryDetailSerializer})
    def create(self, request):
        from curation.services import tuning

        data = S.TrajectoryCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            trajectory = tuning.start_trajectory(request.user, **data.validated_data)
        except (ValueError, roles.PermissionDenied) as exc:
            _service_errors(exc)
        return Response(S.TrajectoryDetailSerializer(trajectory).data, status=status.HTTP_201_CREATED)


class ExportViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    """Dataset exports: curators create them (an asynchronous task), everyone downloads the files."""

    queryset = Export.objects.all()
    serializer_class = S.ExportSerializer
    roles = {"create": Role.CURATOR}

    @extend_schema(request=S.ExportCreateSerializer, responses={201: S.ExportSerializer})
    def create(self, request):
        from curation.services import exports

        data = S.ExportCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            export = exports.create_export(request.user, **data.validated_data)
        except (exports.ExportRefused, roles.PermissionDenied) as exc:
            _service_errors(exc)
        return Response(S.ExportSerializer(export).data, status=status.HTTP_201_CREATED)

    @extend_schema(parameters=[OpenApiParameter("name", str, location="path")], responses={200: bytes})
    @action(detail=True, methods=["get"], url_path=r"files/(?P<name>[\w.\-/]+)")
    def download(self, request, pk=None, name=None):
        from curation.services import exports

        try:
            path = exports.file_path(self.get_object(), name)
        except exports.NoSuchFile:
            raise Http404(name) from None
        return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)


class UserViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, Base):
    """Accounts and roles: admins list users and set roles; anyone signed in reads ``me``."""

    queryset = get_user_model().objects.order_by("id")
    serializer_class = S.UserSerializer
    roles = {"read": Role.ADMIN, "me": Role.VIEWER, "role": Role.ADMIN}

    @action(detail=False, methods=["get"])
    def me(self, request):
        return Response(S.UserSerializer(request.user).data)

    @extend_schema(request=S.RoleSerializer, responses={200: S.UserSerializer})
    @action(detail=True, methods=["post"], serializer_class=S.RoleSerializer)
    def role(self, request, pk=None):
        user = self.get_object()
        data = S.RoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        roles.grant(user, Role[data.validated_data["role"].upper()])
        return Response(S.UserSerializer(user).data)
