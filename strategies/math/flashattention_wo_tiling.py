"""flashattention_wo_tiling (catalogue #43): softmax and the P·V matmul become one streaming pass."""

from __future__ import annotations

from leir.analysis import fresh_tensor_names, iterations
from leir.ast import Assign, Program, tensor_refs
from leir.printer import canonical
from leir.rewrite import with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.math.streaming import Attention, Deferred, attention_sites, flash, score_passes
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def attention_site(site: Attention) -> Site:
    stats = site.stats
    return Site((stats.first,), (("max", stats.m), ("output", site.mm.target.name), ("sum", stats.s)),
                where=f"the softmax over {stats.k} in blocks {stats.first + 1}-{site.norm.index + 1} and the "
                      f"matmul {site.mm.target.name} of block {site.mm.index + 1}")


def find_attention(strategy: Strategy, program: Program, site: Site, *, online: tuple[bool, ...]) -> Attention:
    for found in (f for o in online for f in attention_sites(program, online=o)):
        if attention_site(found) == Site(site.path, site.detail, where=attention_site(found).where):
            return found
    raise strategy.refuse("no-such-pattern", f"no softmax followed by a matmul of its output at {site.key}", site)


def explain_flash(before: Program, found: Attention, after: Program, *, normalised: bool) -> Trace:
    """The trace #43 and #44 share (they differ in where the division by the sum happens)."""
    stats, norm, mm = found.stats, found.norm, found.mm
    t = TraceBuilder()
    blocks = before.body.blocks
    stats_text = "".join(canonical(b) for b in blocks[stats.first: stats.last + 1])
    p_stmt = blocks[norm.index].items[norm.item]
    stream = after.body.blocks[stats.first]
    write = next(b for b in after.body.blocks[stats.first + 1:]
                 if any(isinstance(it, Assign) and it.target.name == mm.target.name for it in b.items))
    score_names = sorted({r.name for r in tensor_refs(stats.x)})
    passes_before = max(score_passes(before, n) for n in score_names) if score_names else 0
    passes_after = max(score_passes(after, n) for n in score_names) if score_names else 0
    form = ("the running output is kept normalised: each step rescales it by the factor "
            "S_prev*exp(M_prev-M_k)/S_k and adds the weight exp(X-M_k)/S_k times V, so the last element is "
            "the output"
            if normalised else
            "the running output is kept unnormalised: each step rescales it by the factor exp(M_prev-M_k) "
            "and adds the weight exp(X-M_k) times V; the output divides the last element by the last running "
            "sum once")
    kind = "online-softmax statistics" if stats.online else "softmax statistics"
    return t.build(
        applicability=(f"The {kind} {t.before(stats_text)} are followed by the softmax output "
                       f"{t.before(canonical(p_stmt))} and the matmul {t.before(canonical(blocks[mm.index]))}"
                       f", which reduces {norm.target.name} over the streamed axis {stats.k} "
                       f"({stats.extent} elements) against {mm.value.name}, which none of these blocks writes."
                       + (" Wherever the running max is finite the running sum is at least exp(0)=1 (the "
                          "maximal element's own term), so dividing by it is safe; the -inf case is guarded."
                          if normalised else "")),
        change=(f"One streaming block {t.after(canonical(stream))} keeps the running max, the running sum, "
                "the rescale factor and weight of each element (computed once per element) and a running "
                f"output over the {len(mm.free)} free matmul axis(es) in a nested block; "
                f"{form}: {t.after(canonical(write))}. {norm.target.name} is no longer materialised "
                "where nothing else reads it. No parameters."),
        rationale=(f"The score tensor {', '.join(score_names)} is read by {passes_after} loop nest(s) instead "
                   f"of {passes_before}: statistics, probabilities and the weighted sum of "
                   f"{iterations(stats.loops)} elements happen in one pass, the {stats.extent}-wide softmax "
                   "output never goes to memory — the loop structure of a flash-attention kernel before "
                   "tiling; the cost is one rescale multiply per element and output column and two exponentials per "
                   "element for the factor and the weight."),
        exactness=("Numerically equivalent (N): every partial output is rescaled up to "
                   f"{stats.extent - 1} times as the running max grows"
                   + (", and divided by the running sum at every step instead of once" if normalised else
                      ", and divided by the sum once at the end instead of per probability")
                   + "; equal in real arithmetic (docs/math_streaming.md)."),
    )


@register
class FlashattentionWoTiling(Strategy):
    """Fuse a two-pass softmax and the matmul of its output into one streaming pass (no tiling).

    Before: ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];B^{2}_{tx=0}L^{4}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];B^{2}_{tx=0}L^{4}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+F^{f32,g}_{tx,c}*G^{f32,g}_{c,a};];``
    After:  ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));H^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a})));I^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));L^{3}_{d=0}[J^{f32,g}_{tx,d,a}=if_then_else(a-1<0,0,J^{f32,g}_{tx,d,a-1}*H^{f32,g}_{tx,a})+I^{f32,g}_{tx,a}*G^{f32,g}_{a,d};];];B^{2}_{tx=0}L^{3}_{a=0}[C^{f32,g}_{tx,a}=J^{f32,g}_{tx,a,3}/E^{f32,g}_{tx,3};];``

    Precondition: a softmax ``P=exp(X-M)/S`` — two-pass (#42's pattern) or already online (#42's
    result, statistics read at ``K-1``) — and the next block is the single
    reduction ``O=O+P*V`` (either order) over exactly the streamed axis, reading ``P`` by bare loop
    variables, with at least one loop ``P`` does not depend on (the output columns); ``V`` is written
    by none of these blocks, ``O`` by no other. The streaming block keeps running max and sum, the
    rescale factor ``A_k=exp(M_{k-1}-M_k)`` and weight ``W_k=exp(X-M_k)`` (once per element, 0 while
    ``M_k=-inf``) and the unnormalised running output ``R_k=R_{k-1}*A_k+W_k*V_k`` (a nested block over
    the output columns); ``O = R_{K-1}/S_{K-1}`` replaces the matmul, and ``P`` disappears when
    nothing else reads it.
    Numerically equivalent (N): see ``docs/math_streaming.md``.
    """

    number = 43
    name = "flashattention_wo_tiling"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {"no-such-pattern": "the site names no softmax followed by a matmul of its output"}
    #: which statistics forms the strategy starts from (two-pass, online), and its output form
    forms: tuple[bool, ...] = (False, True)
    normalised = False

    def candidates(self, program: Program) -> list[Site]:
        return [attention_site(found) for online in self.forms
                for found in attention_sites(program, online=online)]

    def check(self, program: Program, site: Site, params: Params | None = None) -> Attention | Deferred:
        """The softmax and the matmul of its output the site names (``attention_sites`` lists them all;
        a subclass may name a ``Deferred`` output too)."""
        return find_attention(self, program, site, online=self.forms)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        found = self.check(program, site, params)
        assert isinstance(found, Attention), "this form's plan is an attention"
        a, w, r = fresh_tensor_names(program, 3)
        return with_body(program, flash(program, found, (a, w, r), normalised=self.normalised).body)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        found = find_attention(self, before, site, online=self.forms)
        return explain_flash(before, found, after, normalised=self.normalised)
