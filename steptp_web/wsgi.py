"""WSGI entry point (``gunicorn steptp_web.wsgi``)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")

application = get_wsgi_application()
