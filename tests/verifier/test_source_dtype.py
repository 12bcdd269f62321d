"""``steptp verify --source`` loads the model in the dtype ``translate --dtype`` used: the float inputs'."""

from __future__ import annotations

import pytest

from leir.program import load_program
from steptp_cli.verifier_commands import source_dtype

BODY = "---\nB^{4}_{tx=0}L^{8}_{a=0}[\n  H^{%s,g}_{tx,a} = A^{%s,g}_{tx,a}*2;\n];\n"


@pytest.mark.parametrize("inp, out, want", [
    ("bf16", "f32", "bf16"),  # a bf16 model that upcasts its output (issue 46: f32 scales, probabilities)
    ("f16", "f16", "f16"),
    ("i64", "f32", "f32"),    # integer inputs (token ids): the float output decides
])
def test_the_float_inputs_decide_the_dtype_the_source_is_loaded_in(inp, out, want):
    program = load_program(f"input  A: {inp}[4, 8]\noutput H: {out}[4, 8]\n" + BODY % (out, inp))
    assert source_dtype(program) == want
