"""Seeded shape variants of a workload: one source program becomes many source states.

The public dataset draws about sixty shape variants per source program. ``shape_variants(info, k, seed)``
returns ``k`` distinct ``--set`` dictionaries: the first is always the file's defaults (``{}``), the
others are drawn from the workload's size ranges with an RNG seeded by the seed and the workload id.

Ranges come from ``STEPTP["size_ranges"]`` when the file declares them (``{NAME: [low, high, step]}``,
for constants that must stay divisible, such as channels split into groups). Otherwise they are derived
conservatively: only constants that name a plain extent (batch, height, width, sequence, rows,
features …) vary, between half and one and a half times the default, in steps of the largest power of
two (at most 8) dividing the default, so factorisations that tiling and vectorisation use survive. Kernel
sizes, strides, heads, groups and scalars are never touched. The caller (``steptp generate``) bounds the
cost of what it translates, so a draw that is too large is dropped there, not here.

Torch-free: only the metadata is read.
"""

from __future__ import annotations

import math
import random

from workloads.registry import WorkloadInfo

#: Constants that are plain extents, safe to vary independently (others may have to divide each other).
EXTENT_NAMES = frozenset({
    "BATCH", "HEIGHT", "WIDTH", "DEPTH", "LENGTH", "SEQ", "SEQ_Q", "SEQ_K", "SEQ_KV", "ROWS", "COLS",
    "N", "M", "K", "IN_FEATURES", "OUT_FEATURES", "DIM1", "DIM2",
})
MAX_STEP = 8


def _power_of_two_step(value: int) -> int:
    step = 1
    while value % (step * 2) == 0 and step * 2 <= MAX_STEP:
        step *= 2
    return step


def derived_ranges(info: WorkloadInfo) -> dict[str, tuple[int, int, int]]:
    """Ranges for the extent constants of a workload that declares none (see the module docstring)."""
    ranges = {}
    for name, value in info.default_shapes.items():
        if name not in EXTENT_NAMES or not isinstance(value, int) or value < 2:
            continue
        step = _power_of_two_step(value)
        low = max(step, (value // 2) // step * step)
        high = max(low, (value + value // 2) // step * step)
        if high > low:
            ranges[name] = (low, high, step)
    return ranges


def size_ranges(info: WorkloadInfo) -> dict[str, tuple[int, int, int]]:
    """The declared ranges, or the derived ones when the workload declares none."""
    return dict(info.size_ranges) if info.size_ranges else derived_ranges(info)


def _draw(ranges: dict[str, tuple[int, int, int]], rng: random.Random) -> dict[str, int]:
    return {name: rng.randrange(low, high + 1, step) for name, (low, high, step) in sorted(ranges.items())}


def shape_variants(info: WorkloadInfo, count: int, seed: int, *, attempts_per_variant: int = 20
                   ) -> list[dict[str, int]]:
    """``count`` distinct ``--set`` dicts (fewer when the ranges hold fewer); the first is ``{}``."""
    variants: list[dict[str, int]] = [{}]
    if count <= 1:
        return variants[:count]
    ranges = size_ranges(info)
    if not ranges:
        return variants
    rng = random.Random(f"{seed}|shapes|{info.id}")
    seen = {tuple(sorted((k, info.default_shapes[k]) for k in ranges))}
    for _ in range(count * attempts_per_variant):
        if len(variants) >= count:
            break
        drawn = _draw(ranges, rng)
        key = tuple(sorted(drawn.items()))
        if key in seen:
            continue
        seen.add(key)
        variants.append(drawn)
    return variants


def scaled_shapes(info: WorkloadInfo, t: float) -> dict[str, int]:
    """The sizes ``t`` of the way (geometrically, 0..1) from ``default_shapes`` to ``paper_shapes``.

    Used where timing must be meaningful against PyTorch eager (its per-call overhead dominates at the
    tiny defaults): ``bench/tune.py`` and ``steptp evaluate-multi --shape-t``. Integer sizes only, each
    rounded to the nearest multiple of ``gcd(default, paper)``: a point between two sizes that are both
    multiples of 32 is one too, so every divisibility the declared sizes share (groups, heads, the vector
    widths a tuned kernel splits by) holds at every point — a raw geometric point (627 = 3·11·19 between
    96 and 4,096) would leave a search no vector-width split.
    """
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"t must be in [0, 1], got {t}")
    sets = {}
    for key, paper in info.paper_shapes.items():
        default = info.default_shapes.get(key)
        if isinstance(paper, int) and isinstance(default, int) and default > 0 and paper > 0:
            unit = math.gcd(default, paper)
            sets[key] = max(unit, unit * round(default * (paper / default) ** t / unit))
    return sets
