"""compute_inline (catalogue #3): a one-statement producer block is substituted into the next block."""

from __future__ import annotations

from leir.analysis import (
    consumers,
    item_statements,
    iterations,
    producers,
    program_info,
    reads,
    tensor_bytes,
    writes,
)
from leir.ast import Assign, Block, Expr, Num, Program, TensorRef, Var, tensor_refs
from leir.dtypes import is_emulated
from leir.printer import canonical, expr_text
from leir.rewrite import map_item_exprs, replace_at, replace_refs, substitute_vars, with_body
from leir.semantics import StmtKind
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import header_text
from strategies.graph.blocks import same_header
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _refs_in_indices(item: Block, name: str) -> bool:
    """Whether ``name`` is read inside a subscript (a gather index) anywhere in ``item``."""
    for _, stmt, _ in item_statements(item):
        for ref in (stmt.target, *tensor_refs(stmt.value)):
            if any(r.name == name for index in ref.indices for r in tensor_refs(index)):
                return True
    return False


@register
class ComputeInline(Strategy):
    """Substitute the value a block computes into the next block, which is its only reader.

    Before: ``B^{16}_{tx=0}L^{1}_{a=0}[E^{f32,g}_{tx,a}=0;];B^{16}_{tx=0}L^{1}_{a=0}[F^{f32,g}_{tx,a}=E^{f32,g}_{tx,a};];``
    After:  ``B^{16}_{tx=0}L^{1}_{a=0}[F^{f32,g}_{tx,a}=0;];``

    Precondition: block *i−1* is one plain (non-reduction) statement writing an intermediate, indexed by
    distinct bare loop variables covering its loops (one value per iteration), written nowhere else and
    read only by block *i*, whose header runs the same iterations; block *i* writes nothing the
    statement reads, reads the intermediate in its own dtype, never inside a subscript, and computes in
    that dtype. Each read ``X_{e1,…}`` becomes the producer's expression with its loop variables replaced
    by ``e1,…``; block *i−1* disappears.
    Exact (E): the same operations in the same dtype; the stored value is what the expression gives.
    """

    number = 3
    name = "compute_inline"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {"cannot-inline": "the block is not a single plain statement writing an intermediate that only "
                                 "the next block (same iterations, same dtype) reads, one value per iteration, "
                                 "outside subscripts, or the inlined program would not check"}

    def _problem(self, program: Program, index: int) -> str | None:
        blocks = program.body.blocks
        if not 0 <= index < len(blocks) - 1:
            return f"block {index + 1} has no next block"
        producer, consumer = blocks[index], blocks[index + 1]
        if len(producer.items) != 1 or not isinstance(producer.items[0], Assign):
            return f"block {index + 1} is not a single statement"
        stmt = producer.items[0]
        name = stmt.target.name
        info = program_info(program)
        if info.statements[(index, 0)].kind is not StmtKind.ASSIGN:
            return f"{name} is computed by a {info.statements[(index, 0)].kind.value}, not a plain value"
        if program.signature.get(name) is not None:
            return f"{name} is a signature tensor, not an intermediate"
        if producers(program.body, name) != ((index, 0),):
            return f"{name} is written by more than this statement"
        if any(path[0] != index + 1 for path in consumers(program.body, name)):
            return f"{name} is read outside block {index + 2}"
        if not same_header(producer, consumer):
            return (f"the headers {header_text(producer.loops)} and {header_text(consumer.loops)} run "
                    "different iterations")
        subscript = [i.name for i in stmt.target.indices if isinstance(i, Var)]
        if len(subscript) != len(stmt.target.indices) or len(set(subscript)) != len(subscript):
            return f"{expr_text(stmt.target)} is not indexed by distinct bare loop variables"
        if any(lp.extent > 1 and lp.var not in subscript for lp in producer.loops):
            return f"{expr_text(stmt.target)} does not hold one value per iteration"
        clash = sorted(writes(consumer) & reads(producer))
        if clash:
            return f"block {index + 2} writes {', '.join(clash)}, which the inlined expression reads"
        if _refs_in_indices(consumer, name):
            return f"block {index + 2} uses {name} inside a subscript"
        for _, use, _ in item_statements(consumer):
            refs = [r for r in tensor_refs(use.value) if r.name == name]
            if refs and (use.target.dtype != stmt.target.dtype or any(r.dtype != stmt.target.dtype
                                                                      for r in refs)):
                return f"{expr_text(use.target)} computes in another dtype than {name}'s {stmt.target.dtype}"
        if is_emulated(stmt.target.dtype):
            # bf16/fp8 compute in f32 and round on the store: inlined, the producer's rounding disappears
            return f"{name} is stored in {stmt.target.dtype}, which rounds once per store: inlining changes it"
        return None

    def _inline(self, program: Program, index: int) -> Program:
        producer, consumer = program.body.blocks[index], program.body.blocks[index + 1]
        stmt = producer.items[0]
        assert isinstance(stmt, Assign)
        names = [i.name for i in stmt.target.indices]  # type: ignore[union-attr]
        unit = {lp.var: Num("0") for lp in producer.loops if lp.var not in names}

        def value_at(ref: TensorRef) -> Expr | None:
            if ref.name != stmt.target.name:
                return None
            mapping: dict[str, Expr] = dict(unit)
            mapping.update(zip(names, ref.indices, strict=True))
            return substitute_vars(stmt.value, mapping)  # type: ignore[return-value]

        inlined = map_item_exprs(consumer, lambda n: replace_refs(n, value_at))
        body = replace_at(program.body, (index + 1,), inlined)
        return with_body(program, replace_at(body, (index,), ()))

    def _reads_in_step(self, program: Program, index: int) -> bool:
        """Whether block *i* reads the value only where block *i−1* wrote it in the same iteration."""
        producer, consumer = program.body.blocks[index], program.body.blocks[index + 1]
        stmt = producer.items[0]
        assert isinstance(stmt, Assign)
        same = {a.var: b.var for a, b in zip(producer.loops, consumer.loops, strict=True)}
        expected = tuple(Var(same[i.name]) for i in stmt.target.indices)  # type: ignore[union-attr]
        return all(ref.indices == expected for _, use, _ in item_statements(consumer)
                   for ref in tensor_refs(use.value) if ref.name == stmt.target.name)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for index in range(len(program.body.blocks) - 1):
            if not self.legal(program, Site((index,))):
                continue
            name = program.body.blocks[index].items[0].target.name  # type: ignore[union-attr]
            sites.append(Site((index,), (("tensor", name),), where=f"{name} of block {index + 1}"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> int:
        """The index of the producer block to inline into the next one, or a refusal."""
        (index,) = site.path
        problem = self._problem(program, index)
        if problem:
            raise self.refuse("cannot-inline", problem, site)
        if not self._reads_in_step(program, index) and not program_info(self._inline(program, index)).ok:
            # e.g. a shifted read whose guard the checker cannot narrow: not provably legal
            raise self.refuse("cannot-inline", "the inlined program does not pass the checker (a shifted read "
                              "whose guard cannot be narrowed)", site)
        return index

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        return self._inline(program, self.check(program, site, params))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        (index,) = site.path
        producer, consumer = before.body.blocks[index], before.body.blocks[index + 1]
        stmt = producer.items[0]
        assert isinstance(stmt, Assign)
        name = stmt.target.name
        uses = sum(1 for _, use, _ in item_statements(consumer)
                   for r in tensor_refs(use.value) if r.name == name)
        size = tensor_bytes(before, name)
        count = iterations(consumer.loops)
        t = TraceBuilder()
        return t.build(
            applicability=(f"Block {index + 1} computes the plain value {t.before(canonical(stmt))}, one "
                           f"element per iteration of {t.before(header_text(producer.loops))}; only block "
                           f"{index + 2} {t.before(canonical(consumer))}, with the same iterations, reads "
                           f"{name}."),
            change=(f"The expression {t.before(expr_text(stmt.value))} replaces the {uses} read(s) of {name}:"
                    " "
                    f"block {index + 2} becomes {t.after(canonical(after.body.blocks[index]))} and block "
                    f"{index + 1} is removed; no parameters."),
            rationale=(f"The {size}-byte intermediate {name} is no longer written and read back: one pass "
                       f"over {count} iterations instead of two, with the value kept in registers"
                       + (f" (the expression is evaluated {uses} times per iteration instead of once)"
                          if uses > 1 else "") + "."),
            exactness=(f"Exact (E): the consumer computes in {stmt.target.dtype}, the dtype {name} was "
                       "stored in, with the same operations on the same values."),
        )
