"""A tqdm progress bar for management commands (writes to stderr; off when not a terminal unless forced)."""

from __future__ import annotations

import sys

from tqdm import tqdm


def bar(total: int | None, desc: str, *, unit: str = "it") -> tqdm:
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, dynamic_ncols=True, leave=True)
