"""The steptp Django project: settings, URL routing, the Celery app and the WSGI/ASGI entry points.

This package is wiring only. Domain behaviour lives below it (``curation`` for the database-backed
workflow, ``tuner``, ``verifier`` and ``leir`` for the libraries); the project adds configuration read
from the environment and the ``/healthz`` probe that tells an operator whether the database and the
broker answer. Importing the package loads the Celery app so ``@shared_task`` functions bind to it.
"""

from steptp_web.celery import app as celery_app

__all__ = ("celery_app",)
