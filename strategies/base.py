"""The contract every strategy follows, read like a TVM schedule primitive.

A strategy is one atomic, validated rewrite of a LEIR program. Like ``tvm.s_tir.Schedule``'s primitives
it has a name, a documented precondition and effect, and refuses — with a typed error that says why — to
apply where it is not legal; it never returns a silently wrong program.

* ``candidates(program)`` lists every legal ``Site`` in a stable order, each with its free parameters
  and their legal values (``ParamSpec``).
* ``check(program, site, params)`` is the strategy's ONE legality rule, as TVM's ``Impl(check_only)``
  is a primitive's: it raises a ``NotApplicableError`` naming the rule broken, or returns the plan (what
  it found while checking: the loop, the blocks, the rewrite) that ``apply`` executes. ``apply`` starts
  with ``plan = self.check(...)``; ``candidates`` keeps the sites ``check`` passes (``legal``, with
  ``params=None``: "is some choice legal here?") or, where listing is cheaper that way, enumerates with
  the private rule ``check`` wraps. No precondition is spelled twice, and
  ``tests/strategies/test_refusals.py`` asserts that every listed site passes ``check``.
* ``apply(program, site, params)`` returns the rewritten ``Program`` (the engine then checks it).
* ``explain(before, site, params, after)`` returns the structured four-part ``Trace``.
* ``exactness_at(...)`` says whether the step is exact (``E``: bitwise-equal outputs) or numerically
  equivalent only (``N``); most strategies have one fixed answer in the class attribute ``exactness``.

Refusals are a typed family (``StrategyError``) with stable codes, like the checker's ``[too-deep]``:
each carries the strategy, the ``code``, the ``site`` (when known) and a message. A strategy declares
the codes it raises, with their meaning, in its ``refusals`` mapping and raises them with
``raise self.refuse(code, message, site)``; the engine's own codes are ``ENGINE_REFUSALS``. Codes are
API: callers (the CLI prints ``[code]``, generation records it in the failure's reason) may match them,
so a code is never renamed or reused for another rule. ``docs/strategies.md`` lists every code, generated
from these declarations.

``strategies.engine.apply_strategy`` is the one entry point callers use: it validates the site and
parameters, applies, checks the result, computes exactness, builds the trace and verifies its grounding.

Adding a strategy: subclass ``Strategy`` in its level package with ``@register``; write ``check`` first
(every precondition, each refusal with a declared code), then ``candidates``, ``apply`` and ``explain``
on top of it; give the class docstring a ``Before: ``...```` / ``After: ``...```` pair, which
``tests/strategies/test_docstring_examples.py`` runs through the engine; regenerate ``docs/strategies.md``.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from leir.ast import Program
from strategies.traces import Trace

#: JSON-able parameter values: every parameter a step records must serialise as it is.
ParamValue = int | str | bool | tuple[int, ...] | tuple[str, ...]
Params = Mapping[str, ParamValue]


def int_param(params: Params, name: str) -> int:
    """``params[name]`` narrowed to ``int``.

    The engine only passes values drawn from the site's ``ParamSpec`` (ints for every integer
    parameter), so anything else is a caller bypassing the engine: say so instead of coercing it.
    """
    value = params[name]
    if not isinstance(value, int):
        raise TypeError(f"parameter {name!r} must be an int, got {type(value).__name__} {value!r}")
    return value


class Level(StrEnum):
    GRAPH = "graph"
    LOOP = "loop"
    MEMORY = "memory"
    MATH = "math"


class Exactness(StrEnum):
    #: Same arithmetic per output element: outputs bitwise identical to the parent's ("equal pass").
    E = "E"
    #: Numerically equivalent only (reassociation, an identity): held to the verifier's tolerance.
    N = "N"


#: The codes the engine itself refuses with (``strategies.engine``), whatever the strategy.
ENGINE_REFUSALS: dict[str, str] = {
    "no-such-site": "the site (an index or a path and detail) is not one of the strategy's candidates",
    "unknown-param": "a parameter the site does not take",
    "illegal-param": "a parameter value outside the legal values listed for the site",
    "no-change": "the rewrite would give the program back unchanged",
    "invalid-result": "the rewrite produced a program the checker rejects (a bug in the strategy)",
    "ungrounded-trace": "the trace quotes a fragment its states do not contain (a bug in the strategy)",
}


class StrategyError(Exception):
    """Base of every refusal: who refused (``strategy``), the stable ``code`` of the rule, the ``site``
    (``None`` where none was resolved) and a ``message`` for people. ``str()`` reads
    ``strategy: [code] message``."""

    #: The code of a refusal raised without one.
    default_code: ClassVar[str] = "refused"

    def __init__(self, strategy: str, message: str, code: str | None = None,
                 site: Site | None = None) -> None:
        self.strategy = strategy
        self.message = message
        self.code = code or self.default_code
        self.site = site
        super().__init__(f"{strategy}: [{self.code}] {message}")

    @property
    def reason(self) -> str:
        """``[code] message``: what a step record keeps of the refusal."""
        return f"[{self.code}] {self.message}"


class NotApplicableError(StrategyError):
    """The site does not satisfy the strategy's precondition (the code and message name the rule broken)."""


class InvalidParamsError(StrategyError):
    """A parameter is missing, unknown, or outside the legal values listed for the site."""

    default_code = "illegal-param"


class InvalidResultError(StrategyError):
    """The rewrite produced a program the checker rejects: a bug in the strategy."""

    default_code = "invalid-result"


class TraceGroundingError(StrategyError):
    """A trace quotes a fragment that does not occur in the state it cites: a bug in the strategy."""

    default_code = "ungrounded-trace"


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One free choice at a site and every legal value for it, in a stable order."""

    name: str
    values: tuple[ParamValue, ...]
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"parameter {self.name} has no legal value")


@dataclass(frozen=True, slots=True)
class Site:
    """Where a strategy applies: a path into the body plus what the path alone does not say.

    ``path`` uses ``leir.ast.iter_items`` addresses (top-level block index, then item indices); the
    ``detail`` entries name the loop, tensor or sub-expression within it (JSON-able, sorted keys), and
    ``where`` is the human phrase traces use ("the loop over a in block 2").
    """

    path: tuple[int, ...]
    detail: tuple[tuple[str, ParamValue], ...] = ()
    params: tuple[ParamSpec, ...] = ()
    where: str = ""

    def get(self, key: str, default: Any = None) -> Any:
        return dict(self.detail).get(key, default)

    def to_json(self) -> dict[str, Any]:
        detail = {k: list(v) if isinstance(v, tuple) else v for k, v in self.detail}
        return {"path": list(self.path), "detail": detail, "where": self.where}

    @property
    def key(self) -> str:
        """A stable identity for deduplication and resumption."""
        parts = ".".join(str(p) for p in self.path)
        extra = ",".join(f"{k}={v}" for k, v in self.detail)
        return f"{parts}[{extra}]"


@dataclass(frozen=True, slots=True)
class StrategyInfo:
    """The registry's view of a strategy, for tables and docs."""

    number: int
    name: str
    level: Level
    exactness: str
    summary: str


class Strategy(ABC):
    """Base class of the catalogue's strategies; subclasses register with ``@register``."""

    #: Catalogue number (1–44) and name, as ``../shared/STRATEGIES.md`` lists them.
    number: ClassVar[int]
    name: ClassVar[str]
    level: ClassVar[Level]
    #: Fixed exactness, or ``None`` when it is decided per site (override ``exactness_at``).
    exactness: ClassVar[Exactness | None] = None
    #: Strategies that undo this one (documentation, and the generator's bookkeeping).
    inverse_of: ClassVar[tuple[str, ...]] = ()
    #: Every refusal code ``check`` raises, with what it means (``docs/strategies.md`` lists them).
    refusals: ClassVar[Mapping[str, str]] = {}

    # ---- the primitive ---------------------------------------------------------------------------
    @abstractmethod
    def candidates(self, program: Program) -> list[Site]:
        """Every legal site, in a stable order. Never raises for a valid program."""

    @abstractmethod
    def check(self, program: Program, site: Site, params: Params | None = None) -> Any:
        """The one legality rule: the plan ``apply`` executes, or a ``NotApplicableError`` with a code.

        ``params`` is ``None`` when ``candidates`` asks whether the site is legal for some choice; with
        parameters it also refuses values that are not legal there."""

    def legal(self, program: Program, site: Site) -> bool:
        """Whether ``check`` passes at ``site`` (what ``candidates`` filters by)."""
        try:
            self.check(program, site)
        except NotApplicableError:
            return False
        return True

    @abstractmethod
    def apply(self, program: Program, site: Site, params: Params) -> Program:
        """The rewritten program; it starts from ``check``'s plan, so it refuses where that refuses."""

    @abstractmethod
    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        """The four-part reasoning trace, grounded in the two states' canonical text."""

    def exactness_at(self, program: Program, site: Site, params: Params) -> Exactness:
        """``E`` or ``N`` for this site; strategies with a per-site answer override this."""
        if self.exactness is None:
            raise NotImplementedError(f"{self.name} must decide exactness per site")
        return self.exactness

    # ---- helpers shared by every strategy --------------------------------------------------------
    def refuse(self, code: str, message: str, site: Site | None = None) -> NotApplicableError:
        """A refusal to raise: ``raise self.refuse("not-spatial", "...", site)``; ``code`` is one of
        ``refusals``."""
        return NotApplicableError(self.name, message, code, site)

    def sample_params(self, site: Site, rng: random.Random) -> dict[str, ParamValue]:
        """One legal parameter choice, drawn from ``rng`` (seeded by the caller)."""
        return {spec.name: spec.values[rng.randrange(len(spec.values))] for spec in site.params}

    def default_params(self, site: Site) -> dict[str, ParamValue]:
        """The first legal value of every parameter: what a caller gets when it names none."""
        return {spec.name: spec.values[0] for spec in site.params}

    @classmethod
    def info(cls) -> StrategyInfo:
        doc = (cls.__doc__ or "").strip().splitlines()
        exact = cls.exactness.value if cls.exactness is not None else "E/N"
        return StrategyInfo(cls.number, cls.name, cls.level, exact, doc[0] if doc else "")


@dataclass(frozen=True)
class AppliedStep:
    """One verified-to-be-legal rewrite: what the step record is made from."""

    strategy: str
    number: int
    level: Level
    site: Site
    params: Mapping[str, ParamValue]
    exactness: Exactness
    before: Program
    after: Program
    trace: Trace
    notes: tuple[str, ...] = field(default=())
