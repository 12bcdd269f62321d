"""loop_fusion (catalogue #13): two adjacent nested loops become one loop of the product extent."""

from __future__ import annotations

from leir.analysis import (
    carried_statements,
    fuse_index_vars,
    loop_race_reason,
    program_info,
    var_in_condition,
)
from leir.ast import Block, Loop, Program
from leir.gpu_limits import gpu_limit_violations
from leir.printer import loop_text
from leir.rewrite import block_at, replace_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block, header_text
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    adjacent_pair,
    adjacent_pairs,
    bound_loop_inside,
    find_loop,
    guard_refusal,
    pair_site,
    rebuild,
    ref_using,
    trip_count,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _bound_fusion_problem(program: Program, path: tuple[int, ...], block: Block, outer: Loop,
                          inner: Loop) -> str | None:
    """Why the bound loop ``outer`` cannot take in ``inner``: a bound loop inside them (the fused
    loop's iterations would no longer be the outermost work of one block or thread), a dependence along
    either (what ``loop_split`` of a bound loop requires too), or a CUDA limit the fused launch would
    break."""
    k = block.loops.index(outer)
    if bound_loop_inside(block, k):
        return f"the bound loop over {outer.var} has a bound loop inside it"
    for lp in (outer, inner):
        reason = loop_race_reason(program, path, lp.var)
        if reason is not None:
            return f"the loop over {lp.var} {reason}: only spatial loops fuse into a bound loop"
    fused = Block(block.loops[:k] + (Loop("B", outer.extent * inner.extent, outer.var),)
                  + block.loops[k + 2:], block.items)
    launch = replace_at(program.body, path, fused).blocks[path[0]]
    violations = gpu_limit_violations(launch, program_info(program).tensors)
    if violations:
        return f"fusing would break a CUDA limit: {violations[0].message}"
    return None


@register
class LoopFusion(Strategy):
    """Fuse a serial loop and the serial loop directly inside it into one loop over both ranges.

    From the state loop_split reaches on level1/cat_split_chunk:

    Before: ``B^{4}_{tx=0}L^{12}_{a=0}L^{2}_{c=0}[D^{f32,g}_{tx,a*2+c}=A^{f32,g}_{tx,a*2+c};];``
    After:  ``B^{4}_{tx=0}L^{24}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];``

    The fused loop keeps the outer variable ``u`` and runs ``m*n`` iterations; a use ``u*n+w`` (what
    ``loop_split`` writes) becomes ``u`` again, any other use of ``u`` becomes ``u//n`` and of ``w``
    becomes ``u%n``. A loop bound to a GPU axis and the serial loop inside it fuse the same way (the
    inverse of ``loop_split`` on a bound loop) when no bound loop runs inside them and the fused launch
    stays within the CUDA limits ``leir.gpu_limits`` checks. Precondition: the two loops are adjacent in
    one header, both serial ``L`` (or a bound ``B`` around a serial ``L``) with at least 2 iterations, and
    no guard compares either, and either both spatial or both carrying a dependence (fusing a reduction axis into a spatial one would
    turn a spatial subscript into ``u//n``). The iterations run in the same order: exact (E).
    """

    number = 13
    name = "loop_fusion"
    level = Level.LOOP
    exactness = Exactness.E
    inverse_of = ("loop_split",)

    refusals = {
        **LOOP_SITE_REFUSALS,
        "cannot-fuse-loops": "the two loops are not serial L (or a bound B around a serial L) of extent > 1, "
                             "a guard compares one, or a statement carries a dependence along one only",
    }

    def candidates(self, program: Program) -> list[Site]:
        return [site for path, outer, inner in adjacent_pairs(program)
                if self.legal(program, site := pair_site(path, outer, inner))]

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop, Loop]:
        """The block, the outer loop's position and the two loops to fuse, or a refusal."""
        block, k, outer, inner = adjacent_pair(self, program, site)
        problem = self._problem(program, site.path, outer, inner)
        if problem:
            raise self.refuse("cannot-fuse-loops", problem, site)
        return block, k, outer, inner

    @staticmethod
    def _problem(program: Program, path: tuple[int, ...], outer: Loop, inner: Loop) -> str | None:
        if outer.kind not in ("L", "B") or inner.kind != "L":
            return (f"the loops are {outer.kind} and {inner.kind}; only serial L loops fuse, or a bound B "
                    "with the serial L inside it")
        if outer.extent < 2 or inner.extent < 2:
            return "a loop of a single iteration is not worth a // and % per index"
        block = block_at(program.body, path)
        if outer.kind == "B":
            problem = _bound_fusion_problem(program, path, block, outer, inner)
            if problem:
                return problem
        guarded = [lp.var for lp in (outer, inner) if var_in_condition(block, lp.var)]
        if guarded:
            return guard_refusal(guarded[0])
        pair = {outer.var, inner.var}
        for entry in carried_statements(program, path):
            if len(entry.carried & pair) == 1:
                (which,) = entry.carried & pair
                return (f"{entry.stmt.target.name} carries a dependence along {which} only; fusing it with "
                        "a spatial loop would mix a reduction axis into a subscript")
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, k, outer, inner = self.check(program, site, params)
        outer_var, inner_var = outer.var, inner.var
        fused = Loop(outer.kind, outer.extent * inner.extent, outer_var)
        loops = block.loops[:k] + (fused,) + block.loops[k + 2:]
        return rebuild(program, site.path, block, loops,
                       lambda e: fuse_index_vars(e, outer_var, inner_var, inner.extent))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        outer_var, inner_var = site.get("outer"), site.get("inner")
        old_block, k, outer = find_loop(self, before, site.path, outer_var)
        inner = old_block.loops[k + 1]
        new_block = block_at(after.body, site.path)
        fused = new_block.loops[k]
        t = TraceBuilder()
        used = ref_using(new_block, outer_var)
        uses = f"; a reference now reads {t.after(used)}" if used else ""
        reason = loop_race_reason(before, site.path, outer_var)
        kind = "spatial loops" if reason is None else f"loops that both carry a dependence ({reason})"
        where = describe_block(site.path)
        return t.build(
            applicability=(f"In {where} the serial loop {t.before(loop_text(inner))} sits directly inside "
                           + ("the bound loop " if outer.kind == "B" else "") +
                           f"{t.before(loop_text(outer))}: adjacent {kind} of one header, so they can be "
                           "merged."),
            change=(f"{t.before(header_text((outer, inner)))} becomes {t.after(loop_text(fused))} "
                    f"({outer.extent} x {inner.extent} = {fused.extent} iterations); "
                    f"{outer_var}*{inner.extent}+{inner_var} is rewritten to {outer_var}, other uses of "
                    f"{outer_var} and {inner_var} to {outer_var}//{inner.extent} and "
                    f"{outer_var}%{inner.extent}{uses}. No parameters."),
            rationale=(f"One loop of {fused.extent} iterations replaces a nest of {outer.extent} x "
                       f"{inner.extent} whose inner loop ran only {inner.extent} times per entry: "
                       f"{outer.extent} loop set-ups disappear, and the longer range ({fused.extent} "
                       f"iterations, {trip_count(old_block.loops[k + 2:])} body iteration(s) each) is one "
                       "unit to split, parallelise or bind afresh."),
            exactness=("Exact (E): the fused loop visits the iterations in the original order with the same "
                       "arithmetic, so the outputs are bitwise identical."),
        )
