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
Outputs and bounds are capped at ``DEFAULT_MAX_BYTES`` of arrays per table (least recently used first out).
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

#: Entries per table; a search's parent and source stay because each hit moves them to the end.
DEFAULT_SIZE = 64
#: Array bytes a table of outputs or bounds may hold (a whole-model program's outputs are large).
DEFAULT_MAX_BYTES = 512 * 2**20


def nbytes(value: Any) -> int:
    """Bytes of the numpy arrays in ``value`` (dicts, sequences and dataclass fields are looked into)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, Mapping):
        return sum(nbytes(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(nbytes(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return sum(nbytes(getattr(value, f)) for f in value.__dataclass_fields__)
    return 0


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

    def __init__(self, size: int = DEFAULT_SIZE, max_bytes: int | None = None):
        self.size = size
        #: Evict least recently used entries while the arrays held exceed this (``None``: no cap).
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
        self.sizes: dict[tuple[Hashable, ...], int] = {}
        self.hits = 0
        self.misses = 0

    def get_or(self, key: tuple[Hashable, ...], compute: Callable[[], T], *,
               share: bool = False) -> tuple[T, bool]:
        """(value, hit). ``share``: hand out the stored object itself (for kernels, which are safe to
        share because every run allocates fresh buffers); otherwise a deep copy."""
        if key in self.entries:
            self.entries.move_to_end(key)
            self.hits += 1
            value = self.entries[key]
            return (value if share else copy.deepcopy(value)), True
        self.misses += 1
        value = compute()
        size = nbytes(value) if self.max_bytes is not None else 0
        if self.max_bytes is not None and size > self.max_bytes:
            return value, False  # too large to keep: computed, handed out, not stored
        self.entries[key] = value
        self.sizes[key] = size
        while len(self.entries) > self.size or (self.max_bytes is not None
                                                and sum(self.sizes.values()) > self.max_bytes):
            old, _value = self.entries.popitem(last=False)
            self.sizes.pop(old, None)
        return (value if share else copy.deepcopy(value)), False

    def clear(self) -> None:
        self.entries.clear()
        self.sizes.clear()
        self.hits = self.misses = 0


KERNELS = Memo()
OUTPUTS = Memo(max_bytes=DEFAULT_MAX_BYTES)
BOUNDS = Memo(max_bytes=DEFAULT_MAX_BYTES)
TIMINGS = Memo()
TABLES = {"kernels": KERNELS, "outputs": OUTPUTS, "bounds": BOUNDS, "timings": TIMINGS}


def stats() -> dict[str, dict[str, int]]:
    """Hits, misses and entries per table (in this process)."""
    return {name: {"hits": m.hits, "misses": m.misses, "entries": len(m.entries)}
            for name, m in TABLES.items()}


def clear() -> None:
    for memo in TABLES.values():
        memo.clear()
