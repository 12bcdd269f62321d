"""Fresh tensor and loop-variable names in the public reference converter's style.

Tensor names run ``A C D E F G H I J K M N O Q R S W X Y Z`` (the capitals minus the loop kinds
``B L P U V`` and TVMScript's ``T``), then two-letter names ``Aa Ac Ad … Az Ca Cc …``: a first letter of
that sequence followed by the lower-case form of a letter of it — the continuation found in the corpus.
Loop variables skip ``b e t v x y z`` so that ``1e-05`` never reads as a variable and no plain loop
variable looks like a GPU binding (``tx``, ``bx``...).
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Iterator

TENSOR_LETTERS = "ACDEFGHIJKMNOQRSWXYZ"
LOOP_LETTERS = "acdfghijkmnopqrsuw"


def tensor_names() -> Iterator[str]:
    """Every tensor name in generation order (single letters, then two letters)."""
    yield from TENSOR_LETTERS
    for first in TENSOR_LETTERS:
        for second in TENSOR_LETTERS:
            yield first + second.lower()
    for first in TENSOR_LETTERS:
        for second in TENSOR_LETTERS:
            for third in TENSOR_LETTERS:
                yield first + second.lower() + third.lower()


def loop_var_names() -> Iterator[str]:
    """Loop variables of one block, in order (``tx`` for a bound first loop is added by the caller)."""
    yield from LOOP_LETTERS
    for first in LOOP_LETTERS:
        for second in LOOP_LETTERS:
            yield first + second


def first_unused(candidates: Iterable[str], taken: Container[str], count: int = 1) -> tuple[str, ...]:
    """The first ``count`` candidates not in ``taken``, in order: how every fresh name is chosen.

    ``RuntimeError`` when the candidates run out first (8000+ tensors or 342 loop variables: never in
    practice). Given an iterator, it consumes only up to the last name it returns.
    """
    if count == 0:
        return ()
    out: list[str] = []
    for name in candidates:
        if name not in taken:
            out.append(name)
            if len(out) == count:
                return tuple(out)
    raise RuntimeError(f"names exhausted: fewer than {count} unused")


class NameSource:
    """Hands out tensor names in sequence, never one already taken."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self._names = tensor_names()
        self._taken = set(taken or ())
        #: Every name handed out, in order (the translator reorders each operator's names afterwards).
        self.log: list[str] = []

    def take(self) -> str:
        (name,) = first_unused(self._names, self._taken)
        self._taken.add(name)
        self.log.append(name)
        return name
