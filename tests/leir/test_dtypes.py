"""Storage sizes of LEIR dtypes: one table for every dtype, and an error (not a guess) for anything else."""

from __future__ import annotations

import pytest

from leir.ast import DTYPES, UNSUPPORTED_DTYPES
from leir.dtypes import DTYPE_BYTES, dtype_bytes, numel, numpy_dtype, tensor_nbytes


def test_every_leir_dtype_has_its_size_and_nothing_else_does():
    assert set(DTYPE_BYTES) == set(DTYPES) | set(UNSUPPORTED_DTYPES)
    for dtype in DTYPES:
        # NumPy stores each at its own width, except bf16 and fp8 (emulated in float32; 2 and 1 bytes)
        expected = {"bf16": 2, "f8e4m3": 1, "f8e5m2": 1}.get(dtype) or numpy_dtype(dtype).itemsize
        assert dtype_bytes(dtype) == expected, dtype
    assert [dtype_bytes(d) for d in UNSUPPORTED_DTYPES] == [8, 16]  # c64 c128


@pytest.mark.parametrize("code", ["f128", "int", "", "F32"])
def test_an_unknown_dtype_is_an_error_that_names_it(code):
    with pytest.raises(ValueError, match=f"unknown LEIR dtype {code!r}"):
        dtype_bytes(code)
    with pytest.raises(ValueError):
        tensor_nbytes(code, (4,))


def test_element_counts_and_tensor_sizes():
    assert numel(()) == 1  # a scalar
    assert numel((3, 0, 5)) == 0
    assert numel((2**40, 2**40)) == 2**80  # exact, no int64 overflow
    assert tensor_nbytes("u16", (16, 1024)) == 32768
    assert tensor_nbytes("bf16", (7,)) == 14

