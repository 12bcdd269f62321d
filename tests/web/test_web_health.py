"""/healthz and the status page against the real database and the real broker of this run.

Under ``.ci/run`` that is PostgreSQL and Redis; in a plain ``make test`` it is SQLite and the embedded
filesystem broker. Failures are produced for real: a bound-but-not-listening port refuses connections.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import django
import pytest
from django.db import connection
from django.db.utils import ConnectionHandler

from steptp_web.health import check_database

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A local port that is bound (so nobody else takes it) but never listens: connecting is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_healthz_is_ok_with_the_configured_database_and_broker(client):
    response = client.get("/healthz")

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["database"]["vendor"] == connection.vendor
    assert body["database"]["latency_ms"] >= 0
    assert body["broker"]["ok"] is True
    expected_transport = urlsplit(os.environ.get("CELERY_BROKER_URL", "filesystem://")).scheme
    assert body["broker"]["transport"] == expected_transport
    assert body["broker"]["latency_ms"] >= 0
    assert body["versions"]["Django"] == django.get_version()
    assert body["versions"]["python"].startswith("3.11")


def test_healthz_is_503_and_redacted_when_the_broker_is_unreachable(client, settings, closed_port):
    settings.CELERY_BROKER_URL = f"redis://steptp:s3cret-pw@127.0.0.1:{closed_port}/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    settings.STEPTP_HEALTH_TIMEOUT = 1.0

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is False
    assert "refused" in body["broker"]["error"].lower()
    assert body["broker"]["url"] == f"redis://steptp:**@127.0.0.1:{closed_port}/0"
    assert "s3cret-pw" not in response.content.decode()


def test_healthz_is_503_when_the_embedded_broker_folders_are_missing(client, settings, tmp_path):
    missing = str(tmp_path / "absent")
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": missing, "data_folder_out": missing, "control_folder": missing,
    }

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False
    assert "absent" in response.json()["broker"]["error"]


def test_database_check_reports_an_unreachable_server(closed_port):
    handler = ConnectionHandler({
        "default": {
            "ENGINE": "django.db.backends.postgresql",
            "HOST": "127.0.0.1",
            "PORT": str(closed_port),
            "NAME": "steptp_absent",
            "USER": "postgres",
            "OPTIONS": {"connect_timeout": 2},
        }
    })
    unreachable = handler["default"]
    try:
        result = check_database(unreachable)
    finally:
        unreachable.close()

    assert result["ok"] is False
    assert result["vendor"] == "postgresql"
    assert "OperationalError" in result["error"]


def test_healthz_rejects_writes(client):
    assert client.post("/healthz").status_code == 405


def test_status_page_renders_the_report_and_links_to_healthz(client):
    response = client.get("/status/")

    assert response.status_code == 200
    assert [t.name for t in response.templates][:2] == ["home.html", "base.html"]
    html = response.content.decode()
    assert 'href="/healthz"' in html
    assert "Database" in html and "Broker" in html
    assert connection.vendor in html
    assert "badge-ok" in html
    assert "/static/css/steptp.css" in html
    assert 'href="/accounts/login/"' in html and 'href="/admin/"' not in html  # demo accounts sign in there


def test_healthz_answers_plain_http_when_https_redirect_is_on(client, settings):
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/").status_code == 301
    assert client.get("/").headers["Location"].startswith("https://")
    assert client.get("/healthz").status_code == 200
