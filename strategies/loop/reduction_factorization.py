"""reduction_factorization (catalogue #18): a reduction becomes partial reductions plus a combine."""

from __future__ import annotations

from leir.analysis import (
    fresh_loop_vars,
    fresh_tensor_names,
    program_info,
    proper_divisors,
    split_index_var,
    var_in_condition,
)
from leir.ast import Assign, BinOp, Block, Call, Compare, Logical, Loop, Program, TensorRef, Var
from leir.printer import canonical, loop_text
from leir.rewrite import replace_at, replace_refs, with_body
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy, int_param
from strategies.common import describe_block, header_text
from strategies.loop.nest import LOOP_SITE_REFUSALS, find_loop, guard_refusal
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

_COMBINERS = ("+", "*", "max", "min")


@register
class ReductionFactorization(Strategy):
    """Factor a reduction over ``r`` (extent ``n``) into ``f`` partial reductions, then combine them.

    From level1/hinge_loss's last block as a program of its own, parameters {'factor': 2}:

    Before: ``B^{16}_{tx=0}L^{64}_{a=0}[H^{f32,g}=H^{f32,g}+F^{f32,g}_{tx,a};];``
    After:  ``B^{16}_{tx=0}L^{32}_{a=0}L^{2}_{c=0}[A^{f32,g}_{c}=A^{f32,g}_{c}+F^{f32,g}_{tx,a*2+c};];L^{2}_{c=0}[H^{f32,g}=H^{f32,g}+A^{f32,g}_{c};];``

    Parameter ``factor`` (``f``, every divisor ``1 < f < n``; ``n`` itself when ``n`` is prime): the
    loop over ``r`` becomes ``r`` (``n/f``) and a fresh ``k`` (``f``); a fresh intermediate keeps one
    partial result per ``k`` — partial ``k`` reduces the terms ``r*f+k`` — and a second block combines
    the ``f`` partials into the original tensor with the same operation (TVM's ``rfactor``). The
    partials are independent, so the ``k`` loop can then be parallelised, vectorised or bound.
    Precondition: a top-level block whose only item is a reduction with implicit init (``+ * max
    min``) and ``r`` one of its reduction loops, serial ``L``, of extent > 1, compared by
    no guard. Exactness per site: a ``+`` or ``*`` reduction combines its terms in another grouping, so
    rounding differs (N); ``max`` and ``min`` do not round — the partial maxima of any grouping give the
    same maximum — so those are exact (E).
    """

    number = 18
    name = "reduction_factorization"
    level = Level.LOOP
    exactness = None
    refusals = {
        **LOOP_SITE_REFUSALS,
        "cannot-factor": "the loop is not a serial reduction loop (extent > 1, no guard on it) of a top-level "
                         "block's single reduction statement with a combiner that has a partial form",
        "illegal-factor": "the number of partials asked for is not a legal one for the loop's extent",
    }

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for b, block in enumerate(program.body.blocks):
            for lp in block.loops:
                if self.legal(program, Site((b,), (("loop", lp.var),))):
                    sites.append(Site((b,), (("loop", lp.var),),
                                      (ParamSpec("factor", _factors(lp.extent), "partial results"),),
                                      where=f"the reduction loop over {lp.var} in {describe_block((b,))}"))
        return sites

    @staticmethod
    def _problem(program: Program, path: tuple[int, ...], var: str) -> str | None:
        if len(path) != 1:
            return "only a top-level block is factored"
        block = program.body.blocks[path[0]]
        if len(block.items) != 1 or not isinstance(block.items[0], Assign):
            return f"{describe_block(path)} does not hold exactly one statement"
        sinfo = program_info(program).statements.get(path + (0,))
        if sinfo is None or sinfo.kind.value != "reduce":
            return "its statement is not a reduction with implicit init"
        if sinfo.combiner not in _COMBINERS:
            return f"the combining operation {sinfo.combiner} has no partial form here"
        lp = next((lp for lp in block.loops if lp.var == var), None)
        if lp is None or var not in sinfo.reduce_vars:
            return f"{var} is not a reduction loop of the statement"
        if lp.kind != "L" or lp.extent < 2:
            return f"the loop {loop_text(lp)} is not a serial loop of extent > 1"
        if var_in_condition(block, var):
            return guard_refusal(var)
        return None

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop]:
        """The block, position and reduction loop to factor, or a refusal."""
        var = site.get("loop")
        block, k, lp = find_loop(self, program, site.path, var)
        problem = self._problem(program, site.path, var)
        if problem:
            raise self.refuse("cannot-factor", problem, site)
        factor = params.get("factor") if params is not None else None
        if params is not None and (not isinstance(factor, int) or factor not in _factors(lp.extent)):
            raise self.refuse("illegal-factor", f"factor {factor} is not a legal number of partials for extent "
                              f"{lp.extent}", site)
        return block, k, lp

    def exactness_at(self, program: Program, site: Site, params: Params) -> Exactness:
        return Exactness.E if _combiner(program, site) in _EXACT_COMBINERS else Exactness.N

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, k, lp = self.check(program, site, params)
        var, factor = lp.var, int_param(params, "factor")
        stmt = block.items[0]
        assert isinstance(stmt, Assign)
        sinfo = program_info(program).statements[site.path + (0,)]
        (part,) = fresh_tensor_names(program, 1)
        (lane,) = fresh_loop_vars(program, 1)
        target = stmt.target
        partial_ref = TensorRef(part, target.dtype, "g", target.indices + (Var(lane),))

        def to_partial(node: TensorRef) -> TensorRef | None:
            if node.name == target.name and node.indices == target.indices:
                return partial_ref
            return None

        value = split_index_var(replace_refs(stmt.value, to_partial), var, lane, factor)
        assert not isinstance(value, (Compare, Logical)), "rewriting a value keeps it a value"
        partial_loops = block.loops[:k] + (Loop("L", lp.extent // factor, var), Loop("L", factor, lane)) \
            + block.loops[k + 1:]
        partial = Block(partial_loops, (Assign(partial_ref, value),))
        spatial = tuple(o for o in block.loops if o.var not in sinfo.reduce_vars)
        combine = Block(spatial + (Loop("L", factor, lane),),
                        (Assign(target, _combine(sinfo.combiner, target, partial_ref)),))
        return with_body(program, replace_at(program.body, site.path, (partial, combine)))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        var, factor = site.get("loop"), int_param(params, "factor")
        block, k, lp = find_loop(self, before, site.path, var)
        stmt = block.items[0]
        assert isinstance(stmt, Assign)
        partial, combine = after.body.blocks[site.path[0]], after.body.blocks[site.path[0] + 1]
        part = partial.items[0]
        final = combine.items[0]
        assert isinstance(part, Assign) and isinstance(final, Assign)
        t = TraceBuilder()
        name = stmt.target.name
        return t.build(
            applicability=(f"{describe_block(site.path)} holds the single reduction "
                           f"{t.before(canonical(stmt))} over {t.before(loop_text(lp))} "
                           f"(extent {lp.extent})."),
            change=(f"With factor={factor}, {t.before(header_text(block.loops))} becomes the partial "
                    f"reduction {t.after(canonical(part))} under {t.after(header_text(partial.loops))} "
                    f"({factor} partials of {lp.extent // factor} terms each), followed by the combine "
                    f"{t.after(canonical(final))} under {t.after(header_text(combine.loops))}."),
            rationale=(f"The {lp.extent} terms per element of {name} formed one dependence chain; now "
                       f"{factor} independent chains of {lp.extent // factor} run side by side (the loop "
                       f"over "
                       f"{partial.loops[k + 1].var} carries no dependence, so it can be parallelised, "
                       f"vectorised or bound to threads) and only {factor} partials are combined per "
                       f"element, at the cost of a {part.target.name} buffer with {factor}x the elements "
                       f"of {name}."),
            exactness=_exactness_text(_combiner(before, site)),
        )


#: Combiners whose result does not depend on the grouping of the terms (no rounding).
_EXACT_COMBINERS = ("max", "min")


def _combiner(program: Program, site: Site) -> str | None:
    sinfo = program_info(program).statements.get(tuple(site.path) + (0,))
    return sinfo.combiner if sinfo is not None else None


def _exactness_text(combiner: str | None) -> str:
    if combiner in _EXACT_COMBINERS:
        return (f"Exact (E): {combiner} does not round, so the {combiner} of the partial results is the "
                f"{combiner} of all the terms whatever their grouping; the outputs are bitwise identical.")
    return ("Numerically equivalent (N): the terms are grouped differently (partial results combined at "
            "the end), so floating-point rounding differs; the result agrees within the dtype tolerance, "
            "not bitwise.")


def _factors(extent: int) -> tuple[int, ...]:
    return proper_divisors(extent) or (extent,)


def _combine(combiner: str | None, target: TensorRef, partial: TensorRef) -> Call | BinOp:
    if combiner in ("max", "min"):
        return Call(combiner, (target, partial))
    assert combiner in ("+", "*")
    return BinOp(combiner, target, partial)
