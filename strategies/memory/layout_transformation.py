"""layout_transformation (catalogue #20): read a multi-dimensional input through a re-laid-out copy."""

from __future__ import annotations

from leir.analysis import fresh_tensor_names, loop_ranges, stmt_reads, stride_along
from leir.ast import Assign, Block, Loop, Program, TensorRef, Var, statements
from leir.dtypes import numel, tensor_nbytes
from leir.intervals import index_range
from leir.names import loop_var_names
from leir.printer import canonical
from leir.rewrite import insert_blocks, item_at, loops_at, replace_at, replace_refs, with_body
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy
from strategies.common import describe_block
from strategies.memory.layouts import describe_layout, layout_choices, layout_shape, map_indices
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Threads per block the copy's first loop may bind (the CUDA limit); wider copies run it serially.
MAX_BOUND_EXTENT = 1024


@register
class LayoutTransformation(Strategy):
    """Copy a multi-dimensional input into a buffer with another layout, then read the copy.

    Before (level1/matmul): ``B^{64}_{tx=0}L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*C^{f32,g}_{c,a};];``
    After (``C``, ``transpose:0,1``): ``B^{64}_{tx=0}L^{64}_{a=0}[E^{f32,g}_{a,tx}=C^{f32,g}_{tx,a};];B^{64}_{tx=0}L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*E^{f32,g}_{a,c};];``

    A new top-level block before the consumer copies the whole tensor into a fresh global buffer whose
    subscripts are the layout map of the original ones (transpose, fuse, flatten, split, pack); the statement's
    references are rewritten through the same map. Precondition: the tensor is a known input, parameter or
    constant of rank ≥ 2 that the statement reads, with every subscript bounded and inside the tensor.
    Exact (E): the copy moves values bit for bit and the map is a bijection.
    """

    number = 20
    name = "layout_transformation"
    level = Level.MEMORY
    exactness = Exactness.E
    refusals = {"cannot-relayout": "the tensor is not a known input, parameter or constant of rank >= 2 read "
                                   "(not as a target index) by the statement at in-bounds subscripts"}

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path, stmt, _ in statements(program.body):
            seen: list[str] = []
            for ref in stmt_reads(stmt):
                if ref.name not in seen and self.legal(program, Site(path, (("tensor", ref.name),))):
                    seen.append(ref.name)
            for tensor in seen:
                decl = program.signature.get(tensor)
                assert decl is not None
                sites.append(Site(path, (("tensor", tensor),),
                                  (ParamSpec("layout", layout_choices(decl.shape), "the copy's layout map"),),
                                  where=f"the read of {tensor} in {describe_block(path)}"))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> str:
        """The name of the tensor whose read gets a relaid copy, or a refusal."""
        tensor = str(site.get("tensor"))
        problem = self._problem(program, site.path, tensor)
        if problem:
            raise self.refuse("cannot-relayout", problem, site)
        return tensor

    def _problem(self, program: Program, path: tuple[int, ...], tensor: str) -> str | None:
        decl = program.signature.get(tensor)
        if decl is None or decl.role == "output":
            return f"{tensor} is not a known input, parameter or constant"
        if len(decl.shape) < 2:
            return f"{tensor} has rank {len(decl.shape)}; a layout change needs at least two dimensions"
        stmt = item_at(program.body, path)
        if not isinstance(stmt, Assign):
            return "the site is not a statement"
        refs = [r for r in stmt_reads(stmt) if r.name == tensor]
        if not refs:
            return f"the statement does not read {tensor}"
        if any(r in stmt.target.indices for r in refs):
            return f"{tensor} is used as an index of the target"
        ranges = loop_ranges(loops_at(program.body, path[:-1]) if len(path) > 1 else ())
        for ref in refs:
            for index, n in zip(ref.indices, decl.shape, strict=True):
                bounds = index_range(index, ranges)
                if bounds is None or bounds[0] < 0 or bounds[1] >= n:
                    return f"a subscript of {tensor} is unbounded or leaves the tensor (a guarded read)"
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        tensor, spec = self.check(program, site, params), str(params["layout"])
        decl = program.signature.get(tensor)
        assert decl is not None
        layout_shape(spec, decl.shape)
        copy_name = fresh_tensor_names(program)[0]
        names = ["tx"] + [v for v, _ in zip(loop_var_names(), decl.shape[1:], strict=False)]
        loops = tuple(Loop("B" if d == 0 and n <= MAX_BOUND_EXTENT else "L", n, names[d])
                      for d, n in enumerate(decl.shape))
        source_idx = tuple(Var(v) for v in names)
        copy = Assign(TensorRef(copy_name, decl.dtype, "g", map_indices(spec, decl.shape, source_idx)),
                      TensorRef(tensor, decl.dtype, "g", source_idx))

        def through_copy(ref: TensorRef) -> TensorRef | None:
            if ref.name != tensor:
                return None
            return TensorRef(copy_name, ref.dtype, "g", map_indices(spec, decl.shape, ref.indices))

        stmt = item_at(program.body, site.path)
        assert isinstance(stmt, Assign)
        new_stmt = Assign(stmt.target, replace_refs(stmt.value, through_copy))  # type: ignore[arg-type]
        body = replace_at(program.body, site.path, new_stmt)
        return with_body(program, insert_blocks(body, site.path[0], (Block(loops, (copy,)),)))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        tensor, spec = site.get("tensor"), str(params["layout"])
        decl = before.signature.get(tensor)
        assert decl is not None
        new_shape = layout_shape(spec, decl.shape)
        stmt = item_at(before.body, site.path)
        new_path = (site.path[0] + 1,) + site.path[1:]
        new_stmt = item_at(after.body, new_path)
        copy_block = after.body.blocks[site.path[0]]
        assert isinstance(stmt, Assign) and isinstance(new_stmt, Assign)
        old_ref = next(r for r in stmt_reads(stmt) if r.name == tensor)
        copy_name = copy_block.items[0].target.name if isinstance(copy_block.items[0], Assign) else "?"
        new_ref = next(r for r in stmt_reads(new_stmt) if r.name == copy_name)
        inner = loops_at(before.body, site.path[:-1])[-1].var
        old_stride = stride_along(old_ref.indices, decl.shape, inner)
        new_stride = stride_along(new_ref.indices, new_shape, inner)
        elements, nbytes = numel(decl.shape), tensor_nbytes(decl.dtype, decl.shape)
        rationale = _rationale(elements, nbytes, inner, old_stride, new_stride)
        t = TraceBuilder()
        return t.build(
            applicability=(f"The statement in {describe_block(site.path)} reads the {decl.role} {tensor} "
                           f"of shape {list(decl.shape)} as {t.before(canonical(old_ref))}, every subscript in "
                           "bounds, so a copy in another layout can serve the read."),
            change=(f"Layout {spec}: {describe_layout(spec)}. A new block before it copies {tensor} with "
                    f"{t.after(canonical(copy_block)[:-1])} into {copy_name} of shape {list(new_shape)}, and "
                    f"the read becomes {t.after(canonical(new_ref))}."),
            rationale=rationale,
            exactness="Exact (E): values are copied bit for bit and the layout map is a bijection.",
        )


def _rationale(elements: int, nbytes: int, inner: str, old: int | None, new: int | None) -> str:
    """The copy's cost, then what it buys: "in exchange" only when the read's stride gets shorter."""
    cost = f"The copy costs one pass over {elements} elements ({nbytes} bytes read and written)"
    if old is None or new is None:
        return (f"{cost}; the read's address along the innermost loop over {inner} is now computed with // "
                "and %, so the step pays off only as the input to a later one that needs this layout.")
    moves = f"along the statement's innermost loop over {inner} the read moves"
    if abs(new) < abs(old):
        return (f"{cost}; in exchange {moves} {old} element(s) per iteration before and {new} after, so "
                f"consecutive iterations touch {'adjacent' if new in (0, 1) else 'closer'} addresses of "
                "the copy.")
    if abs(new) == abs(old):
        return (f"{cost} and buys no locality: {moves} {old} element(s) per iteration before and after, so "
                "the step pays off only as the input to a later one that needs this layout.")
    return (f"{cost} and makes the read worse: {moves} {old} element(s) per iteration before and {new} "
            "after, so consecutive iterations touch addresses further apart than in the original.")
