"""Files written for a GPU (``device="cuda"``, ``.cuda()``) load and translate on a CPU-only machine, and a
failing entry point is the file's error, not a crash of steptp."""

from __future__ import annotations

import pytest
import torch

from frontend import SourceError, translate_file
from frontend.loading import load_source

from .sources import write

GPU_FILE = '''\
import torch
import torch.nn as nn

N = 3


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.proj = nn.Linear(features, features).cuda()
        self.register_buffer("shift", torch.ones(features, device="cuda") * 0.5)

    def forward(self, x, y):
        return torch.relu(self.proj(x) + y) - self.shift


def get_inputs():
    x = torch.randn(N, 4, device=torch.device("cuda:0"))
    y = torch.randn(N, 4).cuda()
    return [x, y.to("cuda")]


def get_init_inputs():
    return [4]
'''

BROKEN_INPUTS = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    raise RuntimeError("dataset not found")
'''


def test_cuda_placements_load_on_the_cpu_when_there_is_no_gpu(tmp_path):
    loaded = load_source(write(tmp_path, "gpu.py", GPU_FILE))
    where = "cuda" if torch.cuda.is_available() else "cpu"
    assert [t.device.type for t in loaded.inputs] == [where, where]
    assert {p.device.type for p in loaded.model.parameters()} == {where}
    assert loaded.model.shift.device.type == where


def test_a_cuda_file_translates(tmp_path):
    translation = translate_file(write(tmp_path, "gpu.py", GPU_FILE))
    assert len(translation.input_names) == 2 and len(translation.output_names) == 1
    assert {"linear", "relu"} <= set(translation.ops_seen)


def test_a_failing_get_inputs_is_a_source_error_naming_it(tmp_path):
    with pytest.raises(SourceError, match=r"get_inputs\(\) failed: RuntimeError: dataset not found"):
        load_source(write(tmp_path, "broken.py", BROKEN_INPUTS))
