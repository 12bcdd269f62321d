"""Content-addressed cache of verification results, so an identical state is never verified twice.

The key is a SHA-256 over everything the result depends on: the canonical program hash, the parent's
hash, the target, the input seed, the special-values flag, what the outputs were compared with (the
reference's identity and the params' digest), whether timing was asked for, the versions of TVM,
tvm-ffi and steptp and the lowering's revision — so upgrading TVM silently invalidates old results
instead of serving them.

Storage is one SQLite file (``$STEPTP_CACHE_DIR/results.sqlite``, default ``var/cache/verify``) in WAL
mode with a busy timeout: several Celery workers or bench processes can read and write it at once, and a
write is a single ``INSERT OR REPLACE`` so a reader sees either the old or the new row, never half.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from verifier.result import Outcome, VerificationResult

DEFAULT_CACHE_DIR = Path("var") / "cache" / "verify"
#: Outcomes that depend on the machine's load or the configured limits rather than on the program alone;
#: never cached, so raising ``STEPTP_VERIFY_TIMEOUT``/``STEPTP_VERIFY_MEMORY_MB`` takes effect at once.
UNCACHED_OUTCOMES = frozenset({Outcome.TIMEOUT, Outcome.MEMORY_LIMIT})


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


#: Revision of what ``verifier.lowering`` emits, bumped when a lowering change alters a kernel's values or
#: speed while the package version stays: 2 = ``erf`` as vectorisable arithmetic (``verifier.vector_math``);
#: 3 = ``exp`` and ``log`` too, and CPU bindings in ``global`` one-element buffers (stack slots);
#: 4 = on the CPU, small on-chip buffers private to the iterations of their block's leading loops are
#: allocated inside those loops (``verifier.storage.StoragePlan.private_copy``); 5 = fp8 tensors as bytes
#: (``verifier.fp8_ops``), and the error bound counts a read rounded into a narrower statement type;
#: 6 = an fp8 store's f32 value is held in a one-element buffer before it is encoded (a bf16 read
#: encoded directly came out wrong on every element).
LOWERING_REVISION = 6


def toolchain_versions() -> dict[str, str]:
    """Versions that change results: read from package metadata (no TVM import in the caller), and the
    lowering's revision (a cached timing of a libm ``erf`` must not stand for today's kernel)."""
    return {"tvm": _version("apache-tvm"), "tvm_ffi": _version("apache-tvm-ffi"),
            "steptp": _version("steptp"), "lowering": str(LOWERING_REVISION)}


def cache_key(*, program_hash: str, parent_hash: str | None, target: str, seed: int, special_values: bool,
              versions: Mapping[str, str], reference: str = "", params_digest: str = "",
              timed: bool = False, inputs: str = "") -> str:
    """The hex digest naming one verification.

    ``inputs`` names what else shaped the inputs (large offset, the source's domains); empty adds
    nothing, so the keys of verifications without it are unchanged.
    """
    parts: dict[str, Any] = {
        "program": program_hash, "parent": parent_hash, "target": target, "seed": int(seed),
        "special_values": bool(special_values), "versions": dict(sorted(versions.items())),
        "reference": reference, "params": params_digest, "timed": bool(timed), "schema": 2,
    }
    if inputs:
        parts["inputs"] = inputs
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def default_cache_dir() -> Path:
    return Path(os.environ.get("STEPTP_CACHE_DIR") or DEFAULT_CACHE_DIR)


class ResultCache:
    """SQLite-backed map from cache key to ``VerificationResult``; safe across processes and threads."""

    def __init__(self, directory: str | os.PathLike[str] | None = None):
        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "results.sqlite"
        self._local = threading.local()
        with self._connect() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, outcome TEXT NOT NULL, "
                         "result TEXT NOT NULL, created REAL NOT NULL DEFAULT (julianday('now')))")

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> VerificationResult | None:
        row = self._connect().execute("SELECT result FROM results WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        result = VerificationResult.loads(row[0])
        result.cache_hit = True
        return result

    def put(self, key: str, result: VerificationResult) -> bool:
        """Store ``result`` unless its outcome is load-dependent; returns whether it was stored."""
        if result.outcome in UNCACHED_OUTCOMES:
            return False
        stored = VerificationResult.from_json(result.to_json())
        stored.cache_hit = False
        self._connect().execute("INSERT OR REPLACE INTO results (key, outcome, result) VALUES (?, ?, ?)",
                                (key, stored.outcome.value, stored.dumps()))
        return True

    def __bool__(self) -> bool:  # an empty cache is still a cache (``cache or default`` must keep it)
        return True

    def __len__(self) -> int:
        return int(self._connect().execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def clear(self) -> None:
        self._connect().execute("DELETE FROM results")

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
