"""online_softmax (catalogue #42): a two-pass softmax's statistics become one pass, normalised after."""

from __future__ import annotations

from leir.ast import Program
from leir.printer import canonical
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.math.normal_loop_summation_on_exp_to_prefix_summation_on_exp import (
    explain_fusion,
    find_stats,
    fuse_stats,
    stats_site,
)
from strategies.math.streaming import Stats, softmax_normaliser, two_pass_stats
from strategies.registry import register
from strategies.traces import Trace


@register
class OnlineSoftmax(Strategy):
    """Rewrite a softmax (max, sum of exp, normalise) into the online form: one pass of running statistics.

    Before: ``B^{4}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];B^{4}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];``
    After:  ``B^{4}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f64,g}_{tx,a-1}),A^{f64,g}_{tx,a});E^{f64,g}_{tx,a}=if_then_else(D^{f64,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f64,g}_{tx,a-1}*exp(D^{f64,g}_{tx,a-1}-D^{f64,g}_{tx,a}))+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,a}));];B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx,7})/E^{f64,g}_{tx,7};];``

    Precondition: #41's (adjacent max and sum-of-exp blocks over one axis of the same ``X``), and the
    next block runs the same iterations and holds the softmax output ``P=exp(X-M)/S`` (any names, the
    same dtype; other statements may share the block). The statistics become #41's running max and
    rescaled running sum; the normalisation reads their last elements, so it needs the full sum and
    stays a second pass.
    Numerically equivalent (N): see ``docs/math_streaming.md``.
    """

    number = 42
    name = "online_softmax"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"no-such-pattern": "the site names no adjacent max and sum-of-exp blocks",
                "no-normaliser": "no later block computes the softmax exp(X-max)/sum from the two"}

    def candidates(self, program: Program) -> list[Site]:
        return [site for stats in two_pass_stats(program) if self.legal(program, site := stats_site(stats))]

    def check(self, program: Program, site: Site, params: Params | None = None) -> Stats:
        """The max and sum-of-exp statistics to fuse, whose softmax a later block computes."""
        stats = find_stats(self, program, site)
        if softmax_normaliser(program, stats) is None:
            raise self.refuse("no-normaliser", f"block {stats.after + 1} does not compute "
                              f"exp(X-{stats.m})/{stats.s}", site)
        return stats

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return fuse_stats(program, self.check(program, site, params))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        stats = find_stats(self, before, site)
        norm = softmax_normaliser(before, stats)
        assert norm is not None
        stmt = before.body.blocks[norm.index].items[norm.item]
        why = (f" Block {norm.index + 1} normalises with `{canonical(stmt)}`, so this is a softmax.")
        trace = explain_fusion(before, stats, after, why)
        return _quote_extra(trace, canonical(stmt))


def _quote_extra(trace: Trace, fragment: str) -> Trace:
    """The trace with one more before-state quote (the softmax output statement)."""
    from strategies.traces import Quote

    return Trace(trace.applicability, trace.change, trace.rationale, trace.exactness,
                 (*trace.quotes, Quote("before", fragment)))
