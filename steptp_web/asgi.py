"""ASGI entry point (``uvicorn steptp_web.asgi:application``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")

application = get_asgi_application()
