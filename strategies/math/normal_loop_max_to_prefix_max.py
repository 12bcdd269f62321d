"""normal_loop_max_to_prefix_max (catalogue #37): a max reduction becomes a running-max recurrence."""

from __future__ import annotations

from dataclasses import dataclass

from leir.analysis import fresh_tensor_names, independent, injective_subscript, program_info, readers_after
from leir.ast import (
    Assign,
    Block,
    Call,
    Compare,
    Expr,
    IfThenElse,
    Inf,
    Loop,
    Neg,
    Num,
    Program,
    TensorRef,
    Var,
    strip_parens,
    tensor_refs,
)
from leir.builders import isub
from leir.printer import canonical, expr_text, loop_text
from leir.rewrite import replace_at, with_body
from leir.semantics import StmtKind
from strategies.base import Exactness, Level, NotApplicableError, Params, Site, Strategy
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@dataclass(frozen=True, slots=True)
class _Match:
    block: Block
    index: int
    stmt: Assign
    axis: Loop
    spatial: tuple[Loop, ...]
    #: Position of the reduced operand ``X`` among ``max``'s two arguments (the other is ``Y``).
    operand: int


@register
class NormalLoopMaxToPrefixMax(Strategy):
    """Turn ``Y=max(Y,X)`` over one axis into a running max along it; ``Y`` takes the last element.

    Before: ``B^{16}_{tx=0}L^{256}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];``
    After:  ``B^{16}_{tx=0}[L^{256}_{a=0}[C^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,C^{f32,g}_{tx,a-1}),A^{f32,g}_{tx,a});];D^{f32,g}_{tx}=C^{f32,g}_{tx,255};];``

    Precondition: a statement of a top-level block that is a ``max`` reduction (implicit ``-inf``
    init) over exactly one serial (``L``/``U``) axis, whose target subscript is injective in the
    remaining (spatial) loops, with every other statement of its block independent of it. The spatial
    loops stay outside; the reduced axis becomes a nested block writing the prefix tensor
    ``P_{spatial…,k}`` (the max of the first ``k+1`` values, the first guarded with ``-inf``), and
    ``Y`` copies the last element, so every reader of ``Y`` is unchanged.
    Exact (E): each prefix element is the same ``max`` of the same values in the same order as the
    reduction's partial result, and ``max`` does not round.
    """

    number = 37
    name = "normal_loop_max_to_prefix_max"
    level = Level.MATH
    exactness = Exactness.E
    refusals = {
        "not-top-level-statement": "the site is not a statement of a top-level block",
        "nested-blocks": "the block holds nested blocks",
        "not-max-reduction": "the statement is not a max reduction with an implicit init",
        "not-one-axis": "the max reduces more than one axis",
        "axis-not-serial": "the reduced loop is not serial (L or U); a recurrence must be",
        "target-not-injective": "the target subscript is not injective in the spatial loops",
        "operand-reads-accumulator": "the reduced operand reads the accumulator",
        "dependent-statement": "another statement of the block depends on the max",
    }

    def _match(self, program: Program, path: tuple[int, ...]) -> _Match:
        if len(path) != 2 or not 0 <= path[0] < len(program.body.blocks):
            raise self.refuse("not-top-level-statement", f"{path} is not a statement of a top-level block")
        block = program.body.blocks[path[0]]
        if not 0 <= path[1] < len(block.items) or not all(isinstance(i, Assign) for i in block.items):
            raise self.refuse("nested-blocks", "the block holds nested blocks")
        stmt = block.items[path[1]]
        assert isinstance(stmt, Assign)
        info = program_info(program).statements[path]
        if info.kind is not StmtKind.REDUCE or info.combiner != "max":
            raise self.refuse("not-max-reduction", f"{expr_text(stmt.target)} is not a max reduction with an implicit init")
        if len(info.reduce_vars) != 1:
            raise self.refuse("not-one-axis", f"the max reduces {len(info.reduce_vars)} axes, not one")
        (var,) = info.reduce_vars
        axis = next(lp for lp in block.loops if lp.var == var)
        if axis.kind not in ("L", "U"):
            raise self.refuse("axis-not-serial", f"the reduced loop {loop_text(axis)} is not serial; a recurrence must be")
        spatial = tuple(lp for lp in block.loops if lp.var != var)
        if not injective_subscript(stmt.target.indices, spatial):
            raise self.refuse("target-not-injective", "the target subscript is not injective in the spatial loops")
        value = strip_parens(stmt.value)
        assert isinstance(value, Call) and value.func == "max"
        operand = 1 if strip_parens(value.args[0]) == stmt.target else 0
        if any(r.name == stmt.target.name for r in tensor_refs(value.args[operand])):
            raise self.refuse("operand-reads-accumulator", "the reduced operand reads the accumulator")
        for k, other in enumerate(block.items):
            if k != path[1] and not independent(stmt, other):
                raise self.refuse("dependent-statement", f"statement {k + 1} of the block depends on the max")
        return _Match(block, path[1], stmt, axis, spatial, operand)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for b, block in enumerate(program.body.blocks):
            for k in range(len(block.items)):
                try:
                    m = self.check(program, Site((b, k)))
                except NotApplicableError:
                    continue
                sites.append(Site((b, k), (("tensor", m.stmt.target.name),),
                                  where=f"the max reduction of {m.stmt.target.name} over {m.axis.var} "
                                        f"in block {b + 1}"))
        return sites

    def _prefix(self, program: Program, m: _Match) -> tuple[Block, TensorRef]:
        (name,) = fresh_tensor_names(program)
        y = m.stmt.target
        var = m.axis.var
        lead = tuple(Var(lp.var) for lp in m.spatial)

        def at(index: Expr) -> TensorRef:
            return TensorRef(name, y.dtype, "g", (*lead, index))

        previous = IfThenElse(Compare((isub(Var(var), 1), Num("0")), ("<",)), Neg(Inf()),
                              at(isub(Var(var), 1)))
        value = strip_parens(m.stmt.value)
        assert isinstance(value, Call)
        args = list(value.args)
        args[1 - m.operand] = previous
        recurrence = Assign(at(Var(var)), Call("max", tuple(args)))
        last = at(Num(str(m.axis.extent - 1)))
        outer = Block(m.spatial, (Block((m.axis,), (recurrence,)), Assign(y, last)))
        return outer, last

    def check(self, program: Program, site: Site, params: Params | None = None) -> _Match:
        """The max reduction to turn into a prefix max, with its block, axis and spatial loops."""
        try:
            return self._match(program, site.path)
        except NotApplicableError as refusal:
            refusal.site = site
            raise

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        m = self.check(program, site, params)
        outer, _ = self._prefix(program, m)
        rest = tuple(item for k, item in enumerate(m.block.items) if k != m.index)
        new = (outer, Block(m.block.loops, rest)) if rest else (outer,)
        return with_body(program, replace_at(program.body, (site.path[0],), new))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        m = self._match(before, site.path)
        outer, last = self._prefix(before, m)
        y = m.stmt.target
        readers = readers_after(before.body, site.path[0], y.name)
        later = ", ".join(str(r + 1) for r in readers) or "none"
        t = TraceBuilder()
        recurrence = outer.items[0]
        return t.build(
            applicability=(f"{t.before(canonical(m.stmt))} is a max reduction of {y.name} over the single "
                           f"serial axis {t.before(loop_text(m.axis))} (implicit init -inf), its subscript "
                           f"is injective in the other loops, and no other statement of block "
                           f"{site.path[0] + 1} depends on it."),
            change=(f"The reduction becomes the running max {t.after(canonical(recurrence)[:-1])} over a "
                    f"prefix tensor {last.name} with one element per {m.axis.var}, and "
                    f"{t.after(canonical(Assign(y, last)))} takes the last element; blocks reading "
                    f"{y.name} ({later}) are unchanged. No parameters."),
            rationale=(f"An enabling step: every partial maximum {last.name}[…,k] over the first k+1 values "
                       f"of {m.axis.var} is now a named value, which exponential_split (#38) uses as the "
                       f"shift s of exp(X-{y.name}) and online softmax (#41/#42) rescales a running sum "
                       f"with, fusing the max pass into the sum pass. On its own it costs "
                       f"{m.axis.extent}x the storage of {y.name} and one copy per element."),
            exactness=("Exact (E): each prefix element is the same max of the same values in the same "
                       "order as the reduction's partial result, and max does not round; the outputs "
                       "are bitwise identical."),
        )
