"""bf16 programs translated from PyTorch build with TVM's bfloat16 on llvm and verify against PyTorch
run in bfloat16, under the bound of bf16's unit roundoff (issue 46). Real TVM builds."""

from __future__ import annotations

from pathlib import Path

import pytest

from leir.program import dump_program, load_program
from verifier.reference import TorchSourceReference
from verifier.result import Outcome
from verifier.verify import verify

SOURCES = Path(__file__).resolve().parent / "sources"


@pytest.mark.parametrize("sets", [{}, {"SOFTMAX": 1}], ids=str)
def test_bf16_mlp_passes_against_pytorch_in_bf16(sets):
    from frontend.translate import translate_file

    source = SOURCES / "bf16_mlp.py"
    translation = translate_file(source, sets=sets, dtype="bf16")
    assert {d.dtype for d in translation.program.signature.tensors} == {"bf16"}
    reference = TorchSourceReference(source, sets, "bf16")
    result = verify(translation.program, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.PASS, result.summary()
    assert result.reference == "torch"


def test_a_wrong_bf16_program_fails_against_pytorch():
    """The bf16 tolerance does not pass a wrong kernel: the ReLU's floor 0 made 0.25.

    Without the softmax: a bf16 softmax's bound (hundreds of roundings of 2^-8) exceeds its outputs'
    size, so there it could not tell."""
    from frontend.translate import translate_file

    source = SOURCES / "bf16_mlp.py"
    translation = translate_file(source, dtype="bf16")
    text = dump_program(translation.program)
    assert text.count(",0);") == 1
    wrong = load_program(text.replace(",0);", ",0.25);"))
    reference = TorchSourceReference(source, {}, "bf16")
    result = verify(wrong, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.FAIL, result.summary()


def test_w4a16_gemm_with_packed_int4_weights_passes_against_pytorch():
    """int4 weights packed two per byte: a u8 parameter unpacked with % 16 and / 16 in LEIR."""
    from frontend.translate import translate_file

    source = SOURCES / "w4a16_gemm.py"
    translation = translate_file(source)
    packed = [d for d in translation.program.signature.tensors if d.role == "param" and d.dtype == "u8"]
    assert len(packed) == 1 and packed[0].shape == (16, 16)  # 32 nibbles per row in 16 bytes
    text = dump_program(translation.program)
    assert "%16;" in text and "/16;" in text
    reference = TorchSourceReference(source, {}, "f32")
    result = verify(translation.program, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.PASS, result.summary()
    # the high and low nibbles swapped is wrong, and caught
    wrong = load_program(text.replace("%16;", "/@;").replace("/16;", "%16;").replace("/@;", "/16;"))
    result = verify(wrong, reference=reference, params=translation.values, cache=False)
    assert result.outcome is Outcome.FAIL, result.summary()
