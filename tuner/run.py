"""One tuning run end to end, and its files: the trajectory (step records), a summary, a transcript.

``tune(...)`` builds the ``Search``, runs the chosen algorithm and returns the search; ``write_run``
writes ``OUT.jsonl`` (every measured step as a step record, in the order measured — loadable by
``load_records``, importable by the backend, renderable by ``steptp render``), ``OUT.summary.json`` (the
best state, the path to it, the budget used, every failed proposal) and, for a policy that keeps one
(``LLMPolicy``), ``OUT.transcript.jsonl`` with every prompt and raw response.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dataset.generation import Source
from dataset.records import dumps
from tuner.files import run_paths
from tuner.search.algorithms import ALGORITHMS
from tuner.search.base import Budget, MeasureFn, Search

if TYPE_CHECKING:
    from tuner.policies.base import Policy


def tune(source: Source, policy: Policy, measurer: MeasureFn, budget: Budget, *, algo: str = "beam",
         seed: int = 0, branch: int = 8, max_depth: int = 8, options: dict[str, Any] | None = None,
         progress: Callable[[Search], None] | None = None) -> Search:
    """Search from ``source`` with ``policy``; ``options`` go to the algorithm (``width`` for beam...)."""
    if algo not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algo!r}; known: {', '.join(ALGORITHMS)}")
    options = dict(options or {})
    described = {k: (v.describe() if hasattr(v, "describe") else v) for k, v in options.items()}
    search = Search(source.program, source.info, policy, measurer, budget, seed=seed, branch=branch,
                    max_depth=max_depth, algo=algo, options=described, progress=progress)
    ALGORITHMS[algo](search, **options)
    return search


def write_run(search: Search, output: str | Path) -> dict[str, Path]:
    """Write the run's files (overwriting); returns their paths."""
    paths = run_paths(output)
    paths["records"].parent.mkdir(parents=True, exist_ok=True)
    with open(paths["records"], "w", encoding="utf-8") as handle:
        for record in search.records:
            handle.write(dumps(record) + "\n")
    paths["summary"].write_text(json.dumps(search.summary(), indent=2, sort_keys=True, default=str) + "\n",
                                encoding="utf-8")
    transcript = getattr(search.policy, "transcript", None)
    if transcript:
        with open(paths["transcript"], "w", encoding="utf-8") as handle:
            for entry in transcript:
                handle.write(json.dumps(entry, sort_keys=True) + "\n")
    else:
        paths.pop("transcript")
    return paths
