"""Workload routes."""

from django.urls import path

from curation.views import workloads

urlpatterns = [
    path("workloads/", workloads.workload_list, name="workloads"),
    path("workloads/<int:pk>/", workloads.workload_detail, name="workload"),
    path("workloads/<int:pk>/state/", workloads.workload_state, name="workload-state"),
    path("workloads/<int:pk>/generate/", workloads.workload_generate, name="generate-steps"),
    path("workloads/<int:pk>/retry-translation/", workloads.workload_retry_translation,
         name="retry-translation"),
]
