"""precompute_indices (catalogue #23): a compound subscript becomes a lookup in an ``i64`` index table."""

from __future__ import annotations

from leir.analysis import fresh_tensor_names, program_info, stmt_reads, tensor_refs_in
from leir.ast import Assign, BinOp, Block, Expr, Loop, Program, TensorRef, Var, statements, walk_expr
from leir.printer import canonical, expr_text
from leir.rewrite import insert_blocks, item_at, loops_at, replace_at, replace_refs, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Largest index table (entries): beyond it the table's own traffic outweighs the arithmetic it saves.
MAX_TABLE_ENTRIES = 1 << 16


def _vars(e: Expr) -> list[str]:
    return [n.name for n in walk_expr(e) if isinstance(n, Var)]


def _compound(e: Expr) -> bool:
    """An index worth tabulating: arithmetic over loop variables, no gather inside."""
    if any(isinstance(n, TensorRef) for n in walk_expr(e)):
        return False
    ops = [n for n in walk_expr(e) if isinstance(n, BinOp)]
    return bool(ops) and bool(_vars(e)) and (len(set(_vars(e))) >= 2 or any(
        op.op in ("*", "//", "%") for op in ops))


@register
class PrecomputeIndices(Strategy):
    """Tabulate a compound subscript once in an ``i64`` index table, then index through the table.

    Before (a block of level2/conv2d_groupnorm_silu as a program of its own): ``B^{2}_{tx=0}L^{4}_{a=0}L^{2}_{c=0}L^{16}_{d=0}L^{16}_{f=0}[J^{f32,g}_{tx,a}=J^{f32,g}_{tx,a}+C^{f32,g}_{tx,a*2+c,d,f};];``
    After: ``L^{4}_{a=0}L^{2}_{c=0}[A^{i64,g}_{a,c}=a*2+c;];B^{2}_{tx=0}L^{4}_{a=0}L^{2}_{c=0}L^{16}_{d=0}L^{16}_{f=0}[J^{f32,g}_{tx,a}=J^{f32,g}_{tx,a}+C^{f32,g}_{tx,A^{i64,g}_{a,c},d,f};];``

    A new top-level block before the consumer evaluates the expression once per combination of the loop
    variables it uses; every occurrence of that subscript in the statement's reads becomes a gather through
    the table. Precondition: the subscript is arithmetic (``*``, ``//``, ``%`` or two or more variables) over
    loop variables only, it indexes a read (targets keep their plain subscripts) of a tensor whose extent
    along that dimension is known without it, and the table has at most ``MAX_TABLE_ENTRIES`` entries.
    Exact (E): the table holds the same integers the expression computes.
    """

    number = 23
    name = "precompute_indices"
    level = Level.MEMORY
    exactness = Exactness.E
    refusals = {"cannot-tabulate": "the subscript is not a compound index over enclosing loops read (not "
                                   "written) by the statement, the table would exceed MAX_TABLE_ENTRIES, or a "
                                   "tensor's extent or bounds would only be known through the table"}

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path, stmt, _ in statements(program.body):
            seen: list[str] = []
            for ref in stmt_reads(stmt):
                for dim, index in enumerate(ref.indices):
                    text = expr_text(index)
                    if text in seen or not self.legal(program, Site(path, (("index", text),))):
                        continue
                    seen.append(text)
                    sites.append(Site(path, (("index", text),),
                                      where=f"the subscript {text} of {ref.name} (dimension {dim}) in "
                                            f"{describe_block(path)}"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> str:
        """The subscript text to tabulate, or a refusal."""
        text = str(site.get("index"))
        problem = self._problem(program, site.path, text)
        if problem:
            raise self.refuse("cannot-tabulate", problem, site)
        return text

    def _occurrences(self, stmt: Assign, text: str) -> list[tuple[TensorRef, int]]:
        return [(ref, d) for ref in stmt_reads(stmt) for d, index in enumerate(ref.indices)
                if expr_text(index) == text]

    def _problem(self, program: Program, path: tuple[int, ...], text: str) -> str | None:
        stmt = item_at(program.body, path)
        if not isinstance(stmt, Assign):
            return "the site is not a statement"
        found = self._occurrences(stmt, text)
        if not found:
            return f"the statement reads nothing at subscript {text}"
        index = found[0][0].indices[found[0][1]]
        if not _compound(index):
            return f"{text} is not a compound index expression over loop variables"
        if any(r in stmt.target.indices for r, _ in found):
            return "the subscript belongs to an index of the target"
        loops = {lp.var: lp for lp in loops_at(program.body, path[:-1])}
        if any(v not in loops for v in _vars(index)):
            return f"{text} uses a variable no enclosing loop binds"
        entries = 1
        for v in dict.fromkeys(_vars(index)):
            entries *= loops[v].extent
        if entries > MAX_TABLE_ENTRIES:
            return f"the table would have {entries} entries (the limit is {MAX_TABLE_ENTRIES})"
        info = program_info(program)
        for ref, dim in found:
            if program.signature.get(ref.name) is not None:
                continue
            static = [r for _, r, _ in tensor_refs_in(program.body, ref.name)
                      if r not in {x for x, _ in found} and not any(
                          isinstance(n, TensorRef) for n in walk_expr(r.indices[dim]))]
            if not static or info.tensors[ref.name].is_known:
                return f"{ref.name}'s extent along dimension {dim} would only be known through the table"
        after = program_info(self._rewrite(program, path, text))
        for ref, dim in found:
            if program.signature.get(ref.name) is not None:
                continue
            old, new = info.tensors[ref.name].shape, after.tensors[ref.name].shape
            if old != new:
                # the read reaches past every other reference (zero padding read back as 0): through the
                # table the extent would shrink, and the read would leave the tensor
                return (f"{ref.name}'s extent along dimension {dim} is {old[dim]} only because of the "
                        f"subscript {text}; through the table it would be {new[dim]}")
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        text = self.check(program, site, params)
        return self._rewrite(program, site.path, text)

    def _rewrite(self, program: Program, path: tuple[int, ...], text: str) -> Program:
        """The program with subscript ``text`` of the statement at ``path`` read through a new table."""
        stmt = item_at(program.body, path)
        assert isinstance(stmt, Assign)
        ref, dim = self._occurrences(stmt, text)[0]
        index = ref.indices[dim]
        order = [lp for lp in loops_at(program.body, path[:-1]) if lp.var in set(_vars(index))]
        table = fresh_tensor_names(program)[0]
        table_ref = TensorRef(table, "i64", "g", tuple(Var(lp.var) for lp in order))
        table_block = Block(tuple(Loop("L", lp.extent, lp.var) for lp in order), (Assign(table_ref, index),))

        def through_table(r: TensorRef) -> TensorRef | None:
            if not any(expr_text(i) == text for i in r.indices) or r.name == table:
                return None
            indices = tuple(table_ref if expr_text(i) == text else i for i in r.indices)
            return TensorRef(r.name, r.dtype, r.scope, indices)

        new_stmt = Assign(stmt.target, replace_refs(stmt.value, through_table))  # type: ignore[arg-type]
        body = replace_at(program.body, path, new_stmt)
        return with_body(program, insert_blocks(body, path[0], (table_block,)))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        text = site.get("index")
        stmt = item_at(before.body, site.path)
        assert isinstance(stmt, Assign)
        found = self._occurrences(stmt, text)
        ref, dim = found[0]
        table_block = after.body.blocks[site.path[0]]
        fill = table_block.items[0]
        assert isinstance(fill, Assign)
        new_stmt = item_at(after.body, (site.path[0] + 1,) + site.path[1:])
        assert isinstance(new_stmt, Assign)
        new_ref = next(r for r in stmt_reads(new_stmt) if r.name == ref.name and fill.target in r.indices)
        entries = 1
        for lp in table_block.loops:
            entries *= lp.extent
        iterations = 1
        for lp in loops_at(before.body, site.path[:-1]):
            iterations *= lp.extent
        ops = sum(1 for n in walk_expr(ref.indices[dim]) if isinstance(n, BinOp))
        t = TraceBuilder()
        return t.build(
            applicability=(f"In {describe_block(site.path)} the read {t.before(canonical(ref))} has the compound "
                           f"subscript {t.before(text)} at dimension {dim}, arithmetic over loop variables "
                           f"only ({len(found)} occurrence(s) in the statement)."),
            change=(f"A new block {t.after(canonical(table_block)[:-1])} tabulates it in the i64 table "
                    f"{fill.target.name} of {entries} entries; the read becomes {t.after(canonical(new_ref))}."),
            rationale=(f"The statement runs {iterations} times and evaluated {ops} integer operation(s) per "
                       f"occurrence each time ({iterations * ops * len(found)} in all); now the table computes "
                       f"them {entries} times and each iteration loads one i64, which pays off where integer "
                       "arithmetic (// and % above all) costs more than a cached load."),
            exactness="Exact (E): the table holds exactly the integers the expression computed.",
        )
