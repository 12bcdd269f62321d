"""normal_matmul_to_prefix_matmul_based_on_online_softmax (catalogue #44): the P·V matmul joins the stream."""

from __future__ import annotations

from leir.analysis import iterations
from leir.ast import Program, tensor_refs
from leir.printer import canonical
from leir.rewrite import with_body
from strategies.base import Exactness, Level, Params, Site
from strategies.math.flashattention_wo_tiling import FlashattentionWoTiling
from strategies.math.streaming import Attention, Deferred, deferred_outputs, normalise_deferred, score_passes
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def deferred_site(found: Deferred) -> Site:
    stats = found.stats
    return Site((stats.first,), (("max", stats.m), ("output", found.output.name), ("running", found.running),
                                 ("sum", stats.s)),
                where=f"the unnormalised running output {found.running} of block {stats.first + 1} and its "
                      f"division {found.output.name}={found.running}/{stats.s} in block {found.epilogue + 1}")


def explain_normalise(before: Program, found: Deferred, after: Program) -> Trace:
    """The trace of the second form: #43's deferred division moves into the recurrence."""
    stats = found.stats
    t = TraceBuilder()
    old, new = before.body.blocks[stats.first].items, after.body.blocks[stats.first].items
    epi_before, epi_after = before.body.blocks[found.epilogue], after.body.blocks[found.epilogue]
    stream_rows = iterations(stats.loops)
    out_elems = iterations(epi_before.loops)
    score_names = sorted({r.name for r in tensor_refs(stats.x)})
    passes = max(score_passes(before, n) for n in score_names) if score_names else 0
    return t.build(
        applicability=(f"Block {stats.first + 1} streams the online-softmax statistics {t.before(canonical(old[0]))} "
                       f"and {t.before(canonical(old[1]))} with the rescale factor "
                       f"{t.before(canonical(old[found.factor]))}, the weight {t.before(canonical(old[found.weight]))} "
                       f"and the unnormalised running output {t.before(canonical(old[found.nested]))}; "
                       f"{found.running} is read only by the division {t.before(canonical(epi_before))} at the "
                       f"last streamed element ({stats.k}={stats.extent - 1}), and {stats.s} is read at the same "
                       f"row. Wherever the running max is finite the running sum is at least exp(0)=1 (the "
                       "maximal element's own term), so dividing by it is safe; the -inf case is guarded."),
        change=(f"The factor becomes {t.after(canonical(new[found.factor]))} and the weight "
                f"{t.after(canonical(new[found.weight]))} (the same -inf and first-step guards), so "
                f"{found.running} at every {stats.k} is the attention output over the first {stats.k}+1 "
                f"elements; the epilogue drops the division: {t.after(canonical(epi_after))}. No parameters."),
        rationale=(f"The cost: two divisions and a multiply more per streamed element "
                   f"({stream_rows} elements, {2 * stream_rows} divisions) replace the one final division pass "
                   f"over {found.output.name} ({out_elems} divisions); the score tensor "
                   f"{', '.join(score_names)} is still read by {passes} loop nest(s). What it buys is the "
                   "FlashAttention-1 form: every prefix element is itself a normalised attention output, so a "
                   "causal kernel can stop the stream at the query's own position and keep no epilogue."),
        exactness=("Numerically equivalent (N): the running output is renormalised by the running sums at "
                   f"each of the {stats.extent} steps (two more roundings in the factor, one in the weight) "
                   "instead of divided once at the end; equal in real arithmetic (docs/math_streaming.md)."),
    )


@register
class NormalMatmulToPrefixMatmulBasedOnOnlineSoftmax(FlashattentionWoTiling):
    """Turn the matmul of an online softmax's output into a prefix recurrence rescaled by its running statistics.

    Before: ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));];B^{2}_{tx=0}L^{4}_{a=0}[F^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,3})/E^{f32,g}_{tx,3};];B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+F^{f32,g}_{tx,c}*G^{f32,g}_{c,a};];``
    After:  ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));H^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a})/E^{f32,g}_{tx,a}));I^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a})/E^{f32,g}_{tx,a});L^{3}_{d=0}[J^{f32,g}_{tx,d,a}=if_then_else(a-1<0,0,J^{f32,g}_{tx,d,a-1}*H^{f32,g}_{tx,a})+I^{f32,g}_{tx,a}*G^{f32,g}_{a,d};];];B^{2}_{tx=0}L^{3}_{a=0}[C^{f32,g}_{tx,a}=J^{f32,g}_{tx,a,3};];``

    Precondition (first form): an online softmax — a block whose first two statements are #41's running max ``M_k``
    and running sum ``S_k`` — then the block computing ``P=exp(X-M_{K-1})/S_{K-1}``, then the single
    reduction ``O=O+P*V`` over exactly the streamed axis (``P`` read by bare loop variables, at least
    one output column loop, ``V`` written by none of these blocks, ``O`` by no other). The matmul
    becomes the normalised running output ``R_k = R_{k-1}*A_k + W_k*V_k`` with the rescale factor
    ``A_k = S_{k-1}*exp(M_{k-1}-M_k)/S_k`` and weight ``W_k = exp(X-M_k)/S_k`` computed once per
    element in the statistics' block (``R`` a nested block over the output columns), and
    ``O = R_{K-1}``: the prefix value at ``k`` is exactly the attention output over the first ``k+1`` keys, so no final division remains.

    Second form (the prefix matmul #43 leaves unnormalised, so #42 → #43 → #44 is a chain): the
    statistics block carries #43's factor ``A_k = exp(M_{k-1}-M_k)``, weight ``W_k = exp(X-M_k)`` (both
    0 while ``M_k=-inf``) and nested ``R_k = R_{k-1}*A_k + W_k*V``, and the only other reader of ``R`` is
    the epilogue ``O = R_{..,K-1}/S_{..,K-1}`` (matched on the syntax tree: any names, dtype and operand
    order; ``A``, ``W``, ``R`` read nowhere else). ``A_k`` becomes ``S_{k-1}*A_k/S_k`` and ``W_k`` becomes
    ``W_k/S_k`` inside the same guards, and the epilogue the copy ``O = R_{..,K-1}`` — the same program
    the first form gives from #42's result. #43's result on the pair above becomes that pair's After:
    Before (#43's result): ``B^{2}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});E^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,E^{f32,g}_{tx,a-1}*exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a}))+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));H^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,if_then_else(a-1<0,0,exp(D^{f32,g}_{tx,a-1}-D^{f32,g}_{tx,a})));I^{f32,g}_{tx,a}=if_then_else(D^{f32,g}_{tx,a}==-inf,0,exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a}));L^{3}_{d=0}[J^{f32,g}_{tx,d,a}=if_then_else(a-1<0,0,J^{f32,g}_{tx,d,a-1}*H^{f32,g}_{tx,a})+I^{f32,g}_{tx,a}*G^{f32,g}_{a,d};];];B^{2}_{tx=0}L^{3}_{a=0}[C^{f32,g}_{tx,a}=J^{f32,g}_{tx,a,3}/E^{f32,g}_{tx,3};];``

    ``S_k >= 1`` wherever ``M_k`` is finite (the maximal element contributes exp(0)); ``M_k=-inf`` is
    guarded. Designed here (listed by the paper, never implemented publicly).
    Numerically equivalent (N): see ``docs/math_streaming.md``.
    """

    number = 44
    name = "normal_matmul_to_prefix_matmul_based_on_online_softmax"
    level = Level.MATH
    exactness = Exactness.N
    forms = (True,)
    normalised = True
    refusals = {"no-such-pattern": "the site names no softmax followed by a matmul of its output, nor an "
                                   "unnormalised running output divided by its running sum"}

    def candidates(self, program: Program) -> list[Site]:
        sites = super().candidates(program) + [deferred_site(found) for found in deferred_outputs(program)]
        return sorted(sites, key=lambda s: s.path)

    def check(self, program: Program, site: Site, params: Params | None = None) -> Attention | Deferred:
        """The attention (first form) or the deferred running output (second form) the site names."""
        if site.get("running") is None:
            return super().check(program, site, params)
        return self._deferred(program, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        found = self.check(program, site, params)
        if isinstance(found, Deferred):
            return with_body(program, normalise_deferred(program, found).body)
        return super().apply(program, site, params)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        if site.get("running") is None:
            return super().explain(before, site, params, after)
        return explain_normalise(before, self._deferred(before, site), after)

    def _deferred(self, program: Program, site: Site) -> Deferred:
        for found in deferred_outputs(program):
            if deferred_site(found).key == site.key:
                return found
        raise self.refuse("no-such-pattern", f"no unnormalised running output divided by its running sum at "
                          f"{site.key}", site)
