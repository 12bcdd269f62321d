"""Semantic analysis of LEIR programs: every rule of LEIR.md sections 4–5 in one linear pass.

The checker is the gate before any lowering or interpretation: it must report *all* problems at once, each
with a position and the offending fragment, so that a person (or a model's output) can be fixed in one
round. It also works out what the language leaves implicit — statement kinds (reduction with init,
accumulation, recurrence), reduction axes and combiners, intermediate shapes/dtypes/scopes — and records
it in ``ProgramInfo`` so the interpreter, lowering and strategies share one reading of the program.

Decisions made here (documented for the other layers):

* Bounds are proved with ``leir.intervals`` over the loop ranges, narrowed inside ``if_then_else``
  branches by their condition (padding guards, ``a-1<0`` recurrence guards). Gather indices
  (``X_{G_{i}}``) cannot be bounded statically: only G's integer dtype is checked.
* Intermediate shapes use those same (guard-narrowed) ranges: dimension = 1 + the largest value the
  index can take where the access actually executes. Without guards this is exactly "1 + max over the
  loop ranges".
* A self-read at the LHS subscript of a tensor not written before is a reduction and must have a
  recognised combiner at the top of the RHS (``X+…``, ``…+X``, ``X-…``, ``X*…``, ``…*X``, ``max``/``min``
  with X as one argument); anything else is reported as ``bad-reduction`` rather than silently reading 0.
* An intermediate read before any earlier statement writes it is an error (its own self-reads excepted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from leir.ast import (
    BINARY_CALLS,
    BINARY_OPS,
    COMPARE_OPS,
    DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    LOGIC_OPS,
    LOOP_KINDS,
    ROLES,
    SCOPES,
    UNARY_CALLS,
    UNSUPPORTED_DTYPES,
    Assign,
    BinOp,
    Block,
    Call,
    Compare,
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
    strip_parens,
    walk_expr,
)
from leir.errors import LeirCheckError
from leir.intervals import NEVER, Range, exact_range, index_range, linear, refine
from leir.limits import (
    MAX_EXTENT,
    MAX_LOOPS,
    MAX_NESTING,
    MAX_TERMS,
    depths,
    ensure_recursion_limit,
    spell_int,
)
from leir.promotion import concrete, natural_type, promote
from leir.semantics import Diagnostic, ProgramInfo, Severity, StmtInfo, StmtKind, TensorInfo

__all__ = ["check", "require_valid", "CODES"]

#: Every diagnostic code the checker emits, with what it means (used by docs and the CLI's --json).
CODES: dict[str, str] = {
    "bad-signature": "a signature entry with a duplicate name, an unknown role, or a dimension that is not "
    f"positive or is above {MAX_EXTENT:,}",
    "unknown-loop-var": "a loop variable that no enclosing loop defines",
    "shadowed-loop-var": "a loop variable already defined by an enclosing loop (or the same header)",
    "bad-extent": "a loop extent that is zero or negative",
    "extent-too-large": f"a loop extent above {MAX_EXTENT:,} (2^31 - 1: the lowering counts loops in int32; "
    "docs/leir.md §7)",
    "bad-loop-kind": "a loop kind other than L P V U B",
    "empty-block": "a block with no items",
    "unsupported-dtype": "a dtype the language does not (yet) support",
    "bad-scope": "a memory scope other than g s l",
    "dtype-mismatch": "a tensor written with two dtypes, or a signature tensor used with another dtype",
    "dtype-cast-read": "an intermediate read with a dtype other than the one it is stored in (warning; "
    "the public corpus does this: the value is converted on read)",
    "scope-mismatch": "a tensor used with two scopes",
    "known-not-global": "a signature tensor referenced with a scope other than g",
    "wrong-rank": "a signature tensor indexed with the wrong number of indices",
    "rank-mismatch": "an intermediate indexed with different numbers of indices",
    "index-out-of-bounds": "an index that can leave the tensor's shape for some loop value",
    "non-integer-index": "an index that is not an integer expression",
    "unknown-shape": "an intermediate dimension indexed only through gathers (no static size)",
    "read-before-write": "an intermediate read before any statement writes it",
    "output-not-written": "an output no statement writes",
    "shape-mismatch": "an output whose inferred shape differs from the signature",
    "write-to-input": "a statement writing an input, parameter or constant",
    "unused-tensor": "a signature tensor the body never references (warning)",
    "bad-arity": "max/min without two arguments, or a one-argument call without one",
    "unknown-function": "a call to a function LEIR does not have",
    "unknown-operator": "an operator LEIR does not have",
    "condition-as-value": "a comparison or logical operation used as a value",
    "non-bool-condition": "a condition that is neither a comparison nor a bool tensor",
    "bad-reduction": "a self-reading statement that is not a recognised reduction",
    "too-deep": f"an expression nested more than {MAX_NESTING} brackets deep, or more than {MAX_LOOPS} loops "
    "around a statement (limits of the lowering through TVMScript, docs/leir.md §7)",
    "reserved-name": "a loop variable named like a keyword or function (inf, if_then_else, exp, max, ...)",
    "zero-divisor": "an index divided (// or %) by a value that can be zero",
    "float-modulo": "% computed in a floating-point type (not defined; use integer operands)",
    "bf16-floordiv": "// computed in bf16 (TVM's bfloat16 legalisation cannot build it; compute it in f32)",
    "u64-divisor": "// or % in u64 by a divisor that subtracts with a loop variable (TVM divides it wrongly)",
    "literal-out-of-range": "a literal that does not fit the type it is computed in",
    "int-power": "** computed in an integer type without a literal exponent 0..8",
    "unproven-bounds": "an index the analysis can neither prove in bounds nor show out of bounds (warning)",
}

#: Names a loop variable must not take: the parser reads them as keywords or function names.
RESERVED_NAMES = frozenset({"inf", "if_then_else"}) | UNARY_CALLS | BINARY_CALLS
#: Largest integer exponent of ``**`` in integer arithmetic (the lowering multiplies out).
MAX_INT_EXPONENT = 8
_INDEX_LIMIT = 2**31 - 1

_INT_RANGE = {
    "i8": (-(2**7), 2**7 - 1), "i16": (-(2**15), 2**15 - 1), "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}
#: Largest literal magnitude per float dtype. f64 stops at f32's maximum: TVM's TVMScript parser refuses
#: any larger float literal ("exceeds maximum of float32"), whatever its dtype.
_FLOAT_MAX = {"f8e4m3": 448.0, "f8e5m2": 57344.0, "f16": 65504.0, "bf16": 3.3895313892515355e38,
              "f32": 3.4028234663852886e38,
              "f64": 3.4028234663852886e38}
#: Longest fragment a diagnostic quotes (a refused 900-term statement is not repeated whole).
_FRAGMENT_LIMIT = 160
_ZERO = Num("0")
_ONE = Num("1")
_NEG_INF = Neg(Inf())
_POS_INF = Inf()
_INITS = {"+": _ZERO, "-": _ZERO, "*": _ONE, "max": _NEG_INF, "min": _POS_INF}
_WRITE_FORBIDDEN = frozenset({"input", "param", "const"})


@dataclass(slots=True)
class _Facts:
    """What the references of one tensor say about it (first reference wins, later ones must agree)."""

    name: str
    dtype: str
    scope: str
    rank: int
    first: TensorRef
    hi: list[int] = field(default_factory=list)
    bounded: list[bool] = field(default_factory=list)
    written: bool = False


class _Ctx:
    """Loop ranges where an expression executes; ``dead`` when a guard makes it unreachable."""

    __slots__ = ("ranges", "dead", "guards")

    def __init__(self, ranges: dict[str, Range], dead: bool = False, guards: tuple = ()) -> None:
        self.ranges = ranges
        self.dead = dead
        #: ``(condition, truth)`` of every enclosing ``if_then_else`` branch, for exact bounds
        self.guards = guards


def _fragment(node) -> str:
    from leir.ast import Loop
    from leir.printer import canonical, loop_text

    try:
        if isinstance(node, Loop):
            return loop_text(node)
        text = canonical(node)
        text = text[:-1] if isinstance(node, Assign) and text.endswith(";") else text
        return text if len(text) <= _FRAGMENT_LIMIT else text[: _FRAGMENT_LIMIT - 1] + "…"
    except Exception:
        return repr(node)


def _value_nodes(node):
    """``node`` and every sub-expression of its value, not descending into tensor subscripts."""
    yield node
    if type(node) is not TensorRef:
        for child in expr_children(node):
            yield from _value_nodes(child)


def _subtracts_a_loop_variable(divisor) -> bool:
    """True when a subtraction (or negation) in ``divisor``'s value has a loop variable below it."""
    return any(((type(node) is BinOp and node.op == "-") or type(node) is Neg)
               and any(type(inner) is Var for inner in _value_nodes(node))
               for node in _value_nodes(divisor))


def _same_ref(node, target: TensorRef) -> bool:
    node = strip_parens(node)
    return isinstance(node, TensorRef) and node.name == target.name and node.indices == target.indices


def _combiner(value, target: TensorRef) -> str | None:
    """The reduction operator of ``target = value`` read from the top of the RHS, if recognisable."""
    top = strip_parens(value)
    if isinstance(top, BinOp):
        if top.op in ("+", "*"):
            if _same_ref(top.left, target) or _same_ref(top.right, target):
                return top.op
        elif top.op == "-" and _same_ref(top.left, target):
            return "-"
    elif (
        isinstance(top, Call)
        and top.func in BINARY_CALLS
        and len(top.args) == 2
        and (_same_ref(top.args[0], target) or _same_ref(top.args[1], target))
    ):
        return top.func
    return None


class _Checker:
    def __init__(self, program: Program) -> None:
        self.program = program
        self.known = {d.name: d for d in program.signature.tensors}
        self.diags: list[Diagnostic] = []
        self.facts: dict[str, _Facts] = {}
        self.written: set[str] = set()
        self.stmts: dict[tuple[int, ...], StmtInfo] = {}
        # per-statement state
        self.target: TensorRef | None = None
        self.self_refs: list[TensorRef] = []
        self.reported_rbw: set[str] = set()
        #: tensors written by statements refused as too deep (their shape and use are not analysed)
        self.unanalysed: set[str] = set()

    # ------------------------------------------------------------------------------------ reporting
    def _report(self, severity: Severity, code: str, message: str, node, fragment: str | None = None) -> None:
        pos = getattr(node, "pos", None)
        self.diags.append(
            Diagnostic(
                severity=severity,
                code=code,
                message=message,
                line=pos.line if pos is not None else None,
                column=pos.column if pos is not None else None,
                fragment=fragment if fragment is not None else _fragment(node),
                pos=pos,
            )
        )

    def error(self, code: str, message: str, node, fragment: str | None = None) -> None:
        self._report(Severity.ERROR, code, message, node, fragment)

    def warning(self, code: str, message: str, node, fragment: str | None = None) -> None:
        self._report(Severity.WARNING, code, message, node, fragment)

    # ------------------------------------------------------------------------------------ structure
    def run(self) -> ProgramInfo:
        seen: set[str] = set()
        for decl in self.program.signature.tensors:
            if decl.name in seen:
                self.error("bad-signature", f"tensor {decl.name} is declared twice", decl, fragment=decl.name)
            seen.add(decl.name)
            if decl.role not in ROLES:
                self.error(
                    "bad-signature",
                    f"tensor {decl.name} has role '{decl.role}', not one of {', '.join(ROLES)}",
                    decl,
                    fragment=decl.name,
                )
            if any(not isinstance(n, int) or n <= 0 for n in decl.shape):
                self.error(
                    "bad-signature",
                    f"tensor {decl.name} has shape {_shape(decl.shape)}; extents must be positive integers",
                    decl,
                    fragment=decl.name,
                )
            elif any(n > MAX_EXTENT for n in decl.shape):
                self.error(
                    "bad-signature",
                    f"tensor {decl.name} has shape {_shape(decl.shape)}; a dimension may be at most "
                    f"{MAX_EXTENT:,} (2^31 - 1, the lowering indexes in int32)",
                    decl,
                    fragment=decl.name,
                )
            if decl.dtype not in DTYPES:
                kind = "not supported yet" if decl.dtype in UNSUPPORTED_DTYPES else "unknown"
                self.error(
                    "unsupported-dtype",
                    f"signature tensor {decl.name} has dtype '{decl.dtype}', which is {kind}",
                    decl,
                    fragment=decl.name,
                )
        for b_index, block in enumerate(self.program.body.blocks):
            self._block(block, (b_index,), {}, ())
        return self._finish()

    def _block(self, block: Block, path: tuple[int, ...], ranges: dict[str, Range], loops: tuple) -> None:
        ranges = dict(ranges)
        for loop in block.loops:
            if loop.kind not in LOOP_KINDS:
                self.error("bad-loop-kind", f"loop kind '{loop.kind}' is not one of L P V U B", loop)
            if loop.extent <= 0:
                self.error(
                    "bad-extent",
                    f"loop {loop.var} has extent {spell_int(loop.extent)}; extents must be positive integers",
                    loop,
                )
            elif loop.extent > MAX_EXTENT:
                self.error(
                    "extent-too-large",
                    f"loop {loop.var} has extent {spell_int(loop.extent)}; the largest extent is "
                    f"{MAX_EXTENT:,} (2^31 - 1: the lowering counts loops in int32)",
                    loop,
                )
            if loop.var in RESERVED_NAMES:
                self.error(
                    "reserved-name",
                    f"loop variable {loop.var} is a reserved name (inf, if_then_else and the function "
                    "names cannot name loops)",
                    loop,
                )
            if loop.var in ranges:
                self.error(
                    "shadowed-loop-var",
                    f"loop variable {loop.var} is already defined by an enclosing loop",
                    loop,
                )
            ranges[loop.var] = (0, max(loop.extent, 1) - 1)
        if len(loops) <= MAX_LOOPS < len(loops) + len(block.loops):
            self.error(
                "too-deep",
                f"more than {MAX_LOOPS} nested loops around a statement (the lowering's limit)",
                block.loops[MAX_LOOPS - len(loops)],
            )
        loops = loops + block.loops
        if not block.items:
            self.error("empty-block", "a block must contain at least one item", block)
        for i, item in enumerate(block.items):
            if isinstance(item, Assign):
                self._stmt(item, path + (i,), ranges, loops)
            elif isinstance(item, Block):
                self._block(item, path + (i,), ranges, loops)

    def _stmt(self, stmt: Assign, path: tuple[int, ...], ranges: dict[str, Range], loops: tuple) -> None:
        target = stmt.target
        if self._too_deep(stmt):
            self.written.add(target.name)  # counted as written: no follow-up errors about it
            self.unanalysed.add(target.name)
            return
        self.target = target
        self.self_refs = []
        self.reported_rbw = set()
        ctx = _Ctx(ranges)
        self._arith(stmt.value, "i64" if target.dtype == "bool" else target.dtype)
        for index in target.indices:
            if type(index) is not Num:  # a literal index is checked against the shape (index-out-of-bounds)
                self._arith(index, "index")
        if target.name not in self.facts and target.name not in self.known:
            # an intermediate's dtype/scope/rank come from its first write, even when its own RHS reads it
            rank = len(target.indices)
            self.facts[target.name] = _Facts(
                target.name, target.dtype, target.scope, rank, target, [-1] * rank, [False] * rank
            )
        self._value(stmt.value, ctx)
        self._ref(target, ctx, write=True)
        self.target = None

        name = target.name
        decl = self.known.get(name)
        if not self.self_refs:
            info = StmtInfo(path, StmtKind.ASSIGN)
        elif any(r.indices != target.indices for r in self.self_refs):
            info = StmtInfo(path, StmtKind.RECURRENCE)
        elif name in self.written or (decl is not None and decl.role != "output"):
            info = StmtInfo(path, StmtKind.ACCUMULATE)
        else:
            comb = _combiner(stmt.value, target)
            lhs_vars = {n.name for idx in target.indices for n in walk_expr(idx) if isinstance(n, Var)}
            reduce_vars = tuple(lp.var for lp in loops if lp.var not in lhs_vars)
            if comb is None:
                self.error(
                    "bad-reduction",
                    f"{name} reads its own value but is not written earlier and is not a recognised "
                    f"reduction ({name}={name}+…, {name}={name}-…, {name}={name}*…, max({name},…), "
                    f"min({name},…))",
                    stmt,
                )
                info = StmtInfo(path, StmtKind.REDUCE, reduce_vars, None, None)
            else:
                info = StmtInfo(path, StmtKind.REDUCE, reduce_vars, comb, _INITS[comb])
        self.stmts[path] = info
        self.written.add(name)
        facts = self.facts.get(name)
        if facts is not None:
            facts.written = True

    def _too_deep(self, stmt: Assign) -> bool:
        """Refuse (with the statement's position) what the later layers cannot walk or print."""
        if stmt.pos is not None and stmt.pos.end - stmt.pos.start < 2 * MAX_NESTING:
            return False  # every level takes at least a bracket and an operand: too short to be too deep
        deepest = nested = 0
        for expr in (stmt.value, *stmt.target.indices):
            tree, nesting = depths(expr)
            deepest, nested = max(deepest, tree), max(nested, nesting)
        if deepest > MAX_TERMS:
            self.error("too-deep", f"the statement is more than {MAX_TERMS} operators deep", stmt)
            return True
        if nested > MAX_NESTING:
            self.error(
                "too-deep",
                f"the statement nests {nested} brackets deep (calls, parentheses, indices, "
                f"if_then_else); the limit is {MAX_NESTING}",
                stmt,
            )
            return True
        return False

    # ----------------------------------------------------------------------------- arithmetic rules
    def _arith(self, expr, dtype: str) -> None:
        """Rules that depend on the type an expression is computed in (``dtype``, or ``index``).

        Literals must fit that type, ``%`` needs integers, integer ``**`` needs a small literal
        exponent: each is something the interpreter and the kernel would otherwise disagree on or the
        lowering could not build.
        """
        kind = type(expr)
        if kind is Num:
            self._literal(expr, expr.text, dtype, negative=False)
        elif kind is Neg:
            operand = strip_parens(expr.operand)
            if type(operand) is Num:
                self._literal(expr, operand.text, dtype, negative=True)
            else:
                self._arith(expr.operand, dtype)
        elif kind is BinOp:
            is_float = dtype in FLOAT_DTYPES
            if expr.op == "%" and is_float:
                self.error(
                    "float-modulo",
                    f"% is computed in {dtype} here; LEIR defines % for integers only "
                    "(write a-b*(a//b) for a floating-point remainder)",
                    expr,
                )
            if expr.op == "//" and dtype == "bf16":
                self.error(
                    "bf16-floordiv",
                    "// is computed in bf16 here, which TVM cannot build (its bfloat16 legalisation "
                    "fails on a floor division); compute it in an f32 statement",
                    expr,
                )
            if expr.op in ("//", "%") and dtype == "u64" and _subtracts_a_loop_variable(expr.right):
                self.error(
                    "u64-divisor",
                    f"{expr.op} is computed in u64 here by a divisor that subtracts with a loop variable, "
                    "which TVM's 64-bit unsigned division gets wrong; compute the divisor into a tensor "
                    "first, or use i64",
                    expr,
                )
            if expr.op == "**" and not is_float and dtype != "index":
                exponent = strip_parens(expr.right)
                if not (type(exponent) is Num and exponent.is_int and len(exponent.text) <= 2
                        and int(exponent.text) <= MAX_INT_EXPONENT):
                    self.error(
                        "int-power",
                        f"** is computed in {dtype} here; integer powers need a literal exponent "
                        f"0..{MAX_INT_EXPONENT}",
                        expr,
                    )
            self._arith(expr.left, dtype)
            self._arith(expr.right, dtype)
        elif kind is TensorRef:
            for index in expr.indices:
                if type(index) is not Num:  # a literal index is checked against the shape
                    self._arith(index, "index")
        elif kind is Call or kind is Paren:
            for child in (expr.args if kind is Call else (expr.inner,)):
                self._arith(child, dtype)
        elif kind is IfThenElse:
            self._arith_cond(expr.cond)
            self._arith(expr.then, dtype)
            self._arith(expr.otherwise, dtype)

    def _arith_cond(self, cond) -> None:
        kind = type(cond)
        if kind is Paren:
            self._arith_cond(cond.inner)
        elif kind is Logical:
            self._arith_cond(cond.left)
            self._arith_cond(cond.right)
        elif kind is Compare and len(cond.ops) == len(cond.operands) - 1:
            for left, right in zip(cond.operands, cond.operands[1:], strict=False):
                pair = concrete(promote(natural_type(left), natural_type(right)))
                self._arith(left, pair)
                self._arith(right, pair)
        elif kind is not Compare:
            self._arith(cond, "i64")

    def _literal(self, node, text: str, dtype: str, *, negative: bool) -> None:
        spelled = ("-" if negative else "") + text
        if len(spelled) > 40:
            spelled = spelled[:40] + "…"
        if dtype in FLOAT_DTYPES:
            value = float(text)
            if value > _FLOAT_MAX[dtype]:
                self.error(
                    "literal-out-of-range",
                    f"literal {spelled} is beyond the largest {dtype} literal ({_FLOAT_MAX[dtype]:g}"
                    f"{', the limit of the TVM lowering' if dtype == 'f64' else ''}); write inf for infinity",
                    node,
                )
            return
        if dtype == "index":
            lo, hi = -_INDEX_LIMIT - 1, _INDEX_LIMIT
        elif dtype in _INT_RANGE:
            lo, hi = _INT_RANGE[dtype]
        else:
            return
        if len(text) > 40:
            value = None
        elif text.isdigit():
            value = -int(text) if negative else int(text)
        else:
            value = float(text)
            value = None if value != value or value in (float("inf"), float("-inf")) else int(value)
            value = -value if negative and value is not None else value
        if value is None or not lo <= value <= hi:
            where = "an index (computed in i32)" if dtype == "index" else dtype
            self.error(
                "literal-out-of-range",
                f"literal {spelled} does not fit {where}, "
                f"whose range is [{lo}, {hi}]",
                node,
            )

    # ------------------------------------------------------------------------------- tensor facts
    def _ref(self, ref: TensorRef, ctx: _Ctx, *, write: bool) -> None:
        name = ref.name
        facts = self.facts.get(name)
        decl = self.known.get(name)
        rank = len(ref.indices)
        if ref.dtype not in DTYPES:
            kind = "not supported yet" if ref.dtype in UNSUPPORTED_DTYPES else "unknown"
            self.error("unsupported-dtype", f"dtype '{ref.dtype}' of {name} is {kind}", ref)
        if ref.scope not in SCOPES:
            self.error("bad-scope", f"scope '{ref.scope}' of {name} is not one of g, s, l", ref)
        if facts is None:
            facts = _Facts(name, ref.dtype, ref.scope, rank, ref, [-1] * rank, [False] * rank)
            self.facts[name] = facts
            if decl is not None:
                facts.rank = len(decl.shape)
                facts.hi = [-1] * facts.rank
                facts.bounded = [False] * facts.rank
                if ref.dtype != decl.dtype and decl.dtype in DTYPES:
                    self._dtype_mismatch_known(ref, decl.dtype)
                if ref.scope != "g":
                    self._not_global(ref)
                if rank != len(decl.shape):
                    self._wrong_rank(ref, len(decl.shape))
        else:
            if ref.dtype != facts.dtype:
                if decl is not None:
                    if decl.dtype in DTYPES:
                        self._dtype_mismatch_known(ref, decl.dtype)
                elif write:
                    self.error(
                        "dtype-mismatch",
                        f"{name} is written as {ref.dtype} here but as {facts.dtype} earlier "
                        f"(`{_fragment(facts.first)}`)",
                        ref,
                    )
                else:
                    self.warning(
                        "dtype-cast-read",
                        f"{name} is stored as {facts.dtype} but read as {ref.dtype} here; the value is "
                        f"converted to {ref.dtype} when read",
                        ref,
                    )
            if ref.scope != facts.scope:
                if decl is not None:
                    self._not_global(ref)
                else:
                    self.error(
                        "scope-mismatch",
                        f"{name} is used in scope {ref.scope} here but in scope {facts.scope} earlier",
                        ref,
                    )
            if rank != facts.rank:
                if decl is not None:
                    self._wrong_rank(ref, facts.rank)
                else:
                    self.error(
                        "rank-mismatch",
                        f"{name} is indexed with {rank} indices here but with {facts.rank} earlier "
                        f"(`{_fragment(facts.first)}`)",
                        ref,
                    )

        if write:
            if decl is not None and decl.role in _WRITE_FORBIDDEN:
                self.error(
                    "write-to-input", f"{name} is a signature {decl.role} and must not be written", ref
                )
        elif self.target is not None:
            if name == self.target.name:
                self.self_refs.append(ref)
            elif decl is None and name not in self.written and name not in self.reported_rbw:
                self.reported_rbw.add(name)
                self.error(
                    "read-before-write",
                    f"intermediate {name} is read before any statement writes it",
                    ref,
                )

        shape = decl.shape if decl is not None else None
        ranges = ctx.ranges
        for d, idx in enumerate(ref.indices):
            kind = type(idx)
            exact = True
            if kind is Var and idx.name in ranges:  # the common case, without the general machinery
                r = ranges[idx.name]
            elif kind is Num and idx.is_int:
                if len(idx.text) > 18:  # beyond any dimension (and int32): say so without the digits
                    if not ctx.dead:
                        spelled = spell_int(int(idx.text)) if len(idx.text) < 4000 else idx.text[:6] + "…"
                        self.error("index-out-of-bounds", f"index {d} of {name} is the literal {spelled}, "
                                   f"beyond any dimension (at most {MAX_EXTENT:,})", ref)
                    continue
                r = (int(idx.text), int(idx.text))
            else:
                if self._index(idx, ctx) != 0:
                    continue
                lin = linear(idx, ranges)
                if lin is None:
                    continue
                r, exact = lin.range(ranges), lin.lo == lin.hi
            if ctx.dead:
                continue
            lo, hi = r
            if lo < 0 or (shape is not None and d < len(shape) and hi >= shape[d]):
                # the interval bound says "out": make sure before saying so (it over-approximates
                # products, // and %, and guards on several variables)
                r, exact = self._exact(idx, ctx, r, exact)
                if r is None:
                    continue  # the guards never let this access execute
                lo, hi = r
            if shape is not None:
                if d < len(shape):
                    size = shape[d]
                    if lo < 0 or hi >= size:
                        where = f"index {d} of {name} (`{_fragment(idx)}`)"
                        self._out_of_bounds(
                            exact, f"{where} takes values in [{lo}, {hi}] but that dimension has size {size}",
                            f"{where} cannot be proved to stay in [0, {size - 1}] (the analysis bounds it "
                            f"by [{lo}, {hi}], which may over-approximate)", ref)
                        continue  # an access already reported says nothing about the declared shape
            elif lo < 0:
                where = f"index {d} of {name} (`{_fragment(idx)}`)"
                self._out_of_bounds(
                    exact, f"{where} can be negative (down to {lo})",
                    f"{where} cannot be proved non-negative (the analysis bounds it below by {lo}, which "
                    "may over-approximate)", ref)
            if d < len(facts.hi):
                facts.bounded[d] = True
                if hi > facts.hi[d]:
                    facts.hi[d] = hi

    def _exact(self, idx, ctx: _Ctx, r: Range, exact: bool) -> tuple[Range | None, bool]:
        """The range of an index made exact by enumeration where the interval bound may not be.

        Returns ``(range, exact)``; range ``None`` means the access never executes under its guards.
        """
        names = {n.name for n in walk_expr(idx) if isinstance(n, Var)}
        guarded = any(
            names & {n.name for n in walk_expr(cond) if isinstance(n, Var)} for cond, _ in ctx.guards)
        if exact and not guarded:
            return r, True
        found = exact_range(idx, ctx.ranges, ctx.guards)
        if found is NEVER:
            return None, True
        if found is None:
            return r, exact and not guarded
        return found, True

    def _out_of_bounds(self, exact: bool, proved: str, unproved: str, ref: TensorRef) -> None:
        if exact:
            self.error("index-out-of-bounds", proved, ref)
        else:
            self.warning("unproven-bounds", unproved, ref)

    def _dtype_mismatch_known(self, ref: TensorRef, declared: str) -> None:
        self.error(
            "dtype-mismatch",
            f"{ref.name} is declared {declared} in the signature but referenced as {ref.dtype}",
            ref,
        )

    def _not_global(self, ref: TensorRef) -> None:
        self.error(
            "known-not-global",
            f"{ref.name} is a signature tensor and must be referenced in scope g, not {ref.scope}",
            ref,
        )

    def _wrong_rank(self, ref: TensorRef, expected: int) -> None:
        self.error(
            "wrong-rank",
            f"{ref.name} has {expected} dimension(s) in the signature but is indexed with "
            f"{len(ref.indices)} index(es)",
            ref,
        )

    # ---------------------------------------------------------------------------------- expressions
    def _index(self, expr, ctx: _Ctx) -> int:
        """Validate an index expression: 0 = bounded integer, 1 = a gather (unbounded), 2 = an error."""
        if isinstance(expr, Var):
            if expr.name not in ctx.ranges:
                self._unknown_var(expr)
                return 2
            return 0
        if isinstance(expr, Num):
            if not expr.is_int:
                self.error("non-integer-index", f"index literal {expr.text} is not an integer", expr)
                return 2
            return 0
        if isinstance(expr, Paren):
            return self._index(expr.inner, ctx)
        if isinstance(expr, Neg):
            return self._index(expr.operand, ctx)
        if isinstance(expr, BinOp):
            right = self._index(expr.right, ctx)
            status = max(self._index(expr.left, ctx), right)
            if expr.op in ("/", "**"):
                hint = " (use // for integer division)" if expr.op == "/" else ""
                self.error(
                    "non-integer-index",
                    f"operator {expr.op} is not allowed in an index{hint}",
                    expr,
                )
                return 2
            if expr.op not in BINARY_OPS:
                self.error("unknown-operator", f"operator {expr.op} does not exist in LEIR", expr)
                return 2
            if expr.op in ("//", "%") and status != 2 and not ctx.dead:
                divisor = index_range(expr.right, ctx.ranges) if right == 0 else None
                if divisor is None or divisor[0] <= 0 <= divisor[1]:
                    self.error("zero-divisor", _zero_divisor_message(expr, divisor), expr)
                    return 2
            return status
        if isinstance(expr, TensorRef):
            self._ref(expr, ctx, write=False)
            if expr.dtype not in INT_DTYPES:
                self.error(
                    "non-integer-index",
                    f"gather index tensor {expr.name} has dtype {expr.dtype}; an index tensor must "
                    "have an integer dtype",
                    expr,
                )
                return 2
            return 1
        what = {Inf: "inf", Call: "a call", IfThenElse: "if_then_else", Compare: "a comparison",
                Logical: "a logical operation"}.get(type(expr), type(expr).__name__)
        self.error("non-integer-index", f"{what} is not allowed in an index", expr)
        self._value(expr, ctx) if not isinstance(expr, (Compare, Logical)) else self._cond(expr, ctx)
        return 2

    def _unknown_var(self, var: Var) -> None:
        self.error("unknown-loop-var", f"loop variable {var.name} is not defined by any enclosing loop", var)

    def _value(self, expr, ctx: _Ctx) -> None:
        kind = type(expr)
        if kind is TensorRef:
            self._ref(expr, ctx, write=False)
        elif kind is BinOp:
            if expr.op not in BINARY_OPS:
                self.error("unknown-operator", f"operator {expr.op} does not exist in LEIR", expr)
            self._value(expr.left, ctx)
            self._value(expr.right, ctx)
        elif kind is Num or kind is Inf:
            return
        elif kind is Var:
            if expr.name not in ctx.ranges:
                self._unknown_var(expr)
        elif kind is Call:
            self._call(expr, ctx)
        elif kind is IfThenElse:
            self._cond(expr.cond, ctx)
            for branch, truth in ((expr.then, True), (expr.otherwise, False)):
                if ctx.dead:
                    sub = ctx
                else:
                    narrowed = refine(expr.cond, truth, ctx.ranges)
                    guards = ctx.guards + ((expr.cond, truth),)
                    sub = _Ctx(ctx.ranges, True) if narrowed is None else _Ctx(narrowed, False, guards)
                self._value(branch, sub)
        elif kind is Neg:
            self._value(expr.operand, ctx)
        elif kind is Paren:
            self._value(expr.inner, ctx)
        elif kind is Compare or kind is Logical:
            self.error(
                "condition-as-value",
                "a condition can only be used as the first argument of if_then_else",
                expr,
            )
            self._cond(expr, ctx)
        else:
            self.error("unknown-operator", f"unexpected node {kind.__name__} in an expression", expr)

    def _call(self, call: Call, ctx: _Ctx) -> None:
        if call.func in UNARY_CALLS:
            want = 1
        elif call.func in BINARY_CALLS:
            want = 2
        else:
            self.error("unknown-function", f"function {call.func} does not exist in LEIR", call)
            want = len(call.args)
        if len(call.args) != want:
            self.error(
                "bad-arity",
                f"{call.func} takes {want} argument(s) but is given {len(call.args)}",
                call,
            )
        for arg in call.args:
            self._value(arg, ctx)

    def _cond(self, cond, ctx: _Ctx) -> None:
        kind = type(cond)
        if kind is Compare:
            if len(cond.ops) != len(cond.operands) - 1 or not cond.ops:
                self.error("unknown-operator", "malformed comparison", cond)
            for op in cond.ops:
                if op not in COMPARE_OPS:
                    self.error("unknown-operator", f"comparison {op} does not exist in LEIR", cond)
            for operand in cond.operands:
                self._value(operand, ctx)
        elif kind is Logical:
            if cond.op not in LOGIC_OPS:
                self.error("unknown-operator", f"logical operator {cond.op} does not exist in LEIR", cond)
            self._cond(cond.left, ctx)
            self._cond(cond.right, ctx)
        elif kind is Paren:
            self._cond(cond.inner, ctx)
        else:
            self._value(cond, ctx)
            if not (kind is TensorRef and cond.dtype == "bool"):
                self.error(
                    "non-bool-condition",
                    "a condition must be a comparison, a combination with & or |, or a bool tensor",
                    cond,
                )

    # ---------------------------------------------------------------------------------- conclusions
    def _finish(self) -> ProgramInfo:
        tensors: dict[str, TensorInfo] = {}
        for decl in self.program.signature.tensors:
            tensors[decl.name] = TensorInfo(decl.name, decl.dtype, "g", tuple(decl.shape), decl.role)
            facts = self.facts.get(decl.name)
            if decl.name in self.unanalysed:
                continue
            if facts is None:
                if decl.role == "output":
                    self.error(
                        "output-not-written",
                        f"output {decl.name} is never written",
                        decl,
                        fragment=decl.name,
                    )
                else:
                    self.warning(
                        "unused-tensor",
                        f"{decl.role} {decl.name} is declared in the signature but never used",
                        decl,
                        fragment=decl.name,
                    )
                continue
            if decl.role != "output":
                continue
            if not facts.written:
                self.error("output-not-written", f"output {decl.name} is never written", facts.first)
                continue
            if facts.rank != len(decl.shape):
                continue
            inferred = tuple(
                h + 1 if bounded else size
                for h, bounded, size in zip(facts.hi, facts.bounded, decl.shape, strict=True)
            )
            if inferred != tuple(decl.shape):
                self.error(
                    "shape-mismatch",
                    f"output {decl.name} has inferred shape {_shape(inferred)} but the signature "
                    f"declares {_shape(decl.shape)}",
                    facts.first,
                )
        for name, facts in self.facts.items():
            if name in tensors or name in self.unanalysed:
                continue
            if not all(facts.bounded):
                self.error(
                    "unknown-shape",
                    f"intermediate {name} is indexed only through gathers in some dimension, so its "
                    "size cannot be inferred",
                    facts.first,
                )
            shape = tuple(h + 1 if h >= 0 else 1 for h in facts.hi)
            tensors[name] = TensorInfo(name, facts.dtype, facts.scope, shape, "intermediate")
        return ProgramInfo(_in_source_order(self.diags), tensors, dict(self.stmts))


def _zero_divisor_message(expr: BinOp, divisor: Range | None) -> str:
    """Why the divisor of an index's ``//`` or ``%`` can be zero: a literal zero, a range that holds
    zero, or a value read from a tensor."""
    text = _fragment(expr.right)
    if divisor == (0, 0):
        why = f"is zero (`{text}`)"
    elif divisor is None:
        why = f"can be zero (`{text}` is read from a tensor, which may hold 0)"
    else:
        why = f"can be zero (`{text}` takes values in [{divisor[0]}, {divisor[1]}])"
    return f"the divisor of {expr.op} in this index {why}; an index must divide by a value that is never zero"


def _shape(shape) -> str:
    return "(" + ", ".join(spell_int(s) if isinstance(s, int) else str(s) for s in shape) + ")"


def check(program: Program) -> ProgramInfo:
    """Every problem of ``program`` as diagnostics, plus the facts the other layers need."""
    ensure_recursion_limit()  # trees built in code reach here without the parser having raised it
    try:
        return _Checker(program).run()
    except RecursionError:
        # thousands of nested operators: refuse cleanly instead of crashing every consumer
        diag = Diagnostic(
            Severity.ERROR,
            "too-deep",
            "expressions are nested too deeply to analyse (simplify or split the statement)",
            None,
            None,
            "",
        )
        return ProgramInfo((diag,), {}, {})


def _in_source_order(diags) -> tuple[Diagnostic, ...]:
    """Diagnostics sorted by position, as editors list them; unpositioned ones (signature-level, or from
    programs built in code) follow in the order found."""
    return tuple(sorted(diags, key=lambda d: (d.line is None, d.line or 0, d.column or 0)))


def require_valid(program: Program) -> ProgramInfo:
    """``check`` that raises ``LeirCheckError`` (with every error) unless the program is valid."""
    info = check(program)
    if not info.ok:
        raise LeirCheckError(info.errors)
    return info
