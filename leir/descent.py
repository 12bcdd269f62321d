"""A hand-written recursive-descent driver for the LEIR grammar: the fast path of ``leir.parser``.

lark's LALR parser in pure Python tops out near 0.5 MB/s on LEIR, and the dataset tooling parses every
state of every step many times. This driver tokenizes with one regular expression and walks the same
grammar (``grammar.lark``) by hand, calling the *same* builder callbacks as the lark parser, so both
produce identical trees by construction (and a property test checks it). It only has to recognise
valid input: on anything unexpected it gives up with ``DescentFailure`` and ``leir.parser`` re-parses
with lark, which then reports the error with line, column and the expected tokens.
"""

from __future__ import annotations

import bisect
import re

_TOKEN_RE = re.compile(
    r"""
    (?P<WS>\s+)
  | (?P<LOOPS>([LPVUB]\s*\^\s*\{\s*[0-9]+\s*\}\s*_\s*\{\s*[a-z][a-z0-9_]*\s*=\s*0\s*\}\s*)+)
  | (?P<TREF>[A-Z][a-z]*\s*\^\s*\{\s*[a-z0-9]+\s*,\s*[a-z]+\s*\}
        (\s*_\{\s*([a-z][a-z0-9_]*|[0-9]+)\s*(,\s*([a-z][a-z0-9_]*|[0-9]+)\s*)*\})?)
  | (?P<FUNC1>(exp|log|sqrt|abs|erf|sin|cos)(?=\s*\())
  | (?P<FUNC2>(max|min)(?=\s*\())
  | (?P<ITE>if_then_else(?![a-z0-9_]))
  | (?P<INF>inf(?![a-z0-9_]))
  | (?P<LVAR>[a-z][a-z0-9_]*)
  | (?P<NUMBER>[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?)
  | (?P<CMP><=|>=|==|!=|<|>)
  | (?P<POW>\*\*)
  | (?P<FLOORDIV>//)
  | (?P<SUB>_\{)
  | (?P<P>[-+*/%&|()\[\];=,}])
    """,
    re.VERBOSE,
)

_BINOPS = frozenset({"+", "-", "*", "/", "//", "%", "**"})


class DescentFailure(Exception):
    """The fast path met something it does not accept; the lark parser takes over."""


class _Tok:
    """The slice of lark's Token interface the builder callbacks use."""

    __slots__ = ("type", "value", "start_pos", "end_pos", "line", "column", "end_line", "end_column")

    def __init__(self, kind: str, value: str, start: int, end: int, line_starts: list[int] | None) -> None:
        self.type = kind
        self.value = value
        self.start_pos = start
        self.end_pos = end
        if line_starts is None:
            self.line = self.end_line = 1
            self.column = start + 1
            self.end_column = end + 1
        else:
            self.line = bisect.bisect_right(line_starts, start)
            self.column = start - line_starts[self.line - 1] + 1
            self.end_line = bisect.bisect_right(line_starts, max(start, end - 1))
            self.end_column = end - line_starts[self.end_line - 1] + 1


def tokenize(text: str) -> list[_Tok]:
    line_starts = None
    if "\n" in text:
        line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    tokens = []
    pos = 0
    end = len(text)
    match = _TOKEN_RE.match
    while pos < end:
        m = match(text, pos)
        if m is None:
            raise DescentFailure(pos)
        kind = m.lastgroup
        if kind == "WS":
            pos = m.end()
            continue
        if kind == "P" or kind == "POW" or kind == "FLOORDIV" or kind == "SUB":
            kind = m.group()
        tokens.append(_Tok(kind, m.group(), pos, m.end(), line_starts))
        pos = m.end()
    return tokens


class Descent:
    """Walks ``grammar.lark`` by hand over a token list, building nodes through ``builder``."""

    def __init__(self, tokens: list[_Tok], builder) -> None:
        self.tokens = tokens
        self.i = 0
        self.b = builder

    # -- helpers -----------------------------------------------------------------------------------------
    def _peek(self) -> str:
        return self.tokens[self.i].type if self.i < len(self.tokens) else "$END"

    def _take(self, kind: str) -> _Tok:
        if self.i < len(self.tokens) and self.tokens[self.i].type == kind:
            tok = self.tokens[self.i]
            self.i += 1
            return tok
        raise DescentFailure(self.i)

    def done(self) -> bool:
        return self.i == len(self.tokens)

    # -- structure ------------------------------------------------------------------------------------------
    def body(self):
        blocks = []
        while not self.done():
            blocks.append(self._block(nested=False))
        if not blocks:
            raise DescentFailure(0)
        return self.b.start(blocks)

    def _block(self, nested: bool):
        children = []
        if self._peek() == "LOOPS":
            children.append(self._take("LOOPS"))
        self._take("[")
        while True:
            kind = self._peek()
            if kind == "TREF":
                children.append(self._stmt())
            elif kind == "LOOPS" or kind == "[":
                children.append(self._block(nested=True))
            else:
                break
            self._take(";")
        if len(children) == 0 or (len(children) == 1 and hasattr(children[0], "type")):
            raise DescentFailure(self.i)
        self._take("]")
        if not nested:
            self._take(";")
            return self.b.block(children)
        return self.b.nested(children)

    def _stmt(self):
        target = self._tref()
        self._take("=")
        return self.b.stmt([target, self.expr()])

    def _tref(self):
        head = self._take("TREF")
        if self._peek() != "_{":
            return self.b.tref([head])
        self.i += 1
        children = [head, self.expr()]
        while self._peek() == ",":
            self.i += 1
            children.append(self.expr())
        self._take("}")
        return self.b.tref_indexed(children)

    # -- expressions --------------------------------------------------------------------------------------
    def expr(self):
        children = [self._operand()]
        tokens = self.tokens
        while self.i < len(tokens) and tokens[self.i].type in _BINOPS:
            children.append(tokens[self.i])
            self.i += 1
            children.append(self._operand())
        return self.b.expr(children)

    def _operand(self):
        children = []
        while self._peek() == "-":
            children.append(self.tokens[self.i])
            self.i += 1
        children.append(self._atom())
        return self.b.operand(children)

    def _atom(self):
        kind = self._peek()
        if kind == "TREF":
            return self._tref()
        if kind == "LVAR":
            return self.b.var([self._take("LVAR")])
        if kind == "NUMBER":
            return self.b.num([self._take("NUMBER")])
        if kind == "INF":
            self.i += 1
            return self.b.inf([])
        if kind == "FUNC1":
            func = self._take("FUNC1")
            self._take("(")
            arg = self.expr()
            self._take(")")
            return self.b.call1([func, arg])
        if kind == "FUNC2":
            func = self._take("FUNC2")
            self._take("(")
            first = self.expr()
            self._take(",")
            second = self.expr()
            self._take(")")
            return self.b.call2([func, first, second])
        if kind == "ITE":
            self.i += 1
            self._take("(")
            cond = self._cond()
            self._take(",")
            then = self.expr()
            self._take(",")
            otherwise = self.expr()
            self._take(")")
            return self.b.ite([cond, then, otherwise])
        if kind == "(":
            self.i += 1
            inner = self.expr()
            self._take(")")
            return self.b.paren([inner])
        raise DescentFailure(self.i)

    def _cond(self):
        children = [self._rel()]
        while self._peek() in ("&", "|"):
            children.append(self.tokens[self.i])
            self.i += 1
            children.append(self._rel())
        return self.b.cond(children)

    def _rel(self):
        children = [self.expr()]
        while self._peek() == "CMP":
            children.append(self.tokens[self.i])
            self.i += 1
            children.append(self.expr())
        return self.b.rel(children)
