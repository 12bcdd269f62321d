"""The record of one verification, shaped so it can be cached, stored in the database and printed.

Everything is a plain JSON value (no numpy scalars, no enums on the wire) because the same record goes
into the on-disk result cache, the Django ``Verification`` row and ``steptp verify --json``; a round trip
through ``to_json``/``from_json`` must give back an equal object.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any


def _output_line(name: str, data: dict[str, Any]) -> str:
    """One output's comparison: its errors and, at its worst element, the error against the bound."""
    method = data.get("method", "fixed")
    get = data.get
    line = (f"  {name}: max abs {get('max_abs_error', 0.0):.3e}  max rel {get('max_rel_error', 0.0):.3e}"
            f"  [{method}]")
    if method != "exact" and get("worst_index") is not None:
        line += (f"  worst element {data['worst_index']}: error {get('error_at_worst', 0.0):.3e}"
                 f" vs bound {get('bound_at_worst', 0.0):.3e} (ratio {get('error_ratio', 0.0):.3g})")
        if data.get("count_at_worst") is not None:
            line += (f", {data['count_at_worst']:.3g} roundings of Σ|terms| "
                     f"{data.get('magnitude_at_worst', 0.0):.3e}")
    if get("loose_elements"):
        line += f"; {data['loose_elements']} elements allowed at least their own size"
    mismatches = data.get("mismatches", 0) + data.get("nonfinite_mismatches", 0)
    if mismatches:
        line += f"  — {mismatches} of {data.get('size', 0)} elements outside"
        if data.get("nonfinite_mismatches"):
            line += f" ({data['nonfinite_mismatches']} NaN/inf pattern)"
    return line


class Outcome(StrEnum):
    """What a verification reached, success levels first, then the ways it can fail.

    Success levels, in increasing order of strength: ``build`` (compiled, not run — e.g. cuda on a
    machine without a GPU), ``execute`` (ran, but nothing to compare with), ``pass`` (matched the
    reference within the dtype tolerance), ``equal_pass`` (bitwise identical to the parent state).
    """

    BUILD = "build"
    EXECUTE = "execute"
    PASS = "pass"
    EQUAL_PASS = "equal_pass"
    CHECK_ERROR = "check_error"
    BUILD_ERROR = "build_error"
    RUNTIME_ERROR = "runtime_error"
    CRASH = "crash"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory_limit"
    FAIL = "fail"
    #: The PyTorch reference gave different outputs on repeated runs of the same inputs (duplicate-index
    #: writes on several threads): neither pass nor fail, a note says what changed.
    UNSTABLE_REFERENCE = "unstable_reference"

    @property
    def ok(self) -> bool:
        """True for the outcomes a caller may treat as success (the CLI exits 0 on these)."""
        return self in SUCCESS_OUTCOMES


SUCCESS_OUTCOMES = frozenset({Outcome.BUILD, Outcome.EXECUTE, Outcome.PASS, Outcome.EQUAL_PASS})


@dataclass
class TimingStats:
    """Seconds per call of one timed program, as measured by ``verifier.timing``."""

    median: float
    #: Interquartile range of the repeat means (seconds); robust to the odd noisy repeat.
    iqr: float
    stdev: float
    mean: float
    #: Calls averaged inside one repeat, and how many repeats were taken.
    number: int
    repeats: int
    samples: list[float] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TimingStats:
        return cls(**data)


@dataclass
class VerificationResult:
    """One verification of a LEIR state (against its parent and/or a reference) on one target."""

    outcome: Outcome
    target: str = "llvm"
    program_hash: str = ""
    parent_hash: str | None = None
    seed: int = 0
    special_values: bool = False
    #: What the outputs were compared with: ``torch``, ``interpreter``, ``parent`` or ``none``.
    reference: str = "none"
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    #: How the outputs were held: ``scaled`` (per-element error bound, docs/verification.md), ``fixed``
    #: (per-dtype rtol/atol: the program was too large to bound), ``exact`` (integers), or ``mixed``.
    tolerance: str | None = None
    #: The worst |error| / allowance over every output element (<= 1 passes).
    max_error_ratio: float | None = None
    #: Per-output comparison details (name → ``verifier.compare.Comparison`` as a dict: max errors,
    #: mismatch counts, the method, and the worst element's error, bound, ratio, magnitude and count).
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: True when the outputs were bitwise identical to the parent's (``None``: no parent run).
    bitwise_equal_parent: bool | None = None
    timing: TimingStats | None = None
    parent_timing: TimingStats | None = None
    source_timing: TimingStats | None = None
    torch_timing: TimingStats | None = None
    speedup_vs_parent: float | None = None
    speedup_vs_source: float | None = None
    speedup_vs_torch: float | None = None
    #: True when the binary that was timed, run on the fresh timing inputs, still matched the reference.
    timed_output_ok: bool | None = None
    versions: dict[str, str] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=dict)
    #: Seconds spent building, running (+ comparing) and timing, measured inside the sandbox.
    build_seconds: float | None = None
    run_seconds: float | None = None
    time_seconds: float | None = None
    #: Loops the built kernel does not run as their kind says (``{"loop", "path", "reason"}`` each):
    #: a ``P`` loop that carries a reduction runs serially, so a step adding it has no effect.
    unhonoured_loops: list[dict[str, Any]] = field(default_factory=list)
    #: The ``verifier.errors`` class of a failure (``BuildError``, ``KernelFailure`` …), ``None`` on success.
    error_class: str | None = None
    #: Human-readable notes (skipped reference, cuda without a GPU, the signal of a crash …).
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    log_excerpt: str = ""
    #: Set on the copy returned from the cache; never stored as True.
    cache_hit: bool = False

    @property
    def ok(self) -> bool:
        return self.outcome.ok

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["outcome"] = self.outcome.value
        return data

    def dumps(self) -> str:
        """Deterministic JSON text (sorted keys) — the form stored in the cache."""
        return json.dumps(self.to_json(), sort_keys=True, allow_nan=True)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VerificationResult:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["outcome"] = Outcome(values["outcome"])
        for key in ("timing", "parent_timing", "source_timing", "torch_timing"):
            if isinstance(values.get(key), dict):
                values[key] = TimingStats.from_json(values[key])
        return cls(**values)

    @classmethod
    def loads(cls, text: str) -> VerificationResult:
        return cls.from_json(json.loads(text))

    def summary(self) -> str:
        """A few readable lines for the CLI."""
        lines = [f"outcome: {self.outcome.value}" + ("  (cached)" if self.cache_hit else "")]
        lines.append(f"target: {self.target}   reference: {self.reference}   seed: {self.seed}"
                     + ("   special values" if self.special_values else ""))
        if self.max_abs_error is not None:
            lines.append(f"max abs error: {self.max_abs_error:.3e}   max rel error: {self.max_rel_error:.3e}")
        if self.max_error_ratio is not None:
            lines.append(f"tolerance: {self.tolerance}   worst error/bound: {self.max_error_ratio:.3g}")
        lines.extend(_output_line(name, data) for name, data in sorted(self.outputs.items()))
        if self.bitwise_equal_parent is not None:
            lines.append(f"bitwise equal to parent: {'yes' if self.bitwise_equal_parent else 'no'}")
        if self.timing is not None:
            t = self.timing
            lines.append(f"time: median {t.median * 1e3:.4f} ms  iqr {t.iqr * 1e3:.4f} ms  "
                         f"({t.repeats} repeats x {t.number or 'auto'} calls)")
        for label, value in (("parent", self.speedup_vs_parent), ("source", self.speedup_vs_source),
                             ("pytorch eager", self.speedup_vs_torch)):
            if value is not None:
                lines.append(f"speedup vs {label}: {value:.3f}x")
        if self.timed_output_ok is not None:
            lines.append(f"timed binary re-checked: {'ok' if self.timed_output_ok else 'MISMATCH'}")
        for loop in self.unhonoured_loops:
            block = ".".join(str(p + 1) for p in loop["path"])
            lines.append(f"unhonoured loop: {loop['loop']} in block {block} runs serially: {loop['reason']}")
        if self.error:
            lines.append(f"error: {self.error}")
        lines.extend(f"note: {note}" for note in self.notes)
        if self.versions:
            lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in sorted(self.versions.items())))
        if self.hardware.get("cpu"):
            lines.append(f"cpu: {self.hardware['cpu']}")
        if self.log_excerpt and not self.ok:
            log_lines = self.log_excerpt.splitlines()
            # A crash report is most useful at its top (where it crashed), an exception at its bottom.
            shown = log_lines[:12] if self.outcome is Outcome.CRASH else log_lines[-15:]
            lines.append("log:")
            lines.extend("  " + line for line in shown)
        return "\n".join(lines)
