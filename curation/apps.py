"""App registration for ``curation``."""

from django.apps import AppConfig


class CurationConfig(AppConfig):
    name = "curation"
    verbose_name = "Step-TP curation"
    default_auto_field = "django.db.models.BigAutoField"
