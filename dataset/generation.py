"""Seeded breadth-first generation of step records over the states reachable from source programs.

From each source state (a workload at one shape variant, or a ``.leir`` file) the generator takes every
planned step (``dataset.planning``) of every state at depth ``d``, verifies each resulting state
against its parent, and expands the distinct accepted children (deduplicated by content hash over the
whole run) at depth ``d+1``, at most ``breadth_cap`` of them per source and depth, drawn with an RNG
seeded by the run seed. One record per step (``dataset.records``), failures included, and one step per
(before, after) pair: a step whose child another step of the same state already produced is neither
verified nor written — the pair keeps the label of the step planned first, which is the precedence
``docs/dataset.md`` documents (catalogue number, then site, then parameters).

Verification is injected (``verify(after, before) -> result dict``) so this module imports neither TVM
nor torch; a numerically-equivalent (N) step that passes is verified again on special and large-magnitude
inputs (``verify_special``), and fails when it does not pass there; ``steptp generate`` passes
``verifier.verify`` on a warm sandbox pool, calls run on
``workers`` threads, and records are still written in plan order, so the same sources, settings and seed
give the same file byte for byte (up to the measured timings inside ``verification.result``).

Every record carries its ``effect`` (``dataset.effects``): the estimate from an injected feature function
(``features(program) -> dict``; ``steptp generate`` passes the tuner's cost-model features for its target,
the parent's computed once per state), the measurement from the verification's timings when it timed the
step against its parent, and, once the whole run is written, the ``follow_up`` linking a step to the
fastest faster step taken from its after-state, and each trace's rationale gains its effect and selection
lines, written from those numbers (``dataset.effect_reasoning``; the file is rewritten in place, in the
same order).

Resumable: ``StepWriter`` reads the step ids already in the output (dropping a half-written last line);
a planned step whose id is there is neither applied, verified nor written again — its recorded child is
used for the expansion, so the resumed run continues exactly where the interrupted one stopped.
"""

from __future__ import annotations

import json
import random
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TextIO

from dataset.effect_reasoning import write_reasoning
from dataset.effects import effect_json, estimate_json, link_follow_ups, measured_json, target_family
from dataset.planning import PlannedStep, StepFailure, attempt, plan_steps, traceback_summary
from dataset.records import (
    SPECIAL_VALUES_KEY,
    Record,
    SourceInfo,
    dumps,
    empty_effect,
    special_values_summary,
    state_json,
    step_id,
    step_record,
    upgrade,
    verification_json,
)
from leir.ast import Program
from leir.program import program_from_json, program_hash
from strategies.base import AppliedStep, Exactness, Strategy
from strategies.registry import all_strategies

#: ``verify(after, before)`` → a ``VerificationResult.to_json()`` dict.
VerifyFn = Callable[[Program, Program], Mapping[str, Any]]


def second_verification(verify: Callable[..., Mapping[str, Any]]) -> VerifyFn:
    """The second verification of an N step: special values, then large-offset inputs.

    ``verify(after, before, special_values=..., large_offset=...)`` is the first verification's function.
    Returns the special-values result unless that passed and the large-offset one did not (then that
    one, whose ``error`` says how much accuracy the step lost): a rewrite that cancels catastrophically
    on values near 1000 (a variance expanded into E[x^2] - E[x]^2) passes scattered special values.
    """
    def run(after: Program, before: Program) -> Mapping[str, Any]:
        special = verify(after, before, special_values=True)
        if str(special.get("outcome")) not in ("pass", "equal_pass"):
            return special
        offset = verify(after, before, large_offset=True)
        return special if str(offset.get("outcome")) in ("pass", "equal_pass") else offset

    return run
#: ``features(program)`` → the ``dataset.effects.FEATURE_KEYS`` of a program on the run's target.
FeaturesFn = Callable[[Program], Mapping[str, Any]]


def generator_version() -> str:
    try:
        return metadata.version("steptp")
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Source:
    """A source state and where it came from."""

    info: SourceInfo
    program: Program


@dataclass(frozen=True)
class GenerationConfig:
    depth: int = 1
    seed: int = 0
    #: States expanded per source and depth (a seeded sample of the distinct accepted children).
    breadth_cap: int = 8
    #: Parameter combinations tried per site (all of them when there are at most this many).
    params_per_site: int = 1
    #: Steps tried per state (a balanced, seeded subset); ``None`` tries them all.
    max_steps_per_state: int | None = None
    #: Names of the strategies to use (``None``: every registered one).
    strategies: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"depth": self.depth, "breadth_cap": self.breadth_cap, "params_per_site": self.params_per_site,
                "max_steps_per_state": self.max_steps_per_state,
                "strategies": list(self.strategies) if self.strategies else None}


@dataclass
class GenerationSummary:
    """What a run did (the CLI prints it)."""

    written: int = 0
    resumed: int = 0
    verified: int = 0
    failed: int = 0
    unverified: int = 0
    #: Steps not recorded: their (before, after) pair was already recorded under an earlier step.
    duplicates: int = 0
    states: int = 0
    by_strategy: dict[str, dict[str, int]] = field(default_factory=dict)

    def count(self, record: Record, *, resumed: bool) -> None:
        if resumed:
            self.resumed += 1
        else:
            self.written += 1
        status = record["status"]
        setattr(self, status, getattr(self, status) + 1)
        row = self.by_strategy.setdefault(record["strategy"], {"verified": 0, "failed": 0, "unverified": 0})
        row[status] += 1


class StepWriter:
    """Appends records to a ``.jsonl`` file, knowing the ids already there (for resumption)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.existing: dict[str, Record] = {}
        if self.path.exists():
            self._read_existing()
        self._handle: TextIO = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def _read_existing(self) -> None:
        data = self.path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]  # an interrupted write leaves a partial last line
        if len(complete) != len(data):
            self.path.write_bytes(complete)
        for line in complete.decode("utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                self.existing[record["step_id"]] = record

    def write(self, record: Record) -> None:
        self._handle.write(dumps(record) + "\n")
        self._handle.flush()
        self.existing[record["step_id"]] = record

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> StepWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass
class _Pending:
    """A record waiting for its verification (or ready), kept in plan order."""

    build: Callable[[Mapping[str, Any] | None, StepFailure | None], Record]
    future: Future[Mapping[str, Any] | StepFailure] | None
    child: Program | None
    resumed: Record | None = None
    #: Builds a failure record when ``build`` itself fails (a strategy's parameters that are not JSON …).
    fallback: Callable[[BaseException], Record] | None = None
    #: The (before, after) pair is already carried by an earlier step: nothing is verified or written.
    duplicate: bool = False


class Generator:
    """Breadth-first generation over ``sources``; see the module docstring."""

    def __init__(self, sources: Sequence[Source], config: GenerationConfig, *, verify: VerifyFn | None,
                 workers: int = 1, progress: Callable[[int, int], None] | None = None,
                 strategies: Sequence[Strategy] | None = None, verify_special: VerifyFn | None = None,
                 features: FeaturesFn | None = None, target: str | None = None):
        self.sources = list(sources)
        self.config = config
        self.verify = verify
        #: The same verification on special and large-magnitude inputs (``special_values``), run for every
        #: N step that passed: a rewrite that overflows where its parent does not becomes a failure.
        self.verify_special = verify_special
        self.features = features
        #: The target the effects are for (``llvm``/``cuda`` family); ``None`` when nothing is estimated.
        self.target = target
        self.workers = max(1, workers)
        #: ``progress(done, newly_planned)``: steps finished, and steps added to the known total.
        self.progress = progress or (lambda done, planned: None)
        names = config.strategies
        pool = all_strategies() if strategies is None else strategies
        #: Registered ones by default; a caller may pass instances (tests pass deliberately broken ones).
        #: Registered ones in catalogue order by default: the plan order is the label precedence of a pair.
        self.strategies: list[Strategy] = [s for s in pool if names is None or s.name in names]
        self.generator = {"name": "steptp", "version": generator_version(), "seed": config.seed,
                          "config": config.to_json()}

    def run(self, writer: StepWriter) -> GenerationSummary:
        summary = GenerationSummary()
        #: (parent hash, child hash) -> the step id that carries the pair (one label per pair).
        self._pairs: dict[tuple[str, str], str] = {}
        seen: set[str] = set()
        with ThreadPoolExecutor(self.workers, thread_name_prefix="steptp-verify") as pool:
            frontiers = []
            for source in self.sources:
                source_hash = program_hash(source.program)
                if source_hash not in seen:
                    seen.add(source_hash)
                    frontiers.append((source, [source.program]))
            for depth in range(self.config.depth):
                next_frontiers = []
                for source, states in frontiers:
                    children = self._level(source, states, depth, writer, pool, summary)
                    fresh = []
                    for child, child_hash in children:
                        if child_hash not in seen:
                            seen.add(child_hash)
                            fresh.append(child)
                    next_frontiers.append((source, self._cap(fresh, source, depth + 1)))
                    summary.states += len(states)
                frontiers = next_frontiers
        return summary

    def _cap(self, states: list[Program], source: Source, depth: int) -> list[Program]:
        if len(states) <= self.config.breadth_cap:
            return states
        rng = random.Random(f"{self.config.seed}|{source.info.hash}|breadth|{depth}")
        keep = sorted(rng.sample(range(len(states)), self.config.breadth_cap))
        return [states[i] for i in keep]

    def _level(self, source: Source, states: list[Program], depth: int, writer: StepWriter,
               pool: ThreadPoolExecutor, summary: GenerationSummary) -> list[tuple[Program, str]]:
        """Every planned step from ``states`` (all at ``depth``); the accepted children and their hashes."""
        children: list[tuple[Program, str]] = []
        window: deque[_Pending] = deque()
        limit = self.workers * 4
        for state in states:
            parent_state = state_json(state, depth)
            state_hash = parent_state["hash"]
            parent_features = self._features(state)
            plan = plan_steps(state, state_hash, self.strategies, seed=self.config.seed,
                              params_per_site=self.config.params_per_site,
                              max_steps=self.config.max_steps_per_state)
            self.progress(0, len(plan.broken) + len(plan.steps))
            for broken in plan.broken:
                s = broken.strategy
                record = step_record(source=source.info, parent=state, parent_depth=depth, strategy=s.name,
                                     number=s.number, level=s.level.value, generator=self.generator,
                                     failure=broken.failure.to_json(), parent_state=parent_state,
                                     effect=empty_effect(self._family()))
                window.append(self._known(record, writer))
            for planned in plan.steps:
                window.append(self._pending(source, state, parent_state, depth, planned, writer, pool,
                                            parent_features))
                while len(window) > limit:
                    self._flush_one(window, writer, summary, children)
        while window:
            self._flush_one(window, writer, summary, children)
        return children

    def _known(self, record: Record, writer: StepWriter) -> _Pending:
        existing = writer.existing.get(record["step_id"])
        return _Pending(build=lambda v, f: record, future=None, child=None, resumed=existing)

    def _pending(self, source: Source, state: Program, parent_state: dict[str, Any], depth: int,
                 planned: PlannedStep, writer: StepWriter, pool: ThreadPoolExecutor,
                 parent_features: Mapping[str, Any] | None = None) -> _Pending:
        s = planned.strategy
        existing = writer.existing.get(step_id(parent_state["hash"], s.name, planned.site, planned.params))
        common: dict[str, Any] = dict(
            source=source.info, parent=state, parent_depth=depth, strategy=s.name, number=s.number,
            level=s.level.value, generator=self.generator, site=planned.site, site_index=planned.site_index,
            params=planned.params, parent_state=parent_state, effect=empty_effect(self._family()))
        if existing is not None:
            child = (program_from_json(existing["child"]["program"])
                     if existing["status"] != "failed" and existing.get("child") else None)
            if existing.get("child"):
                pair = (parent_state["hash"], existing["child"]["hash"])
                self._pairs.setdefault(pair, existing["step_id"])
            return _Pending(build=lambda v, f: existing, future=None, child=child, resumed=existing)
        def fallback(exc: BaseException) -> Record:
            safe = {**common, "params": {str(k): repr(v) for k, v in planned.params.items()}}
            failure = StepFailure("apply", "exception", f"the step could not be recorded: "
                                  f"{type(exc).__name__}: {exc}", traceback_summary(exc))
            return step_record(**safe, failure=failure.to_json())

        outcome = attempt(state, planned)
        if isinstance(outcome, StepFailure):
            failure = outcome.to_json()
            return _Pending(build=lambda v, f: step_record(**common, failure=failure), future=None,
                            child=None, fallback=fallback)
        step: AppliedStep = outcome
        own_id = step_id(parent_state["hash"], s.name, planned.site, planned.params)
        if self._pairs.setdefault((parent_state["hash"], program_hash(step.after)), own_id) != own_id:
            return _Pending(build=lambda v, f: {}, future=None, child=None, duplicate=True)
        future = pool.submit(self._verify, step) if self.verify is not None else None

        def build(result: Mapping[str, Any] | None, failure: StepFailure | None) -> Record:
            effect = self._effect(parent_features, step.after, result)
            if failure is not None:
                return step_record(**{**common, "effect": effect}, step=step, failure=failure.to_json())
            verification = verification_json(result, step.exactness) if result is not None else None
            return step_record(**{**common, "effect": effect}, step=step, verification=verification)

        return _Pending(build=build, future=future, child=step.after, fallback=fallback)

    def _family(self) -> str | None:
        return target_family(self.target)

    def _features(self, program: Program) -> Mapping[str, Any] | None:
        """The program's features, or ``None`` without a feature function or when the model fails on it
        (an effect is evidence about a step, never a reason to lose one)."""
        if self.features is None:
            return None
        try:
            return self.features(program)
        except Exception:
            return None

    def _effect(self, parent_features: Mapping[str, Any] | None, child: Program,
                result: Mapping[str, Any] | None) -> dict[str, Any]:
        """The step's ``effect``: estimated from the features, measured from the verification's timings."""
        child_features = self._features(child) if parent_features is not None else None
        estimate = estimate_json(parent_features, child_features) \
            if parent_features is not None and child_features is not None else None
        measured = None
        if result is not None:
            parent_timing, timing = result.get("parent_timing"), result.get("timing")
            if isinstance(parent_timing, Mapping) and isinstance(timing, Mapping):
                measured = measured_json(parent_timing.get("samples") or [], timing.get("samples") or [])
        return effect_json(self.target, estimate, measured)

    def _verify(self, step: AppliedStep) -> Mapping[str, Any] | StepFailure:
        try:
            assert self.verify is not None
            result = self.verify(step.after, step.before)
            if (self.verify_special is not None and step.exactness is Exactness.N
                    and str(result.get("outcome")) in ("pass", "equal_pass")):
                special = self.verify_special(step.after, step.before)
                result = {**result, SPECIAL_VALUES_KEY: special_values_summary(special)}
            return result
        except Exception as exc:
            return StepFailure("verification", "verifier_error", f"{type(exc).__name__}: {exc}",
                               traceback_summary(exc))

    def _flush_one(self, window: deque[_Pending], writer: StepWriter, summary: GenerationSummary,
                   children: list[tuple[Program, str]]) -> None:
        pending = window.popleft()
        if pending.duplicate:
            summary.duplicates += 1
            self.progress(1, 0)
            return
        if pending.resumed is not None:
            record = pending.resumed
            summary.count(record, resumed=True)
        else:
            result = pending.future.result() if pending.future is not None else None
            try:
                record = pending.build(None, result) if isinstance(result, StepFailure) else \
                    pending.build(result, None)
                dumps(record)
            except Exception as exc:
                if pending.fallback is None:
                    raise
                record = pending.fallback(exc)
                pending.child = None
            if record["step_id"] in writer.existing:  # the same step reached twice in one run
                self.progress(1, 0)
                return
            writer.write(record)
            summary.count(record, resumed=False)
        if record["status"] != "failed" and pending.child is not None:
            children.append((pending.child, record["child"]["hash"]))
        self.progress(1, 0)


def generate(sources: Iterable[Source], config: GenerationConfig, output: str | Path, *,
             verify: VerifyFn | None, workers: int = 1, progress: Callable[[int, int], None] | None = None,
             strategies: Sequence[Strategy] | None = None, verify_special: VerifyFn | None = None,
             features: FeaturesFn | None = None, target: str | None = None) -> GenerationSummary:
    """Run a generation into ``output`` (appending to, and resuming, what is already there), then link
    every step's ``effect.follow_up`` (``link_output_follow_ups``)."""
    with StepWriter(output) as writer:
        summary = Generator(list(sources), config, verify=verify, workers=workers, progress=progress,
                            strategies=strategies, verify_special=verify_special, features=features,
                            target=target).run(writer)
    link_output_follow_ups(output)
    return summary


def link_output_follow_ups(path: str | Path) -> int:
    """Set ``effect.follow_up`` in every record of ``path`` from the steps taken from its after-state,
    then write every trace's effect and selection lines from the effects (``dataset.effect_reasoning``),
    rewriting the file (same order, atomically) only when one changed or was upgraded from an older
    schema version; how many links changed.

    Runs after the whole generation, so the children of every state and their effects are known; a run
    interrupted before it is linked by the resumed run, and a second pass changes nothing (same records,
    same bytes).
    """
    path = Path(path)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [upgrade(json.loads(line)) for line in lines]
    changed = link_follow_ups(records)
    reasoned = write_reasoning(records)
    upgraded = any(dumps(r) != line for r, line in zip(records, lines, strict=True))
    if changed or reasoned or upgraded:
        partial = path.with_name(path.name + ".linking")
        partial.write_text("".join(dumps(r) + "\n" for r in records), encoding="utf-8")
        partial.replace(path)
    return changed
