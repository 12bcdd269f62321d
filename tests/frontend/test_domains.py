"""What ``frontend.domains`` records of a source's ``get_inputs()`` (the verifier draws inputs from it)."""

from __future__ import annotations

from pathlib import Path

import torch

from frontend import translate_file
from frontend.domains import _domain

SOURCE = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, index, mask, p, whole, ones):
        return x.index_add(0, index, x[:4]).masked_fill(mask, 0.0) * torch.log(p) + whole + ones


def get_inputs():
    return [torch.randn(16, 8), torch.randint(0, 16, (4,)), torch.rand(16, 8) > 0.5, torch.rand(16, 8),
            torch.randint(-3, 4, (16, 8)).float(), torch.ones(16, 8)]


def get_init_inputs():
    return []
'''


def test_each_kind_of_input_gets_its_domain(tmp_path: Path):
    path = tmp_path / "mixed.py"
    path.write_text(SOURCE)
    translation = translate_file(path)
    by_position = dict(zip(translation.input_positions, translation.input_names, strict=True))
    domains = {position: translation.input_domains.get(name) for position, name in by_position.items()}
    assert domains[0] is None  # randn: unbounded, the verifier's normal draw
    assert domains[1]["kind"] == "int" and 0 <= domains[1]["low"] <= domains[1]["high"] <= 15
    assert domains[2] == {"kind": "bool", "low": None, "high": None}
    assert domains[3]["kind"] == "float" and 0.0 <= domains[3]["low"] < domains[3]["high"] < 1.0
    assert domains[4]["kind"] == "int" and -3 <= domains[4]["low"] < domains[4]["high"] <= 3
    assert domains[5] == {"kind": "int", "low": 1, "high": 1}
    # the same file gives the same domains (seeded draws)
    assert translate_file(path).input_domains == translation.input_domains


def test_observation_rules():
    assert _domain([torch.tensor([-0.5, 0.25])]) == {"kind": "float", "low": -0.5, "high": 0.25}
    assert _domain([torch.tensor([-2.5, 0.25])]) is None
    assert _domain([torch.tensor([float("nan"), 0.25])]) is None
    assert _domain([torch.tensor([3, 7]), torch.tensor([1])]) == {"kind": "int", "low": 1, "high": 7}
