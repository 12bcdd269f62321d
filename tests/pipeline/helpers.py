"""Sources and small generations the pipeline tests share (real workloads through the real frontend)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from dataset.generation import GenerationConfig, generate

#: Small built-in workloads with loops of every kind the strategies look for (reductions, elementwise
#: epilogues, a convolution, a matmul): what "everything the suite generates" runs over.
WORKLOADS = ("level1/layer_norm", "level1/softmax", "level1/matmul_tall_skinny", "level2/conv2d_groupnorm_silu")


@cache
def sources(workloads: tuple[str, ...] = WORKLOADS, shapes: int = 1, seed: int = 0) -> tuple:
    from steptp_cli.dataset_commands import load_sources

    return tuple(load_sources(list(workloads), shapes=shapes, seed=seed, warn=lambda text: None))


def unverified_run(path: Path, *, depth: int = 2, seed: int = 0, workloads: tuple[str, ...] = WORKLOADS,
                   **config) -> Path:
    """A generation without verification (fast, deterministic) into ``path``."""
    options = {"breadth_cap": 4, "max_steps_per_state": 40, **config}
    generate(sources(workloads), GenerationConfig(depth=depth, seed=seed, **options), path, verify=None)
    return path
