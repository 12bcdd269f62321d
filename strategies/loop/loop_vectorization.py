"""loop_vectorization (catalogue #16): an innermost contiguous spatial loop becomes a vector loop ``V``."""

from __future__ import annotations

from collections.abc import Iterator

from leir.analysis import contiguity_problem, loop_race_reason, program_info
from leir.ast import Assign, Block, Loop, Program
from leir.dtypes import dtype_bytes
from leir.printer import loop_text
from leir.rewrite import block_at
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import Path, describe_block
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    change_kind,
    check_loop,
    enclosing_vector_loop,
    find_loop,
    loop_sites,
    ref_using,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Widest vector worth one loop: 16 f32 lanes fill an AVX-512 register; longer loops are split first.
MAX_VECTOR_EXTENT = 16


@register
class LoopVectorization(Strategy):
    """Mark the innermost serial loop of a block ``V``: its iterations become the lanes of vector ops.

    From level1/cat_split_chunk:

    Before: ``B^{4}_{tx=0}L^{8}_{a=0}[F^{f32,g}_{tx,a}=C^{f32,g}_{tx,a};];``
    After:  ``B^{4}_{tx=0}V^{8}_{a=0}[F^{f32,g}_{tx,a}=C^{f32,g}_{tx,a};];``

    Precondition: the loop is the last of a header whose items are all statements (innermost), or
    followed there only by ``U`` loops (TVM unrolls those into straight-line copies inside each vector
    operation: the rows of a register tile, ``V^{16}_{f}U^{6}_{d}``), serial
    ``L``, of extent 2..16, spatial (no dependence along it), no enclosing loop is already vectorised,
    and every access is contiguous along it: the variable appears only in the last subscript with
    stride 1 (``A_{i,a*64+c}`` along ``c``) or not at all (a broadcast). A strided, gathered or
    ``//``/``%`` access, or the variable used as a value, is refused. Lanes compute exactly what the
    iterations did: exact (E).
    """

    number = 16
    name = "loop_vectorization"
    level = Level.LOOP
    exactness = Exactness.E
    refusals = {**LOOP_SITE_REFUSALS, "cannot-vectorize": "the loop is not an innermost serial loop of 2..MAX_VECTOR_EXTENT lanes, free of races, with contiguous access, outside any vectorised loop"}

    def candidates(self, program: Program) -> list[Site]:
        return loop_sites(self, program)

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Block, int, Loop]:
        return check_loop(self, program, site, "cannot-vectorize", self._problem)

    @staticmethod
    def _problem(program: Program, path: tuple[int, ...], lp: Loop) -> str | None:
        block = block_at(program.body, path)
        k = next(i for i, other in enumerate(block.loops) if other.var == lp.var)
        if any(other.kind != "U" for other in block.loops[k + 1:]):
            return f"the loop {loop_text(lp)} is not the innermost loop of its header (unrolled loops aside)"
        if not all(isinstance(item, Assign) for item in block.items):
            return f"the loop {loop_text(lp)} encloses a nested block; only innermost loops are vectorised"
        if lp.kind != "L":
            return f"the loop {loop_text(lp)} is {lp.kind}, not serial L"
        if not 2 <= lp.extent <= MAX_VECTOR_EXTENT:
            return f"extent {lp.extent} is outside 2..{MAX_VECTOR_EXTENT} lanes"
        reason = loop_race_reason(program, path, lp.var)
        if reason:
            return f"the loop {loop_text(lp)} {reason}; its lanes would race"
        vector = enclosing_vector_loop(program, path, k)
        if vector:
            return f"the enclosing loop {loop_text(vector)} is already vectorised"
        problem = contiguity_problem(block, lp.var)
        if problem:
            return f"access is not contiguous: {problem}"
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return change_kind(self, program, site, "V")

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        block, k, old = find_loop(self, before, site.path, site.get("loop"))
        new = block_at(after.body, site.path).loops[k]
        t = TraceBuilder()
        info = program_info(before)
        used = ref_using(block, old.var)
        dtypes = sorted({info.tensors[r.name].dtype for _, s, _ in _stmts(block)
                         for r in (s.target,)})
        width = old.extent * max(dtype_bytes(d) for d in dtypes)
        example = f", e.g. {t.before(used)}" if used else ""
        return t.build(
            applicability=(f"In {describe_block(site.path)} the innermost loop {t.before(loop_text(old))} is "
                           f"spatial with a small extent of {old.extent}, and every tensor is read or "
                           f"written at consecutive addresses along {old.var}{example}."),
            change=f"{t.before(loop_text(old))} becomes {t.after(loop_text(new))}; no parameters.",
            rationale=(f"The {old.extent} iterations become {old.extent} lanes of one vector operation per "
                       f"statement ({width} bytes of {'/'.join(dtypes)} per access, one contiguous load or "
                       f"store instead of {old.extent} scalar ones), so the block issues about "
                       f"{old.extent}x fewer instructions."),
            exactness=("Exact (E): each lane performs its iteration's arithmetic on its own elements, so the "
                       "outputs are bitwise identical."),
        )


def _stmts(block: Block) -> Iterator[tuple[Path, Assign, tuple[Loop, ...]]]:
    from leir.analysis import item_statements

    return item_statements(block)
