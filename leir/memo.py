"""Results computed from an immutable LEIR node, kept per node *object* rather than per node value.

A policy call applies hundreds of candidate steps to one state and then asks the same questions of every
state it made: the checker's reading, each strategy's sites, the canonical text of each top-level block,
each block's modelled cost. ``functools.lru_cache`` answers by hashing its argument, and a frozen
dataclass hashes its whole tree on every lookup (nothing caches the hash), so on a 14-block program the
lookups alone cost more than most of the work they saved. Nodes are immutable and rewrites keep the
objects they did not change, so an object identity is as good a key as the value and costs nothing.

Each entry holds its node, so an ``id`` cannot be reused while its entry is kept, and a hit is confirmed
with ``is``. Equal nodes that are distinct objects (a program parsed twice) are computed once each, which
is correct, only not shared.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import wraps
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """A bounded, least-recently-used map from (object identity, extra hashable key) to a value.

    Thread-safe: Celery's thread pool runs several searches in one process.
    """

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._kept: OrderedDict[tuple[int, Hashable], tuple[K, V]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, obj: K, extra: Hashable = None) -> V | None:
        """The value kept for ``obj`` (and ``extra``), or ``None`` (so no value kept may be ``None``)."""
        key = (id(obj), extra)
        with self._lock:
            kept = self._kept.get(key)
            if kept is None or kept[0] is not obj:
                return None
            self._kept.move_to_end(key)
            return kept[1]

    def put(self, obj: K, value: V, extra: Hashable = None) -> V:
        """Keep ``value`` for ``obj`` (dropping the least recently used entry past ``maxsize``)."""
        with self._lock:
            self._kept[(id(obj), extra)] = (obj, value)
            self._kept.move_to_end((id(obj), extra))
            while len(self._kept) > self.maxsize:
                self._kept.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


def memo_by_identity(maxsize: int) -> Callable[[Callable[[K], V]], Callable[[K], V]]:
    """Decorate a one-argument function of an immutable node: its result is kept per argument object
    (``fn.memo`` is the ``IdentityMemo``, for tests and ``fn.memo.clear()``)."""

    def decorate(fn: Callable[[K], V]) -> Callable[[K], V]:
        memo: IdentityMemo[K, V] = IdentityMemo(maxsize)

        @wraps(fn)
        def wrapper(obj: K) -> V:
            found = memo.get(obj)
            if found is not None:
                return found
            return memo.put(obj, fn(obj))

        wrapper.memo = memo  # type: ignore[attr-defined]
        return wrapper

    return decorate
