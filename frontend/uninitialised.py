"""``torch.empty_like`` / ``x.new_empty``: accepted when every element is written before it is read.

PyTorch leaves such a buffer's contents undefined; LEIR has no undefined values (an unwritten element reads
0, docs/leir.md §6). The translation is faithful exactly when no operation ever sees an element no write
has covered, so the frontend keeps, per tensor made this way, the concrete mask of elements still
unwritten — shapes and slice keys are concrete at translation time, so the mask is exact, a proof for
every input and not a test on some — and updates it at each item assignment (``out[:, :h] = a``). Any
other use of a tensor whose mask is not empty (an operator, a read of a slice holding unwritten elements,
a returned output) is refused at the reading line, naming the first unwritten index. A fully written
buffer is an ordinary tensor from then on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch

from .emit import Tensor
from .errors import UnsupportedOperatorError


class Coverage:
    """Unwritten-element masks of the tensors made by ``empty_like``/``new_empty``, by LEIR name."""

    def __init__(self) -> None:
        self.unwritten: dict[str, np.ndarray] = {}
        #: Where each buffer was made (``file:line``), for the refusal's message.
        self.origin: dict[str, str | None] = {}

    def created(self, tensor: Tensor, where: str | None) -> None:
        self.unwritten[tensor.name] = np.ones(tensor.shape, dtype=bool)
        self.origin[tensor.name] = where

    def assigned(self, target: Any, key: Any, result: Any) -> None:
        """``target[key] = ...`` gave ``result``: the keyed elements are written."""
        if not isinstance(target, Tensor) or target.name not in self.unwritten:
            return
        mask = torch.from_numpy(self.unwritten[target.name].copy())
        try:
            mask[_concrete_key(key)] = False
        except (TypeError, IndexError, ValueError):
            raise UnsupportedOperatorError(
                "setitem",
                detail="assignment into a torch.empty buffer with a key computed from tensor values",
                supported="slices, integers and ... (the written elements must be known at translation "
                          "time)") from None
        if isinstance(result, Tensor) and bool(mask.any()):
            self.unwritten[result.name] = mask.numpy()
            self.origin[result.name] = self.origin[target.name]

    def sliced(self, source: Any, key: Any) -> bool:
        """Whether ``source[key]`` reads only written elements (then it is no read of unwritten memory)."""
        if not isinstance(source, Tensor) or source.name not in self.unwritten:
            return True
        try:
            return not bool(torch.from_numpy(self.unwritten[source.name])[_concrete_key(key)].any())
        except (TypeError, IndexError, ValueError):
            return False

    def check_reads(self, name: str, values: Iterable[Any]) -> None:
        """Refuse ``name`` reading a tensor that still holds unwritten elements."""
        for value in values:
            if isinstance(value, Tensor) and value.name in self.unwritten:
                mask = self.unwritten[value.name]
                first = tuple(int(i) for i in np.argwhere(mask)[0])
                made = self.origin.get(value.name)
                raise UnsupportedOperatorError(
                    name, detail=f"reads uninitialised memory: {int(mask.sum())} of {mask.size} elements of "
                                 f"the torch.empty buffer made at {made or 'an earlier line'} are unwritten "
                                 f"here (the first at index {list(first)})",
                    supported="write every element (item assignment) before reading the buffer, or "
                              "create it with zeros_like")


def _concrete_key(key: Any) -> Any:
    """An item key with no tensors in it (LEIR tensors have no concrete values here)."""
    parts = key if isinstance(key, tuple) else (key,)
    for part in parts:
        if isinstance(part, Tensor | torch.Tensor | list):
            raise TypeError("tensor key")
    return key
