"""Shared checks of the algebraic rewrites (#24–35): real states, one step, verified in f32 and f64.

A case names a workload, the steps that lead from its source to the state tried (``()`` for the
source; ``("compute_inline", i)`` where the larger expressions appear; an inverse strategy where the
rewrite's input is that strategy's output) and the strategy. Each step goes through ``apply_strategy``
(checker, grounding) and is verified by the TVM kernel against its parent.
"""

from __future__ import annotations

from functools import cache

from leir.ast import Program
from leir.printer import canonical
from leir.rewrite import item_at
from strategies import AppliedStep, Exactness, apply_strategy, candidates

from .helpers import assert_interpreter_agrees, assert_verifies, workload

Steps = tuple[tuple[str, int], ...]


@cache
def state(workload_id: str, dtype: str, steps: Steps) -> Program:
    program = workload(workload_id, dtype)
    for name, index in steps:
        program = apply_strategy(program, name, index).after
    return program


@cache
def first_step(workload_id: str, dtype: str, steps: Steps, strategy: str) -> AppliedStep:
    program = state(workload_id, dtype, steps)
    sites = candidates(program, strategy)
    assert sites, f"{strategy} has no site on {workload_id} after {steps}"
    return apply_strategy(program, strategy, sites[0])


def check_case(workload_id: str, dtype: str, steps: Steps, strategy: str) -> AppliedStep:
    """The first site's step: N, its statement changed, the trace quotes it, and the kernel verifies."""
    step = first_step(workload_id, dtype, steps, strategy)
    assert step.exactness is Exactness.N
    old = canonical(item_at(step.before.body, step.site.path))
    new = canonical(item_at(step.after.body, step.site.path))
    assert old != new
    assert old in step.trace.applicability and new in step.trace.change
    assert "(N)" in step.trace.exactness
    assert_interpreter_agrees(step)
    assert_verifies(step)
    return step
