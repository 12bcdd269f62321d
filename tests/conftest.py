"""Shared pytest configuration for every area's tests.

Django is configured by pytest-django from ``[tool.pytest.ini_options]`` in pyproject.toml
(``DJANGO_SETTINGS_MODULE = "steptp_web.settings"``, ``pythonpath = ["."]``), so tests that use the
database only need the ``django_db`` marker. The shared documents and corpus are located by
``leir.corpus.shared_dir()`` (``$STEPTP_SHARED`` or ``../shared``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root, for tests that run ``manage.py`` or read project files."""
    return REPO_ROOT
