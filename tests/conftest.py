"""Shared pytest configuration for every area's tests.

Django is configured by pytest-django from ``[tool.pytest.ini_options]`` in pyproject.toml
(``DJANGO_SETTINGS_MODULE = "steptp_web.settings"``), so tests that use the database only need the
``django_db`` marker. The fixtures below locate files outside the package the same way everywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_dir() -> Path:
    """``../shared`` beside the repository (or ``$STEPTP_SHARED``): documents and the reference corpus."""
    override = os.environ.get("STEPTP_SHARED")
    return Path(override).resolve() if override else (REPO_ROOT / ".." / "shared").resolve()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def shared_path() -> Path:
    """The shared folder; fails loudly (never skips) when it is missing, since CI always provides it."""
    path = shared_dir()
    assert path.is_dir(), f"shared folder not found at {path}; set STEPTP_SHARED or put it beside the repo"
    return path
