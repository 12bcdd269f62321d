"""Default output follows the public reference converter's style: for modules equivalent to some of the
corpus's sources, the canonical text is byte-identical to the corpus string (names, loops, block forms)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from frontend import translate_module
from frontend.names import tensor_names
from leir.corpus import load_corpus
from leir.printer import canonical


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


class Hinge(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


class Matmul(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


@pytest.fixture(scope="module")
def corpus():
    return {entry.id: entry for entry in load_corpus()}


@pytest.mark.parametrize("corpus_id, model, shapes", [
    ("level1/2/softmax@f64", Softmax, [(16, 16384)]),
    ("level1/3/Hingeloss@f64", Hinge, [(128, 1), (128, 1)]),
    ("level1/0/Matmul3D@f64", Matmul, [(16, 1024, 512), (512, 768)]),
])
def test_matches_the_reference_converter_byte_for_byte(corpus, corpus_id, model, shapes):
    inputs = [torch.randn(*s, dtype=torch.float64) for s in shapes]
    translation = translate_module(model().double(), inputs)
    assert canonical(translation.program.body) == corpus[corpus_id].leir
    expected_sig = [(d.name, d.role, d.shape) for d in corpus[corpus_id].program.signature.tensors]
    assert [(d.name, d.role, d.shape) for d in translation.program.signature.tensors] == expected_sig


def test_tensor_name_sequence_continues_like_the_corpus(corpus):
    """Every name the corpus uses appears in our sequence, and the two-letter ones in corpus order."""
    names = list(tensor_names())[:500]
    used = set()
    for entry in corpus.values():
        used |= set(entry.program.signature.names)
    assert used <= set(names)
    assert names[:22] == list("ACDEFGHIJKMNOQRSWXYZ") + ["Aa", "Ac"]
