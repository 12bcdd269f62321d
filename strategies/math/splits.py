"""What the split strategies (#38–40) share: operands, the values in scope, and non-zero proofs.

A split introduces an *existing* value ``s`` (``X → X+s-s``, ``X → X/s*s``, ``exp(U-V) →
exp(U-s)*exp(s-V)``). "Existing" is decided here, once, so the three strategies agree: a tensor
reference that is already read by the statement, or the left-hand side of a statement in an earlier
top-level block whose subscript names only loops that enclose the statement with the same extents (so
the reference reads exactly the elements that writer wrote). Reduction and recurrence results — the
row max of a softmax, a running max — come first: they are the shifts online softmax is built from.

``positive_proof`` is the sign analysis ``multiplicative_split`` needs before it divides by ``s``: a
short, quotable reason why every element of a tensor is positive, or ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

from leir.analysis import program_info
from leir.ast import (
    Assign,
    BinOp,
    Call,
    Compare,
    Expr,
    IfThenElse,
    Inf,
    Logical,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
    expr_children,
    statements,
    strip_parens,
    walk_expr,
)
from leir.printer import canonical, expr_text
from leir.rewrite import loops_at, statement_at
from leir.semantics import StmtKind
from strategies.base import Params, Site, Strategy

Path = tuple[int, ...]
FLOATS = frozenset({"f16", "bf16", "f32", "f64"})


@dataclass(frozen=True, slots=True)
class Operand:
    """A tensor read in value position of a statement: where it sits in the right-hand side."""

    #: Child positions from the statement's value (``leir.rewrite.expr_at`` addressing).
    expr_path: Path
    ref: TensorRef
    #: The operator of the node directly above it (``"+"``, ``"exp"``, ``"ite"``), ``""`` at the top.
    parent: str
    #: Whether it sits in a branch of an ``if_then_else`` (its subscript may be valid only there).
    guarded: bool = False


def _label(node: Expr) -> str:
    if isinstance(node, BinOp):
        return node.op
    if isinstance(node, Call):
        return node.func
    if isinstance(node, IfThenElse):
        return "ite"
    if isinstance(node, Neg):
        return "neg"
    return ""


def value_operands(stmt: Assign) -> list[Operand]:
    """Tensor reads in value position (not in indices, not in conditions), pre-order, no self-reads."""
    out: list[Operand] = []
    stack: list[tuple[Expr, Path, str, bool]] = [(stmt.value, (), "", False)]
    while stack:
        node, path, parent, guarded = stack.pop()
        if isinstance(node, Paren):
            stack.append((node.inner, path + (0,), parent, guarded))
            continue
        if isinstance(node, TensorRef):
            if node.name != stmt.target.name and node.dtype in FLOATS:
                out.append(Operand(path, node, parent, guarded))
            continue
        kids = expr_children(node)
        branch = isinstance(node, IfThenElse)
        start = 1 if branch else 0  # the condition is not a value
        for k in range(len(kids) - 1, start - 1, -1):
            stack.append((kids[k], path + (k,), _label(node), guarded or branch))  # type: ignore[arg-type]
    return out


def _plain_gather_free(ref: TensorRef) -> bool:
    return not any(isinstance(n, TensorRef) for i in ref.indices for n in walk_expr(i))


def existing_values(program: Program, path: Path) -> list[TensorRef]:
    """The values a split at the statement ``path`` may introduce, statistics first, stable order."""
    stmt = statement_at(program.body, path)
    info = program_info(program)
    extents = {lp.var: lp.extent for lp in loops_at(program.body, path[:-1])}
    stats: list[TensorRef] = []
    others: list[TensorRef] = []
    for wpath, writer, wloops in statements(program.body):
        if wpath[0] >= path[0]:
            break
        ref = writer.target
        if ref.name == stmt.target.name or ref.dtype not in FLOATS or not _plain_gather_free(ref):
            continue
        wext = {lp.var: lp.extent for lp in wloops}
        used = {v.name for i in ref.indices for v in walk_expr(i) if isinstance(v, Var)}
        if any(extents.get(v) != wext.get(v) for v in used):
            continue
        kind = info.statements[wpath].kind
        (stats if kind in (StmtKind.REDUCE, StmtKind.RECURRENCE) else others).append(ref)
    # a read under an if_then_else guard may be out of bounds elsewhere (``F_{a-1}`` at ``a=0``)
    others.extend(op.ref for op in value_operands(stmt) if not op.guarded and _plain_gather_free(op.ref))
    seen: set[str] = set()
    result = []
    for ref in stats + others:
        text = expr_text(ref)
        if text not in seen:
            seen.add(text)
            result.append(ref)
    return result


def shift_values(program: Program, path: Path, within: Expr) -> list[TensorRef]:
    """Existing values fit to shift an exponent: max/min statistics in scope and the tensors ``within`` reads.

    A shift far from the exponent's scale (a sum of exps, an unrelated tensor) would over- or underflow
    ``exp``, so exponential_split offers only running/row maxima and minima and the exponent's own reads.
    """
    info = program_info(program)
    stats = set()
    for wpath, writer, _ in statements(program.body):
        if wpath[0] >= path[0]:
            break
        stmt = info.statements[wpath]
        top = writer.value
        top = strip_parens(top)
        if stmt.combiner in ("max", "min") or (
                stmt.kind is StmtKind.RECURRENCE and isinstance(top, Call) and top.func in ("max", "min")):
            stats.add(writer.target.name)
        elif stmt.kind is StmtKind.ASSIGN and isinstance(top, TensorRef) and top.name in stats:
            stats.add(writer.target.name)  # a copy of a statistic (the last element of a running max)
    reads = {expr_text(r) for r in walk_expr(within) if isinstance(r, TensorRef)}
    return [r for r in existing_values(program, path)
            if (r.name in stats or expr_text(r) in reads) and not may_be_infinite(program, r.name)]


def _is_init_guard(node: Expr) -> bool:
    """``if_then_else(k-1<0, -inf, P_{…,k-1})``: a recurrence's first-iteration init, not a data value."""
    return (isinstance(node, IfThenElse) and isinstance(node.cond, Compare) and node.cond.ops == ("<",)
            and node.cond.operands[1] == Num("0") and isinstance(node.then, Neg)
            and isinstance(node.then.operand, Inf))


def may_be_infinite(program: Program, name: str, seen: frozenset[str] = frozenset()) -> bool:
    """Whether a written tensor may hold ±inf: an ``inf`` literal among its data or its inputs' data.

    A masked score (``if_then_else(mask, -inf, S)``) and every max or running max over it may be
    ``-inf``; a shift by such a value makes ``exp(U-s)`` NaN where ``U`` is ``-inf`` too.
    """
    if name in seen:
        return False
    for _, writer, _ in statements(program.body):
        if writer.target.name != name:
            continue
        stack: list[Expr] = [writer.value]
        while stack:
            node = stack.pop()
            if isinstance(node, Inf):
                return True
            if _is_init_guard(node):
                assert isinstance(node, IfThenElse)
                stack.append(node.otherwise)
                continue
            if isinstance(node, TensorRef):
                if node.name != name and may_be_infinite(program, node.name, seen | {name}):
                    return True
                continue
            stack.extend(k for k in expr_children(node) if not isinstance(k, Compare | Logical))
    return False


def value_choices(program: Program, path: Path, exclude: set[str]) -> tuple[str, ...]:
    """Canonical texts of the existing values at ``path``, minus ``exclude`` (texts)."""
    return tuple(t for t in (expr_text(r) for r in existing_values(program, path)) if t not in exclude)


def chosen_values(strategy: Strategy, site: Site, values: tuple[str, ...], params: Params | None,
                  what: str) -> tuple[str, ...]:
    """The existing values ``s`` legal at a site (only the one ``params`` asks for, when given), or the
    ``no-value`` refusal: the split strategies' shared rule for their parameter."""
    if params is not None:
        values = tuple(v for v in values if v == str(params["s"]))
    if not values:
        asked = f" (asked for {params['s']})" if params is not None else ""
        raise strategy.refuse("no-value", f"no existing value {what}{asked}", site)
    return values


def choice_ref(program: Program, path: Path, text: str) -> TensorRef:
    """The existing value whose canonical text is ``text`` (the engine validated it is legal)."""
    for ref in existing_values(program, path):
        if expr_text(ref) == text:
            return ref
    raise KeyError(text)


# ------------------------------------------------------------------------------------- sign analysis


def _positive_literal(node: Expr) -> bool:
    return isinstance(node, Num) and node.value > 0 or isinstance(node, Inf)


def _expr_positive(node: Expr, program: Program, self_name: str, seen: frozenset[str],
                   self_sign: str = "positive") -> str | None:
    """Why ``node`` is > 0 (a phrase), or ``None``.

    ``self_sign`` says what a read of ``self_name`` (the statement's own tensor) is known to be:
    ``positive`` (earlier writes, all proved, or a product reduction from 1), ``nonneg`` (a sum
    reduction from 0) or ``none`` (a max reduction from -inf: the base case proves nothing).
    """
    node = strip_parens(node)
    if _positive_literal(node):
        return f"{expr_text(node)} is a positive literal"
    if isinstance(node, Call) and node.func == "exp":
        return "exp(…) > 0"
    if isinstance(node, Call) and node.func == "sqrt":
        inner = _expr_positive(node.args[0], program, self_name, seen, self_sign)
        return None if inner is None else f"sqrt of a positive value ({inner})"
    if isinstance(node, TensorRef):
        if node.name == self_name:
            return f"{node.name} is positive by induction" if self_sign == "positive" else None
        writers = _tensor_positive(program, node.name, seen)
        return None if writers is None else f"{node.name} > 0"
    if isinstance(node, BinOp) and node.op in ("+", "*", "/"):
        left = _expr_positive(node.left, program, self_name, seen, self_sign)
        right = _expr_positive(node.right, program, self_name, seen, self_sign)
        if left and right:
            return f"{left} and {right}"
        if node.op == "+":  # sqrt(x)+eps, a sum reduction from 0: non-negative plus positive
            for side, why in ((node.left, right), (node.right, left)):
                if not why:
                    continue
                if isinstance(side, TensorRef) and side.name == self_name:
                    if self_sign == "nonneg":
                        return f"{self_name} starts at 0 and only grows by positive terms ({why})"
                elif _non_negative(side, program, seen):
                    return f"{expr_text(side)} >= 0 and {why}"
        return None
    if isinstance(node, Call) and node.func == "max":
        for arg in node.args:
            proof = _expr_positive(arg, program, self_name, seen, self_sign)
            if proof:
                return f"max(…) >= one positive argument ({proof})"
        return None
    if isinstance(node, IfThenElse):
        then = _expr_positive(node.then, program, self_name, seen, self_sign)
        other = _expr_positive(node.otherwise, program, self_name, seen, self_sign)
        return f"both branches are positive ({then}; {other})" if then and other else None
    return None


def _non_negative(node: Expr, program: Program, seen: frozenset[str] = frozenset()) -> bool:
    """Whether ``node`` is >= 0: sqrt, abs, exp, squares, max with a non-negative operand, such tensors."""
    node = strip_parens(node)
    if isinstance(node, Call) and node.func in ("sqrt", "abs", "exp"):
        return True
    if isinstance(node, Call) and node.func == "max":
        return any(_non_negative(a, program, seen) for a in node.args  # a max reduction starts at -inf
                   if not (isinstance(a, TensorRef) and a.name in seen))
    if isinstance(node, BinOp) and node.op == "*" and expr_text(node.left) == expr_text(node.right):
        return True
    if isinstance(node, BinOp) and node.op == "**" and isinstance(node.right, Num) and node.right.text == "2":
        return True
    if isinstance(node, BinOp) and node.op in ("+", "*", "/"):
        return _non_negative(node.left, program, seen) and _non_negative(node.right, program, seen)
    if isinstance(node, TensorRef) and node.name in seen:
        return True  # the statement's own earlier value: non-negative by induction (inits 0, 1, -inf, ok)
    if isinstance(node, TensorRef):
        writers = [s for _, s, _ in statements(program.body) if s.target.name == node.name]
        return bool(writers) and all(_non_negative(w.value, program, seen | {node.name}) for w in writers)
    return isinstance(node, Num) and node.value >= 0


def _tensor_positive(program: Program, name: str,
                     seen: frozenset[str] = frozenset()) -> list[tuple[str, str]] | None:
    """Per writer of ``name``: (its canonical statement, why its value is > 0); ``None`` if unproved.

    Inputs have no writer, so their sign is unknown. A reduction's self-read is what its init makes it:
    a sum from 0 is non-negative (so adding a positive term makes it positive: every element gets at
    least one update), a product from 1 positive, a max from -inf nothing (another operand must be).
    """
    if name in seen:
        return None
    writers = [(p, s) for p, s, _ in statements(program.body) if s.target.name == name]
    if not writers:
        return None
    info = program_info(program)
    parts = []
    for wpath, writer in writers:
        stmt = info.statements[wpath]
        if stmt.kind is StmtKind.REDUCE and stmt.combiner not in ("+", "*", "max"):
            return None
        sign = {"+": "nonneg", "max": "none"}.get(stmt.combiner or "", "positive") \
            if stmt.kind is StmtKind.REDUCE else "positive"
        proof = _expr_positive(writer.value, program, name, seen | {name}, sign)
        if proof is None:
            return None
        parts.append((canonical(writer), proof))
    return parts


def positive_proof(program: Program, ref: TensorRef) -> list[tuple[str, str]] | None:
    """Why ``ref`` is non-zero: each writer statement of its tensor with the reason its value is > 0."""
    return _tensor_positive(program, ref.name)


# ----------------------------------------------------------------------------------- sites and traces


def statement_paths(program: Program) -> list[Path]:
    """Paths of every statement, execution order."""
    return [p for p, _, _ in statements(program.body)]


def quotable(text: str, state_text: str) -> bool:
    """Whether ``text`` occurs verbatim in a state's canonical text (a trace may then quote it)."""
    return text in state_text


def find_operand(stmt: Assign, expr_path: Path) -> Operand | None:
    """The value operand of ``stmt`` at ``expr_path``, if there is one."""
    return next((op for op in value_operands(stmt) if op.expr_path == expr_path), None)


def replace_in_statement(program: Program, path: Path, expr_path: Path, new: Expr) -> Program:
    """``program`` with the sub-expression at ``expr_path`` of the statement at ``path`` replaced."""
    from leir.rewrite import replace_at, replace_expr_at, with_body

    stmt = statement_at(program.body, path)
    value = replace_expr_at(stmt.value, expr_path, new)
    return with_body(program, replace_at(program.body, path, Assign(stmt.target, value)))  # type: ignore[arg-type]
