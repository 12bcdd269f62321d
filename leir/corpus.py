"""The public compatibility corpus (``../shared/corpus/steptp-reference.jsonl``), read at run time.

The corpus is real LEIR that nobody here wrote, so every layer tests itself against it: the parser and
printers (byte-identical round trip), the checker, the interpreter and the TVM lowering. It is never
copied into the project; ``STEPTP_SHARED`` points elsewhere when the checkout has no ``../shared``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from leir.ast import Program
from leir.program import program_from_json

CORPUS_FILE = "corpus/steptp-reference.jsonl"


@dataclass(frozen=True)
class CorpusEntry:
    """One corpus row: its id, the reference workload it came from, the text and the parsed program."""

    id: str
    source: str
    leir: str
    program: Program
    ops: tuple[str, ...]

    @property
    def dtype(self) -> str:
        return self.id.rsplit("@", 1)[-1]


def shared_dir() -> Path:
    """``$STEPTP_SHARED`` if set, else the ``shared`` folder beside the repository root."""
    env = os.environ.get("STEPTP_SHARED")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "shared"


def corpus_path() -> Path:
    return shared_dir() / CORPUS_FILE


@lru_cache(maxsize=2)
def _load(path: str) -> tuple[CorpusEntry, ...]:
    entries = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            row = json.loads(line)
            entries.append(
                CorpusEntry(
                    id=row["id"],
                    source=row.get("source", ""),
                    leir=row["leir"],
                    program=program_from_json(row),
                    ops=tuple(row.get("ops", ())),
                )
            )
    return tuple(entries)


def load_corpus(path: str | Path | None = None) -> list[CorpusEntry]:
    """Every corpus entry in file order (parsed once per process and cached)."""
    target = Path(path) if path is not None else corpus_path()
    if not target.exists():
        raise FileNotFoundError(
            f"LEIR corpus not found at {target}; set STEPTP_SHARED to the folder that holds corpus/"
        )
    return list(_load(str(target)))
