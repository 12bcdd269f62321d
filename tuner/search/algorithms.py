"""The search algorithms: greedy, beam, BFS, DFS, MCTS and chain, each a function over a ``Search``.

All share ``Search.expand`` (one policy call, then measured proposals) and its budgets, dedup and
records; they differ only in which state they expand next. Ties between equally fast states break by
hash, so the order never depends on dictionary or thread order.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from tuner.search.base import Node, Search

if TYPE_CHECKING:
    from tuner.policies.base import Policy


def _rank(nodes: list[Node]) -> list[Node]:
    return sorted(nodes, key=lambda n: (-n.speedup, n.hash))


def greedy(search: Search) -> None:
    """Move to the fastest verified child while it beats the current state."""
    node = search.root
    while not search.exhausted():
        children = search.expand(node)
        if not children:
            return
        best = _rank(children)[0]
        if best.speedup <= node.speedup and node is not search.root:
            return
        node = best


def chain(search: Search) -> None:
    """Follow the policy: take its best-ranked proposal that verifies, whatever the speedup, to max depth."""
    node = search.root
    while not search.exhausted():
        children = search.expand(node, first=True)
        if not children:
            return
        node = children[-1]  # the deepest: an enabling step's follow-up when one was taken


def beam(search: Search, width: int = 4) -> None:
    """Keep the ``width`` fastest states of each depth and expand all of them."""
    frontier = [search.root]
    while frontier and not search.exhausted():
        children: list[Node] = []
        for node in frontier:
            children.extend(search.expand(node))
            if search.exhausted():
                break
        frontier = _rank(children)[:width]


def bfs(search: Search) -> None:
    """Expand states in the order they were found (shallowest first)."""
    queue = deque([search.root])
    while queue and not search.exhausted():
        queue.extend(search.expand(queue.popleft()))


def dfs(search: Search) -> None:
    """Expand the most recently found, fastest state first, down to ``max_depth``, then backtrack."""
    stack = [search.root]
    while stack and not search.exhausted():
        stack.extend(reversed(_rank(search.expand(stack.pop()))))


def mcts(search: Search, exploration: float = 1.4, rollout_depth: int = 0,
         rollout_policy: Policy | None = None) -> None:
    """UCT over measured rewards (speedup over the source).

    Each iteration descends by UCT through states whose proposals are all tried, measures one untried
    proposal of the state it stops at, optionally rolls out ``rollout_depth`` steps from the new state with
    ``rollout_policy`` (its best proposal that verifies, each measured and recorded), and backs the best
    speedup reached up the path. A state with nothing left to try and no children is closed.
    """
    closed: set[str] = set()

    def open_children(node: Node) -> list[Node]:
        return [c for c in node.children if c.hash not in closed]

    def uct(parent: Node, child: Node) -> tuple[float, str]:
        if child.visits == 0:
            return (math.inf, child.hash)
        mean = child.value / child.visits
        return (mean + exploration * math.sqrt(math.log(max(parent.visits, 1)) / child.visits), child.hash)

    while not search.exhausted() and search.root.hash not in closed:
        node = search.root
        path = [node]
        while True:
            if node.untried is None and node.depth < search.max_depth:
                node.untried = search.proposals(node)
            if node.untried and node.depth < search.max_depth:
                break
            candidates = open_children(node)
            if not candidates:
                closed.add(node.hash)
                break
            node = max(candidates, key=lambda c: uct(path[-1], c))
            path.append(node)
        if node.hash in closed:
            for ancestor in path:
                ancestor.visits += 1
            continue
        child: Node | None = None
        while node.untried and child is None and not search.out_of_measurements():
            child = search.try_step(node, node.untried.pop(0))
        if child is None:
            continue
        path.append(child)
        reward = child.speedup
        if rollout_depth and rollout_policy is not None:
            reward = max(reward, _rollout(search, child, rollout_depth, rollout_policy))
        for ancestor in path:
            ancestor.visits += 1
            ancestor.value += reward


def _rollout(search: Search, start: Node, depth: int, policy: Policy) -> float:
    best, node = start.speedup, start
    for _ in range(depth):
        if search.exhausted() or node.depth >= search.max_depth:
            break
        search.usage.policy_calls += 1
        step_child = None
        for proposal in policy.propose(node.program, search.context(node))[: search.branch]:
            if proposal.ok:
                step_child = search.try_step(node, proposal)
                if step_child is not None:
                    break
        if step_child is None:
            break
        node = step_child
        best = max(best, node.speedup)
    return best


ALGORITHMS: dict[str, Callable[..., None]] = {"greedy": greedy, "beam": beam, "bfs": bfs, "dfs": dfs,
                                              "mcts": mcts, "chain": chain}
