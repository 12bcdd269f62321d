"""URL routes: the project's own pages here; ``curation`` mounts its pages and API when it has them."""

from django.contrib import admin
from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from steptp_web import views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
]
