"""Text → AST for LEIR, built directly while parsing.

The grammar (``grammar.lark``) runs on lark's LALR parser with the transformer applied during the parse,
so no generic parse tree is ever built: that is what keeps parsing well above the throughput the dataset
tooling needs. Parentheses are resolved here too: a pair the minimal printer would emit anyway is
dropped, a redundant pair is kept as a ``Paren`` node so that printing reproduces the input exactly.

Valid text takes the fast path, a hand-written descent over the same grammar that calls the same
builder (``leir.descent``); anything it does not accept is re-parsed by lark, so lark's LALR parser
stays the reference for what LEIR is and the source of every error message.

Every failure, whatever the input, surfaces as ``LeirSyntaxError`` with line, column, the expected
tokens and a caret snippet.
"""

from __future__ import annotations

import re
import threading
from functools import cache, lru_cache
from pathlib import Path

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError

from leir.ast import (
    DTYPES,
    SCOPES,
    UNSUPPORTED_DTYPES,
    Assign,
    BinOp,
    Block,
    Body,
    Call,
    Compare,
    Expr,
    IfThenElse,
    Inf,
    Logical,
    Loop,
    Neg,
    Num,
    Paren,
    Pos,
    TensorRef,
    Var,
    statements,
)
from leir.descent import Descent, DescentFailure, tokenize
from leir.errors import LeirSyntaxError, caret_snippet
from leir.limits import MAX_LITERAL_EXTENT, MAX_TERMS, ensure_recursion_limit, tree_depth
from leir.precedence import PRECEDENCE, needs_parens
from leir.token_errors import line_column, token_error

_GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")
_KNOWN_DTYPES = frozenset(DTYPES) | frozenset(UNSUPPORTED_DTYPES)
_KNOWN_SCOPES = frozenset(SCOPES)
_LOOP_RE = re.compile(r"([LPVUB])\s*\^\s*\{\s*([0-9]+)\s*\}\s*_\s*\{\s*([a-z][a-z0-9_]*)\s*=\s*0\s*\}")
_TREF_RE = re.compile(
    r"([A-Z][a-z]*)\s*\^\s*\{\s*([a-z0-9]+)\s*,\s*([a-z]+)\s*\}(?:\s*_\{(.*)\})?", re.DOTALL
)
_INDEX_PART_RE = re.compile(r"[a-z][a-z0-9_]*|[0-9]+")

#: Human names for the grammar's terminals, used in "expected ..." messages.
_TERMINAL_NAMES = {
    "LOOPS": "a loop header like L^{8}_{i=0}",
    "TREF": "a tensor reference like A^{f32,g}_{i}",
    "LVAR": "a loop variable",
    "NUMBER": "a number",
    "FUNC1": "exp/log/sqrt/abs/erf/sin/cos",
    "FUNC2": "max/min",
    "CMP": "a comparison (< <= > >= == !=)",
    "BINOP": "an operator (+ - * / // % **)",
    "NEG": "'-'",
    "LOGIC": "'&' or '|'",
}


class _ParseFailure(Exception):
    """Raised inside the transformer; converted to ``LeirSyntaxError`` with the source at hand."""

    def __init__(self, message: str, token: Token | Pos | None, code: str = "syntax") -> None:
        super().__init__(message)
        self.message = message
        self.token = token
        self.code = code


def _tok_pos(tok: Token, line_offset: int) -> Pos:
    return Pos(
        tok.line + line_offset,
        tok.column,
        tok.end_line + line_offset,
        tok.end_column,
        tok.start_pos,
        tok.end_pos,
    )


def _span(first: Pos | None, last: Pos | None) -> Pos | None:
    if first is None or last is None:
        return first or last
    return Pos(first.line, first.column, last.end_line, last.end_column, first.start, last.end)


def _unparen(child: Expr, parent: str, side: str) -> Expr:
    """Drop parentheses around ``child`` when the printer would put them back anyway."""
    if isinstance(child, Paren) and needs_parens(child.inner, parent, side):
        return child.inner
    return child


def _index_node(text: str):
    """The node class for one plain index: an integer literal, ``inf`` or a loop variable."""
    if text[0].isdigit():
        return Num
    return Inf_at if text == "inf" else Var


def Inf_at(_text: str, pos: Pos) -> Inf:
    return Inf(pos=pos)


@lru_cache(maxsize=4096)
def _split_loops(text: str) -> tuple[tuple[str, str, str, int, int, int], ...]:
    """(kind, extent digits, variable, start, end, start of the digits) of every loop in a LOOPS token.

    The extent stays text here: ``_extent`` converts it once it knows the number fits.
    Cached like references.
    """
    return tuple(
        (m.group(1), m.group(2), m.group(3), m.start(), m.end(), m.start(2)) for m in _LOOP_RE.finditer(text)
    )


def _extent(digits: str) -> int | None:
    """The loop extent the digits spell, or ``None`` when it exceeds ``MAX_LITERAL_EXTENT``.

    Compared by length first: Python refuses to convert a string of more than 4300 digits to an int.
    """
    significant = digits.lstrip("0")
    if len(significant) > len(str(MAX_LITERAL_EXTENT)):
        return None
    value = int(significant or "0")
    return value if value <= MAX_LITERAL_EXTENT else None


@lru_cache(maxsize=4096)
def _split_ref(text: str):
    """Name, dtype, scope and the plain indices (node class, text, start, end) of a TREF token.

    Cached: a program repeats the same few references many times over.
    """
    match = _TREF_RE.match(text)
    parts = ()
    if match.group(4) is not None:
        base = match.start(4)
        parts = tuple(
            (_index_node(part.group(0)), part.group(0), base + part.start(), base + part.end())
            for part in _INDEX_PART_RE.finditer(match.group(4))
        )
    return match.group(1), match.group(2), match.group(3), parts


class _Builder(Transformer):
    """Inline callbacks that build ``leir.ast`` nodes bottom-up while the LALR parser reduces."""

    def __init__(self, line_offset: int = 0) -> None:
        super().__init__()
        self.line_offset = line_offset

    # -- program structure --------------------------------------------------------------------------
    def start(self, children):
        blocks = tuple(children)
        return Body(blocks, pos=_span(blocks[0].pos, blocks[-1].pos))

    def _block(self, children) -> Block:
        loops: tuple[Loop, ...] = ()
        items = children
        if children and hasattr(children[0], "type"):
            loops = self._loops(children[0])
            items = children[1:]
        first = loops[0].pos if loops else items[0].pos
        return Block(loops, tuple(items), pos=_span(first, items[-1].pos))

    block = _block
    nested = _block

    def _sub_pos(self, tok: Token, start: int, end: int) -> Pos:
        """Position of ``tok[start:end]`` (a piece of a multi-part token)."""
        text = tok.value
        line = tok.line + self.line_offset
        newlines = text.count("\n", 0, start)
        if newlines:
            line += newlines
            column = start - text.rindex("\n", 0, start)
        else:
            column = tok.column + start
        return Pos(line, column, line, column + (end - start), tok.start_pos + start, tok.start_pos + end)

    def _loops(self, tok: Token) -> tuple[Loop, ...]:
        loops = []
        for kind, digits, var, start, end, digits_start in _split_loops(tok.value):
            extent = _extent(digits)
            if extent is None:
                spelled = digits if len(digits) <= 40 else digits[:40] + "…"
                raise _ParseFailure(
                    f"loop extent {spelled} does not fit i64, the type of loop variables, whose largest "
                    f"value is {MAX_LITERAL_EXTENT}",
                    self._sub_pos(tok, digits_start, digits_start + len(digits)), code="literal-out-of-range")
            if extent <= 0:
                raise _ParseFailure(f"loop extent must be a positive integer, got {extent}", tok)
            loops.append(Loop(kind, extent, var, pos=self._sub_pos(tok, start, end)))
        return tuple(loops)

    def stmt(self, children):
        target, value = children
        return Assign(target, value, pos=_span(target.pos, value.pos))

    # -- tensor references --------------------------------------------------------------------------
    def _ref(self, tok: Token) -> TensorRef:
        text = tok.value
        name, dtype, scope, parts = _split_ref(text)
        if dtype not in _KNOWN_DTYPES:
            raise _ParseFailure(f"unknown dtype '{dtype}' (known: {', '.join(DTYPES)})", tok)
        if scope not in _KNOWN_SCOPES:
            raise _ParseFailure(f"unknown memory scope '{scope}' (known: g, s, l)", tok)
        if not parts:
            return TensorRef(name, dtype, scope, (), pos=_tok_pos(tok, self.line_offset))
        if "\n" in text:
            indices = tuple(node(part, self._sub_pos(tok, start, end)) for node, part, start, end in parts)
        else:
            line = tok.line + self.line_offset
            column = tok.column
            offset = tok.start_pos
            indices = tuple(
                node(part, Pos(line, column + start, line, column + end, offset + start, offset + end))
                for node, part, start, end in parts
            )
        return TensorRef(name, dtype, scope, indices, pos=_tok_pos(tok, self.line_offset))

    def tref(self, children):
        return self._ref(children[0])

    def tref_indexed(self, children):
        ref = self._ref(children[0])
        if ref.indices:
            raise _ParseFailure("a tensor reference has two index lists", children[0])
        indices = tuple(children[1:])
        return TensorRef(ref.name, ref.dtype, ref.scope, indices, pos=_span(ref.pos, indices[-1].pos))

    # -- expressions ----------------------------------------------------------------------------------
    def expr(self, children):
        """Give a flat ``operand (op operand)*`` list its tree by precedence climbing."""
        if len(children) == 1:
            negs, atom = children[0]
            return self._unary(children, (), 0)[0] if negs else atom
        operands = children[0::2]
        ops = [tok.value for tok in children[1::2]]
        node, _ = self._climb(operands, ops, 0, 0)
        return node

    def _climb(self, operands, ops, index: int, min_prec: int):
        """Parse operands[index:] into a tree of operators binding at least ``min_prec`` tightly."""
        left = self._unary(operands, ops, index)
        index = left[1]
        left = left[0]
        while index < len(ops):
            op = ops[index]
            prec = PRECEDENCE[op]
            if prec < min_prec:
                break
            right, next_index = self._climb(operands, ops, index + 1, prec + 1)
            left = _binop(op, left, right)
            index = next_index
        return left, index

    def _unary(self, operands, ops, index: int):
        """An operand with its leading minus signs, absorbing any ``**`` chain (which binds tighter)."""
        negs, atom = operands[index]
        while index < len(ops) and ops[index] == "**":
            exponent, index = self._unary(operands, ops, index + 1)
            atom = _binop("**", atom, exponent)
        for _ in range(negs):
            atom = Neg(_unparen(atom, "neg", "right"), pos=atom.pos)
        return atom, index

    def operand(self, children):
        return (len(children) - 1, children[-1])

    def num(self, children):
        (tok,) = children
        return Num(tok.value, pos=_tok_pos(tok, self.line_offset))

    def inf(self, children):
        return Inf()

    def var(self, children):
        (tok,) = children
        return Var(tok.value, pos=_tok_pos(tok, self.line_offset))

    def call1(self, children):
        tok, arg = children
        return Call(tok.value, (arg,), pos=_span(_tok_pos(tok, self.line_offset), arg.pos))

    def call2(self, children):
        tok, first, second = children
        return Call(tok.value, (first, second), pos=_span(_tok_pos(tok, self.line_offset), second.pos))

    def ite(self, children):
        cond, then, otherwise = children
        return IfThenElse(cond, then, otherwise, pos=_span(cond.pos, otherwise.pos))

    def paren(self, children):
        (inner,) = children
        return Paren(inner, pos=inner.pos)

    # -- conditions -----------------------------------------------------------------------------------
    def cond(self, children):
        node = children[0]
        for i in range(1, len(children), 2):
            right = children[i + 1]
            node = Logical(children[i].value, node, right, pos=_span(node.pos, right.pos))
        return node

    def rel(self, children):
        if len(children) == 1:
            return children[0]
        operands = children[0::2]
        ops = tuple(tok.value for tok in children[1::2])
        return Compare(tuple(operands), ops, pos=_span(operands[0].pos, operands[-1].pos))


def _binop(op: str, left, right) -> BinOp:
    left = _unparen(left, op, "left")
    right = _unparen(right, op, "right")
    return BinOp(op, left, right, pos=_span(left.pos, right.pos))


class _ThreadParsers(threading.local):
    """One parser per thread: the builder carries the per-call line offset, so it must not be shared."""

    def __init__(self) -> None:
        self.builder = _Builder()
        self.lark = Lark(
            _GRAMMAR_PATH.read_text(),
            parser="lalr",
            lexer="contextual",
            start=["start", "expr"],
            transformer=self.builder,
            maybe_placeholders=False,
            propagate_positions=False,
        )


_PARSERS = _ThreadParsers()


def _expected_names(expected) -> list[str]:
    names = set()
    for term in expected:
        if term in _TERMINAL_NAMES:
            names.add(_TERMINAL_NAMES[term])
            continue
        pattern = _literal_for(term)
        names.add(f"'{pattern}'" if pattern else term)
    return sorted(names)


@cache
def _literal_for(term: str) -> str | None:
    for definition in _PARSERS.lark.terminals:
        if definition.name == term and definition.pattern.type == "str":
            return definition.pattern.value
    return None


def _accepted_before(text: str, position: int | None, start: str) -> set[str] | None:
    """Terminals the parser can really shift at ``position``, or ``None`` when that cannot be worked out.

    The lexer's list for a bad character is every terminal of the LALR state, including lookaheads
    merged in from other contexts (comparisons and ``&`` after a value in a statement); replaying the
    text before it in an interactive parser and asking what it accepts gives only the valid ones.
    """
    if position is None:
        return None
    try:
        interactive = _PARSERS.lark.parse_interactive(text[:position], start=start)
        interactive.exhaust_lexer()
        return {term for term in interactive.accepts() if term != "$END"} or None
    except Exception:
        return None


def _syntax_error(text: str, exc: Exception, line_offset: int, start: str = "start") -> LeirSyntaxError:
    code = "syntax"
    if isinstance(exc, UnexpectedCharacters):
        line, column = exc.line, exc.column
        found = text[exc.pos_in_stream : exc.pos_in_stream + 1] if exc.pos_in_stream is not None else "?"
        message = f"unexpected character {found!r}"
        accepted = _accepted_before(text, exc.pos_in_stream, start)
        allowed = accepted if accepted is not None else set(exc.allowed or ())
        expected = _expected_names(allowed)
        fault = token_error(text, exc.pos_in_stream, allowed) if exc.pos_in_stream is not None else None
        if fault is not None:  # the lexer saw only that no token starts here; name the real spot
            line, column = line_column(text, fault.offset)
            message = f"unexpected {fault.found} in {fault.what}"
            expected = [fault.expected]
    elif isinstance(exc, UnexpectedEOF):
        lines = text.splitlines() or [""]
        line, column = len(lines), len(lines[-1]) + 1
        message = "unexpected end of input"
        expected = _expected_names(exc.expected or ())
    elif isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, column = len(lines), len(lines[-1]) + 1
            message = "unexpected end of input"
        else:
            line, column = tok.line, tok.column
            message = f"unexpected {tok!s:.40}"
        position = len(text) if tok.type == "$END" else tok.start_pos
        accepted = _accepted_before(text, position, start)
        expected = _expected_names(accepted or exc.accepts or exc.expected or ())
    elif isinstance(exc, _ParseFailure):
        tok = exc.token
        line = getattr(tok, "line", 1) - (line_offset if isinstance(tok, Pos) else 0)
        column = getattr(tok, "column", 1)
        message = exc.message
        expected = []
        code = exc.code
    else:
        line, column, message, expected = 1, 1, f"cannot parse: {exc}", []
    snippet = caret_snippet(text, line, column)
    return LeirSyntaxError(
        message, line=line + line_offset, column=column, expected=expected, snippet=snippet, code=code
    )


def _run(start: str, text: str, line_offset: int):
    if not isinstance(text, str):
        raise TypeError(f"LEIR text must be str, not {type(text).__name__}")
    ensure_recursion_limit()
    tree = _parse(start, text, line_offset)
    _refuse_too_deep(tree, text, line_offset)
    return tree


def _refuse_too_deep(tree, text: str, line_offset: int) -> None:
    """Refuse expressions deeper than ``MAX_TERMS``: no later layer could walk them.

    Only statements long enough to reach the limit are measured (each level costs at least two
    characters), so ordinary programs pay nothing.
    """
    if isinstance(tree, Body):
        candidates = [stmt for _, stmt, _ in statements(tree)
                      if stmt.pos is None or stmt.pos.end - stmt.pos.start >= 2 * MAX_TERMS]
        exprs = [(stmt.value, stmt.pos) for stmt in candidates] + [
            (index, stmt.target.pos) for stmt in candidates for index in stmt.target.indices]
    else:
        exprs = [(tree, tree.pos)] if len(text) >= 2 * MAX_TERMS else []
    for expr, pos in exprs:
        if tree_depth(expr) > MAX_TERMS:
            line = pos.line - line_offset if pos is not None else 1
            column = pos.column if pos is not None else 1
            raise LeirSyntaxError(
                f"expression nested too deeply: more than {MAX_TERMS} levels (split the statement)",
                line=line + line_offset, column=column, snippet=caret_snippet(text, line, column),
                code="too-deep")


def _parse(start: str, text: str, line_offset: int):
    builder = _PARSERS.builder
    builder.line_offset = line_offset
    try:
        descent = Descent(tokenize(text), builder)
        tree = descent.body() if start == "start" else descent.expr()
        if descent.done():
            return tree
    except (DescentFailure, _ParseFailure, RecursionError):
        pass  # fall through: lark either parses it or explains precisely what is wrong
    try:
        return _PARSERS.lark.parse(text, start=start)
    except VisitError as exc:  # lark wraps errors raised in callbacks on some paths
        raise _syntax_error(text, exc.orig_exc, line_offset, start) from None
    except (LarkError, _ParseFailure) as exc:
        raise _syntax_error(text, exc, line_offset, start) from None
    except RecursionError:
        raise LeirSyntaxError(
            f"expression nested too deeply: more than {MAX_TERMS} levels (split the statement)",
            line=1 + line_offset, column=1, snippet=caret_snippet(text, 1, 1), code="too-deep"
        ) from None


def parse_body(text: str, *, line_offset: int = 0) -> Body:
    """Parse a LEIR body (canonical or pretty). ``line_offset`` shifts reported lines (file headers)."""
    return _run("start", text, line_offset)


def parse_expr(text: str) -> Expr:
    """Parse a single expression (used by strategies and tests)."""
    return _run("expr", text, 0)
