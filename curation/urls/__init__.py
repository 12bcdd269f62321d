"""The reviewer pages' routes: one module per area, each with its own ``urlpatterns``."""

from django.urls import include, path

urlpatterns = [
    path("", include("curation.urls.dashboard")),
    path("", include("curation.urls.exports")),
    path("", include("curation.urls.runs")),
    path("", include("curation.urls.workloads")),
    path("", include("curation.urls.search")),
    path("", include("curation.urls.review")),
]
