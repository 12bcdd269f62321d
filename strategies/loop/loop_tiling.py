"""loop_tiling (catalogue #11): two adjacent spatial loops are split and their outer halves moved out."""

from __future__ import annotations

from leir.analysis import (
    fresh_loop_vars,
    item_statements,
    loop_race_reason,
    program_info,
    proper_divisors,
    split_index_var,
    stmt_reads,
    var_in_condition,
)
from leir.ast import Block, Loop, Program, Var, walk_expr
from leir.dtypes import dtype_bytes, numel
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy, int_param
from strategies.common import describe_block, header_text
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    adjacent_pair,
    adjacent_pairs,
    find_loop,
    guard_refusal,
    pair_site,
    rebuild,
    trip_count,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@register
class LoopTiling(Strategy):
    """Tile two adjacent spatial loops: ``u,w`` become ``u,w`` over tiles, then ``k,m`` inside a tile.

    From level1/view_permute, parameters {'outer_tile': 2, 'inner_tile': 4}:

    Before: ``B^{2}_{tx=0}L^{8}_{a=0}L^{12}_{c=0}L^{8}_{d=0}[C^{f32,g}_{tx,a,c,d}=A^{f32,g}_{tx,d,a,c};];``
    After:  ``B^{2}_{tx=0}L^{4}_{a=0}L^{3}_{c=0}L^{2}_{f=0}L^{4}_{g=0}L^{8}_{d=0}[C^{f32,g}_{tx,a*2+f,c*4+g,d}=A^{f32,g}_{tx,d,a*2+f,c*4+g};];``

    Parameters: ``outer_tile`` and ``inner_tile``, the tile's extents along the first and second loop
    (every non-trivial divisor of each extent). The outer loops keep the variables' names and count
    tiles, the inner ones take fresh names; ``u → u*fu+k`` and ``w → w*fw+m``. Precondition: the two
    loops are adjacent in one header, both serial ``L``, both spatial (no statement carries a
    dependence along either, and no guard compares them — a reordering of spatial loops never changes a result), and both extents
    have a non-trivial divisor. Every element gets the same arithmetic: exact (E).
    """

    number = 11
    name = "loop_tiling"
    level = Level.LOOP
    exactness = Exactness.E

    refusals = {
        **LOOP_SITE_REFUSALS,
        "cannot-tile": "a loop of the pair is not serial L, has no divisor 1 < f < n, carries a dependence "
                       "or is compared by a guard",
        "illegal-tile": "a tile size asked for does not divide its loop's extent non-trivially",
    }

    def candidates(self, program: Program) -> list[Site]:
        return [pair_site(path, outer, inner, (ParamSpec("outer_tile", proper_divisors(outer.extent)),
                                               ParamSpec("inner_tile", proper_divisors(inner.extent))))
                for path, outer, inner in adjacent_pairs(program)
                if self.legal(program, pair_site(path, outer, inner))]

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop, Loop]:
        """The block, the outer loop's position and the two loops to tile, or a refusal."""
        block, k, outer, inner = adjacent_pair(self, program, site)
        problem = self._problem(program, site.path, outer, inner)
        if problem:
            raise self.refuse("cannot-tile", problem, site)
        if params is not None:
            fu, fw = params["outer_tile"], params["inner_tile"]
            if fu not in proper_divisors(outer.extent) or fw not in proper_divisors(inner.extent):
                raise self.refuse("illegal-tile", f"tile {fu}x{fw} does not divide {outer.extent}x{inner.extent} "
                                  "non-trivially", site)
        return block, k, outer, inner

    @staticmethod
    def _problem(program: Program, path: tuple[int, ...], outer: Loop, inner: Loop) -> str | None:
        for lp in (outer, inner):
            if lp.kind != "L":
                return f"the loop {loop_text(lp)} is {lp.kind}, not serial L"
            if not proper_divisors(lp.extent):
                return f"extent {lp.extent} of {loop_text(lp)} has no non-trivial divisor"
            reason = loop_race_reason(program, path, lp.var)
            if reason:
                return f"the loop {loop_text(lp)} {reason}: it is not a spatial loop"
            if var_in_condition(block_at(program.body, path), lp.var):
                return guard_refusal(lp.var)
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, k, outer, inner = self.check(program, site, params)
        u, w = outer.var, inner.var
        fu, fw = params["outer_tile"], params["inner_tile"]
        assert isinstance(fu, int) and isinstance(fw, int)
        ku, kw = fresh_loop_vars(program, 2)
        loops = block.loops[:k] + (Loop("L", outer.extent // fu, u), Loop("L", inner.extent // fw, w),
                                   Loop("L", fu, ku), Loop("L", fw, kw)) + block.loops[k + 2:]
        return rebuild(program, site.path, block, loops,
                       lambda e: split_index_var(split_index_var(e, u, ku, fu), w, kw, fw))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        u, w = site.get("outer"), site.get("inner")
        block, k, outer = find_loop(self, before, site.path, u)
        inner = block.loops[k + 1]
        fu, fw = int_param(params, "outer_tile"), int_param(params, "inner_tile")
        new = block_at(after.body, site.path).loops[k:k + 4]
        t = TraceBuilder()
        footprint = _tile_bytes(before, block, {u: fu, w: fw}, block.loops[k + 2:])
        return t.build(
            applicability=(f"In {describe_block(site.path)} the adjacent serial loops "
                           f"{t.before(header_text((outer, inner)))} are both spatial, and their extents "
                           f"{outer.extent} and {inner.extent} have the divisors {fu} and {fw}."),
            change=(f"{t.before(header_text((outer, inner)))} becomes {t.after(header_text(new))} with "
                    f"outer_tile={fu}, inner_tile={fw}: {new[0].extent} x {new[1].extent} tiles of "
                    f"{fu} x {fw} iterations; {u} becomes {u}*{fu}+{new[2].var} and {w} becomes "
                    f"{w}*{fw}+{new[3].var}."),
            rationale=_rationale(footprint, fu, fw, trip_count(block.loops[k + 2:]), outer, inner),
            exactness=("Exact (E): the loops are spatial, so visiting the elements tile by tile gives each "
                       "one the same arithmetic; the outputs are bitwise identical."),
        )


#: The L1 data cache of the dataset's target (``llvm``: baseline x86-64, 32 KiB per core on every
#: x86-64 core of the last decade); a tile's footprint is compared with it before a trace says the tile
#: stays in cache.
TARGET_L1_BYTES = 32 * 1024


def _rationale(footprint: int, fu: int, fw: int, inner_trip: int, outer: Loop, inner: Loop) -> str:
    """The cache claim follows the footprint: "stays in cache" only when it fits the target's L1."""
    touched = (f"One tile touches about {footprint} bytes of tensor data ({fu} x {fw} iterations, "
               f"{inner_trip} inner iteration(s) each)")
    if footprint <= TARGET_L1_BYTES:
        return (f"{touched}, within the {TARGET_L1_BYTES // 1024} KiB L1 data cache of the llvm target, "
                "so it stays in cache while the tile is computed and data reused along both loops is "
                f"loaded once per tile instead of once per row of the {outer.extent} x {inner.extent} "
                "range.")
    return (f"{touched}, more than the {TARGET_L1_BYTES // 1024} KiB L1 data cache of the llvm target, so "
            "the tile does not stay in L1 while it is computed: data reused along both loops comes back "
            "from the larger, slower caches at best, and a smaller tile would keep it closer.")


def _tile_bytes(program: Program, block: Block, tile: dict[str, int], inner: tuple[Loop, ...]) -> int:
    """Bytes of the distinct elements one tile references (each tensor: tile extents of the vars it uses).

    During one tile the loops outside the tiled pair are fixed (one value each), the tiled pair spans the
    tile sizes, and the loops inside it and those of nested blocks span their full extents.
    """
    info = program_info(program)
    outside = {lp.var: 1 for lp in block.loops}
    extents = {**outside, **{lp.var: lp.extent for lp in inner}, **tile}
    own = len(block.loops)
    seen: dict[str, int] = {}
    for _, stmt, loops in item_statements(block):
        spans = {**extents, **{lp.var: lp.extent for lp in loops[own:]}}
        for ref in (stmt.target, *stmt_reads(stmt)):
            used = {v.name for i in ref.indices for v in walk_expr(i) if isinstance(v, Var)}
            count = 1
            for var in used:
                count *= spans.get(var, 1)
            t = info.tensors[ref.name]
            seen[ref.name] = max(seen.get(ref.name, 0), min(count, numel(t.shape)) * dtype_bytes(t.dtype))
    return sum(seen.values())
