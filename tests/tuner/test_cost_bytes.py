"""The cost model sizes tensors with the language's one table of bytes per dtype."""

from __future__ import annotations

import pytest

from leir.ast import TensorRef
from tuner.cost import CACHE_BYTES, streamed_bytes


@pytest.mark.parametrize(("dtype", "streamed"), [("u8", 0), ("u16", 0), ("u32", 0), ("u64", 24_000_000)])
def test_unsigned_tensors_are_counted_at_their_width(dtype, streamed):
    """The model once lacked u16/u32/u64 and took 4 bytes: a 24 MB u64 tensor looked like 12 MB, in cache."""
    assert 12_000_000 < CACHE_BYTES < 24_000_000
    assert streamed_bytes(TensorRef("A", dtype, "g"), (3_000_000,)) == streamed


def test_an_unknown_dtype_is_refused_not_sized_as_four_bytes():
    with pytest.raises(ValueError, match="unknown LEIR dtype 'f128'"):
        streamed_bytes(TensorRef("A", "f128", "g"), (3_000_000,))
