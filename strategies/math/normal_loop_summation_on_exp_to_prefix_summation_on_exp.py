"""normal_loop_summation_on_exp_to_prefix_summation_on_exp (catalogue #41): max and sum-of-exp in one pass."""

from __future__ import annotations

from leir.analysis import iterations, tensor_bytes
from leir.ast import Body, Program, tensor_refs
from leir.printer import canonical
from leir.rewrite import with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import header_text
from strategies.math.streaming import (
    Stats,
    last_element_reads,
    score_passes,
    stream_block,
    two_pass_stats,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def fuse_stats(program: Program, stats: Stats) -> Program:
    """The program with the two statistics blocks replaced by the one-pass recurrence block."""
    blocks = program.body.blocks
    body = Body(blocks[: stats.first] + (stream_block(stats),) + blocks[stats.last + 1:])
    return with_body(program, last_element_reads(body, stats.first + 1, stats))


def stats_site(stats: Stats) -> Site:
    return Site((stats.first,), (("max", stats.m), ("sum", stats.s), ("axis", stats.k)),
                where=f"the max {stats.m} and sum {stats.s} over {stats.k} in blocks {stats.first + 1}-"
                      f"{stats.last + 1}")


def find_stats(strategy: Strategy, program: Program, site: Site) -> Stats:
    for stats in two_pass_stats(program):
        if (stats.first,) == site.path and stats.m == site.get("max") and stats.s == site.get("sum"):
            return stats
    raise strategy.refuse("no-such-pattern", f"no adjacent max / sum-of-exp blocks at {site.key}", site)


def explain_fusion(before: Program, stats: Stats, after: Program, why: str) -> Trace:
    """The trace #41 and #42 share: the two reductions, the recurrences, one pass fewer."""
    t = TraceBuilder()
    first, second = before.body.blocks[stats.first], before.body.blocks[stats.last]
    fused = after.body.blocks[stats.first]
    x_name = canonical(stats.x)
    size = iterations(stats.loops)
    m_bytes = tensor_bytes(after, stats.m)
    reads_before, reads_after = _passes(before, stats), _passes(after, stats)
    return t.build(
        applicability=(f"Block {stats.first + 1} {t.before(canonical(first))} reduces {x_name} with max over "
                       f"{stats.k}, and the adjacent block {stats.last + 1} {t.before(canonical(second))} with "
                       f"the same header {t.before(header_text(first.loops))} sums exp({x_name}-{stats.m}) "
                       f"over the same axis; {stats.m} and {stats.s} are intermediates written nowhere else."
                       + why),
        change=(f"Both become one block of prefix recurrences along {stats.k}: "
                f"{t.after(canonical(fused))}; the running sum is rescaled by exp(M_prev-M_k) whenever the "
                f"running max grows, and every later read of {stats.m} and {stats.s} takes the last element "
                f"k={stats.extent - 1}. No parameters."),
        rationale=(f"The {size} elements of {x_name} are read in one pass instead of two for the statistics "
                   f"({reads_before} loop nests read them before, {reads_after} after); the price is "
                   f"{stats.extent}x larger prefix tensors ({m_bytes} bytes for {stats.m}) and one more exp "
                   "per element for the rescale factor."),
        exactness=("Numerically equivalent (N): the sum is accumulated against a running instead of the "
                   "final max, so each term is rounded after a different shift and rescaled up to "
                   f"{stats.extent - 1} times; exactly equal in real arithmetic."),
    )


def _passes(program: Program, stats: Stats) -> int:
    names = {r.name for r in tensor_refs(stats.x)}
    return max((score_passes(program, n) for n in names), default=0)


@register
class NormalLoopSummationOnExpToPrefixSummationOnExp(Strategy):
    """Fuse a max reduction and the following sum of exp(X-max) into one pass of prefix recurrences.

    Before: ``B^{4}_{tx=0}L^{8}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];B^{4}_{tx=0}L^{8}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{4}_{tx=0}[C^{f32,g}_{tx}=D^{f32,g}_{tx}+log(E^{f32,g}_{tx});];``
    After:  ``B^{4}_{tx=0}L^{8}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));];B^{4}_{tx=0}[C^{f32,g}_{tx}=D^{f32,g}_{tx,7}+log(E^{f32,g}_{tx,7});];``

    Precondition: two adjacent single-statement blocks with the same iterations; the first is a max
    reduction ``M=max(M,X)`` over exactly one axis ``k``, the second a sum reduction over the same axis
    ``S=S+exp(X-M)`` with the same ``X`` (up to loop names) and the same bare-variable subscript; ``X``
    reads neither; ``M`` and ``S`` are float intermediates that nothing else writes. The recurrences
    run under the first block's header; ``M`` and ``S`` gain a trailing ``k`` dimension and every later
    read takes element ``K-1``. The ``M==-inf`` guard keeps rows that start with ``-inf`` exact.
    Numerically equivalent (N): see ``docs/math_streaming.md``.
    """

    number = 41
    name = "normal_loop_summation_on_exp_to_prefix_summation_on_exp"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"no-such-pattern": "the site names no adjacent max and sum-of-exp blocks"}

    def candidates(self, program: Program) -> list[Site]:
        return [stats_site(stats) for stats in two_pass_stats(program)]

    def check(self, program: Program, site: Site, params: Params | None = None) -> Stats:
        """The adjacent max and sum-of-exp blocks the site names (``two_pass_stats`` lists them all)."""
        return find_stats(self, program, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return fuse_stats(program, self.check(program, site, params))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        return explain_fusion(before, find_stats(self, before, site), after, "")
