"""loop_binding (catalogue #17): a serial spatial loop is bound to a GPU block or thread axis (a thread-bound
loop to a block axis)."""

from __future__ import annotations

import itertools

from leir.analysis import loop_race_reason, program_info
from leir.ast import Block, Loop, Program
from leir.gpu_limits import (
    BOUND_AXES,
    MAX_THREADS_PER_BLOCK,
    all_loops,
    axis_limit,
    gpu_limit_violations,
    is_block_axis,
    thread_tag,
    threads_per_block,
)
from leir.names import first_unused, loop_var_names
from leir.printer import loop_text
from leir.rewrite import block_at, substitute_vars
from strategies.base import Exactness, Level, NotApplicableError, Params, ParamSpec, Site, Strategy
from strategies.common import describe_block
from strategies.loop.nest import (
    LOOP_SITE_REFUSALS,
    enclosing_loops,
    find_loop,
    header_loops,
    loop_site,
    nested_loops,
    rebuild,
)
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def bound_name(block: Block, axis: str) -> str:
    """The variable for a loop bound to ``axis`` in a top-level block: ``tx``, or ``txa`` when taken."""
    taken = {lp.var for lp in all_loops(block)}
    return first_unused(itertools.chain([axis], (axis + suffix for suffix in loop_var_names())), taken)[0]


@register
class LoopBinding(Strategy):
    """Bind a serial spatial loop to a GPU axis: kind ``L`` → ``B``, the variable renamed to the axis.

    From level1/cat_split_chunk, parameters {'axis': 'ty'}:

    Before: ``B^{4}_{tx=0}L^{24}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a};];``
    After:  ``B^{4}_{tx=0}B^{24}_{ty=0}[D^{f32,g}_{tx,ty}=A^{f32,g}_{tx,ty};];``

    A loop bound to a thread axis rebinds to a block axis the same way (``B^{4}_{tx=0}`` → ``B^{4}_{bx=0}``):
    the frontend binds every program's outer loop to ``tx``, which the CPU runs serially, so this is the
    step that lets those iterations run in parallel there (and spreads them over multiprocessors on cuda).

    Parameter ``axis``: ``bx by bz`` (blockIdx) or ``tx ty tz`` (threadIdx), every one that is legal.
    Precondition: the loop is serial ``L`` (or ``B`` on a thread axis, rebound to a block axis) with at least 2 iterations and spatial (no dependence along it); the axis is not bound
    already in the nest; a blockIdx axis is never inside a threadIdx loop (nor a threadIdx axis
    around a blockIdx loop); the launch stays within the CUDA limits — at most 1024 threads per block
    in total, 1024 on x/y and 64 on z, grid y/z at most 65535 — checked by
    ``leir.gpu_limits.gpu_limit_violations``, the function the cuda lowering uses; and a blockIdx
    binding is not added to a nest that already has a ``P`` loop (on the CPU it would then run
    serially). Each iteration keeps its arithmetic: exact (E).
    """

    number = 17
    name = "loop_binding"
    level = Level.LOOP
    exactness = Exactness.E

    refusals = {
        **LOOP_SITE_REFUSALS,
        "unknown-axis": "the axis asked for is not one of BOUND_AXES",
        "cannot-bind": "no GPU axis (or not the one asked for) can take the loop: its kind, extent, a race, "
                       "an axis already bound in the nest, block/thread nesting, or a GPU limit",
    }

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for path, _block, _k, lp in header_loops(program):
            try:
                _lp, axes = self.check(program, loop_site(path, lp))
            except NotApplicableError:
                continue
            sites.append(loop_site(path, lp, (ParamSpec("axis", axes, "GPU axis"),)))
        return sites

    def check(self, program: Program, site: Site, params: Params | None = None) -> tuple[Loop, tuple[str, ...]]:
        """The loop and the axes it may be bound to (the one asked for, with ``params``), or a refusal."""
        _block, _k, lp = find_loop(self, program, site.path, site.get("loop"))
        if params is not None and params.get("axis") not in BOUND_AXES:
            raise self.refuse("unknown-axis", f"axis {params.get('axis')} is not one of {', '.join(BOUND_AXES)}",
                              site)
        asked = (str(params["axis"]),) if params is not None else BOUND_AXES
        problems = {axis: self._problem(program, site.path, lp, axis) for axis in asked}
        axes = tuple(axis for axis, problem in problems.items() if problem is None)
        if not axes:
            raise self.refuse("cannot-bind", str(problems[asked[0]]), site)
        return lp, axes

    def _bound(self, program: Program, path: tuple[int, ...], lp: Loop, axis: str) -> Program:
        block = block_at(program.body, path)
        k = block.loops.index(lp)
        name = bound_name(program.body.blocks[path[0]], axis)
        loops = block.loops[:k] + (Loop("B", lp.extent, name),) + block.loops[k + 1:]
        from leir.ast import Var

        return rebuild(program, path, block, loops, lambda e: substitute_vars(e, {lp.var: Var(name)}))

    def _problem(self, program: Program, path: tuple[int, ...], lp: Loop, axis: str) -> str | None:
        if lp.kind == "B":
            if is_block_axis(lp.var):
                return f"the loop {loop_text(lp)} is bound to a block axis already"
            if not is_block_axis(axis):
                return f"the loop {loop_text(lp)} is bound to a thread axis already; it rebinds to a block axis"
        elif lp.kind != "L":
            return f"the loop {loop_text(lp)} is {lp.kind}, not serial L or thread-bound B"
        if lp.extent < 2:
            return f"the loop {loop_text(lp)} has a single iteration; binding it launches nothing more"
        reason = loop_race_reason(program, path, lp.var)
        if reason:
            return f"the loop {loop_text(lp)} {reason}; bound iterations would race"
        tag = thread_tag(axis)
        if lp.extent > axis_limit(tag):
            return f"extent {lp.extent} exceeds the {tag} limit of {axis_limit(tag)}"
        top = program.body.blocks[path[0]]
        nest = list(all_loops(top))
        if any(o.kind == "B" and thread_tag(o.var) == tag for o in nest):
            return f"{tag} is already bound in this nest"
        block = block_at(program.body, path)
        k = block.loops.index(lp)
        outside = enclosing_loops(program, path) + block.loops[:k]
        inside = block.loops[k + 1:] + nested_loops(block)
        if is_block_axis(axis):
            if any(o.kind == "B" and not is_block_axis(o.var) for o in outside):
                return f"a blockIdx axis cannot sit inside the threadIdx loop over {outside[-1].var}"
            if any(o.kind == "P" for o in nest):
                return "the nest has a P loop, which a blockIdx loop around it would serialise on the CPU"
        elif any(o.kind == "B" and is_block_axis(o.var) for o in inside):
            return "a threadIdx axis cannot enclose a blockIdx loop"
        after = self._bound(program, path, lp, axis)
        violations = gpu_limit_violations(after.body.blocks[path[0]], program_info(program).tensors)
        if violations:
            return violations[0].message
        return None

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        lp, (axis,) = self.check(program, site, params)
        return self._bound(program, site.path, lp, axis)

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        block, k, old = find_loop(self, before, site.path, site.get("loop"))
        new = block_at(after.body, site.path).loops[k]
        axis = str(params["axis"])
        tag = thread_tag(axis)
        t = TraceBuilder()
        threads = threads_per_block(after.body.blocks[site.path[0]])
        if is_block_axis(axis):
            why = (f"the {old.extent} iterations become {old.extent} thread blocks on {tag}, spread over the "
                   f"GPU's multiprocessors; each block runs {threads} thread(s)")
        else:
            why = (f"the {old.extent} iterations become {old.extent} threads on {tag}; one block now has "
                   f"{threads} thread(s) (limit {MAX_THREADS_PER_BLOCK}), executed in warps of 32")
        if old.kind == "B":  # a thread axis rebound to a block axis
            what = f"the loop {t.before(loop_text(old))}, bound to {thread_tag(old.var)},"
            rationale = (f"On the CPU the documented mapping runs threadIdx loops serially and blockIdx loops in "
                         f"parallel, so the {old.extent} iterations now run in parallel; on cuda {why}.")
        else:
            what = f"the serial loop {t.before(loop_text(old))}"
            cpu = "blockIdx loops in parallel" if is_block_axis(axis) else "threadIdx loops serially"
            rationale = f"On cuda {why}; on the CPU the documented mapping runs {cpu}."
        return t.build(
            applicability=(f"In {describe_block(site.path)} {what} is "
                           f"spatial, {tag} is free in this launch, and extent {old.extent} is within the "
                           f"{tag} limit of {axis_limit(tag)}."),
            change=(f"{t.before(loop_text(old))} becomes {t.after(loop_text(new))} with axis={axis}; every "
                    f"use of {old.var} becomes {new.var}."),
            rationale=rationale,
            exactness=("Exact (E): each bound iteration computes its own elements with the same arithmetic, "
                       "so the outputs are bitwise identical."),
        )
