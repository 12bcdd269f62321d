"""Settings read from the environment: parsing rules, the database choice, and ``check --deploy``."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import dj_database_url
import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.db import connection

from steptp_web.env import env_bool, env_list, security_settings
from steptp_web.test_processes import isolate_test_process, redis_database_per_process

#: What ``check --deploy`` still reports for the local demo (DEBUG on, dev key, plain HTTP); each one is
#: explained in docs/operations.md. Production settings must report none of them.
DEMO_DEPLOY_WARNINGS = {
    "security.W004", "security.W008", "security.W009", "security.W012", "security.W016", "security.W018",
}


def test_env_bool_accepts_the_usual_spellings_and_refuses_typos():
    assert env_bool("X", False, {"X": "Yes"}) is True
    assert env_bool("X", True, {"X": "0"}) is False
    assert env_bool("X", True, {}) is True
    with pytest.raises(ValueError, match="not a boolean"):
        env_bool("X", False, {"X": "ture"})


def test_each_test_process_gets_its_own_redis_database():
    assert redis_database_per_process("redis://127.0.0.1:6379/0", 1) == "redis://127.0.0.1:6379/1"
    assert redis_database_per_process("redis://:pw@h:6380/3", 2) == "redis://:pw@h:6380/5"
    assert redis_database_per_process("redis://h:6379", 1) == "redis://h:6379/1"
    assert redis_database_per_process("amqp://guest:guest@h:5672//", 1) == "amqp://guest:guest@h:5672//"
    assert redis_database_per_process("filesystem://localhost/", 1) == "filesystem://localhost/"


def test_a_test_process_moves_its_var_folder_cpu_lock_and_redis_database_and_nothing_else(tmp_path):
    environ = {"PYTEST_XDIST_WORKER": "gw1", "STEPTP_VAR_DIR": str(tmp_path),
               "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://h/db"}
    isolate_test_process(environ)
    own = tmp_path / "test-processes" / "gw1"
    assert environ == {"PYTEST_XDIST_WORKER": "gw1", "STEPTP_VAR_DIR": str(own),
                       "STEPTP_CPU_LOCK": str(own / "cpu.lock"),
                       "CELERY_BROKER_URL": "redis://127.0.0.1:6379/1", "DATABASE_URL": "postgres://h/db"}
    assert own.is_dir()
    outside_xdist = {"STEPTP_VAR_DIR": str(tmp_path)}
    isolate_test_process(outside_xdist)
    assert outside_xdist == {"STEPTP_VAR_DIR": str(tmp_path)}


def test_env_list_drops_blanks():
    assert env_list("H", ["d"], {"H": " a.example, b.example ,"}) == ["a.example", "b.example"]
    assert env_list("H", ["d"], {}) == ["d"]


def test_security_settings_are_strict_unless_debug_and_overridable():
    prod = security_settings(False, {})
    assert prod["SECURE_SSL_REDIRECT"] is True
    assert prod["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert prod["SESSION_COOKIE_SECURE"] is True and prod["CSRF_COOKIE_SECURE"] is True
    demo = security_settings(True, {})
    assert demo["SECURE_SSL_REDIRECT"] is False and demo["SECURE_HSTS_SECONDS"] == 0
    behind_proxy = security_settings(False, {"SECURE_SSL_REDIRECT": "0", "SECURE_PROXY_SSL_HEADER": "1"})
    assert behind_proxy["SECURE_SSL_REDIRECT"] is False
    assert behind_proxy["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")


def test_database_vendor_is_the_one_database_url_names():
    url = os.environ.get("DATABASE_URL")
    if os.environ.get("CI"):
        assert url, "CI must run the suite against PostgreSQL (DATABASE_URL is unset)"
    expected = dj_database_url.parse(url)["ENGINE"].rsplit(".", 1)[-1] if url else "sqlite3"
    assert connection.vendor == {"postgresql": "postgresql", "sqlite3": "sqlite"}.get(expected, expected)


def test_check_deploy_is_clean_with_production_settings(settings):
    settings.DEBUG = False
    settings.SECRET_KEY = secrets.token_urlsafe(50)
    for name, value in security_settings(False, {}).items():
        setattr(settings, name, value)

    # fail_level=WARNING turns any deployment warning into a SystemCheckError.
    call_command("check", deploy=True, fail_level="WARNING")
    assert run_checks(include_deployment_checks=True) == []


def test_check_deploy_in_demo_mode_reports_only_the_documented_warnings(settings):
    settings.DEBUG = True
    settings.SECRET_KEY = "django-insecure-steptp-local-demo-key-do-not-use-in-production"
    for name, value in security_settings(True, {}).items():
        setattr(settings, name, value)

    found = {message.id for message in run_checks(include_deployment_checks=True)}
    assert found == DEMO_DEPLOY_WARNINGS


def _manage(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )


def test_manage_check_deploy_from_the_environment_with_debug_off(repo_root):
    env = {**os.environ, "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50)}

    result = _manage(repo_root, "check", "--deploy", "--fail-level", "WARNING", env=env)

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_debug_off_without_a_secret_key_refuses_to_start(repo_root):
    env = {key: value for key, value in os.environ.items() if key != "SECRET_KEY"}
    env["DEBUG"] = "0"

    result = _manage(repo_root, "check", env=env)

    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr
