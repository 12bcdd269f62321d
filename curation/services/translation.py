"""Translate PyTorch source text to LEIR inside the verifier's sandbox, never in the web or worker process.

Uploaded code is untrusted: loading a KernelBench-style file runs it. So the text is written to a private
temporary directory and translated by a throw-away sandbox worker under a wall-time and memory limit; a
crash, a hang or an exception comes back as a ``TranslationFailure`` with the reason, and the calling
process never imports the user's module.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRANSLATE_TIMEOUT_S = 120.0
TRANSLATE_MEMORY_MB = 4096


@dataclass(frozen=True)
class TranslationFailure:
    """Why a source did not translate (shown on the workload and returned by the API)."""

    reason: str


def _translate_in_sandbox(source: str, filename: str, dtype: str, sets: dict[str, Any]) -> dict[str, Any]:
    """Runs in the sandbox worker: the only place user code executes."""
    from frontend import translate_file
    from leir.program import program_to_json

    with tempfile.TemporaryDirectory(prefix="steptp-upload-") as tmp:
        path = Path(tmp) / filename
        path.write_text(source, encoding="utf-8")
        translation = translate_file(path, sets=sets or None, dtype=dtype)
    return program_to_json(translation.program)


def translate_source(source: str, *, name: str = "upload", dtype: str = "f32",
                     sets: dict[str, Any] | None = None) -> dict[str, Any] | TranslationFailure:
    """The program JSON (``tensors`` + ``leir``) of a source text, or why it failed."""
    from verifier.sandbox import run_isolated

    filename = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name.split("/")[-1]) + ".py"
    result = run_isolated(_translate_in_sandbox, source, filename, dtype, dict(sets or {}),
                          timeout=TRANSLATE_TIMEOUT_S, memory_limit_mb=TRANSLATE_MEMORY_MB)
    if result.ok:
        program: dict[str, Any] = result.value
        return program
    reason = result.error or result.status.value
    return TranslationFailure(f"{result.status.value}: {reason}")
