"""The machinery every search algorithm shares: states, budgets, expansion, measurement and records.

A search works on ``Node``s — LEIR states deduplicated by content hash over the whole run. ``expand``
asks the policy for ranked proposals (one policy call), and for the best new ones applies nothing itself:
each proposal already is an engine step, so it is measured (``tuner.measure``: verified against its parent
and timed against the source in one job) and accepted only when it verifies — ``equal_pass`` for exact
steps, ``pass`` for the others. Every measured step, accepted or not, becomes a step record with its
trace, so a run is an exportable multi-step trajectory. The reward of a state is its measured speedup
over the source program; the best state seen is the answer (a would-be new best is timed twice).
Budgets on verifications, policy calls and wall time are checked before every policy call and every
verification.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dataset.generation import generator_version
from dataset.records import Record, SourceInfo, step_record
from leir.ast import Program
from leir.program import program_hash
from strategies.base import AppliedStep, Exactness
from tuner.proposals import Proposal, SearchContext

if TYPE_CHECKING:
    from tuner.policies.base import Policy

#: A state measured more than this factor faster than the best so far is timed once more before it
#: becomes the best (``Search._confirm``).
CONFIRM_ABOVE = 1.1
#: Proposals of an enabling step's child measured at once, until one verifies (``Proposal.enables``).
FOLLOW_UP_TRIES = 2
#: How many enabling steps in a row are measured at once (a split, the reorder it enables, the unroll
#: that reorder enables): the rule policy looks at most two follow-ups ahead, so a longer run of steps
#: that each claim to enable the next is a chain no lookahead vouched for, and goes back to the beam.
FOLLOW_UP_CHAIN = 2


class MeasureFn(Protocol):
    def measure(self, after: Program, before: Program, exactness: Exactness) -> Any: ...


@dataclass(frozen=True)
class Budget:
    """Limits of one run; ``None`` is unlimited (at least one limit must be set)."""

    verifications: int | None = None
    policy_calls: int | None = None
    seconds: float | None = None

    KEYS = ("verifications", "policy_calls", "seconds")

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``verifications=40,seconds=300,policy_calls=20`` (aliases: ``v``, ``calls``, ``s``)."""
        aliases = {"v": "verifications", "verifications": "verifications", "calls": "policy_calls",
                   "policy_calls": "policy_calls", "s": "seconds", "seconds": "seconds"}
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = part.partition("=")
            if not sep or key.strip() not in aliases:
                raise ValueError(f"budget item {part!r}: expected one of verifications=N, policy_calls=N, "
                                 "seconds=S")
            name = aliases[key.strip()]
            try:
                values[name] = float(value) if name == "seconds" else int(value)
            except ValueError:
                raise ValueError(f"budget item {part!r}: {value!r} is not a number") from None
            if values[name] <= 0:
                raise ValueError(f"budget item {part!r}: must be positive")
        if not values:
            raise ValueError("an empty budget; give at least one of verifications=N, policy_calls=N, "
                             "seconds=S")
        return cls(**values)

    def to_json(self) -> dict[str, Any]:
        return {"verifications": self.verifications, "policy_calls": self.policy_calls,
                "seconds": self.seconds}


@dataclass(eq=False)
class Node:
    """One distinct state of the search."""

    program: Program
    hash: str
    depth: int
    speedup: float
    parent: Node | None = None
    step: AppliedStep | None = None
    record: Record | None = None
    seconds: float | None = None
    children: list[Node] = field(default_factory=list)
    #: Candidates from this state that failed (shown to the policy as search context).
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: MCTS bookkeeping: proposals not tried yet (``None``: the policy was not asked), visits, reward sum.
    untried: list[Proposal] | None = None
    visits: int = 0
    value: float = 0.0

    def path(self) -> list[Node]:
        nodes: list[Node] = []
        node: Node | None = self
        while node is not None:
            nodes.append(node)
            node = node.parent
        return nodes[::-1]

    def label(self) -> str:
        return f"{self.step.strategy} at {self.step.site.key}" if self.step is not None else "source"


@dataclass
class Usage:
    verifications: int = 0
    policy_calls: int = 0
    duplicates: int = 0
    accepted: int = 0
    policy_failures: int = 0
    #: Verifications spent re-timing a would-be new best (``CONFIRM_ABOVE``); counted in ``verifications``.
    confirmations: int = 0
    started: float = field(default_factory=time.monotonic)
    #: Where the run's time went (``Search.summary``'s ``time``): wall seconds inside policy calls (and the
    #: longest one), inside measurements, and the sandbox's own build, verification-run and timing seconds.
    policy_seconds: float = 0.0
    policy_call_max: float = 0.0
    measure_seconds: float = 0.0
    build_seconds: float = 0.0
    verify_seconds: float = 0.0
    timing_seconds: float = 0.0

    def seconds(self) -> float:
        return time.monotonic() - self.started

    def add_measurement(self, wall: float, verification: dict[str, Any]) -> None:
        """Count one measurement's wall time and its result's build, run and timing seconds."""
        self.measure_seconds += wall
        result = verification.get("result") or {}
        for attr, key in (("build_seconds", "build_seconds"), ("verify_seconds", "run_seconds"),
                          ("timing_seconds", "time_seconds")):
            value = result.get(key)
            if isinstance(value, int | float):
                setattr(self, attr, getattr(self, attr) + float(value))

    def time_json(self) -> dict[str, float]:
        """Seconds by activity; ``other`` is the run's wall time outside policy calls and measurements
        (records, bookkeeping), ``measure_overhead`` what a measurement spent outside build, run and timing
        (sandbox round trips, input generation, the error bound)."""
        total = self.seconds()
        inside = self.build_seconds + self.verify_seconds + self.timing_seconds
        return {key: round(value, 3) for key, value in (
            ("total", total), ("policy", self.policy_seconds), ("policy_call_max", self.policy_call_max),
            ("measure", self.measure_seconds), ("build", self.build_seconds),
            ("verification", self.verify_seconds), ("timing", self.timing_seconds),
            ("measure_overhead", max(0.0, self.measure_seconds - inside)),
            ("other", max(0.0, total - self.policy_seconds - self.measure_seconds)))}


class Search:
    """One run's state; algorithms (``tuner.search.algorithms``) drive it through ``expand``/``try_step``."""

    def __init__(self, source: Program, source_info: SourceInfo, policy: Policy, measurer: MeasureFn,
                 budget: Budget, *, seed: int = 0, branch: int = 8, max_depth: int = 8, asks: int = 3,
                 algo: str = "", options: dict[str, Any] | None = None,
                 progress: Callable[[Search], None] | None = None) -> None:
        self.source_info = source_info
        self.policy = policy
        self.measurer = measurer
        self.budget = budget
        self.seed = seed
        self.branch = branch
        self.max_depth = max_depth
        self.asks = max(1, asks)
        self.algo = algo
        self.progress = progress or (lambda search: None)
        self.usage = Usage()
        self.root = Node(source, program_hash(source), 0, 1.0)
        self.seen: dict[str, Node] = {self.root.hash: self.root}
        self.best = self.root
        self.records: list[Record] = []
        self.policy_failures: list[dict[str, Any]] = []
        settings = measurer.settings() if hasattr(measurer, "settings") else {}
        self.config = {"tuner": {"algo": algo, "options": dict(options or {}), "branch": branch,
                                 "max_depth": max_depth, "budget": budget.to_json(),
                                 "policy": policy.describe(), "measure": settings}}
        self.generator = {"name": "steptp", "version": generator_version(), "seed": seed,
                          "config": self.config}

    # -------------------------------------------------------------------------------------- budgets

    def out_of_measurements(self) -> bool:
        """No verification may start (the verification or wall-time budget is spent)."""
        b, u = self.budget, self.usage
        return ((b.verifications is not None and u.verifications >= b.verifications)
                or (b.seconds is not None and u.seconds() >= b.seconds))

    def exhausted(self) -> bool:
        """No policy call may start; the proposals of the last allowed call are still measured."""
        b, u = self.budget, self.usage
        return self.out_of_measurements() or (b.policy_calls is not None and u.policy_calls >= b.policy_calls)

    # ------------------------------------------------------------------------------------ expansion

    def context(self, node: Node) -> SearchContext:
        return SearchContext(speedup=node.speedup, path=[n.label() for n in node.path()[1:]],
                             failed=list(node.failed), wanted=self.branch)

    def proposals(self, node: Node) -> list[Proposal]:
        """The policy's proposals for ``node`` (one policy call); failed ones are recorded and dropped."""
        self.usage.policy_calls += 1
        started = time.monotonic()
        proposals = self.policy.propose(node.program, self.context(node))
        spent = time.monotonic() - started
        self.usage.policy_seconds += spent
        self.usage.policy_call_max = max(self.usage.policy_call_max, spent)
        usable = []
        for proposal in proposals:
            if proposal.ok:
                usable.append(proposal)
                continue
            self.usage.policy_failures += 1
            failure = proposal.failure or {}
            why = f"{failure.get('kind')}: {failure.get('reason')}"
            node.failed.append((proposal.strategy or "an answer", why))
            self.policy_failures.append({"state": node.hash, "depth": node.depth, **proposal.summary()})
        return usable

    def try_step(self, node: Node, proposal: Proposal) -> Node | None:
        """Measure one proposal from ``node``; the new state when it verifies (``None`` otherwise)."""
        step = proposal.step
        assert step is not None
        child_hash = program_hash(step.after)
        if child_hash in self.seen:
            self.usage.duplicates += 1
            return None
        if self.out_of_measurements():
            return None
        self.usage.verifications += 1
        measured = self._measure(step)
        strategy = step.strategy
        record = step_record(source=self.source_info, parent=node.program, parent_depth=node.depth,
                             strategy=strategy, number=step.number, level=step.level.value,
                             generator=self.generator, step=step, site_index=self._site_index(step),
                             verification=measured.verification)
        self.records.append(record)
        if not measured.accepted:
            why = str((record["failure"] or {}).get("reason"))[:300]
            node.failed.append((f"{strategy} at {step.site.key}", why))
            self.progress(self)
            return None
        self.usage.accepted += 1
        speedup, seconds = measured.speedup or 0.0, measured.seconds
        if speedup > self.best.speedup * CONFIRM_ABOVE and not self.out_of_measurements():
            speedup, seconds = self._confirm(step, speedup, seconds)
        child = Node(step.after, child_hash, node.depth + 1, speedup, node, step, record, seconds)
        self.seen[child_hash] = child
        node.children.append(child)
        measured_cache = getattr(self.policy, "measured", None)
        if measured_cache is not None:
            if node is self.root and getattr(measured, "source_seconds", None):
                measured_cache.setdefault(node.hash, measured.source_seconds)
            if measured.seconds is not None:
                measured_cache[child_hash] = measured.seconds
        if child.speedup > self.best.speedup:
            self.best = child
        self.progress(self)
        return child

    def _confirm(self, step: AppliedStep, speedup: float,
                 seconds: float | None) -> tuple[float, float | None]:
        """Time a would-be new best once more (one more verification) and keep the slower reading.

        One timing of a few repeats can be flattered by a moment when the machine was busy while the
        source was timed; the best state is the run's answer, so a reading that would make it one must
        hold twice. The record keeps the first job's verification; the state's reward is the lower one.
        """
        self.usage.verifications += 1
        self.usage.confirmations += 1
        again = self._measure(step)
        if again.speedup is None or not again.accepted:
            return speedup, seconds
        if again.speedup < speedup:
            return again.speedup, again.seconds
        return speedup, seconds

    def _measure(self, step: AppliedStep) -> Any:
        """One measurement, its time counted in ``usage`` (``Usage.add_measurement``)."""
        started = time.monotonic()
        measured = self.measurer.measure(step.after, step.before, step.exactness)
        verification = getattr(measured, "verification", None)
        self.usage.add_measurement(time.monotonic() - started,
                                   verification if isinstance(verification, dict) else {})
        return measured

    @staticmethod
    def _site_index(step: AppliedStep) -> int:
        from strategies.engine import strategy_sites
        from strategies.registry import get_strategy

        for index, site in enumerate(strategy_sites(get_strategy(step.strategy), step.before)):
            if site.key == step.site.key:
                return index
        return 0

    def expand(self, node: Node, limit: int | None = None, *, first: bool = False,
               chain: int = FOLLOW_UP_CHAIN) -> list[Node]:
        """Ask the policy and measure up to ``limit`` new proposals (``first``: stop at one accepted).

        A child whose proposal ``enables`` a follow-up is expanded at once (up to ``FOLLOW_UP_TRIES``
        measured, ``first``), and what that finds is returned with the children: a layout change that is
        slower alone competes through the reorder it made possible. ``chain`` more enabling steps in a
        row are followed so (``FOLLOW_UP_CHAIN``), no more. The steps a proposal planned after itself
        (``Proposal.then``) are measured instead, in order (``_follow_plan``).

        When a call yields nothing that verifies but some of its proposals failed (a malformed model
        answer), the policy is asked again — up to ``asks`` calls per expansion — with those failures in
        its context; a deterministic policy without failures is asked once.
        """
        if node.depth >= self.max_depth or self.exhausted():
            return []
        limit = self.branch if limit is None else limit
        children: list[Node] = []
        tried = 0
        for _ask in range(self.asks):
            failures_before = self.usage.policy_failures
            for proposal in self.proposals(node):
                if tried >= limit or self.out_of_measurements():
                    break
                assert proposal.step is not None, "proposals() keeps only proposals with a step"
                if program_hash(proposal.step.after) in self.seen:
                    self.usage.duplicates += 1
                    continue
                tried += 1
                child = self.try_step(node, proposal)
                if child is not None:
                    children.append(child)
                    if proposal.then:
                        children.extend(self._follow_plan(child, proposal))
                    elif proposal.enables and chain > 0:  # measure what it enables now, or a beam drops it
                        children.extend(self.expand(child, FOLLOW_UP_TRIES, first=True, chain=chain - 1))
                    if first:
                        return children
            no_new_failures = self.usage.policy_failures == failures_before
            if children or tried >= limit or self.exhausted() or no_new_failures:
                break
        return children

    def _follow_plan(self, node: Node, proposal: Proposal) -> list[Node]:
        """Measure the steps ``proposal`` planned after itself, each from the state the previous one
        reached, until one does not verify, the depth limit or the budget."""
        reached: list[Node] = []
        for step in proposal.then:
            if node.depth >= self.max_depth or self.exhausted():
                break
            planned = Proposal(step.strategy, step, proposal.score, f"planned after {proposal.strategy}: "
                               f"{proposal.rationale}", origin=proposal.origin)
            child = self.try_step(node, planned)
            if child is None:
                break
            reached.append(child)
            node = child
        return reached

    # ------------------------------------------------------------------------------------- results

    def best_path(self) -> list[Node]:
        return self.best.path()

    def summary(self) -> dict[str, Any]:
        u = self.usage
        return {
            "source": self.source_info.to_json(),
            "config": self.config,
            "best": {"hash": self.best.hash, "depth": self.best.depth, "speedup_vs_source": self.best.speedup,
                     "seconds": self.best.seconds},
            "path": [_path_entry(n) for n in self.best_path()[1:]],
            "usage": {"verifications": u.verifications, "policy_calls": u.policy_calls,
                      "accepted": u.accepted, "duplicates": u.duplicates,
                      "policy_failures": u.policy_failures, "confirmations": u.confirmations,
                      "seconds": round(u.seconds(), 3)},
            "time": u.time_json(),
            "states": len(self.seen),
            "policy_failures": self.policy_failures,
        }

    def progress_line(self) -> str:
        u, b = self.usage, self.budget
        verif = f"{u.verifications}" + (f"/{b.verifications}" if b.verifications else "")
        retimed = f" ({u.confirmations} re-timed)" if u.confirmations else ""
        return (f"[{self.algo}] accepted {u.accepted}  verifications {verif}{retimed}  "
                f"calls {u.policy_calls}  states {len(self.seen)}  "
                f"best {self.best.speedup:.3f}x @depth {self.best.depth}  {u.seconds():.1f}s "
                f"(policy {u.policy_seconds:.1f}s, build {u.build_seconds:.1f}s, "
                f"verify {u.verify_seconds:.1f}s, timing {u.timing_seconds:.1f}s)")


def _path_entry(node: Node) -> dict[str, Any]:
    """One step of the best path in a run summary (every state but the source has a step and a record)."""
    assert node.step is not None and node.record is not None, "the source state is not a step"
    return {"step_id": node.record["step_id"], "strategy": node.step.strategy, "site": node.step.site.key,
            "params": node.record["params"], "speedup_vs_source": node.speedup}
