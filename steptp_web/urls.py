"""URL routes: the status page and probe, auth, admin, the API, and the reviewer pages at the root."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from steptp_web import views

urlpatterns = [
    path("status/", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    path("api/", include("curation.api.urls")),
    path("", include("curation.urls")),
]
