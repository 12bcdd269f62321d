# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Final-logit soft-capping (Gemma 2) and temperature, then the sampling distribution."""

import torch
import torch.nn as nn

BATCH = 4
VOCAB = 64
SOFTCAP = 30.0
TEMPERATURE = 0.7

STEPTP = {
    "name": "softcap_temperature_softmax",
    "level": 3,
    "tags": ["llm", "sampling", "softmax", "elementwise"],
    "ops": ["truediv", "tanh", "mul", "softmax"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "VOCAB": 256000},
    "description": "softmax(tanh(logits / cap) * cap / temperature).",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits):
        capped = torch.tanh(logits.float() / SOFTCAP) * SOFTCAP  # samplers work on f32 logits
        return torch.softmax(capped / TEMPERATURE, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, VOCAB) * 10]


def get_init_inputs():
    return []
