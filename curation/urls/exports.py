"""Export routes: the list/create page, one export (page or htmx status fragment), its files."""

from django.urls import path

from curation.views import exports

urlpatterns = [
    path("exports/", exports.export_list, name="exports"),
    path("exports/<int:pk>/", exports.export_detail, name="export"),
    path("exports/<int:pk>/files/<path:name>", exports.export_file, name="export-file"),
]
