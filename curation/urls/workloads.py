"""Workload routes."""

from django.urls import path

from curation.views import workloads

urlpatterns = [
    path("workloads/", workloads.workload_list, name="workloads"),
    path("workloads/<int:pk>/", workloads.workload_detail, name="workload"),
]
