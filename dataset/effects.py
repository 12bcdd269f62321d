"""A step's effect: what the cost model expects of it and, when timed, what it measured.

The record's ``effect`` block (``docs/dataset.md``) is built here from plain numbers, so this module
imports neither the tuner (whose cost model gives the features) nor the verifier (whose timings give the
samples): generation is handed a feature function and the timings, and turns them into verdicts with the
fixed thresholds below, the same way on every machine.

* **estimate**: ``speedup = parent.model_seconds / child.model_seconds``; neutral within
  ``ESTIMATE_NEUTRAL`` (a 5 % modelled change is below what the model can tell apart).
* **measured**: ``speedup = median(parent) / median(child)``; the noise is the parent's own spread
  (a robust standard deviation of its repeats over their median); neutral within
  ``max(MEASURED_NEUTRAL_FLOOR, NOISE_MULTIPLE * noise)``. The confidence is the share of (parent repeat,
  child repeat) pairs whose ratio falls on the verdict's side of that band.
* **verdict**: the measured one when there is one, else the estimate's, else ``unknown``.
* **follow_up**: the fastest verified step taken from this step's after-state in the same file whose
  verdict is ``faster`` (``link_follow_ups``), so a step with no gain of its own that enables one is known.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dataset.records import empty_effect

#: Modelled relative change below which the estimate calls a step neutral.
ESTIMATE_NEUTRAL = 0.05
#: Measured relative change below which a step is neutral however quiet the machine was.
MEASURED_NEUTRAL_FLOOR = 0.03
#: A measured change must exceed this many times the parent's own noise to count as faster or slower.
NOISE_MULTIPLE = 2.0
#: Robust standard deviation from the median absolute deviation (normal distribution).
MAD_TO_SIGMA = 1.4826

FEATURE_KEYS = ("bytes_moved", "reuse_per_element", "innermost_stride", "parallel_width", "vector_width",
                "work", "model_seconds")


def target_family(target: str | None) -> str | None:
    """``llvm`` or ``cuda`` for a verifier target string (``llvm-host`` → ``llvm``), ``None`` otherwise."""
    if not target:
        return None
    if target.startswith("llvm"):
        return "llvm"
    if target.startswith(("cuda", "nvptx")):
        return "cuda"
    return None


def verdict_for(speedup: float, band: float) -> str:
    """``faster`` above ``1 + band``, ``slower`` below ``1 / (1 + band)``, else ``neutral``."""
    if speedup > 1.0 + band:
        return "faster"
    if speedup < 1.0 / (1.0 + band):
        return "slower"
    return "neutral"


def estimate_json(parent: Mapping[str, Any], child: Mapping[str, Any]) -> dict[str, Any]:
    """The ``estimate`` from the parent's and the child's features (``FEATURE_KEYS``)."""
    for features in (parent, child):
        missing = [k for k in FEATURE_KEYS if k not in features]
        if missing:
            raise ValueError(f"features lack {missing}")
    before, after = float(parent["model_seconds"]), float(child["model_seconds"])
    speedup = before / after if after > 0 and before > 0 else 1.0
    return {"parent": {k: parent[k] for k in FEATURE_KEYS}, "child": {k: child[k] for k in FEATURE_KEYS},
            "speedup": _round(speedup), "verdict": verdict_for(speedup, ESTIMATE_NEUTRAL)}


def noise(samples: Sequence[float]) -> float:
    """The relative spread of repeats: robust standard deviation (MAD) over the median (0 for one)."""
    if len(samples) < 2:
        return 0.0
    median = statistics.median(samples)
    mad = statistics.median(abs(s - median) for s in samples)
    return MAD_TO_SIGMA * mad / median if median > 0 else 0.0


def measured_json(parent_samples: Sequence[float], child_samples: Sequence[float]) -> dict[str, Any] | None:
    """The ``measured`` effect from per-call seconds of each repeat; ``None`` without usable samples."""
    parent = [float(s) for s in parent_samples if _positive(s)]
    child = [float(s) for s in child_samples if _positive(s)]
    if not parent or not child:
        return None
    parent_median, child_median = statistics.median(parent), statistics.median(child)
    speedup = parent_median / child_median
    spread = noise(parent)
    band = max(MEASURED_NEUTRAL_FLOOR, NOISE_MULTIPLE * spread)
    verdict = verdict_for(speedup, band)
    agreeing = sum(verdict_for(p / c, band) == verdict for p in parent for c in child)
    return {"parent_seconds": parent_median, "child_seconds": child_median, "speedup": _round(speedup),
            "noise": _round(spread), "repeats": min(len(parent), len(child)), "verdict": verdict,
            "confidence": _round(agreeing / (len(parent) * len(child)))}


def effect_json(target: str | None, estimate: Mapping[str, Any] | None = None,
                measured: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record's ``effect``: the verdict is the measured one when present, else the estimate's."""
    effect = empty_effect(target_family(target))
    effect["estimate"] = dict(estimate) if estimate is not None else None
    effect["measured"] = dict(measured) if measured is not None else None
    source = measured or estimate
    effect["verdict"] = str(source["verdict"]) if source is not None else "unknown"
    return effect


def best_speedup(effect: Mapping[str, Any]) -> float | None:
    """The speedup behind the verdict: measured when there is one, else estimated."""
    for key in ("measured", "estimate"):
        part = effect.get(key)
        if isinstance(part, Mapping):
            value = part.get("speedup")
            if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
                return float(value)
    return None


def follow_ups(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any] | None]:
    """Per step id, its ``follow_up``: among the verified, faster steps taken from its after-state deeper
    in the chain (a larger depth: a step back to an earlier state is no follow-up), the one with the
    highest speedup (ties: the smaller step id); ``None`` when there is none."""
    records = list(records)
    faster: dict[str, list[tuple[float, str, str, int]]] = {}
    for record in records:
        effect = record.get("effect") or {}
        speedup = best_speedup(effect)
        if record.get("status") != "verified" or effect.get("verdict") != "faster" or speedup is None:
            continue
        faster.setdefault(record["parent"]["hash"], []).append(
            (speedup, record["step_id"], record["strategy"], int(record.get("depth", 0))))
    for found in faster.values():
        found.sort(key=lambda c: (-c[0], c[1]))
    out: dict[str, dict[str, Any] | None] = {}
    for record in records:
        child = record.get("child")
        depth = int(record.get("depth", 0))
        best = next((c for c in faster.get(child["hash"], ()) if c[3] > depth), None) if child else None
        out[record["step_id"]] = ({"step_id": best[1], "strategy": best[2], "speedup": best[0]}
                                  if best is not None else None)
    return out


def link_follow_ups(records: list[dict[str, Any]]) -> int:
    """Set every record's ``effect.follow_up`` from the others (``follow_ups``); how many changed."""
    found = follow_ups(records)
    changed = 0
    for record in records:
        effect = record.setdefault("effect", empty_effect())
        value = found.get(record["step_id"])
        if effect.get("follow_up") != value:
            effect["follow_up"] = value
            changed += 1
    return changed


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def _round(value: float) -> float:
    """Six significant digits: the record's bytes do not depend on the last bits of a division."""
    return float(f"{value:.6g}")
