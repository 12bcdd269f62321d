"""Helpers the loop-level strategies share: finding a header loop at a site, rewriting a block's loops.

A loop site is a block path plus the loop variable(s) in ``Site.detail``; every loop strategy resolves it
the same way and refuses the same way when the loop is gone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from leir.ast import Block, Loop, Program
from leir.gpu_limits import all_loops
from leir.rewrite import Node, block_at, map_item_exprs, replace_at, with_body
from strategies.base import ParamSpec, Site, Strategy
from strategies.common import blocks, describe_block, loop_index
from strategies.traces import TraceBuilder

Path = tuple[int, ...]


def header_loops(program: Program) -> Iterator[tuple[Path, Block, int, Loop]]:
    """``(block path, block, position, loop)`` for every header loop of every block, in program order."""
    for path, block in blocks(program):
        for k, lp in enumerate(block.loops):
            yield path, block, k, lp


def find_loop(strategy: Strategy, program: Program, path: Path, var: str) -> tuple[Block, int, Loop]:
    """The block at ``path`` and the position and loop over ``var`` in its header, or a refusal."""
    try:
        block = block_at(program.body, path)
    except (LookupError, TypeError):
        raise strategy.refuse("no-such-block", f"there is no block at {describe_block(path)}") from None
    try:
        k = loop_index(block, var)
    except KeyError:
        raise strategy.refuse("no-such-loop", f"{describe_block(path)} has no loop over {var}") from None
    return block, k, block.loops[k]


def rebuild(program: Program, path: Path, block: Block, loops: tuple[Loop, ...],
            expr_fn: Callable[[Node], Node] | None = None) -> Program:
    """The program with the block at ``path`` given new header loops and (optionally) rewritten exprs."""
    new = Block(loops, block.items)
    if expr_fn is not None:
        rewritten = map_item_exprs(new, expr_fn)
        assert isinstance(rewritten, Block)
        new = rewritten
    return with_body(program, replace_at(program.body, path, new))


def top_block(program: Program, path: Path) -> Block:
    return program.body.blocks[path[0]]


def enclosing_loops(program: Program, path: Path) -> tuple[Loop, ...]:
    """Loops of the blocks strictly around the block at ``path`` (outermost first)."""
    out: list[Loop] = []
    for depth in range(1, len(path)):
        out.extend(block_at(program.body, path[:depth]).loops)
    return tuple(out)


def nested_loops(block: Block) -> tuple[Loop, ...]:
    """Loops of the blocks nested inside ``block`` (its own header excluded)."""
    return tuple(lp for item in block.items if isinstance(item, Block) for lp in all_loops(item))


def bound_loop_inside(block: Block, k: int) -> bool:
    """Whether a bound ``B`` loop runs inside header loop ``k`` of ``block`` (later in its header or in
    a nested block): a bound loop split or fused there would put a serial loop between two bound ones."""
    return any(lp.kind == "B" for lp in block.loops[k + 1:] + nested_loops(block))


def trip_count(loops: tuple[Loop, ...]) -> int:
    n = 1
    for lp in loops:
        n *= lp.extent
    return n


def statement_count(block: Block) -> int:
    from leir.analysis import item_statements

    return sum(1 for _ in item_statements(block))




def quote_header(t: TraceBuilder, state: str, loops: tuple[Loop, ...]) -> str:
    from strategies.common import header_text

    text = header_text(loops)
    return t.before(text) if state == "before" else t.after(text)


def ref_using(block: Block, var: str) -> str | None:
    """Canonical text of the first tensor reference in the block whose subscript uses ``var`` (to quote)."""
    from leir.analysis import item_statements, stmt_reads
    from leir.ast import Var, walk_expr
    from leir.printer import canonical

    for _, stmt, _ in item_statements(block):
        for ref in (stmt.target, *stmt_reads(stmt)):
            if any(isinstance(v, Var) and v.name == var for i in ref.indices for v in walk_expr(i)):
                return canonical(ref)
    return None


def check_loop(strategy: Strategy, program: Program, site: Site, code: str,
               problem: Callable[[Program, Path, Loop], str | None]) -> tuple[Block, int, Loop]:
    """The block, position and loop of a one-loop site, or the refusal ``code`` with what ``problem``
    finds against the loop: the ``check`` of a strategy whose rule is one such function."""
    block, k, lp = find_loop(strategy, program, site.path, site.get("loop"))
    reason = problem(program, site.path, lp)
    if reason:
        raise strategy.refuse(code, reason, site)
    return block, k, lp


def change_kind(strategy: Strategy, program: Program, site: Site, kind: str) -> Program:
    """The program with the site's loop given ``kind``, once the strategy's ``check`` passed."""
    block, k, lp = strategy.check(program, site)
    loops = block.loops[:k] + (Loop(kind, lp.extent, lp.var),) + block.loops[k + 1:]
    return rebuild(program, site.path, block, loops)


def adjacent_pair(strategy: Strategy, program: Program, site: Site) -> tuple[Block, int, Loop, Loop]:
    """The block, position and loops of a site naming an ``outer`` loop and the ``inner`` one right inside."""
    outer_var, inner_var = site.get("outer"), site.get("inner")
    block, k, outer = find_loop(strategy, program, site.path, outer_var)
    if k + 1 >= len(block.loops) or block.loops[k + 1].var != inner_var:
        raise strategy.refuse("not-adjacent", f"the loop over {inner_var} is not directly inside the loop over {outer_var}")
    return block, k, outer, block.loops[k + 1]


def enclosing_vector_loop(program: Program, path: Path, k: int) -> Loop | None:
    """A ``V`` loop around position ``k`` of the block at ``path`` (outer blocks included), if any."""
    block = block_at(program.body, path)
    found = [o for o in enclosing_loops(program, path) + block.loops[:k] if o.kind == "V"]
    return found[0] if found else None


def loop_site(path: Path, lp: Loop, params: tuple[ParamSpec, ...] = ()) -> Site:
    return Site(path, (("loop", lp.var),), params, where=f"the loop over {lp.var} in {describe_block(path)}")


def loop_sites(strategy: Strategy, program: Program) -> list[Site]:
    """A parameterless site for every header loop the strategy's ``check`` passes, in program order."""
    return [site for path, _block, _k, lp in header_loops(program)
            if strategy.legal(program, site := loop_site(path, lp))]


def adjacent_pairs(program: Program) -> Iterator[tuple[Path, Loop, Loop]]:
    """``(block path, outer, inner)`` for every two adjacent loops of a header, in program order."""
    for path, block, k, lp in header_loops(program):
        if k + 1 < len(block.loops):
            yield path, lp, block.loops[k + 1]


def pair_site(path: Path, outer: Loop, inner: Loop, params: tuple[ParamSpec, ...] = ()) -> Site:
    return Site(path, (("inner", inner.var), ("outer", outer.var)), params,
                where=f"the loops over {outer.var} and {inner.var} in {describe_block(path)}")


#: The refusals of resolving a loop site, which every loop strategy shares.
LOOP_SITE_REFUSALS = {
    "no-such-block": "the site's path names no block",
    "no-such-loop": "the block's header has no loop over the site's variable",
    "not-adjacent": "the site's inner loop is not directly inside its outer loop",
}


def guard_refusal(var: str) -> str:
    """Why a loop compared by a guard is not split or fused (see ``leir.analysis.var_in_condition``)."""
    return f"a guard compares {var}; guarded reads are proved in bounds on the whole variable"
