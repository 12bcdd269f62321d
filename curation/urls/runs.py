"""Tuner run routes: the list/start page and one run (page or htmx live fragment) and its downloads."""

from django.urls import path

from curation.views import run_files, runs

urlpatterns = [
    path("runs/", runs.run_list, name="runs"),
    path("runs/<int:pk>/", runs.run_detail, name="run"),
    path("runs/<int:pk>/best.leir", run_files.best_program, name="run-best"),
    path("runs/<int:pk>/files/<str:kind>/", run_files.run_file, name="run-file"),
]
