"""Run a bench script at another git revision, in the same run: the baseline a ratio is taken against.

Not a benchmark itself (``make bench`` skips ``bench/_*.py``): the helper ``policy_call.py`` and
``math_calls.py`` share for ``--baseline REV``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rows_at_revision(script: str, revision: str, argv: list[str]) -> list[dict]:
    """``script``'s ``--json`` rows measured at ``revision``: a temporary worktree, the current version of
    the script copied into it (so both revisions measure the same way), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="steptp-bench-baseline-"))
    tree = folder / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), revision],
                   check=True, capture_output=True)
    try:
        copied = tree / "bench" / Path(script).name
        shutil.copy(script, copied)
        shutil.copy(__file__, tree / "bench" / Path(__file__).name)
        out = folder / "rows.json"
        subprocess.run([sys.executable, str(copied), *argv, "--json", str(out)], check=True, cwd=tree)
        return json.loads(out.read_text(encoding="utf-8"))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False,
                       capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)
