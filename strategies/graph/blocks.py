"""Block-level facts the graph strategies share: headers equal up to loop names, and renaming to one."""

from __future__ import annotations

from leir.analysis import reads, writes
from leir.ast import Block, Var
from leir.rewrite import substitute_loops


def same_header(first: Block, second: Block) -> bool:
    """Whether two loop nests run the same iterations: same kinds and extents, in order (names may differ)."""
    return len(first.loops) == len(second.loops) and all(
        a.kind == b.kind and a.extent == b.extent for a, b in zip(first.loops, second.loops, strict=True))


def rename_to(header: Block, block: Block) -> Block:
    """``block`` with its loop variables renamed to ``header``'s (position by position)."""
    mapping = {b.var: Var(a.var) for a, b in zip(header.loops, block.loops, strict=True) if a.var != b.var}
    if not mapping:
        return block
    items = tuple(substitute_loops(item, mapping) for item in block.items)
    return Block(header.loops, items)


def tensors_of(block: Block) -> frozenset[str]:
    """Every tensor a block reads or writes."""
    return reads(block) | writes(block)
