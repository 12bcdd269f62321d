"""Review-core routes: the queue (``queue``), the step screen (``step``) and its actions."""

from django.urls import path

from curation.views import review

urlpatterns = [
    path("review/", review.queue, name="queue"),
    path("review/next/", review.next_step, name="review-next"),
    path("review/undo/", review.undo, name="review-undo"),
    path("steps/<int:pk>/", review.step_page, name="step"),
    path("steps/<int:pk>/verdict/", review.verdict, name="review-verdict"),
    path("steps/<int:pk>/review/", review.review, name="review-decide"),
    path("steps/<int:pk>/verify/", review.rerun, name="review-verify"),
    path("steps/<int:pk>/trace/", review.edit_trace, name="review-trace"),
    path("steps/<int:pk>/leir/", review.edit_leir, name="review-leir"),
    path("steps/<int:pk>/leir/check/", review.check_leir, name="review-leir-check"),
    path("steps/<int:pk>/discard/", review.discard, name="review-discard"),
    path("steps/<int:pk>/conflict/<str:field>/", review.conflict_page, name="review-conflict"),
]
