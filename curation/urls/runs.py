"""Tuner run routes: the list/start page and one run (page or htmx live fragment)."""

from django.urls import path

from curation.views import runs

urlpatterns = [
    path("runs/", runs.run_list, name="runs"),
    path("runs/<int:pk>/", runs.run_detail, name="run"),
]
