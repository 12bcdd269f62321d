"""The Celery application; its configuration is the ``CELERY_*`` block of ``steptp_web.settings``.

Workers pick queues on the command line (``-Q generate,verify.cpu,export,tune`` on CPU nodes,
``-Q verify.cuda`` on GPU nodes). Tasks record their results in the database, never in a result backend.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")

app = Celery("steptp_web")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
