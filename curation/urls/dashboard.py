"""Dashboard routes."""

from django.urls import path

from curation.views import dashboard

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
]
