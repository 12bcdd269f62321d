"""Steps search routes (the list; the step page itself belongs to the review area)."""

from django.urls import path

from curation.views import search

urlpatterns = [
    path("steps/", search.steps, name="steps"),
]
