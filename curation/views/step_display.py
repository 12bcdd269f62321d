"""What the step screen shows, prepared for templates: the diff rows, the problems with carets, the outcome.

Pure presentation: it reads stored rows and ``leir.diff``'s result and returns plain dicts, so the
templates stay free of logic and these helpers can be tested without a request.
"""

from __future__ import annotations

import math
from typing import Any

from curation.models import Step, Verification


def pretty_after(step: Step) -> str:
    """The after-state's body in the pretty form (what the editor starts from; it parses back the same)."""
    from leir.printer import pretty

    return pretty(step.after.as_program())


def diff_rows(step: Step) -> list[dict[str, Any]]:
    """The structural diff of the step's before- and after-state, per block, with the site marked."""
    from leir.diff import diff_programs
    from leir.latex import program_latex

    site = step.site or {}
    before, after = step.before.as_program(), step.after.as_program()
    diff = diff_programs(before, after, site=site.get("path") or None, site_detail=site.get("detail"))
    before_math, after_math = program_latex(before), program_latex(after)
    blocks = []
    for block in diff.blocks:
        blocks.append({"kind": block.kind, "number": block_label(block.before_index, block.after_index),
                       "at_site": block.at_site,
                       "before_index": block.before_index, "after_index": block.after_index,
                       "rows": block.rows,
                       "before_math": "" if block.before_index is None else before_math[block.before_index],
                       "after_math": "" if block.after_index is None else after_math[block.after_index]})
    return blocks


def block_label(before_index: int | None, after_index: int | None) -> str:
    """A block's name on the page, unique among its neighbours: a removed block is named by its place in
    the before-state, an added one by its place in the after-state, a moved one by both (so "Block 4 —
    added" and "Block 4 — unchanged" never name two different blocks)."""
    if after_index is None:
        return f"{before_index + 1} of the before-state" if before_index is not None else "?"
    if before_index is None:
        return f"{after_index + 1} of the after-state"
    if before_index == after_index:
        return str(before_index + 1)
    return f"{before_index + 1} → {after_index + 1}"


def leir_problems(text: str, problems: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each problem with the offending source line and a caret under its column."""
    lines = text.splitlines()
    shown = []
    for problem in problems:
        line, column = int(problem.get("line") or 1), int(problem.get("column") or 1)
        source = lines[line - 1] if 0 < line <= len(lines) else ""
        shown.append({"line": line, "column": column, "message": problem.get("message", ""),
                      "expected": problem.get("expected") or [], "source": source,
                      "caret": " " * max(column - 1, 0) + "^"})
    return shown


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def verification_view(found: Verification | None) -> dict[str, Any] | None:
    """The outcome, errors, tolerance (bound vs measured) and timings of a stored verification."""
    if found is None:
        return None
    result = found.result or {}
    timing = result.get("timing") if isinstance(result.get("timing"), dict) else {}
    outputs = []
    for name, data in sorted((result.get("outputs") or {}).items()):
        outputs.append({"name": name, "method": data.get("method"), "ok": data.get("ok"),
                        "max_abs_error": _number(data.get("max_abs_error")),
                        "max_rel_error": _number(data.get("max_rel_error")),
                        "bound": _number(data.get("bound_at_worst")),
                        "error_at_worst": _number(data.get("error_at_worst")),
                        "ratio": _number(data.get("error_ratio")),
                        "rtol": _number(data.get("rtol")), "atol": _number(data.get("atol")),
                        "mismatches": data.get("mismatches"),
                        "nonfinite_mismatches": data.get("nonfinite_mismatches")})
    timings = [(label, _number(result.get(key))) for label, key in
               (("build", "build_seconds"), ("run + compare", "run_seconds"), ("timing", "time_seconds"))]
    return {
        "row": found, "outcome": found.outcome, "target": found.target, "seed": found.seed,
        "device": found.device, "toolchain": found.toolchain, "at": found.created_at,
        "reference": result.get("reference"), "tolerance": result.get("tolerance"),
        "max_error_ratio": _number(result.get("max_error_ratio")),
        "max_abs_error": found.max_abs_error, "max_rel_error": found.max_rel_error,
        "bitwise_equal_parent": result.get("bitwise_equal_parent"), "outputs": outputs,
        "median_seconds": found.median_seconds,
        "repeats": (timing or {}).get("repeats"),
        "timings": [(label, value) for label, value in timings if value is not None],
        "speedups": [(label, value) for label, value in
                     (("parent", found.speedup_vs_parent), ("source", found.speedup_vs_source),
                      ("PyTorch eager", found.speedup_vs_torch)) if value is not None],
        "error_class": found.error_class, "error": result.get("error") or "",
        "notes": result.get("notes") or [], "log_excerpt": found.log_excerpt,
    }
