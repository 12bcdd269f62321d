"""bench/heldout.py: the size shrinking a held-out sweep relies on, and one file through the real path.

The modules here are ours (tiny KernelBench-style files written in the test), never public problem files.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _load_heldout():
    spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "bench" / "heldout.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


heldout = _load_heldout()

SOURCE = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return torch.relu(self.norm(x))


batch_size = 1024 * 2
channels = 256
groups = 8
depth, height, width = 16, 48, 96
odd = 4095
shape = (channels, 1, 1)
kernel_size = 3
flag = True


def get_inputs():
    return [torch.rand(batch_size, channels, 224, width)]


def get_init_inputs():
    return [channels, groups]
'''


def test_constants_follow_the_files_own_arithmetic_and_every_binding_form():
    constants = heldout.module_constants(SOURCE)
    assert constants["batch_size"] == 2048
    assert (constants["depth"], constants["height"], constants["width"]) == (16, 48, 96)
    assert constants["shape"] == (256, 1, 1)
    assert "flag" not in constants  # a bool is not a size


def test_first_attempt_shrinks_only_large_sizes_and_keeps_powers_of_two():
    sets = heldout.shrunk_sets(SOURCE, 32)
    assert sets["batch_size"] == 32 and sets["channels"] == 32 and sets["shape"] == (32, 1, 1)
    assert sets["width"] == 24  # 96 = 3 * 32: halved while even and above the limit
    assert sets["odd"] == 31  # odd and still too large: limit - 1
    for kept in ("groups", "depth", "height", "kernel_size"):  # under 64: as written
        assert kept not in sets
    assert sets["channels"] % 8 == 0  # GroupNorm's divisibility survives


def test_retries_also_shrink_mid_sizes():
    sets = heldout.shrunk_sets(SOURCE, 8)
    assert (sets["depth"], sets["height"], sets["channels"]) == (8, 6, 8)
    assert "kernel_size" not in sets


def test_list_sizes_shrink_and_stay_lists():
    # whole models take their layer widths as a list; --set gives the list back as a list
    source = "layer_sizes = [16384, 16384]\nrepeats = [3, 4, 23, 3]\nnames = ['a']\nempty = []\n"
    constants = heldout.module_constants(source)
    assert "names" not in constants and "empty" not in constants
    sets = heldout.shrunk_sets(source, 32)
    assert sets == {"layer_sizes": [32, 32]}  # block counts under 64 stay as written
    assert heldout.uniform_factor(source) == 512


def test_exact_retry_keeps_the_odd_part_of_every_size():
    # ShuffleNet-like: 240 and 480 channels, groups=3, out_channels % 4 == 0; 224 is 32 * 7
    source = "in_channels = 240\nout_channels = 480\ngroups = 3\nheight = 224\nbatch_size = 10\n"
    assert heldout.uniform_factor(source) == 16  # 480 // 16 = 30: not a multiple of 4
    assert heldout.exact_factor(source) == 16  # 240 = 16 * 15 (sizes under 64 do not count)
    source += "num_classes = 1000\n"  # 8 * 125
    assert heldout.uniform_factor(source) == 32 and heldout.exact_factor(source) == 8
    sets = heldout.shrunk_sets(source, heldout.EXACT)
    assert sets == {"in_channels": 30, "out_channels": 60, "height": 28, "num_classes": 125}


def test_a_file_that_does_not_parse_has_nothing_to_shrink():
    broken = "batch_size = 2048\ndef get_inputs():\n    x = 1\n  return [x]\n"
    assert heldout.shrunk_sets(broken, 32) == {} and heldout.shrunk_input_shapes(broken, 32) == {}


def test_full_input_attempt_keeps_constants_and_sizes_with_a_batch_of_one():
    # AlexNet-like: nn.Linear(256 * 6 * 6, ...) needs the 224x224 image; only the batch comes down
    assert heldout.shrunk_sets(SOURCE, heldout.FULL_INPUTS) == {}
    assert heldout.shrunk_input_shapes(SOURCE, heldout.FULL_INPUTS) == {0: (1, 256, 224, 96)}


def test_literal_sizes_inside_get_inputs_become_an_input_shape():
    assert heldout.shrunk_input_shapes(SOURCE, 32) == {0: (32, 32, 28, 24)}


def test_uniform_retry_divides_every_size_by_one_factor():
    # 4095 is the largest size: factor 128 brings it to 31; ratios between sizes survive
    assert heldout.uniform_factor(SOURCE) == 128
    sets = heldout.shrunk_sets(SOURCE, heldout.UNIFORM)
    assert (sets["batch_size"], sets["channels"], sets["height"], sets["width"]) == (16, 2, 1, 1)
    assert "kernel_size" not in sets and sets["groups"] == 1  # 8 // 128, kept at least 1
    assert heldout.shrunk_input_shapes(SOURCE, heldout.UNIFORM) == {0: (16, 2, 1, 1)}


def test_failures_group_by_operator_or_message_words():
    family = heldout._family("UnsupportedOperatorError", "m.py:3: unsupported operator lgamma: no closed form")
    assert family == "UnsupportedOperatorError: lgamma"
    assert heldout._family("fail", "max_abs_error=0.5 at /tmp/x.py") == "fail: max_abs_error=# at #"


def test_one_file_translates_and_verifies_against_pytorch(tmp_path):
    path = tmp_path / "group_norm_relu.py"
    path.write_text(SOURCE, encoding="utf-8")
    row = heldout.run_one(path, 16, timeout=300)
    assert row["translated"] and row["verified"], row
    assert row["outcome"] == "pass"
    assert row["input_shapes"] == {0: (16, 16, 14, 12)}


WRAPPED = '''import torch


class Model(torch.nn.Module):
    def forward(self, mask, x, p, sign):
        return torch.logical_and(mask, x > 0).float() * p * sign


def get_inputs():
    scale = torch.rand(())
    sign = torch.randint(0, 2, (256, 1)).float() * 2 - 1
    return [torch.rand(256, 512, 1) > 0.5, 2 * torch.rand(1, 512, 96), (torch.rand(1, 512, 96) * scale).softmax(dim=-1),
            sign.reshape(256, 1, 1)]


def get_init_inputs():
    return []
'''


def test_literal_sizes_wrapped_in_arithmetic_and_comparisons_shrink_too():
    # public files wrap the creating call: a comparison for a mask, a scale, a softmax, a sign flip
    assert heldout.shrunk_input_shapes(WRAPPED, 32) == {0: (32, 32, 1), 1: (1, 32, 24), 2: (1, 32, 24)}
    # the sign's (256, 1) is not returned as created (a reshape of a name): left to the file
    assert 3 not in heldout.shrunk_input_shapes(WRAPPED, 32)


def test_report_lists_full_size_passes_apart_from_shrunk_ones():
    rows = [
        {"level": "level1", "file": "a.py", "translated": True, "verified": True, "limit": 32,
         "sets": {"N": 32}, "input_shapes": {}},
        {"level": "level1", "file": "b.py", "translated": True, "verified": True, "limit": 32,
         "sets": {}, "input_shapes": {}},
        {"level": "level1", "file": "c.py", "translated": True, "verified": True, "limit": heldout.FULL_INPUTS,
         "sets": {}, "input_shapes": {0: (1, 3, 224, 224)}},
        {"level": "level1", "file": "d.py", "translated": False, "verified": False, "limit": 32,
         "sets": {"N": 32}, "input_shapes": {}, "family": "SourceError: x"},
    ]
    assert [heldout.size_class(r) for r in rows] == ["shrunk", "full", "full, batch 1", "shrunk"]
    text = heldout.summarise(rows)
    header, totals = text.splitlines()[1:3]
    assert header.split()[-5:] == ["shrunk", "full", "full,", "batch", "1"]
    assert totals.split() == ["level1", "4", "3", "3", "(", "75", "%)", "1", "1", "1"]
    assert "verified at full size (not shrunk):\n  level1/b.py (full)\n  level1/c.py (full, batch 1)" in text
    assert "level1/a.py" not in text.split("verified at full size")[1].split("failure families")[0]


def test_wrapped_literal_sizes_run_through_the_real_path(tmp_path):
    path = tmp_path / "masked_scale.py"
    path.write_text(WRAPPED.replace(",\n            sign.reshape(256, 1, 1)]", "]").replace(", sign)", ")")
                    .replace(" * sign\n", "\n"), encoding="utf-8")
    row = heldout.run_one(path, 32, timeout=300)
    assert row["input_shapes"] == {0: (32, 32, 1), 1: (1, 32, 24), 2: (1, 32, 24)}
    assert row["translated"] and row["verified"], row


INDEXED = '''import torch


class Model(torch.nn.Module):
    def forward(self, x, idx, p):
        return torch.gather(x, dim=1, index=idx) * p


def get_inputs():
    x = torch.rand(128, 8192)
    idx = torch.randint(0, 8192, (128, 4096))
    p = torch.abs(torch.rand(128, 4096)) + 1e-2
    return [x, idx, p]


def get_init_inputs():
    return []
'''


def test_sizes_written_only_in_get_inputs_set_the_retry_factors_and_index_bounds_follow():
    # no module-level sizes: the uniform and exact factors come from the literal sizes
    assert heldout.uniform_factor(INDEXED) == 256 and heldout.exact_factor(INDEXED) == 128
    assert heldout.shrunk_input_shapes(INDEXED, heldout.UNIFORM) == {0: (1, 32), 1: (1, 16), 2: (1, 16)}
    # torch.abs(torch.rand(...)) + 1e-2: the size inside the transforming call shrinks with the others
    assert heldout.shrunk_input_shapes(INDEXED, 32) == {0: (32, 32), 1: (32, 32), 2: (32, 32)}
    # randint's bound is the indexed dimension's size: it shrinks with it, or the traced gather fails
    assert "torch.randint(0, 32, (128, 4096))" in heldout.shrunk_index_bounds(INDEXED, 32)
    assert "torch.randint(0, 32, (128, 4096))" in heldout.shrunk_index_bounds(INDEXED, heldout.UNIFORM)
    assert heldout.shrunk_index_bounds(INDEXED, heldout.FULL_INPUTS) == INDEXED
    assert heldout.shrunk_index_bounds(WRAPPED, 32) == WRAPPED  # randint(0, 2, ...): nothing to shrink
    # written sizes that need no shrinking are not an input shape (the row says "full", not "shrunk")
    assert heldout.shrunk_input_shapes(INDEXED.replace("128", "16").replace("8192", "32")
                                       .replace("4096", "16"), 32) == {}


def test_indexed_file_runs_shrunk_through_the_real_path(tmp_path):
    path = tmp_path / "gather_scale.py"
    path.write_text(INDEXED, encoding="utf-8")
    row = heldout.run_one(path, 32, timeout=300)
    assert row["index_bounds_shrunk"] and row["input_shapes"] == {0: (32, 32), 1: (32, 32), 2: (32, 32)}
    assert row["translated"] and row["verified"], row
