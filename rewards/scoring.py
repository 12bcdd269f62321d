"""A reward backed by the verifier: how far a model's answer to a Step-TP prompt gets, as one number.

The ladder (``REWARDS``), each rung a check the previous ones make possible:

``off_format`` 0.0 (no ``<think>..</think><answer>{JSON with both keys}</answer>``, or too long) →
``invalid_ir`` 0.1 (the IR does not parse or check against the prompt's tensors, or nests deeper than
``MAX_NESTING``) → ``too_costly`` 0.1 (more than ``MAX_WORK_FACTOR`` times the parent's statement
executions: huge loop extents never reach a build) → ``no_change`` 0.15 → ``unknown_strategy`` 0.2 →
``not_a_legal_step`` 0.25 (no legal step of the named strategy gives this IR; ``tuner.policies.answers``)
→ ``fail`` 0.4 (verified against the parent and failed: wrong outputs, build error, timeout, crash) →
``not_bitwise_equal`` 0.6 (an exact step that only passed within tolerance) → ``accepted`` 1.0 (what the
step's exactness requires: ``equal_pass`` for E, ``pass`` for N). With ``time=True`` an accepted answer
also gains ``TIME_WEIGHT * clamp(log2(measured speedup), -1, 1)``: faster is better, slower is worse.

Hostile answers (garbage, deep nesting, huge extents, a program that loops for ever) are stopped by those
caps before a build, and what reaches the verifier runs in its sandbox pool under a wall-time and memory
limit (``timeout``); any exception while scoring one answer scores it ``error`` 0.0 — a reward call never
raises and never waits longer than about ``timeout`` per answer.

Verifications run ``workers`` at a time on a warm ``verifier.sandbox.WorkerPool``; results are cached in
memory by (parent hash, answer program hash, strategy, target, timing) and on disk by the verifier's own
result cache, so a GRPO group that proposes the same program twice builds it once.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from leir.analysis import program_info
from leir.ast import Program
from leir.errors import LeirError
from leir.limits import statement_executions
from leir.printer import canonical
from leir.program import program_from_json, program_hash, program_to_json
from rewards.prompts import completion_text, parse_prompt
from tuner.policies.answers import AnswerFailure, answer_objects, match_step

REWARDS: dict[str, float] = {
    "error": 0.0,
    "off_format": 0.0,
    "invalid_ir": 0.1,
    "too_costly": 0.1,
    "no_change": 0.15,
    "unknown_strategy": 0.2,
    "not_a_legal_step": 0.25,
    "fail": 0.4,
    "not_bitwise_equal": 0.6,
    "accepted": 1.0,
}
#: Longest completion scored (characters); longer ones are ``off_format``.
MAX_COMPLETION_CHARS = 200_000
#: Deepest bracket nesting an answer's IR may have (canonical LEIR of real programs stays far below).
MAX_NESTING = 64
#: An answer may cost at most this many times the parent's statement executions.
MAX_WORK_FACTOR = 16
#: Weight of the log2 measured speedup added to an accepted answer's reward when timing is on.
TIME_WEIGHT = 0.5
#: Default wall-time limit of one answer's verification in the sandbox (seconds).
DEFAULT_TIMEOUT_S = 60.0

VerifyFn = Callable[[Program, Program], Mapping[str, Any]]


@dataclass(frozen=True)
class Score:
    """One answer's reward and why: the rung it reached and, when verified, the outcome and speedup."""

    reward: float
    stage: str
    reason: str = ""
    strategy: str | None = None
    outcome: str | None = None
    speedup: float | None = None
    cached: bool = False

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _score(stage: str, reason: str = "", **extra: Any) -> Score:
    return Score(reward=REWARDS[stage], stage=stage, reason=reason[:300], **extra)


def _nesting(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    return deepest


@dataclass(frozen=True)
class Screened:
    """An answer that passed every check before the verifier: what to verify and against what."""

    parent: Program
    proposed: Program
    strategy: str
    exactness: str
    key: tuple[str, str, str, str, bool]


def screen(prompt: Any, completion: Any, *, time: bool = False) -> Score | Screened:
    """Every check before a build (format, IR, cost, legal step); a ``Score`` ends the ladder there."""
    text = completion_text(completion)
    if len(text) > MAX_COMPLETION_CHARS:
        return _score("off_format", f"the completion is longer than {MAX_COMPLETION_CHARS} characters")
    think_open, think_close = text.find("<think>"), text.find("</think>")
    if think_open < 0 or think_close < think_open or text.find("<answer>") < think_close:
        return _score("off_format", "no <think>...</think> before <answer>")
    parsed = answer_objects(text)
    if isinstance(parsed, AnswerFailure):
        return _score("off_format", f"{parsed.kind}: {parsed.reason}")
    if len(parsed) != 1:
        return _score("off_format", f"{len(parsed)} answers; the prompt asks for one")
    ir, strategy = parsed[0]["transformed_IR"], parsed[0]["applied_strategy"]
    parent, target = parse_prompt(prompt)
    if _nesting(ir) > MAX_NESTING:
        return _score("invalid_ir", f"the IR nests deeper than {MAX_NESTING}", strategy=strategy)
    try:
        proposed = program_from_json({"tensors": program_to_json(parent)["tensors"], "leir": ir})
        info = program_info(proposed)
    except (LeirError, RecursionError, MemoryError, ValueError, KeyError, TypeError, IndexError) as exc:
        return _score("invalid_ir", f"{type(exc).__name__}: {exc}", strategy=strategy)
    if not info.ok:
        return _score("invalid_ir", str(info.errors[0]), strategy=strategy)
    budget = MAX_WORK_FACTOR * max(statement_executions(parent.body), 1)
    work = statement_executions(proposed.body)
    if work > budget:
        return _score("too_costly", f"{work:,} statement executions > {budget:,}", strategy=strategy)
    if canonical(proposed.body) == canonical(parent.body):
        return _score("no_change", "the answer is the input program", strategy=strategy)
    step = match_step(parent, strategy, ir)
    if isinstance(step, AnswerFailure):
        stage = step.kind if step.kind in REWARDS else "not_a_legal_step"
        return _score(stage, step.reason, strategy=strategy)
    key = (program_hash(parent), program_hash(proposed), strategy, target, time)
    return Screened(parent=parent, proposed=proposed, strategy=strategy, exactness=step.exactness, key=key)


def verified_score(screened: Screened, result: Mapping[str, Any], *, time: bool) -> Score:
    """The rung a verification result reaches (and the timing bonus of an accepted one)."""
    outcome = str(result.get("outcome"))
    required = "equal_pass" if screened.exactness == "E" else "pass"
    speedup = result.get("speedup_vs_parent")
    speedup = float(speedup) if isinstance(speedup, int | float) and math.isfinite(speedup) else None
    extra: dict[str, Any] = {"strategy": screened.strategy, "outcome": outcome, "speedup": speedup}
    if result.get("unhonoured_loops"):
        return _score("fail", "a loop's kind is not honoured by the lowering (it would claim an effect "
                              "the kernel lacks)", **extra)
    if outcome == "equal_pass" or (outcome == "pass" and required == "pass"):
        score = _score("accepted", **extra)
        if time and speedup is not None and speedup > 0:
            bonus = TIME_WEIGHT * max(-1.0, min(1.0, math.log2(speedup)))
            score = Score(**{**score.to_json(), "reward": score.reward + bonus})
        return score
    if outcome == "pass":
        return _score("not_bitwise_equal", "an exact strategy must give bitwise-equal outputs", **extra)
    return _score("fail", str(result.get("error") or result.get("log_excerpt") or outcome), **extra)


class VerifierReward:
    """A TRL reward function (``reward_funcs=[VerifierReward()]``): ``(prompts, completions, **kw) ->
    list[float]``, batched over a warm sandbox pool of ``workers``, cached by program hash.

    ``verify`` replaces the sandbox verification (``(after, parent) -> result dict``), for a caller with
    its own pool; ``close()`` (or ``with``) stops the pool this object started. ``last_scores`` holds the
    ``Score`` of every answer of the latest call, for logging.
    """

    __name__ = "steptp_verifier_reward"

    def __init__(self, *, workers: int = 1, time: bool = False, timeout: float = DEFAULT_TIMEOUT_S,
                 cache: bool = True, verify: VerifyFn | None = None) -> None:
        self.workers = max(1, workers)
        self.time = time
        self.timeout = timeout
        self.cache_enabled = cache
        self._verify = verify
        self._pool: Any = None
        self._result_cache: Any = None
        self._cache: dict[tuple[str, str, str, str, bool], Score] = {}
        self._lock = threading.Lock()
        self.last_scores: list[Score] = []

    # ------------------------------------------------------------------------------- verification
    def _sandbox_verify(self, after: Program, parent: Program, target: str) -> Mapping[str, Any]:
        from verifier import cache as cache_mod
        from verifier.sandbox import WorkerPool
        from verifier.verify import DEFAULT_MEMORY_LIMIT_MB, WARM_MODULES, verify

        with self._lock:
            if self._pool is None:
                self._pool = WorkerPool(self.workers, warm_modules=WARM_MODULES, timeout=self.timeout,
                                        memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB).start()
            if self._result_cache is None:
                self._result_cache = cache_mod.ResultCache() if self.cache_enabled else False
        return verify(after, parent=parent, reference="parent", target=target, pool=self._pool,
                      cache=self._result_cache, time=self.time, timeout=self.timeout,
                      reuse=self.cache_enabled, reuse_timings=self.time and self.cache_enabled).to_json()

    def _verify_one(self, screened: Screened) -> Score:
        try:
            if self._verify is not None:
                result = self._verify(screened.proposed, screened.parent)
            else:
                result = self._sandbox_verify(screened.proposed, screened.parent, screened.key[3])
            return verified_score(screened, result, time=self.time)
        except Exception as exc:  # a reward never raises: the answer scores as an error, with why
            return _score("error", f"{type(exc).__name__}: {exc}", strategy=screened.strategy)

    # -------------------------------------------------------------------------------------- calls
    def score_batch(self, prompts: Sequence[Any], completions: Sequence[Any]) -> list[Score]:
        """One ``Score`` per (prompt, completion); distinct programs verified ``workers`` at a time."""
        if len(prompts) != len(completions):
            raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
        scores: list[Score | None] = [None] * len(prompts)
        pending: dict[tuple[str, str, str, str, bool], tuple[Screened, list[int]]] = {}
        for index, (prompt, completion) in enumerate(zip(prompts, completions, strict=True)):
            try:
                screened = screen(prompt, completion, time=self.time)
            except Exception as exc:  # a prompt not of our format, or anything unforeseen
                scores[index] = _score("error", f"{type(exc).__name__}: {exc}")
                continue
            if isinstance(screened, Score):
                scores[index] = screened
                continue
            hit = self._cache.get(screened.key) if self.cache_enabled else None
            if hit is not None:
                scores[index] = Score(**{**hit.to_json(), "cached": True})
                continue
            pending.setdefault(screened.key, (screened, []))[1].append(index)
        if pending:
            with ThreadPoolExecutor(max_workers=self.workers) as executor:
                results = list(executor.map(self._verify_one, [s for s, _ in pending.values()]))
            for (key, (_, indices)), score in zip(pending.items(), results, strict=True):
                if self.cache_enabled and score.stage != "error":
                    self._cache[key] = score
                for position, index in enumerate(indices):
                    scores[index] = score if position == 0 else Score(**{**score.to_json(), "cached": True})
        done = [s if s is not None else _score("error", "not scored") for s in scores]
        self.last_scores = done
        return done

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
        return [s.reward for s in self.score_batch(prompts, completions)]

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def __enter__(self) -> VerifierReward:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
