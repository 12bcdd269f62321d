"""What the checker learns about a program, in a form the interpreter, lowering and strategies share.

LEIR leaves a lot implicit (section 4 and 5 of the language reference): which statements are
reductions and with what init, which accumulate onto earlier values, which are prefix recurrences, and
the shape, dtype and scope of every intermediate. The checker (``leir.checker``) works this out once and
records it here, so every consumer agrees on one reading of the program instead of re-deriving it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from leir.ast import Expr, Pos


class StmtKind(StrEnum):
    """How a statement's left-hand side relates to its earlier values."""

    #: Plain write: the LHS does not read itself.
    ASSIGN = "assign"
    #: Reduction with implicit init: reads itself at the same subscript, not written before.
    REDUCE = "reduce"
    #: Accumulation onto a value written earlier (an earlier statement/block, or a known input).
    ACCUMULATE = "accumulate"
    #: Prefix recurrence: reads itself at a different subscript (``k-1`` style), guarded.
    RECURRENCE = "recurrence"


@dataclass(frozen=True, slots=True)
class StmtInfo:
    """The checker's reading of one statement, addressed by its path (see ``leir.ast.iter_items``)."""

    path: tuple[int, ...]
    kind: StmtKind
    #: Loop variables of the enclosing loops that are absent from the LHS subscript (REDUCE only,
    #: outermost first); empty for the other kinds.
    reduce_vars: tuple[str, ...] = ()
    #: The combining operation of a REDUCE: ``+ - * max min`` (``None`` for other kinds).
    combiner: str | None = None
    #: The implicit init value of a REDUCE as an expression (``0``, ``1``, ``-inf``, ``inf``).
    init: Expr | None = None


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """Everything known about one tensor, whether declared in the signature or inferred."""

    name: str
    dtype: str
    scope: str
    shape: tuple[int, ...]
    #: ``input``, ``param``, ``const``, ``output`` (from the signature) or ``intermediate``.
    role: str

    @property
    def is_known(self) -> bool:
        return self.role != "intermediate"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found by the checker: where, what, and the source fragment it is about."""

    severity: Severity
    code: str
    message: str
    line: int | None
    column: int | None
    fragment: str
    pos: Pos | None = field(default=None, compare=False)

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line is not None else ""
        return f"{where}{self.severity.value}: {self.message} [{self.code}] in `{self.fragment}`"


@dataclass(frozen=True, slots=True)
class ProgramInfo:
    """The checker's result: diagnostics plus the facts consumers need (valid only when ``ok``)."""

    diagnostics: tuple[Diagnostic, ...]
    #: Every tensor, known and intermediate, in order of first appearance (signature first).
    tensors: dict[str, TensorInfo]
    #: Statement facts keyed by statement path.
    statements: dict[tuple[int, ...], StmtInfo]

    @property
    def ok(self) -> bool:
        return not any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def intermediates(self) -> tuple[TensorInfo, ...]:
        return tuple(t for t in self.tensors.values() if t.role == "intermediate")
