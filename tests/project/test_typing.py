"""mypy runs as part of the suite, so `make test` (and CI) enforce the typing contract.

The configuration lives in ``[tool.mypy]`` of pyproject.toml: the strategy engine and the core modules it
is built from (``strategies`` and every module added under it, ``leir.analysis``, ``leir.rewrite``,
``leir.builders``, ``leir.names``) are checked with mypy's strict flags; what they import is followed
with the default rules.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib

from tests.conftest import REPO_ROOT

STRICT = {"strategies", "strategies.*", "leir.analysis", "leir.rewrite", "leir.builders",
          "leir.names"}


def test_the_strict_packages_are_configured_strict():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = [o for o in config["overrides"] if o.get("disallow_untyped_defs") and o.get("warn_return_any")]
    assert strict, "no strict override in [tool.mypy]"
    assert set(strict[0]["module"]) >= STRICT
    # the files mypy checks include every strategy module, whoever adds it
    assert "strategies" in config["files"]


def test_mypy_passes():
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
