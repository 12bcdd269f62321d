"""LEIR expressions to SymPy and back, for the algebraic rewrites (catalogue #24–35).

A statement's right-hand side (without its accumulation prefix ``X=X+…``) becomes a SymPy expression:
``+ - * / **``, unary minus, literals and ``exp``/``log``/``sqrt`` are SymPy's; every other node — a
tensor reference, a loop variable used as a value, ``inf``, ``if_then_else``, ``max``/``min``/``erf``/
``abs``/``sin``/``cos`` and float ``//``/``%`` — is an *opaque* symbol SymPy never looks inside, and the
same node (by canonical text) is the same symbol. After a rewrite the result prints back to a LEIR tree
with the original nodes in place of the symbols, so references, subscripts and guards are untouched.

Why these rules:
* Only statements computed in a float dtype are rewritten: there every literal, read and ``/`` is a
  float operation (docs/leir.md §6), so SymPy's real-field identities hold up to rounding. In an integer
  statement ``/`` floors and the identities fail.
* Literals stay literals LEIR can print: integers stay integers, decimals become SymPy ``Float`` from
  their exact spelling and print back with Python's shortest round-trip spelling; a rational SymPy makes
  (``1/2``) prints as a float division of two integer literals, which a float statement computes as
  ``0.5``. Anything beyond the dtype's range, or ``nan``/``zoo``/complex numbers, is refused.
* Zero divisors and logarithms: ``safety_problem`` compares the divisors and the logarithm arguments of
  the expression before and after a rewrite; one that appears or disappears must be provably positive
  (``positivity``: ``exp(…)``, a positive literal, ``sqrt(…)``/squares/``abs`` plus a positive literal,
  ``max(…, positive)``, products and sums of such), and the proof is returned to be quoted in the trace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sympy

from leir.analysis import program_info
from leir.ast import (
    FLOAT_DTYPES,
    Assign,
    BinOp,
    Call,
    Expr,
    Neg,
    Num,
    Program,
    statements,
    strip_parens,
    tensor_refs,
)
from leir.builders import lit
from leir.printer import expr_text
from leir.semantics import StmtKind

Path = tuple[int, ...]
SymExpr = Any  # sympy.Expr: SymPy ships no precise types for its expression algebra

#: Regions with more operator nodes than this are not offered to SymPy (factor/cancel grow fast).
MAX_NODES = 80
#: A rewrite whose result has more than this many times the region's nodes (plus 8) is refused.
MAX_GROWTH = 3
#: Largest literal magnitude LEIR accepts in a float statement (docs/leir.md §6: f64 literals ≤ 3.4e38).
MAX_LITERAL = {"f16": 65504.0, "bf16": 3.38e38, "f32": 3.4028234663852886e38, "f64": 3.4e38}


class BridgeError(ValueError):
    """An expression SymPy cannot take or give back faithfully (the reason is the message)."""


# --------------------------------------------------------------------------------------- the region


@dataclass(frozen=True)
class Region:
    """The part of one statement a rewrite may touch: the RHS, or the RHS minus its accumulation prefix.

    ``rebuild(new)`` puts a rewritten region back into the statement (``X=X+new``), so the combiner the
    checker reads from the top of the RHS is unchanged.
    """

    path: Path
    stmt: Assign
    expr: Expr
    prefix: str  # "" (plain), or the combiner kept outside: "+", "+r" (region on the left), "-", "*", ...

    def rebuild(self, new: Expr) -> Assign:
        target = self.stmt.target
        value = self.stmt.value
        if not self.prefix:
            return Assign(target, new)
        if self.prefix in ("max", "min"):
            assert isinstance(value, Call)
            args = (value.args[0], new) if _same(value.args[0], target) else (new, value.args[1])
            return Assign(target, Call(self.prefix, args))
        assert isinstance(value, BinOp)
        if self.prefix.endswith("r"):
            return Assign(target, BinOp(value.op, new, value.right))
        return Assign(target, BinOp(value.op, value.left, new))


def _same(a: Expr, b: Expr) -> bool:
    return expr_text(a) == expr_text(b)


def region_of(program: Program, path: Path, stmt: Assign) -> Region | str:
    """The statement's rewritable region, or why it has none."""
    if stmt.target.dtype not in FLOAT_DTYPES:
        return f"{stmt.target.name} is computed in {stmt.target.dtype}, not a float dtype"
    if stmt.target.dtype not in MAX_LITERAL:  # fp8: a storage type, rewriting its rounding is not exact
        return f"{stmt.target.name} is stored in {stmt.target.dtype}, which rounds its result once on the store"
    info = program_info(program).statements.get(path)
    kind = info.kind if info is not None else StmtKind.ASSIGN
    value = strip_parens(stmt.value)
    target = stmt.target
    if kind in (StmtKind.ASSIGN, StmtKind.RECURRENCE):
        return Region(path, stmt, value, "")
    region: Region | None = None
    if isinstance(value, BinOp) and value.op in ("+", "-", "*"):
        if _same(strip_parens(value.left), target):
            region = Region(path, stmt, strip_parens(value.right), value.op)
        elif value.op != "-" and _same(strip_parens(value.right), target):
            region = Region(path, stmt, strip_parens(value.left), value.op + "r")
    elif isinstance(value, Call) and value.func in ("max", "min"):
        if _same(strip_parens(value.args[0]), target):
            region = Region(path, stmt, strip_parens(value.args[1]), value.func)
        elif _same(strip_parens(value.args[1]), target):
            region = Region(path, stmt, strip_parens(value.args[0]), value.func)
    if region is None:
        return f"the accumulation into {target.name} has no prefix X=X op … to keep outside the rewrite"
    if any(ref.name == target.name for ref in tensor_refs(region.expr)):
        return f"{target.name} is read again inside its own update"
    return region


def regions(program: Program) -> Iterator[Region]:
    """Every float statement's region, in execution order."""
    for path, stmt, _ in statements(program.body):
        region = region_of(program, path, stmt)
        if isinstance(region, Region):
            yield region


# ------------------------------------------------------------------------------------ LEIR → SymPy


@dataclass(frozen=True)
class Translation:
    """A region as SymPy sees it: the expression and what each opaque symbol stands for."""

    sym: SymExpr
    atoms: tuple[tuple[sympy.Symbol, Expr], ...]
    dtype: str

    def atom(self, symbol: sympy.Symbol) -> Expr:
        for s, node in self.atoms:
            if s == symbol:
                return node
        raise BridgeError(f"unknown symbol {symbol}")

    def symbol_named(self, text: str) -> sympy.Symbol:
        """The symbol standing for the LEIR node whose canonical text is ``text``."""
        for s, node in self.atoms:
            if expr_text(node) == text:
                return s
        raise BridgeError(f"{text} is not an opaque operand of the expression")


def count_nodes(node: Expr) -> int:
    """Operator and leaf nodes of a LEIR expression, not looking inside tensor subscripts."""
    node = strip_parens(node)
    if isinstance(node, BinOp):
        return 1 + count_nodes(node.left) + count_nodes(node.right)
    if isinstance(node, Neg):
        return 1 + count_nodes(node.operand)
    if isinstance(node, Call):
        return 1 + sum(count_nodes(a) for a in node.args)
    return 1


class _Reader:
    def __init__(self) -> None:
        self.atoms: dict[str, tuple[sympy.Symbol, Expr]] = {}
        #: every divisor as read, to check that SymPy's automatic simplification kept them all
        self.divisors: list[SymExpr] = []

    def opaque(self, node: Expr) -> SymExpr:
        key = expr_text(node)
        if key not in self.atoms:
            # zero-padded names keep SymPy's (name-sorted) term order the order of first appearance
            self.atoms[key] = (sympy.Symbol(f"x{len(self.atoms):03d}"), node)
        return self.atoms[key][0]

    def read(self, node: Expr) -> SymExpr:
        node = strip_parens(node)
        if isinstance(node, Num):
            return sympy.Integer(int(node.text)) if node.is_int else sympy.Float(node.text)
        if isinstance(node, Neg):
            return -self.read(node.operand)
        if isinstance(node, BinOp) and node.op in ("+", "-", "*", "/", "**"):
            left, right = self.read(node.left), self.read(node.right)
            if node.op == "+":
                return left + right
            if node.op == "-":
                return left - right
            if node.op == "*":
                return left * right
            if node.op == "/":
                self.divisors.append(right)
                return left / right
            return left**right
        if isinstance(node, Call) and node.func in ("exp", "log", "sqrt"):
            arg = self.read(node.args[0])
            return {"exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt}[node.func](arg)
        return self.opaque(node)


@lru_cache(maxsize=4096)
def _translate(expr: Expr, dtype: str) -> Translation:
    if count_nodes(expr) > MAX_NODES:
        raise BridgeError(f"the expression has more than {MAX_NODES} nodes")
    reader = _Reader()
    sym = clean(reader.read(expr))
    atoms = tuple(reader.atoms.values())
    lost = [expr_text(node) for s, node in atoms if not sym.has(s)]
    if lost:
        raise BridgeError(f"SymPy simplifies {lost[0]} away on reading (e.g. x/x), so it would not be faithful")
    if sym.has(sympy.nan, sympy.zoo, sympy.I, sympy.oo, -sympy.oo):
        raise BridgeError("SymPy reads the expression as a non-finite or complex constant")
    written: set[SymExpr] = set()
    for d in reader.divisors:
        if not d.is_Number:
            written |= _factors(d)
    if not written <= _divisors(sym):
        raise BridgeError("SymPy cancels a divisor on reading (e.g. A*B/(A*C)), so it would not be faithful")
    return Translation(sym, atoms, dtype)


def clean(e: SymExpr) -> SymExpr:
    """``e`` with integral floats (``1.0``, ``2.0``) as integers, so ``1.0*A`` is ``A`` again."""
    swaps = {f: sympy.Integer(int(f)) for f in e.atoms(sympy.Float) if float(f).is_integer()}
    return e.xreplace(swaps) if swaps else e


def freeze(e: SymExpr) -> tuple[SymExpr, dict[SymExpr, SymExpr]]:
    """``e`` as a rational function: every other node (``exp``, ``log``, roots) becomes a dummy symbol.

    Returns the frozen form and the dummy → node map; ``thaw`` undoes it. Polynomial algorithms
    (``apart``, ``cancel``) then cannot touch what is inside those nodes.
    """
    table: dict[SymExpr, SymExpr] = {}

    def go(node: SymExpr) -> SymExpr:
        if node.is_Symbol or node.is_Number:
            return node
        if node.is_Add:
            return sympy.Add(*[go(a) for a in node.args])
        if node.is_Mul:
            return sympy.Mul(*[go(a) for a in node.args])
        if node.is_Pow and node.exp.is_Integer:
            return sympy.Pow(go(node.base), node.exp)
        for dummy, original in table.items():
            if original == node:
                return dummy
        dummy = sympy.Dummy(f"f{len(table)}")
        table[dummy] = node
        return dummy

    return go(e), table


def thaw(e: SymExpr, table: dict[SymExpr, SymExpr]) -> SymExpr:
    return e.xreplace(table)


def translate(expr: Expr, dtype: str) -> Translation:
    """The region as SymPy; ``BridgeError`` where SymPy would not represent it faithfully."""
    return _translate(expr, dtype)


# ------------------------------------------------------------------------------------ SymPy → LEIR


class _Writer:
    def __init__(self, tr: Translation) -> None:
        self.tr = tr
        self.limit = MAX_LITERAL[tr.dtype]

    def number(self, value: SymExpr) -> Expr:
        if value.is_Integer:
            n = int(value)
            if abs(n) > self.limit:
                raise BridgeError(f"the literal {n} is out of range for {self.tr.dtype}")
            return lit(n)
        if value.is_Rational:
            p, q = int(value.p), int(value.q)
            if q > 4096 or abs(p) > 2**53:
                raise BridgeError(f"SymPy turned a literal into the rational {p}/{q}")
            frac: Expr = BinOp("/", lit(abs(p)), lit(q))
            return Neg(frac) if p < 0 else frac
        if value.is_Float:
            f = float(value)
            if not math.isfinite(f) or abs(f) > self.limit:
                raise BridgeError(f"the literal {f} is out of range for {self.tr.dtype}")
            return lit(f)
        if value == sympy.E:
            return Call("exp", (lit(1),))
        raise BridgeError(f"SymPy produced the constant {value}, which LEIR cannot spell")

    def write(self, e: SymExpr) -> Expr:
        if e.is_Symbol:
            return self.tr.atom(e)
        if e.is_Number or e.is_NumberSymbol:
            return self.number(e)
        if e.is_Add:
            return self.add(e)
        if e.is_Mul:
            return self.mul(e)
        if e.is_Pow:
            base, exponent = e.as_base_exp()
            if base == sympy.E:
                return Call("exp", (self.write(exponent),))
            if exponent.is_Number and exponent < 0:
                return BinOp("/", lit(1), self.power(base, -exponent))
            return self.power(base, exponent)
        if isinstance(e, sympy.exp):
            return Call("exp", (self.write(e.args[0]),))
        if isinstance(e, sympy.log):
            if len(e.args) != 1:
                raise BridgeError("a logarithm with a base")
            return Call("log", (self.write(e.args[0]),))
        raise BridgeError(f"SymPy produced {type(e).__name__}, which LEIR has no form for")

    def power(self, base: SymExpr, exponent: SymExpr) -> Expr:
        """``base**exponent`` for a positive or symbolic exponent."""
        if exponent == 1:
            return self.write(base)
        if exponent == sympy.Rational(1, 2):
            return Call("sqrt", (self.write(base),))
        if exponent.is_Rational and not exponent.is_Integer and exponent.q == 2:
            return BinOp("**", Call("sqrt", (self.write(base),)), self.number(sympy.Integer(exponent.p)))
        if exponent.is_Integer and 2 <= int(exponent) <= 3:
            # a small integer power stays the products the source wrote (``A*A``), not a pow call
            written = self.write(base)
            out = written
            for _ in range(int(exponent) - 1):
                out = BinOp("*", out, written)
            return out
        return BinOp("**", self.write(base), self.write(exponent))

    def mul(self, e: SymExpr) -> Expr:
        coeff, rest = e.as_coeff_mul()
        negative = coeff.is_negative
        if negative:
            coeff = -coeff
        numer: list[Expr] = []
        denom: list[Expr] = []
        if coeff.is_Rational:
            if coeff.p != 1:
                numer.append(self.number(sympy.Integer(coeff.p)))
            if coeff.q != 1:
                denom.append(self.number(sympy.Integer(coeff.q)))
        elif float(coeff) != 1.0:
            numer.append(self.number(coeff))
        for factor in sympy.Mul(*rest).as_ordered_factors():
            base, exponent = factor.as_base_exp()
            if base != sympy.E and exponent.is_Number and exponent < 0:
                denom.append(self.power(base, -exponent))
            else:
                numer.append(self.write(factor))
        if not numer:
            numer = [lit(1)]
        if negative:
            numer[0] = Neg(numer[0])
        out = _product(numer)
        if denom:
            out = BinOp("/", out, _product(denom))
        return out

    def add(self, e: SymExpr) -> Expr:
        terms = e.as_ordered_terms()
        # lead with a term that has no minus sign, as people write sums (``1-A`` rather than ``-A+1``)
        leading = [t for t in terms if not t.could_extract_minus_sign()]
        if leading:
            terms.remove(leading[0])
            terms.insert(0, leading[0])
        out = self.write(terms[0])
        for term in terms[1:]:
            if term.could_extract_minus_sign():
                out = BinOp("-", out, self.write(-term))
            else:
                out = BinOp("+", out, self.write(term))
        return out


def _product(factors: list[Expr]) -> Expr:
    out = factors[0]
    for f in factors[1:]:
        out = BinOp("*", out, f)
    return out


def to_leir(e: SymExpr, tr: Translation) -> Expr:
    """The SymPy expression as LEIR, with every opaque symbol replaced by its original node."""
    return _Writer(tr).write(e)


# --------------------------------------------------------------------------------- comparing forms


def same_form(a: SymExpr, b: SymExpr) -> bool:
    """Structural equality of SymPy forms: SymPy's canonical argument order makes it modulo reordering."""
    return bool(a == b) or sympy.srepr(a) == sympy.srepr(b)


# ------------------------------------------------------------------------------ signs and safety


@dataclass(frozen=True)
class Sign:
    """A proved sign ("positive" or "non-negative") and the reason in words."""

    sign: str
    why: str


class Prover:
    """Proves an expression positive from its syntax only: what ``exp``, literals, squares guarantee."""

    def __init__(self, tr: Translation) -> None:
        self.tr = tr

    def text(self, e: SymExpr) -> str:
        try:
            return expr_text(to_leir(e, self.tr))
        except BridgeError:
            return str(e)

    def sign(self, e: SymExpr) -> Sign | None:
        t = self.text(e)
        if e.is_Number:
            if e.is_positive:
                return Sign("positive", f"{t} is a positive literal")
            if e.is_zero:
                return Sign("non-negative", f"{t} is zero")
            return None
        if isinstance(e, sympy.exp):
            return Sign("positive", f"{t} is an exponential")
        if e.is_Pow:
            base, exponent = e.as_base_exp()
            if base == sympy.E:
                return Sign("positive", f"{t} is an exponential")
            inner = self.sign(base)
            if inner is not None and inner.sign == "positive":
                return Sign("positive", f"{t} is a power of a positive value ({inner.why})")
            if exponent.is_Integer and int(exponent) % 2 == 0 and int(exponent) > 0:
                return Sign("non-negative", f"{t} is an even power")
            if exponent == sympy.Rational(1, 2):
                return Sign("non-negative", f"{t} is a square root")
            return None
        if e.is_Mul:
            parts = [self.sign(f) for f in e.as_ordered_factors()]
            if all(p is not None for p in parts):
                sign = "positive" if all(p.sign == "positive" for p in parts if p) else "non-negative"
                return Sign(sign, f"{t} is a product of " + "; ".join(p.why for p in parts if p))
            return None
        if e.is_Add:
            parts = [self.sign(term) for term in e.as_ordered_terms()]
            if all(p is not None for p in parts):
                sign = "positive" if any(p.sign == "positive" for p in parts if p) else "non-negative"
                return Sign(sign, f"{t} is a sum of " + "; ".join(p.why for p in parts if p))
            return None
        if e.is_Symbol:
            return self.opaque_sign(self.tr.atom(e), t)
        return None

    def opaque_sign(self, node: Expr, text: str) -> Sign | None:
        if isinstance(node, Call) and node.func == "abs":
            return Sign("non-negative", f"{text} is an absolute value")
        if isinstance(node, Call) and node.func == "max":
            for arg in node.args:
                inner = translate_or_none(arg, self.tr.dtype)
                proved = Prover(inner).sign(inner.sym) if inner is not None else None
                if proved is not None:
                    return Sign(proved.sign, f"{text} is at least {expr_text(arg)} ({proved.why})")
        return None

    def positive(self, e: SymExpr) -> str | None:
        """Why ``e`` is positive (hence non-zero and a valid ``log`` argument), or ``None``."""
        proved = self.sign(e)
        return proved.why if proved is not None and proved.sign == "positive" else None


def translate_or_none(expr: Expr, dtype: str) -> Translation | None:
    try:
        return translate(expr, dtype)
    except BridgeError:
        return None


def _divisors(e: SymExpr) -> set[SymExpr]:
    """Irreducible factors of every denominator in ``e`` (up to sign and constants)."""
    out: set[SymExpr] = set()
    for node in sympy.preorder_traversal(e):
        if node.is_Pow:
            base, exponent = node.as_base_exp()
            if base != sympy.E and exponent.is_Number and exponent < 0:
                out |= _factors(base)
    return out


def _factors(e: SymExpr) -> set[SymExpr]:
    """Irreducible factors of ``e`` as a polynomial in its opaque symbols and frozen calls."""
    frozen, table = freeze(e)
    try:
        _, pairs = sympy.factor_list(frozen)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, ValueError, TypeError):
        return {e}
    found = set()
    for f, _ in pairs:
        if f.could_extract_minus_sign():
            f = -f
        found.add(thaw(f, table))
    return found or {e}


def _log_args(e: SymExpr) -> set[SymExpr]:
    return {node.args[0] for node in sympy.preorder_traversal(e) if isinstance(node, sympy.log)}


def safety_problem(before: SymExpr, after: SymExpr, tr: Translation) -> tuple[str | None, tuple[str, ...]]:
    """Whether the rewrite could change a division by zero or a log of a non-positive value.

    Every divisor factor or ``log`` argument that the rewrite introduces or removes must be provably
    positive; returns ``(problem, proofs)`` — ``problem`` is ``None`` when every one is proved, and
    ``proofs`` are the sentences to quote.
    """
    prover = Prover(tr)
    proofs: list[str] = []
    checks: list[tuple[str, SymExpr]] = []
    old_div, new_div = _divisors(before), _divisors(after)
    checks += [("divides by", d) for d in sorted(new_div - old_div, key=sympy.default_sort_key)]
    checks += [("no longer divides by", d) for d in sorted(old_div - new_div, key=sympy.default_sort_key)]
    old_log, new_log = _log_args(before), _log_args(after)
    checks += [("takes the log of", a) for a in sorted(new_log - old_log, key=sympy.default_sort_key)]
    checks += [("no longer takes the log of", a) for a in sorted(old_log - new_log, key=sympy.default_sort_key)]
    for what, value in checks:
        why = prover.positive(value)
        if why is None:
            return (f"the rewrite {what} {prover.text(value)}, whose sign cannot be proved positive", ())
        proofs.append(why)
    return None, tuple(dict.fromkeys(proofs))


# ------------------------------------------------------------------------------------ one rewrite


@dataclass(frozen=True)
class Rewrite:
    """The outcome of rewriting one region: the new statement and what the trace needs."""

    region: Region
    translation: Translation
    before_sym: SymExpr
    after_sym: SymExpr
    new_expr: Expr
    new_stmt: Assign
    proofs: tuple[str, ...]


RewriteFn = Callable[[Translation], SymExpr]


def rewrite_region(region: Region, fn: RewriteFn) -> Rewrite | str:
    """Apply ``fn`` to the region's SymPy form; the new statement, or why this is no site."""
    try:
        tr = translate(region.expr, region.stmt.target.dtype)
    except BridgeError as exc:
        return str(exc)
    try:
        after = fn(tr)
    except BridgeError as exc:
        return str(exc)
    except (sympy.PolynomialError, sympy.GeneratorsNeeded, NotImplementedError, ValueError,
            TypeError, RecursionError) as exc:
        return f"SymPy could not do it: {type(exc).__name__}"
    if after is not None:
        after = clean(after)
    if after is None or same_form(after, tr.sym):
        return "the rewrite changes nothing here (or only reorders terms)"
    problem, proofs = safety_problem(tr.sym, after, tr)
    if problem is not None:
        return problem
    try:
        new_expr = to_leir(after, tr)
    except BridgeError as exc:
        return str(exc)
    if count_nodes(new_expr) > MAX_GROWTH * count_nodes(region.expr) + 8:
        return "the rewritten expression is more than three times larger"
    if expr_text(new_expr) == expr_text(region.expr):
        return "the rewrite prints back to the same expression"
    return Rewrite(region, tr, tr.sym, after, new_expr, region.rebuild(new_expr), proofs)


def reread(e: SymExpr, tr: Translation) -> SymExpr | None:
    """``e`` printed to LEIR and read back, in ``tr``'s symbols: what a later step will see of it."""
    try:
        again = translate(to_leir(e, tr), tr.dtype)
        return again.sym.xreplace({s: tr.symbol_named(expr_text(node)) for s, node in again.atoms})
    except BridgeError:
        return None


def divisors(e: SymExpr) -> set[SymExpr]:
    """The irreducible factors of every denominator in a SymPy form."""
    return _divisors(e)


def _operand_nodes(e: SymExpr) -> list[SymExpr]:
    """Opaque symbols and ``exp`` calls of ``e``, in pre-order, once each."""
    found: list[SymExpr] = []
    for node in sympy.preorder_traversal(e):
        if (node.is_Symbol or isinstance(node, sympy.exp)) and node not in found:
            found.append(node)
    return found


def _texts(nodes: list[SymExpr], tr: Translation) -> list[str]:
    out: list[str] = []
    for node in nodes:
        try:
            text = leir_text(node, tr)
        except BridgeError:
            continue
        if text not in out:
            out.append(text)
    return out


def atom_operands(tr: Translation) -> list[str]:
    """LEIR text of every operand a rewrite may be about: opaque nodes and ``exp`` calls."""
    return _texts(_operand_nodes(tr.sym), tr)


def denominator_operands(tr: Translation) -> list[str]:
    """The operands (opaque nodes, ``exp`` calls) that occur in a denominator of the region."""
    nodes: list[SymExpr] = []
    for node in sympy.preorder_traversal(tr.sym):
        if node.is_Pow:
            base, exponent = node.as_base_exp()
            if base != sympy.E and exponent.is_Number and exponent < 0:
                nodes += [n for n in _operand_nodes(base) if n not in nodes]
    return _texts(nodes, tr)


def operand_node(tr: Translation, text: str) -> SymExpr:
    """The SymPy node (opaque symbol or ``exp`` call) whose LEIR text is ``text``."""
    for node in _operand_nodes(tr.sym):
        try:
            if leir_text(node, tr) == text:
                return node
        except BridgeError:
            continue
    raise BridgeError(f"{text} is not an operand of the expression")


def leir_text(e: SymExpr, tr: Translation) -> str:
    """Canonical LEIR text of a SymPy sub-expression (its symbols replaced by their nodes)."""
    return expr_text(to_leir(e, tr))


__all__ = [
    "BridgeError", "Prover", "Region", "Rewrite", "Sign", "Translation", "atom_operands", "count_nodes",
    "clean", "denominator_operands", "divisors", "freeze", "leir_text", "operand_node", "reread", "thaw",
    "region_of", "regions", "rewrite_region", "safety_problem", "same_form", "to_leir", "translate",
]
