"""What a warm sandbox worker keeps between jobs, so a search does not redo its parent's and source's work.

A search verifies many children of one parent, all timed against one source program. Per candidate the
job builds the child, its parent and the source, runs the parent on the child's inputs (the expected
outputs), evaluates the parent's rounding-error bound on them, and times the parent and the source. Only
the child is new; the rest depends on nothing but (program, target, inputs), so this module memoises it
in the worker process:

* **kernels** by (program hash, target) — what ``verifier.verify._kernel`` used to keep, now LRU so the
  source, used by every job, is never the entry evicted;
* **outputs** of a kernel by (program hash, target, digest of the input arrays);
* **error bounds** by (program hash, digest of the input arrays) — the float64 evaluation is pure Python
  and often the most expensive part of a small job;
* **timings** by (program hash, target, input digest, repeats, min_repeat_ms) — only when the caller asks
  (``reuse_timings``), because a reused timing was taken in an earlier job, not beside the candidate's.

Every key names the exact inputs by a SHA-256 over the arrays' names, dtypes, shapes and bytes, so a
different seed, shape, dtype or parameter set is a different key: an entry is served only for the very
computation that produced it. Values are handed out as copies, so no caller can change a stored one.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

#: Entries per table; a search's parent and source stay because each hit moves them to the end.
DEFAULT_SIZE = 64


def arrays_digest(arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over every array's name, dtype, shape and bytes (sorted by name)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        value = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{value.dtype.str}|{value.shape}|".encode())
        h.update(value.tobytes())
    return h.hexdigest()


class Memo:
    """A small LRU map with hit/miss counters; ``get_or`` computes and stores on a miss."""

    def __init__(self, size: int = DEFAULT_SIZE):
        self.size = size
        self.entries: OrderedDict[tuple, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get_or(self, key: tuple, compute: Callable[[], T], *, share: bool = False) -> tuple[T, bool]:
        """(value, hit). ``share``: hand out the stored object itself (for kernels, which are safe to
        share because every run allocates fresh buffers); otherwise a deep copy."""
        if key in self.entries:
            self.entries.move_to_end(key)
            self.hits += 1
            value = self.entries[key]
            return (value if share else copy.deepcopy(value)), True
        self.misses += 1
        value = compute()
        self.entries[key] = value
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)
        return (value if share else copy.deepcopy(value)), False

    def clear(self) -> None:
        self.entries.clear()
        self.hits = self.misses = 0


KERNELS = Memo()
OUTPUTS = Memo()
BOUNDS = Memo()
TIMINGS = Memo()
TABLES = {"kernels": KERNELS, "outputs": OUTPUTS, "bounds": BOUNDS, "timings": TIMINGS}


def stats() -> dict[str, dict[str, int]]:
    """Hits, misses and entries per table (in this process)."""
    return {name: {"hits": m.hits, "misses": m.misses, "entries": len(m.entries)}
            for name, m in TABLES.items()}


def clear() -> None:
    for memo in TABLES.values():
        memo.clear()
