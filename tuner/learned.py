"""A step-ranking model learned from step records: features, training set, fit, a JSON model file.

The model predicts ``log(speedup)`` of one step from what is known before it is built:

* per ``dataset.effects.FEATURE_KEYS`` feature of the cost model, ``log1p`` of the parent's value (the
  state) and ``log1p(child) - log1p(parent)`` (what the step changes), the last of which for
  ``model_seconds`` is the static model's own log-speedup estimate;
* a one-hot of the step's strategy over the registered strategies (sorted names).

The target is the step's speedup behind its verdict (``dataset.effects.best_speedup``: measured when the
record was timed — ``steptp generate --time``, a tuner run's records — else the estimate). Only verified
records with known parent and child features count. Records of held-out workloads
(``tuner.splits``) are refused: a model that chooses the policy's behaviour must not see them.

The learner is scikit-learn's ``Ridge`` on standardised features (a closed-form solve: the same data give
the same coefficients on every run), and the model file is plain JSON — feature names, means, scales,
coefficients, intercept, the training set's size, workloads and SHA-256 — written with sorted keys and
rounded numbers, so the same records and seed give the same bytes, and loading it needs no pickle and no
scikit-learn (``predict`` is a dot product).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.effects import FEATURE_KEYS, best_speedup

MODEL_FORMAT = "steptp-step-ranker"
MODEL_VERSION = 1
#: Ridge penalty on standardised features.
DEFAULT_ALPHA = 1.0
#: Targets are clipped to ``[1/CLIP, CLIP]`` speedups: one noisy tiny-shape timing must not dominate.
CLIP = 100.0


def strategy_names() -> tuple[str, ...]:
    from strategies.registry import all_strategies

    return tuple(sorted(s.name for s in all_strategies()))


def feature_names(strategies: Sequence[str]) -> list[str]:
    names = [f"parent.{key}" for key in FEATURE_KEYS]
    names += [f"delta.{key}" for key in FEATURE_KEYS]
    names += [f"strategy={name}" for name in strategies]
    return names


def step_vector(parent: Mapping[str, Any], child: Mapping[str, Any], strategy: str,
                strategies: Sequence[str]) -> list[float]:
    """The feature vector of one step (module docstring), in ``feature_names`` order."""
    state = [math.log1p(max(0.0, float(parent[key]))) for key in FEATURE_KEYS]
    delta = [math.log1p(max(0.0, float(child[key]))) - before
             for key, before in zip(FEATURE_KEYS, state, strict=True)]
    return state + delta + [1.0 if strategy == name else 0.0 for name in strategies]


@dataclass(frozen=True)
class Example:
    workload: str | None
    strategy: str
    parent: Mapping[str, Any]
    child: Mapping[str, Any]
    log_speedup: float


def examples(records: Iterable[Mapping[str, Any]], heldout: Iterable[str]) -> list[Example]:
    """Training examples of ``records``; a record of a ``heldout`` workload raises ``ValueError``."""
    refused = set(heldout)
    out = []
    for record in records:
        workload = (record.get("source") or {}).get("workload")
        if workload in refused:
            raise ValueError(f"record {record.get('step_id')} is from held-out workload {workload}: a "
                             "policy's model may be fitted on fitting workloads only (tuner.splits)")
        if record.get("status") != "verified":
            continue
        effect = record.get("effect") or {}
        estimate = effect.get("estimate") or {}
        speedup = best_speedup(effect)
        parent, child = estimate.get("parent"), estimate.get("child")
        if speedup is None or speedup <= 0 or not parent or not child:
            continue
        clipped = min(CLIP, max(1.0 / CLIP, speedup))
        out.append(Example(workload, str(record["strategy"]), parent, child, math.log(clipped)))
    return out


def _digest(items: list[Example]) -> str:
    text = json.dumps([[e.workload, e.strategy, dict(e.parent), dict(e.child), e.log_speedup] for e in items],
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _r(value: float) -> float:
    return float(f"{value:.9g}")


def fit(items: list[Example], *, seed: int = 0, alpha: float = DEFAULT_ALPHA,
        split_seed: int = 0) -> dict[str, Any]:
    """Fit the ranker on ``items``; the model as a JSON-ready dict (``save``/``load``)."""
    if len(items) < 2:
        raise ValueError(f"{len(items)} usable training records; need at least 2 verified records with an "
                         "effect estimate (steptp generate --time writes them)")
    import numpy as np
    from sklearn.linear_model import Ridge

    strategies = strategy_names()
    # a fixed order whatever order the files came in: the same records give the same model
    ordered = sorted(items, key=lambda e: json.dumps([e.workload, e.strategy, dict(e.parent), dict(e.child),
                                                      e.log_speedup], sort_keys=True))
    x = np.array([step_vector(e.parent, e.child, e.strategy, strategies) for e in ordered], dtype=np.float64)
    y = np.array([e.log_speedup for e in ordered], dtype=np.float64)
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    learner = Ridge(alpha=alpha, random_state=seed, solver="cholesky")
    learner.fit((x - mean) / scale, y)
    predicted = learner.predict((x - mean) / scale)
    residual = float(np.sqrt(np.mean((predicted - y) ** 2)))
    return {"format": MODEL_FORMAT, "version": MODEL_VERSION, "learner": "sklearn.linear_model.Ridge",
            "alpha": alpha, "seed": seed, "split_seed": split_seed, "target": "log(speedup)",
            "features": feature_names(strategies), "mean": [_r(v) for v in mean],
            "scale": [_r(v) for v in scale], "coef": [_r(v) for v in learner.coef_],
            "intercept": _r(float(learner.intercept_)), "strategies": list(strategies),
            "training": {"examples": len(ordered), "workloads": sorted({e.workload or "" for e in ordered}),
                         "sha256": _digest(ordered), "rmse_log": _r(residual)}}


def dumps_model(model: Mapping[str, Any]) -> str:
    return json.dumps(model, sort_keys=True, indent=1) + "\n"


def save(model: Mapping[str, Any], path: str | Path) -> None:
    Path(path).write_text(dumps_model(model), encoding="utf-8")


def load(path: str | Path) -> dict[str, Any]:
    """A model file; a wrong format or version raises ``ValueError`` naming the file."""
    try:
        model: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a readable model file ({exc})") from None
    if model.get("format") != MODEL_FORMAT or model.get("version") != MODEL_VERSION:
        raise ValueError(f"{path}: not a {MODEL_FORMAT} v{MODEL_VERSION} model "
                         "(steptp fit-policy writes one)")
    return model


def predict(model: Mapping[str, Any], parent: Mapping[str, Any], child: Mapping[str, Any],
            strategy: str) -> float:
    """Predicted ``log(speedup)`` of one step."""
    vector = step_vector(parent, child, strategy, model["strategies"])
    total = float(model["intercept"])
    for value, mean, scale, coef in zip(vector, model["mean"], model["scale"], model["coef"], strict=True):
        total += (value - mean) / scale * coef
    return total
