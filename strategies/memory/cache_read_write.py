"""cache_read_write (catalogue #19): stage a global tensor's region in a fresh on-chip buffer."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from leir.analysis import (
    Affine,
    affine_bounds,
    affine_expr,
    affine_form,
    affine_parts,
    bound_axis,
    fresh_loop_vars,
    fresh_tensor_names,
    loop_ranges,
    program_info,
    reads,
    stmt_reads,
    writes,
)
from leir.ast import Assign, Block, Expr, Item, Loop, Program, TensorRef, Var
from leir.builders import iadd
from leir.dtypes import dtype_bytes, numel, tensor_nbytes
from leir.gpu_limits import MAX_SHARED_BYTES
from leir.intervals import index_range
from leir.printer import canonical, expr_text
from leir.rewrite import replace_at, replace_refs, with_body
from leir.semantics import StmtKind
from strategies.base import Exactness, Level, Params, ParamSpec, Site, Strategy
from strategies.common import describe_block, header_text
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder

#: Largest staged region: the shared memory of one CUDA block (a local array that large already spills).
MAX_CACHE_BYTES = MAX_SHARED_BYTES
SCOPES = ("l", "s")


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything one cache step builds: the buffer, its dimensions and the statements around the compute."""

    buffer: str
    dtype: str
    #: outer loops that index the buffer (private copies per parallel iteration) and region extents
    private: tuple[Loop, ...]
    region: tuple[int, ...]
    #: per tensor dimension: (outer part, swept part, lowest swept offset) of the subscript
    parts: tuple[tuple[Affine, Affine, int], ...]
    outer: tuple[Loop, ...]
    inner: tuple[Loop, ...]
    order: tuple[str, ...]

    @property
    def elements(self) -> int:
        return numel((*(lp.extent for lp in self.private), *self.region))

    @property
    def nbytes(self) -> int:
        return self.elements * dtype_bytes(self.dtype)

    @property
    def region_elements(self) -> int:
        """Elements of one private copy: the staged region alone."""
        return numel(self.region)

    @property
    def copy_bytes(self) -> int:
        return self.region_elements * dtype_bytes(self.dtype)

    def held_bytes(self, scope: str) -> int:
        """What the limit judges: a local buffer is one array per thread or parallel iteration, so one
        copy of it (a register tile's accumulator is small per copy however many iterations have one);
        a shared buffer is every copy a block holds at once."""
        return self.copy_bytes if scope == "l" else self.nbytes


@register
class CacheReadWrite(Strategy):
    """Stage what a statement reads (or writes) of a global tensor in a fresh ``s``/``l`` buffer.

    Before (level1/matmul): ``B^{64}_{tx=0}L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*C^{f32,g}_{c,a};];``
    After (read of ``A`` at depth 1, local): ``B^{64}_{tx=0}[L^{64}_{d=0}[E^{f32,l}_{d}=A^{f32,g}_{tx,d};];L^{64}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+E^{f32,l}_{c}*C^{f32,g}_{c,a};];];``

    The block's header is split at depth ``at``: for every iteration of the outer loops a copy nest fills the
    buffer with the region the inner loops touch (read), or the inner loops compute into the buffer and a
    copy nest writes it back (write). Precondition: the statement is a direct item of a top-level block of
    statements; the tensor is global, its subscripts affine and in bounds; nothing else in the block writes
    it (read) or touches it (write); no ``B`` loop is inside the split and no ``V`` loop outside it, and no statement of the block reduces
    across a ``B`` loop (TVM builds a cross-thread reduction only from one loop nest). A write
    cache needs a plain write or a reduction whose reduce loops are all inside the split, with each
    swept subscript a single inner loop variable (the buffer is then written everywhere before it is
    copied back), and each outer loop alone making the outer part of some subscript in steps at least as
    wide as the inner loops sweep there, so iterations write disjoint regions (a plain ``C_{tx,...}``, or
    ``C_{bx*6+d,...}`` with ``d`` < 6: the row blocks of a register tile). Parallel and bound outer loops index the buffer, so
    each of their iterations has a private copy (a thread-bound loop not for ``l``, whose copies already are
    per thread). A staged region is at most ``MAX_CACHE_BYTES``: one copy of a local buffer (each thread
    or parallel iteration holds its own), every copy of a shared one. Exact (E): values are copied bit
    for bit and the arithmetic is unchanged.
    """

    number = 19
    name = "cache_read_write"
    level = Level.MEMORY
    exactness = Exactness.E
    refusals = {"cannot-cache": "the statement is not a direct item of a top-level block of statements, the "
                                "tensor is not global, the depth does not split the header, or the copy "
                                "cannot be staged there (bound or vectorised loops, an unbounded or oversized "
                                "region, a hazard, a memory limit)"}

    # ---- sites -----------------------------------------------------------------------------------
    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for b_index, block in enumerate(program.body.blocks):
            if not all(isinstance(item, Assign) for item in block.items):
                continue
            for i, item in enumerate(block.items):
                assert isinstance(item, Assign)
                path = (b_index, i)
                seen: list[tuple[str, str]] = []
                for ref in stmt_reads(item):
                    if (ref.name, "read") not in seen:
                        seen.append((ref.name, "read"))
                if (item.target.name, "write") not in seen:
                    seen.append((item.target.name, "write"))
                for tensor, direction in seen:
                    for at in range(1, len(block.loops)):
                        scopes = tuple(sc for sc in SCOPES
                                       if self._problem(program, path, tensor, direction, at, sc) is None)
                        if not scopes:
                            continue
                        sites.append(Site(path, (("at", at), ("direction", direction), ("tensor", tensor)),
                                          (ParamSpec("scope", scopes, "the buffer's memory scope"),),
                                          where=f"the {direction} of {tensor} in {describe_block(path[:1])}, "
                                                f"staged inside its first {at} loop(s)"))
        return sites

    # ---- legality --------------------------------------------------------------------------------
    def _problem(self, program: Program, path: tuple[int, ...], tensor: str, direction: str, at: int,
                 scope: str) -> str | None:
        plan = self._plan(program, path, tensor, direction, at, scope)
        return plan if isinstance(plan, str) else None

    def _plan(self, program: Program, path: tuple[int, ...], tensor: str, direction: str, at: int,
              scope: str) -> Plan | str:
        info = program_info(program)
        if len(path) != 2 or not 0 <= path[0] < len(program.body.blocks):
            return "the statement must be a direct item of a top-level block"
        block = program.body.blocks[path[0]]
        if not all(isinstance(item, Assign) for item in block.items) or not 0 <= path[1] < len(block.items):
            return "the block must hold statements only"
        stmt = block.items[path[1]]
        assert isinstance(stmt, Assign)
        tinfo = info.tensors.get(tensor)
        if tinfo is None or tinfo.scope != "g":
            return f"{tensor} is not a global tensor"
        if not 1 <= at < len(block.loops):
            return f"depth {at} does not split the block's {len(block.loops)} loops"
        outer, inner = block.loops[:at], block.loops[at:]
        if any(lp.kind == "B" for lp in inner):
            return "a GPU-bound loop inside the split would leave the copy outside its binding"
        if any(lp.kind == "V" for lp in outer):
            return "a vectorised loop cannot enclose the copy nest"
        bound = {lp.var for lp in block.loops if lp.kind == "B"}
        for k in range(len(block.items)):
            sinfo = info.statements.get((path[0], k))
            if sinfo is not None and set(sinfo.reduce_vars) & bound:
                return ("the block reduces across a GPU-bound loop (a cross-thread reduction), which TVM "
                        "builds only from a single loop nest")
        if direction == "read":
            refs = [r for r in stmt_reads(stmt) if r.name == tensor]
            if not refs or any(r in stmt.target.indices for r in refs):
                return f"the statement does not read {tensor} as a value"
            if len({r.indices for r in refs}) != 1:
                return f"the statement reads {tensor} at several subscripts"
            if any(tensor in writes(item) for item in block.items):
                return f"{tensor} is written in the same block, so a copy taken before it would go stale"
            if any(ref.name == tensor for r in refs for i in r.indices for ref in _refs_in(i)):
                return "the tensor indexes itself"
            ref = refs[0]
        else:
            ref = stmt.target
            kind = info.statements[path].kind
            if kind not in (StmtKind.ASSIGN, StmtKind.REDUCE):
                return f"a {kind.value} reads {tensor}'s earlier value, which a fresh buffer does not hold"
            others = [item for k, item in enumerate(block.items) if k != path[1]]
            if any(tensor in reads(o) or tensor in writes(o) for o in others):
                return f"another statement of the block touches {tensor}"
            self_reads = [r for r in stmt_reads(stmt) if r.name == tensor]
            if any(r.indices != ref.indices for r in self_reads) or (self_reads and kind is StmtKind.ASSIGN):
                return f"the statement reads {tensor} at another subscript"
            reduce_vars = set(info.statements[path].reduce_vars)
            if reduce_vars & {lp.var for lp in outer}:
                return "a reduce loop outside the split would restart the reduction for every outer iteration"
        ranges = loop_ranges(block.loops)
        inner_vars = frozenset(lp.var for lp in inner)
        extents = {lp.var: lp.extent for lp in block.loops}
        parts: list[tuple[Affine, Affine, int]] = []
        region: list[int] = []
        for index, n in zip(ref.indices, tinfo.shape, strict=True):
            form = affine_form(index)
            if form is None:
                return f"the subscript {expr_text(index)} is not affine in the loop variables"
            bounds = index_range(index, ranges)
            if bounds is None or bounds[0] < 0 or bounds[1] >= n:
                return f"the subscript {expr_text(index)} leaves {tensor} (a guarded read)"
            out_part, swept = affine_parts(form, inner_vars)
            lo, hi = affine_bounds(swept, extents)
            parts.append((out_part, swept, lo))
            if swept.coeffs:
                region.append(hi - lo + 1)
        if direction == "write":
            swept_vars = [v for _, s, _ in parts for v, _ in s.coeffs]
            if any(len(s.coeffs) > 1 or (s.coeffs and s.coeffs[0][1] != 1) for _, s, _ in parts) \
                    or len(swept_vars) != len(set(swept_vars)):
                return "a written subscript must sweep one inner loop variable with stride 1"
            if any(lp.var not in _separating_vars(parts, extents) for lp in outer):
                return ("every outer loop must index the written tensor on its own, in steps no smaller than "
                        "the region, or iterations would collide")
        private = tuple(lp for lp in outer if lp.kind == "P" or (lp.kind == "B" and (
            direction == "write" or scope == "s" or bound_axis(lp.var).startswith("blockIdx"))))
        leading = 0
        while leading < len(block.loops) and block.loops[leading].kind == "B":
            leading += 1
        if any(lp.kind == "B" for lp in block.loops[leading:]):
            return "the block's bound loops must lead its header"
        buffer = fresh_tensor_names(program)[0]
        plan = Plan(buffer, ref.dtype, private, tuple(region), tuple(parts), outer, inner,
                    tuple(lp.var for lp in block.loops))
        if plan.held_bytes(scope) > MAX_CACHE_BYTES:
            what = "each copy of the buffer" if scope == "l" else "the buffer"
            return f"{what} would need {plan.held_bytes(scope)} bytes (the limit is {MAX_CACHE_BYTES})"
        if scope == "s":
            shared = sum(tensor_nbytes(t.dtype, t.shape) for t in info.intermediates
                         if t.scope == "s" and (t.name in reads(block) or t.name in writes(block)))
            if shared + plan.nbytes > MAX_SHARED_BYTES:
                return f"shared memory of the block would reach {shared + plan.nbytes} bytes"
        return plan

    # ---- rewrite ---------------------------------------------------------------------------------
    def check(self, program: Program, site: Site, params: Params | None = None) -> Plan:
        """The staging plan for the site in the scope asked for (the first legal one without ``params``),
        or a refusal; ``candidates`` lists the scopes ``_plan`` accepts, ``apply`` executes the plan."""
        direction, tensor, at = site.get("direction"), site.get("tensor"), int(site.get("at"))
        problem = ""
        for scope in (str(params["scope"]),) if params is not None else SCOPES:
            plan = self._plan(program, site.path, tensor, direction, at, scope)
            if not isinstance(plan, str):
                return plan
            problem = problem or plan
        raise self.refuse("cannot-cache", problem, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        direction, tensor = site.get("direction"), site.get("tensor")
        scope = str(params["scope"])
        plan = self.check(program, site, params)
        block = program.body.blocks[site.path[0]]
        stmt = block.items[site.path[1]]
        assert isinstance(stmt, Assign)
        copy_vars = fresh_loop_vars(program, len(plan.region))
        copy_loops = tuple(Loop("L", n, v) for n, v in zip(plan.region, copy_vars, strict=True))
        private_idx = tuple(Var(lp.var) for lp in plan.private)
        region_idx = tuple(Var(v) for v in copy_vars)
        tensor_idx = self._tensor_index(plan, copy_vars)
        buffer_copy = TensorRef(plan.buffer, plan.dtype, scope, private_idx + region_idx)
        source = TensorRef(tensor, plan.dtype, "g", tensor_idx)
        swept_idx = tuple(affine_expr(Affine(s.coeffs, -lo), plan.order)
                          for _, s, lo in plan.parts if s.coeffs)
        staged = TensorRef(plan.buffer, plan.dtype, scope, private_idx + swept_idx)

        def to_buffer(ref: TensorRef) -> TensorRef | None:
            return staged if ref.name == tensor else None

        if direction == "read":
            value = replace_refs(stmt.value, to_buffer)
            compute: Assign = Assign(stmt.target, value)  # type: ignore[arg-type]
            items = block.items[:site.path[1]] + (compute,) + block.items[site.path[1] + 1:]
            nest: tuple[Item, ...] = (_nest(copy_loops, Assign(buffer_copy, source)),
                                      Block(plan.inner, items))
        else:
            kind = program_info(program).statements[site.path].kind
            value = replace_refs(stmt.value, to_buffer)
            compute = Assign(staged, value)  # type: ignore[arg-type]
            back = Assign(TensorRef(tensor, stmt.target.dtype, "g", tensor_idx), buffer_copy)
            pieces: list[Item] = []
            if kind is StmtKind.REDUCE:
                init = program_info(program).statements[site.path].init
                assert init is not None
                pieces.append(_nest(copy_loops, Assign(buffer_copy, init)))
            items = block.items[:site.path[1]] + (compute,) + block.items[site.path[1] + 1:]
            pieces += [Block(plan.inner, items), _nest(copy_loops, back)]
            nest = tuple(pieces)
        new_block = Block(plan.outer, nest)
        return with_body(program, replace_at(program.body, site.path[:1], new_block))

    @staticmethod
    def _tensor_index(plan: Plan, copy_vars: tuple[str, ...]) -> tuple[Expr, ...]:
        out: list[Expr] = []
        k = 0
        for outer_part, swept, lo in plan.parts:
            base = affine_expr(Affine(outer_part.coeffs, outer_part.const + lo), plan.order)
            if swept.coeffs:
                out.append(iadd(base, Var(copy_vars[k])))
                k += 1
            else:
                out.append(base)
        return tuple(out)

    # ---- trace -----------------------------------------------------------------------------------
    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        direction, tensor, at = site.get("direction"), site.get("tensor"), int(site.get("at"))
        scope = str(params["scope"])
        plan = self._plan(before, site.path, tensor, direction, at, scope)
        assert not isinstance(plan, str)
        block = before.body.blocks[site.path[0]]
        stmt = block.items[site.path[1]]
        assert isinstance(stmt, Assign)
        new_block = after.body.blocks[site.path[0]]
        copy_item = new_block.items[0 if direction == "read" else len(new_block.items) - 1]
        copy_stmt = copy_item.items[0] if isinstance(copy_item, Block) else copy_item
        assert isinstance(copy_stmt, Assign)
        old_ref = stmt.target if direction == "write" else next(r for r in stmt_reads(stmt) if r.name == tensor)
        uses = sum(1 for r in stmt_reads(stmt) if r.name == tensor) if direction == "read" else 1
        inner_iters = 1
        for lp in plan.inner:
            inner_iters *= lp.extent
        region_elems = plan.region_elements
        accesses = inner_iters * uses
        reuse = accesses / region_elems
        outer_iters = math.prod(lp.extent for lp in plan.outer)
        t = TraceBuilder()
        scope_word = "shared" if scope == "s" else "local"
        applicability = (
            f"In {describe_block(site.path[:1])} the statement {t.before(canonical(stmt)[:-1])} "
            f"{'reads' if direction == 'read' else 'writes'} the global tensor {tensor} as "
            f"{t.before(canonical(old_ref))}; its subscripts are affine and in bounds and "
            f"{'nothing else in the block writes it' if direction == 'read' else 'nothing else in the block touches it'}.")
        change = (
            f"The header splits after {t.before(header_text(plan.outer))} (at={at}); a fresh {scope_word} buffer "
            f"{plan.buffer} of {plan.elements} elements ({plan.nbytes} bytes) is "
            f"{'filled first by' if direction == 'read' else 'computed into, then copied back by'} "
            f"{t.after(canonical(copy_stmt)[:-1])}, and the statement now "
            f"{'reads' if direction == 'read' else 'writes'} the buffer instead.")
        rationale = (
            f"Per iteration of the {outer_iters} outer iteration(s) the inner loops make {accesses} "
            f"{'reads' if direction == 'read' else 'writes'} of {tensor} over a region of {region_elems} "
            f"elements ({region_elems * dtype_bytes(plan.dtype)} bytes): {reuse:.1f} accesses per element now "
            f"hit {scope_word} memory, and the global traffic is one {'load' if direction == 'read' else 'store'} "
            "per element of the region.")
        return t.build(applicability, change, rationale,
                       "Exact (E): elements are copied bit for bit and every statement computes the same "
                       "arithmetic in the same order.")


def _separating_vars(parts: Sequence[tuple[Affine, Affine, int]], extents: dict[str, int]) -> set[str]:
    """The outer loop variables whose iterations write disjoint regions of the tensor: those that alone
    make the outer part of some dimension (``k*v + c``) in steps ``|k|`` at least as wide as what the
    inner loops sweep there (``C_{bx*6+d}`` with ``d`` < 6: row blocks of a register tile)."""
    found = set()
    for outer_part, swept, _lo in parts:
        if len(outer_part.coeffs) != 1:
            continue
        var, step = outer_part.coeffs[0]
        lo, hi = affine_bounds(swept, extents)
        if step != 0 and hi - lo + 1 <= abs(step):
            found.add(var)
    return found


def _nest(loops: tuple[Loop, ...], stmt: Assign) -> Item:
    """The copy statement inside its region loops; a single element is copied by a plain statement."""
    return Block(loops, (stmt,)) if loops else stmt




def _refs_in(e: Expr) -> list[TensorRef]:
    from leir.ast import tensor_refs

    return list(tensor_refs(e))
