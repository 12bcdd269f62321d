"""set_storage_layout (catalogue #22): rewrite every subscript of an intermediate through one layout map."""

from __future__ import annotations

from leir.analysis import loop_ranges, onchip_scope_problem, program_info, stride_along, tensor_refs_in
from leir.ast import Program, TensorRef
from leir.intervals import index_range
from leir.printer import canonical
from leir.rewrite import map_body_exprs, replace_refs, with_body
from leir.semantics import TensorInfo
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy
from strategies.memory.layouts import describe_layout, layout_choices, layout_shape, map_indices
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def relayout(program: Program, tensor: str, spec: str, shape: tuple[int, ...]) -> Program:
    """``program`` with every reference to ``tensor`` re-subscripted through the layout map ``spec``."""

    def fn(ref: TensorRef) -> TensorRef | None:
        if ref.name != tensor:
            return None
        return TensorRef(ref.name, ref.dtype, ref.scope, map_indices(spec, shape, ref.indices))

    return with_body(program, map_body_exprs(program.body, lambda n: replace_refs(n, fn)))


@register
class SetStorageLayout(Strategy):
    """Store an intermediate in another layout: all its subscripts rewritten consistently, no copy.

    Before (level1/layer_norm, its last two blocks): ``B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[J^{f32,g}_{tx,a,c}=(A^{f32,g}_{tx,a,c}-G^{f32,g}_{tx})/sqrt(I^{f32,g}_{tx}+1e-05);];B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[C^{f32,g}_{tx,a,c}=D^{f32,g}_{a,c}*J^{f32,g}_{tx,a,c}+E^{f32,g}_{a,c};];``
    After (``fuse:1``): ``B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[J^{f32,g}_{tx,a*64+c}=(A^{f32,g}_{tx,a,c}-G^{f32,g}_{tx})/sqrt(I^{f32,g}_{tx}+1e-05);];B^{4}_{tx=0}L^{16}_{a=0}L^{64}_{c=0}[C^{f32,g}_{tx,a,c}=D^{f32,g}_{a,c}*J^{f32,g}_{tx,a*64+c}+E^{f32,g}_{a,c};];``

    Precondition: the tensor is an intermediate (its layout is the program's own choice), every subscript of
    every reference is a bounded index that stays inside the tensor (so the map is a bijection on what is
    touched), and an on-chip tensor keeps satisfying the cuda lowering's rules. Exact (E): every read sees
    the element the same write produced; only addresses change.
    """

    number = 22
    name = "set_storage_layout"
    level = Level.MEMORY
    exactness = Exactness.E
    refusals = {"not-intermediate": "the tensor is a signature tensor (a known tensor's layout is the caller's)",
                "out-of-bounds": "a subscript of the tensor is unbounded or leaves it",
                "onchip-limit": "the relaid on-chip (s or l) tensor no longer fits its scope's rules"}

    def candidates(self, program: Program) -> list[Site]:
        info = program_info(program)
        sites = []
        for tinfo in info.intermediates:
            if not tinfo.shape:
                continue
            first = next(tensor_refs_in(program.body, tinfo.name))[0]
            site = Site(first[:1], (("tensor", tinfo.name),))
            if not self.legal(program, site):
                continue
            layouts = [spec for spec in layout_choices(tinfo.shape)
                       if self._onchip_problem(program, tinfo, spec) is None]
            if layouts:
                sites.append(Site(first[:1], (("tensor", tinfo.name),),
                                  (ParamSpec("layout", tuple(layouts), "the layout map"),),
                                  where=f"intermediate {tinfo.name} of shape {list(tinfo.shape)}"))
        return sites

    @staticmethod
    def _in_bounds(program: Program, tensor: str, shape: tuple[int, ...]) -> bool:
        for _, ref, loops in tensor_refs_in(program.body, tensor):
            ranges = loop_ranges(loops)
            for index, n in zip(ref.indices, shape, strict=True):
                bounds = index_range(index, ranges)
                if bounds is None or bounds[0] < 0 or bounds[1] >= n:
                    return False
        return True

    @staticmethod
    def _onchip_problem(program: Program, tinfo: TensorInfo, spec: str) -> str | None:
        """What the on-chip scope's rules find against the tensor relaid by ``spec`` (None in global)."""
        if tinfo.scope not in ("s", "l"):
            return None
        return onchip_scope_problem(relayout(program, tinfo.name, spec, tinfo.shape), tinfo.name, tinfo.scope)

    def check(self, program: Program, site: Site, params: Params | None = None) -> TensorInfo:
        """The intermediate to relay out, or a refusal; with ``params``, that layout must fit its scope."""
        tensor = site.get("tensor")
        tinfo = program_info(program).tensors.get(tensor)
        if tinfo is None or tinfo.is_known:
            raise self.refuse("not-intermediate", f"{tensor} is not an intermediate; a known tensor's layout is "
                              "the caller's", site)
        if not self._in_bounds(program, tensor, tinfo.shape):
            raise self.refuse("out-of-bounds", f"a subscript of {tensor} is unbounded or leaves the tensor", site)
        if params is not None:
            problem = self._onchip_problem(program, tinfo, str(params["layout"]))
            if problem:
                raise self.refuse("onchip-limit", problem, site)
        return tinfo

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        tinfo = self.check(program, site, params)
        spec = str(params["layout"])
        layout_shape(spec, tinfo.shape)
        return relayout(program, tinfo.name, spec, tinfo.shape)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        tensor, spec = site.get("tensor"), str(params["layout"])
        shape = program_info(before).tensors[tensor].shape
        new_shape = layout_shape(spec, shape)
        old_refs = list(tensor_refs_in(before.body, tensor))
        new_refs = list(tensor_refs_in(after.body, tensor))
        # the last reference is a read in a consumer's innermost loop: the one whose stride matters most
        _, old_ref, loops = old_refs[-1]
        new_ref = new_refs[-1][1]
        inner = loops[-1].var
        old_stride = stride_along(old_ref.indices, shape, inner)
        new_stride = stride_along(new_ref.indices, new_shape, inner)
        stride_words = (f"along the innermost loop over {inner} that reference moves {old_stride} element(s) "
                        f"per iteration before and {new_stride} after" if new_stride is not None else
                        f"its address along the innermost loop over {inner} is now computed with // and %")
        t = TraceBuilder()
        distinct = len({canonical(r) for _, r, _ in old_refs})
        return t.build(
            applicability=(f"{tensor} is an intermediate of shape {list(shape)} ({len(old_refs)} references, "
                           f"e.g. {t.before(canonical(old_ref))}); every subscript stays inside the tensor, so "
                           "its storage order is free to choose."),
            change=(f"Layout {spec}: {describe_layout(spec)}, shape {list(shape)} becomes {list(new_shape)}; "
                    f"all {distinct} distinct subscript(s) are rewritten, {t.before(canonical(old_ref))} "
                    f"becomes {t.after(canonical(new_ref))}."),
            rationale=(f"No data moves: {stride_words}. Choosing the order in which {tensor} is laid out "
                       "decides which accesses are contiguous and enables later fusion of its loops."),
            exactness=("Exact (E): the map is a bijection on every element touched, so each read still sees "
                       "the value its write stored; the arithmetic is unchanged."),
        )
