"""loop_split (catalogue #12): one spatial loop becomes an outer and an inner loop, ``i → i*f+k``."""

from __future__ import annotations

from leir.analysis import (
    fresh_loop_vars,
    loop_race_reason,
    proper_divisors,
    split_index_var,
    var_in_condition,
)
from leir.ast import Block, Loop, Program
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy, int_param
from strategies.common import describe_block, header_text
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    bound_loop_inside,
    find_loop,
    guard_refusal,
    header_loops,
    loop_site,
    rebuild,
    ref_using,
    trip_count,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _kind_word(lp: Loop) -> str:
    return "bound" if lp.kind == "B" else "serial"


@register
class LoopSplit(Strategy):
    """Split a serial or bound spatial loop of extent ``n`` into an outer loop of ``n/f`` and an inner loop of ``f``.

    From level1/cat_split_chunk, parameters {'factor': 2}:

    Before: ``B^{4}_{tx=0}L^{24}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];``
    After:  ``B^{4}_{tx=0}L^{12}_{a=0}L^{2}_{c=0}[D^{f32,g}_{tx,a*2+c}=A^{f32,g}_{tx,a*2+c};];``

    The outer loop keeps the variable's name, the inner one takes a fresh name, and every use of the
    variable ``a`` becomes ``a*2+c`` (spliced into the sums it appears in, so ``loop_fusion`` gives the
    original text back). A loop bound to a GPU axis (``B``) splits the same way when no bound loop
    runs inside it: the outer loop keeps the axis with ``n/f`` blocks or threads and the inner one is a
    serial ``L`` of ``f`` that each of them runs (coarsening: on the CPU, where the frontend's ``tx``
    is serial, the ``f`` rows a register tile works on once the inner loop is moved inward and
    unrolled). Precondition: the loop is serial ``L`` or such a ``B``, no statement under it carries a
    dependence along it (a spatial loop), no guard compares it (guarded reads are proved in bounds on
    the plain variable), and its extent has a divisor ``1 < f < n`` (parameter
    ``factor``, every such divisor). The iterations run in the same order: exact (E).
    """

    number = 12
    name = "loop_split"
    level = Level.LOOP
    exactness = Exactness.E
    inverse_of = ("loop_fusion",)

    refusals = {
        **LOOP_SITE_REFUSALS,
        "not-splittable-kind": "the loop is neither serial L nor a bound B with no bound loop inside it",
        "no-divisor": "the loop's extent has no divisor 1 < f < n (or the factor asked for is not one)",
        "not-spatial": "a statement under the loop carries a dependence along it",
        "guarded-loop": "a guard compares the loop variable",
    }

    def candidates(self, program: Program) -> list[Site]:
        return [loop_site(path, lp, (ParamSpec("factor", proper_divisors(lp.extent), "inner extent"),))
                for path, _block, _k, lp in header_loops(program)
                if self.legal(program, loop_site(path, lp))]

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop]:
        """The block, position and loop to split (module docstring's precondition), or a refusal."""
        var = site.get("loop")
        block, k, lp = find_loop(self, program, site.path, var)
        if lp.kind == "B" and bound_loop_inside(block, k):
            raise self.refuse("not-splittable-kind", f"the bound loop over {var} has a bound loop inside it", site)
        if lp.kind not in ("L", "B"):
            raise self.refuse("not-splittable-kind", f"the loop over {var} is {lp.kind}, not serial L or bound B",
                              site)
        factors = proper_divisors(lp.extent)
        if not factors:
            raise self.refuse("no-divisor", f"extent {lp.extent} has no divisor 1 < f < {lp.extent}", site)
        if params is not None and params.get("factor") not in factors:
            raise self.refuse("no-divisor", f"factor {params.get('factor')} does not divide extent {lp.extent} "
                              "non-trivially", site)
        reason = loop_race_reason(program, site.path, var)
        if reason is not None:
            raise self.refuse("not-spatial", f"the loop over {var} {reason}: it is not a spatial loop", site)
        if var_in_condition(block, var):
            raise self.refuse("guarded-loop", guard_refusal(var), site)
        return block, k, lp

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, k, lp = self.check(program, site, params)
        var, factor = lp.var, int_param(params, "factor")
        (inner,) = fresh_loop_vars(program, 1)
        loops = block.loops[:k] + (Loop(lp.kind, lp.extent // factor, var), Loop("L", factor, inner)) \
            + block.loops[k + 1:]
        return rebuild(program, site.path, block, loops, lambda e: split_index_var(e, var, inner, factor))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        var, factor = site.get("loop"), int_param(params, "factor")
        old_block, k, old = find_loop(self, before, site.path, var)
        new_block = block_at(after.body, site.path)
        outer, inner = new_block.loops[k], new_block.loops[k + 1]
        t = TraceBuilder()
        body_trips = trip_count(old_block.loops[k + 1:])
        used = ref_using(new_block, inner.var)
        uses = f", so a reference reads {t.after(used)}" if used else ""
        return t.build(
            applicability=(f"In {describe_block(site.path)} the {_kind_word(old)} loop {t.before(loop_text(old))} is "
                           f"spatial (no statement carries a dependence along {var}) and its extent "
                           f"{old.extent} has the divisor {factor}."),
            change=(f"{t.before(loop_text(old))} becomes {t.after(header_text((outer, inner)))} with "
                    f"factor={factor}; every use of {var} becomes {var}*{factor}+{inner.var}{uses}."),
            rationale=(f"The {old.extent} iterations become {outer.extent} outer x {factor} inner ones, each "
                       f"running {body_trips} inner iteration(s) of the body; the inner loop of extent "
                       f"{factor} is a unit that can be vectorised, unrolled or bound to threads, and the "
                       "outer one can be parallelised or reordered with the loops around it."
                       + (f" The outer loop stays bound to {var}: each of its {outer.extent} blocks or threads "
                          f"now runs {factor} of the old iterations, which a reorder can move inward and "
                          "an unroll can turn into a register tile." if old.kind == "B" else "")),
            exactness=("Exact (E): the iterations run in the same order with the same arithmetic, so the "
                       "outputs are bitwise identical."),
        )
