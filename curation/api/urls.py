"""``/api/`` routes (one router) plus the OpenAPI schema and its browsable UI from local assets."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from curation.api import views

router = DefaultRouter()
router.register("workloads", views.WorkloadViewSet)
router.register("states", views.StateViewSet)
router.register("steps", views.StepViewSet, basename="step")
router.register("verifications", views.VerificationViewSet)
router.register("reviews", views.ReviewViewSet)
router.register("trajectories", views.TrajectoryViewSet)
router.register("exports", views.ExportViewSet)
router.register("users", views.UserViewSet)

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include(router.urls)),
]
