"""No script folder holds a file named like a standard-library module.

Python puts a script's own folder first on ``sys.path``, so ``bench/math.py`` would be imported by every
other script in ``bench/`` in place of the standard library's ``math`` (``import random`` then fails).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_no_script_shadows_a_standard_library_module():
    scripts = [p for folder in ("bench", "scripts") for p in (REPO / folder).glob("*.py")]
    assert scripts
    shadowing = [str(p.relative_to(REPO)) for p in scripts if p.stem in sys.stdlib_module_names]
    assert shadowing == []
