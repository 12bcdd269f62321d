"""The names of a tuning run's files, apart from the code that writes them.

Kept free of heavy imports so the web app can find (and serve) a run's files without loading the tuner.
"""

from __future__ import annotations

from pathlib import Path


def run_paths(output: str | Path) -> dict[str, Path]:
    """``records`` (OUT.jsonl), ``summary`` (OUT.summary.json) and ``transcript`` (OUT.transcript.jsonl)."""
    out = Path(output)
    stem = out.with_suffix("") if out.suffix == ".jsonl" else out
    return {"records": out, "summary": Path(f"{stem}.summary.json"),
            "transcript": Path(f"{stem}.transcript.jsonl")}
