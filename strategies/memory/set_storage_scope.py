"""set_storage_scope (catalogue #21): move an intermediate to shared (``s``) or local (``l``) memory."""

from __future__ import annotations

from leir.analysis import (
    global_scope_problem,
    onchip_scope_problem,
    program_info,
    tensor_refs_in,
    top_level_owners,
)
from leir.ast import Program
from leir.dtypes import numel, tensor_nbytes
from leir.gpu_limits import MAX_SHARED_BYTES
from leir.printer import canonical
from leir.rewrite import map_body_exprs, rename_tensor, with_body
from strategies.base import Exactness, Level, NotApplicableError, Params, ParamSpec, Site, Strategy
from strategies.common import describe_block
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

SCOPE_WORDS = {"g": "global memory", "s": "shared memory (one copy per GPU block)",
               "l": "local memory (one copy per GPU thread, registers when small)"}


def scope_problem(program: Program, tensor: str, scope: str) -> str | None:
    """Why ``tensor`` cannot live in ``scope`` on both targets (the CPU accepts every scope)."""
    if scope == "g":
        return global_scope_problem(program, tensor)
    return onchip_scope_problem(program, tensor, scope)


def rescope(program: Program, tensor: str, scope: str) -> Program:
    """``program`` with every reference to ``tensor`` annotated with ``scope``."""
    return with_body(program, map_body_exprs(program.body, lambda n: rename_tensor(n, tensor, tensor,
                                                                                   scope=scope)))


@register
class SetStorageScope(Strategy):
    """Change where an intermediate lives: its scope annotation becomes ``s``, ``l`` (or back ``g``) everywhere.

    Before (level1/matmul after a shared read cache of ``A``): ``B^{64}_{tx=0}[L^{64}_{d=0}[E^{f32,s}_{tx,d}=A^{f32,g}_{tx,d};];L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+E^{f32,s}_{tx,c}*C^{f32,g}_{c,a};];];``
    After (``l``): ``B^{64}_{tx=0}[L^{64}_{d=0}[E^{f32,l}_{tx,d}=A^{f32,g}_{tx,d};];L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+E^{f32,l}_{tx,c}*C^{f32,g}_{c,a};];];``

    Precondition (the cuda lowering's rules, so the step builds on both targets): the tensor is an
    intermediate used by one top-level block (on-chip memory dies with its kernel), written first by a
    plain or reducing statement that covers it (no whole-tensor fill inside a kernel), indexed by every
    bound loop around it at one fixed dimension (each block's or thread's copy holds only its own slice),
    and shared tensors fit 48 KB per block. Back to ``g`` needs only the indexing rule: a thread-private
    ``l`` buffer that leaves out the thread's index would be raced on as one global tensor. Exact (E): the arithmetic is untouched; on the CPU every
    scope is a global buffer.
    """

    number = 21
    name = "set_storage_scope"
    level = Level.MEMORY
    exactness = Exactness.E
    refusals = {"not-intermediate": "the tensor is a signature tensor (known tensors live in global memory)",
                "cannot-rescope": "no other scope (or not the one asked for) can hold the tensor: a block "
                                  "that shares it, the threads that read it, or an on-chip memory limit"}

    def candidates(self, program: Program) -> list[Site]:
        info = program_info(program)
        sites = []
        for tinfo in info.intermediates:
            first = next(tensor_refs_in(program.body, tinfo.name))[0]
            try:
                scopes = self.check(program, Site(first[:1], (("tensor", tinfo.name),)))
            except NotApplicableError:
                continue
            sites.append(Site(first[:1], (("tensor", tinfo.name),),
                              (ParamSpec("scope", scopes, "the new memory scope"),),
                              where=f"intermediate {tinfo.name} ({tinfo.scope})"))
        return sites

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        (scope,) = self.check(program, site, params)
        return rescope(program, site.get("tensor"), scope)

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[str, ...]:
        """The scopes the tensor may move to (the one asked for, with ``params``), or a refusal."""
        tensor = site.get("tensor")
        tinfo = program_info(program).tensors.get(tensor)
        if tinfo is None or tinfo.is_known:
            raise self.refuse("not-intermediate", f"{tensor} is not an intermediate; known tensors live in "
                              "global memory", site)
        asked = (str(params["scope"]),) if params is not None else tuple(s for s in ("s", "l", "g")
                                                                          if s != tinfo.scope)
        problems = {scope: scope_problem(program, tensor, scope) for scope in asked}
        scopes = tuple(scope for scope, problem in problems.items() if problem is None)
        if not scopes:
            raise self.refuse("cannot-rescope", str(problems[asked[0]]) if asked else
                              f"{tensor} has no other scope", site)
        return scopes

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        tensor, scope = site.get("tensor"), str(params["scope"])
        tinfo = program_info(before).tensors[tensor]
        count = numel(tinfo.shape)
        size = tensor_nbytes(tinfo.dtype, tinfo.shape)
        refs = list(tensor_refs_in(before.body, tensor))
        new_refs = list(tensor_refs_in(after.body, tensor))
        owners = top_level_owners(before.body, tensor)
        where = describe_block(owners[:1]) if len(owners) == 1 else f"{len(owners)} top-level blocks"
        t = TraceBuilder()
        old_text, new_text = canonical(refs[0][1]), canonical(new_refs[0][1])
        if scope == "g":
            why = (f"Global memory lifts the on-chip restrictions on {tensor} (one kernel, no fill), which "
                   "lets later steps split or reorder the blocks that use it.")
        else:
            limit = f" of the {MAX_SHARED_BYTES}-byte shared limit per block" if scope == "s" else ""
            why = (f"All {len(refs)} references to {tensor} are in {where}: its {count} elements "
                   f"({size} bytes{limit}) never travel through DRAM on the GPU, so each of the {len(refs) - 1} "
                   f"reads after the first write is served on chip instead of by a global load.")
        return t.build(
            applicability=(f"{tensor} is an intermediate in {SCOPE_WORDS[tinfo.scope]}, first written as "
                           f"{t.before(old_text)}; every reference is in {where} and satisfies the on-chip "
                           "rules (covering first write, indexed by every bound loop)."),
            change=(f"Scope {tinfo.scope} becomes {scope} ({SCOPE_WORDS[scope]}) at all {len(refs)} "
                    f"references: {t.before(old_text)} becomes {t.after(new_text)}."),
            rationale=why,
            exactness="Exact (E): only the memory space changes; every value is computed the same way.",
        )
