"""Small helpers the strategy modules share: loop lookup at a site, header text for traces."""

from __future__ import annotations

from collections.abc import Iterator

from leir.ast import Block, Loop, Program
from leir.printer import canonical, loop_text

Path = tuple[int, ...]


def blocks(program: Program) -> Iterator[tuple[Path, Block]]:
    """``(path, block)`` for every block, top-level and nested, in execution order."""
    from leir.ast import iter_items

    for path, item, _ in iter_items(program.body):
        if isinstance(item, Block):
            yield path, item


def loop_index(block: Block, var: str) -> int:
    """Position of the loop over ``var`` in the block's header."""
    for i, lp in enumerate(block.loops):
        if lp.var == var:
            return i
    raise KeyError(var)


def header_text(loops: tuple[Loop, ...]) -> str:
    """The canonical text of a run of loop headers (what a trace quotes for a loop nest)."""
    return "".join(loop_text(lp) for lp in loops)


def block_text(block: Block) -> str:
    """Canonical text of a block as it appears inside a program (nested blocks have no trailing ';')."""
    return canonical(block)


def describe_block(path: Path) -> str:
    """"block 2" for a top-level block, "block 2.1" for a nested one (1-based, as people count)."""
    return "block " + ".".join(str(p + 1) for p in path)
