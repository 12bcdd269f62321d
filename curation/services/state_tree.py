"""The tree of states a workload's steps reach: parent → children, one edge per step.

Steps form a graph (two paths can reach the same state, and a rewrite can even lead back), so the tree is
the breadth-first spanning tree from a root state: a state is expanded where it is first reached (at its
smallest depth) and other edges into it link to it. Large trees are capped (children per state, depth,
rows — the row budget fills the shallow levels first) and every cut says how much it hides and offers that
state as a new root, so any part of a 100,000-step workload stays reachable without sending it all at once.
Three queries: the workload's edges (plain tuples), their best speedups, and the hashes of the states shown.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Max

from curation.models import ProgramState, Step, Verification, Workload


@dataclass
class TreeRow:
    """One edge (a step) into one state, in pre-order; ``closes`` is how many open lists end after it."""

    step: dict[str, Any]
    state_pk: int
    state_hash: str
    depth: int
    seen: bool = False
    children: int = 0
    hidden: int = 0
    cut: bool = False
    best: float | None = None
    closes: int = 0

    @property
    def close_range(self) -> range:
        return range(self.closes)

    @property
    def has_children(self) -> bool:
        return self.children > 0


@dataclass
class StateTree:
    root: ProgramState
    rows: list[TreeRow]
    root_children: int
    root_hidden: int
    best: float | None
    edges: int
    truncated: bool = False
    states: int = field(default=0)


class StateNotInWorkload(LookupError):
    """The requested root state belongs to another workload (or does not exist)."""


def _best(*values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def state_tree(workload: Workload, root: ProgramState | None = None, *, max_children: int = 40,
               max_depth: int = 12, max_rows: int = 300) -> StateTree | None:
    """The tree under ``root`` (default: the source state); ``None`` when the workload has no states."""
    if root is None:
        root = (workload.states.filter(depth=0).order_by("id").first()
                or workload.states.order_by("depth", "id").first())
        if root is None:
            return None
    elif root.workload_id != workload.pk:
        raise StateNotInWorkload(f"state {root.pk} is not a state of {workload.name}")
    fields = ("pk", "step_id", "strategy", "verification_status", "review_status", "before_id", "after_id")
    edges = Step.objects.filter(workload=workload).order_by("id").values_list(*fields)
    speedups = {pk: (parent, source) for pk, parent, source in
                Verification.objects.filter(step__workload=workload).order_by().values_list("step_id")
                .annotate(parent=Max("speedup_vs_parent"), source=Max("speedup_vs_source"))}
    children: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    count = 0
    for edge in edges:  # tuples: a workload can hold tens of thousands of steps; only shown ones become dicts
        children[edge[5]].append(edge)
        count += 1

    def as_row(edge: tuple[Any, ...], depth: int) -> TreeRow:
        step = dict(zip(fields, edge, strict=True))
        step["speedup_vs_parent"], step["speedup_vs_source"] = speedups.get(step["pk"], (None, None))
        return TreeRow(step, step["after_id"], "", depth)
    # Breadth first: the row budget goes to the shallow levels before any deep branch can use it up.
    seen = {root.pk}
    kids: dict[int, list[TreeRow]] = {}
    hidden: dict[int, int] = {}
    budget = max_rows
    queue = deque([(root.pk, 1)])
    while queue:
        state_pk, depth = queue.popleft()
        out = children.get(state_pk, [])
        chosen: list[TreeRow] = []
        for edge in out:
            if len(chosen) >= max_children or budget <= 0:
                break
            row = as_row(edge, depth)
            chosen.append(row)
            budget -= 1
            if row.state_pk in seen:
                row.seen = True
            elif children.get(row.state_pk):
                seen.add(row.state_pk)
                if depth >= max_depth:
                    row.cut, row.hidden = True, len(children[row.state_pk])
                else:
                    queue.append((row.state_pk, depth + 1))
            else:
                seen.add(row.state_pk)
        kids[state_pk] = chosen
        hidden[state_pk] = len(out) - len(chosen)

    rows: list[TreeRow] = []

    def emit(state_pk: int) -> float | None:
        """Append the rows under ``state_pk`` in pre-order (how nested lists print); best speedup below."""
        best: float | None = None
        for row in kids.get(state_pk, []):
            rows.append(row)
            own = row.step["speedup_vs_source"]
            best = _best(best, own)
            row.best = own
            if row.seen or row.cut or row.state_pk not in kids:
                continue
            row.children, row.hidden = len(kids[row.state_pk]), hidden[row.state_pk]
            if not row.children:  # the budget ran out before this state's turn
                row.cut = True
                continue
            below = emit(row.state_pk)
            row.best = _best(own, below)
            best = _best(best, below)
            rows[-1].closes += 1
        return best

    best = emit(root.pk)
    root_children, root_hidden = len(kids.get(root.pk, [])), hidden.get(root.pk, 0)
    shown = {r.state_pk for r in rows}
    hashes = dict(ProgramState.objects.filter(pk__in=shown).values_list("pk", "program_hash"))
    for row in rows:
        row.state_hash = hashes[row.state_pk]
    truncated = len(rows) >= max_rows or root_hidden > 0 or any(r.hidden for r in rows)
    return StateTree(root, rows, root_children, root_hidden, best, count, truncated, len(seen))
