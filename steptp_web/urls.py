"""URL routes: the project's own pages here; ``curation`` mounts its pages and API when it has them."""

from django.contrib import admin
from django.urls import include, path

from steptp_web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("curation.api.urls")),
]
