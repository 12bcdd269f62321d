"""dead_code_elimination (catalogue #8): a block (or statement) whose results nothing reads is removed."""

from __future__ import annotations

from leir.analysis import dead_blocks, dead_statements, iterations, tensor_bytes, writes
from leir.ast import Program
from leir.printer import canonical
from leir.rewrite import item_at, loops_at, replace_at, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@register
class DeadCodeElimination(Strategy):
    """Remove a block that writes only tensors nothing later reads and that are not outputs.

    Before: ``B^{8}_{tx=0}L^{32}_{a=0}L^{48}_{c=0}[C^{f32,g}_{tx,c}=max(C^{f32,g}_{tx,c},A^{f32,g}_{tx,a,c});];B^{8}_{tx=0}L^{48}_{c=0}[D^{f32,l}_{tx,c}=A^{f32,g}_{tx,0,c}*2;];``
    After:  ``B^{8}_{tx=0}L^{32}_{a=0}L^{48}_{c=0}[C^{f32,g}_{tx,c}=max(C^{f32,g}_{tx,c},A^{f32,g}_{tx,a,c});];``

    Precondition: the block writes no signature output and nothing any later block reads (the same rule,
    ``leir.analysis.dead_blocks``, the frontend applies when it translates). Also a statement of a
    multi-item block whose tensor no statement reads and that is not an output.
    Exact (E): the outputs never depended on what is removed.
    """

    number = 8
    name = "dead_code_elimination"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {"not-dead": "what is at the site is read later or writes an output"}

    def _dead(self, program: Program) -> list[tuple[int, ...]]:
        outputs = [d.name for d in program.signature.by_role("output")]
        top = [(i,) for i in sorted(dead_blocks(program.body.blocks, outputs, transitive=False))]
        return top + list(dead_statements(program))

    def candidates(self, program: Program) -> list[Site]:
        return [Site(path, (), where=describe_block(path) if len(path) == 1
                     else f"item {path[-1] + 1} of {describe_block(path[:-1])}")
                for path in self._dead(program)]

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[int, ...]:
        """The path of the dead block or statement, or a refusal (``candidates`` lists ``_dead``)."""
        if site.path not in self._dead(program):
            raise self.refuse("not-dead", f"what is at {site.key} is read later or writes an output", site)
        return site.path

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        self.check(program, site, params)
        return with_body(program, replace_at(program.body, site.path, ()))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        item = item_at(before.body, site.path)
        names = sorted(writes(item))
        size = sum(tensor_bytes(before, n) for n in names)
        count = iterations(loops_at(before.body, site.path))
        t = TraceBuilder()
        what = "block" if len(site.path) == 1 else "statement"
        return t.build(
            applicability=(f"The {what} {t.before(canonical(item))} ({site.where}) writes "
                           f"{', '.join(names)}, which is not an output and which nothing after it reads."),
            change=f"The {what} is removed; no parameters.",
            rationale=(f"Its {count} iterations and the {size} bytes of {', '.join(names)} it writes were "
                       "wasted work: no output depends on them."),
            exactness="Exact (E): no output depended on what is removed, so every output is unchanged.",
        )
