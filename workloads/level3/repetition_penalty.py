# Copyright steptp authors.
# SPDX-License-Identifier: Apache-2.0
"""Repetition penalty (CTRL / HF RepetitionPenaltyLogitsProcessor): the logits of already generated
tokens are gathered, divided (if positive) or multiplied (if not) by the penalty, and scattered back."""

import torch
import torch.nn as nn

BATCH = 4
VOCAB = 64
HISTORY = 8
PENALTY = 1.2

STEPTP = {
    "name": "repetition_penalty",
    "level": 3,
    "tags": ["llm", "sampling", "gather", "scatter"],
    "ops": ["gather", "where", "lt", "mul", "truediv", "scatter"],
    "license": "Apache-2.0",
    "paper_shapes": {"BATCH": 256, "VOCAB": 128256, "HISTORY": 2048},
    "description": "score = gather(logits, ids); where(score < 0, score * p, score / p); scatter back.",
}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, logits, token_ids):
        score = torch.gather(logits, 1, token_ids)
        score = torch.where(score < 0, score * PENALTY, score / PENALTY)
        return logits.scatter(1, token_ids, score)


def get_inputs():
    return [torch.randn(BATCH, VOCAB), torch.randint(0, VOCAB, (BATCH, HISTORY))]


def get_init_inputs():
    return []
