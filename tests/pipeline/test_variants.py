"""Shape variants: declared or conservatively derived ranges, seeded draws, translated through the frontend."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.registry import WorkloadError, get_workload, read_metadata
from workloads.variants import EXTENT_NAMES, derived_ranges, shape_variants, size_ranges


def test_declared_ranges_are_read_from_the_metadata():
    info = get_workload("level2/conv2d_groupnorm_silu")
    assert info.size_ranges["OUT_CHANNELS"] == (4, 16, 4)  # stays divisible by GroupNorm's 4 groups
    assert size_ranges(info) == info.size_ranges


def test_derived_ranges_touch_only_plain_extents_and_keep_their_power_of_two():
    info = get_workload("level1/conv2d")
    ranges = derived_ranges(info)
    assert ranges and set(ranges) <= EXTENT_NAMES
    assert "KERNEL_SIZE" not in ranges
    for name, (low, high, step) in ranges.items():
        default = info.default_shapes[name]
        assert low <= default <= high and default % step == 0 and low % step == 0
        assert high <= default * 1.5


def test_variants_are_seeded_distinct_and_start_with_the_defaults():
    info = get_workload("level1/softmax")
    first = shape_variants(info, 6, seed=1)
    assert first == shape_variants(info, 6, seed=1)
    assert first[0] == {} and len(first) == 6
    assert len({tuple(sorted(v.items())) for v in first}) == 6
    assert shape_variants(info, 6, seed=2) != first
    for variant in first[1:]:
        assert 4 <= variant["BATCH"] <= 32 and variant["BATCH"] % 4 == 0
        assert 64 <= variant["DIM"] <= 512 and variant["DIM"] % 64 == 0


def test_variants_translate_to_programs_of_the_drawn_shapes():
    from steptp_cli.dataset_commands import load_sources

    loaded = load_sources(["level1/softmax"], shapes=3, seed=0, warn=lambda text: None)
    assert [s.info.variant for s in loaded] == [0, 1, 2]
    variants = shape_variants(get_workload("level1/softmax"), 3, seed=0)
    for source, sets in zip(loaded, variants, strict=True):
        assert source.info.sets == sets
        (x,) = [d for d in source.program.signature.tensors if d.role == "input"]
        assert x.shape == (sets.get("BATCH", 16), sets.get("DIM", 256))
    assert len({s.info.hash for s in loaded}) == 3


@pytest.mark.parametrize("ranges, message", [
    ('{"NOPE": [1, 2]}', "not an integer module constant"),
    ('{"BATCH": [4, 2]}', "1 <= low <= high"),
    ('{"BATCH": "big"}', r"\[low, high\] or \[low, high, step\]"),
])
def test_malformed_size_ranges_are_refused(tmp_path, ranges, message):
    source = Path(get_workload("level1/softmax").path).read_text()
    bad = source.replace('"size_ranges": {"BATCH": [4, 32, 4], "DIM": [64, 512, 64]}',
                         f'"size_ranges": {ranges}')
    level = tmp_path / "level1"
    level.mkdir()
    (level / "softmax.py").write_text(bad)
    with pytest.raises(WorkloadError, match=message):
        read_metadata(level / "softmax.py")


def test_scaled_shapes_keep_every_divisibility_the_two_declared_sizes_share():
    from math import gcd

    from workloads.registry import list_workloads
    from workloads.variants import scaled_shapes

    linear = get_workload("level1/linear")  # 96 -> 4,096 outputs: a raw geometric midpoint is 627
    assert scaled_shapes(linear, 0.5)["OUT_FEATURES"] % 32 == 0
    assert scaled_shapes(linear, 0.0) == {k: linear.default_shapes[k] for k in linear.paper_shapes}
    assert scaled_shapes(linear, 1.0) == linear.paper_shapes
    for info in list_workloads():
        for t in (0.25, 0.5, 0.75):
            for key, size in scaled_shapes(info, t).items():
                default, paper = info.default_shapes[key], info.paper_shapes[key]
                assert size % gcd(default, paper) == 0, (info.id, key, t)
                assert min(default, paper) - gcd(default, paper) < size <= max(default, paper), (info.id, key)
    with pytest.raises(ValueError):
        scaled_shapes(linear, 1.5)
