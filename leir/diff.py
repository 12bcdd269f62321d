"""A structural diff of two LEIR programs, for reviewers: per block, per statement, per token.

A step rewrites one site of a program, so a reviewer wants to see which top-level blocks changed, which
lines (block headers and statements, in the pretty form) inside them changed, and which tokens inside a
changed line differ — plus where the strategy's site is. Text diff tools see one long canonical line;
this diff aligns blocks first (by their canonical text), then lines within a pair of blocks, then tokens
within a pair of lines, all with ``difflib`` (deterministic: the same two programs give the same diff).

No Django here: the review page renders the dataclasses this module returns.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from leir.ast import Assign, Block, Body, Program
from leir.printer import canonical, expr_text, loop_text

Kind = Literal["same", "changed", "removed", "added"]

#: LEIR tokens: names, numbers (with exponents), the ``^{`` / ``_{`` openers, two-character operators,
#: runs of spaces, then any single character.
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[\^_]\{|==|!=|<=|>=|&&|\|\||"
                    r" +|.")


@dataclass(frozen=True)
class Token:
    text: str
    changed: bool = False
    #: True for the text the site's detail names (its loop, its tensor) on a line at the site.
    site: bool = False


@dataclass(frozen=True)
class Line:
    """One pretty-form line: a block header, a statement or a block's closing ``];``."""

    #: ``leir.ast.iter_items`` address of the block or statement the line belongs to.
    path: tuple[int, ...]
    #: 1-based line number in the program's pretty text.
    number: int
    tokens: tuple[Token, ...]
    #: True when the line is (inside) the strategy's site.
    at_site: bool = False

    @property
    def text(self) -> str:
        return "".join(t.text for t in self.tokens)


@dataclass(frozen=True)
class Row:
    kind: Kind
    before: Line | None
    after: Line | None


@dataclass(frozen=True)
class BlockDiff:
    """One top-level block of either program, aligned with its counterpart (if any)."""

    kind: Kind
    before_index: int | None
    after_index: int | None
    rows: tuple[Row, ...]

    @property
    def at_site(self) -> bool:
        return any(r.before is not None and r.before.at_site or r.after is not None and r.after.at_site
                   for r in self.rows)


@dataclass(frozen=True)
class ProgramDiff:
    blocks: tuple[BlockDiff, ...]

    @property
    def changed(self) -> bool:
        return any(block.kind != "same" for block in self.blocks)

    def counts(self) -> dict[str, int]:
        """How many lines were kept, changed, removed and added (for a one-line summary)."""
        totals = {"same": 0, "changed": 0, "removed": 0, "added": 0}
        for block in self.blocks:
            for row in block.rows:
                totals[row.kind] += 1
        return totals


def tokenize(text: str) -> list[str]:
    """Split one line of LEIR into tokens; joining them gives the line back."""
    return _TOKEN.findall(text)


def _block_lines(block: Block, path: tuple[int, ...], depth: int) -> Iterator[tuple[tuple[int, ...], str]]:
    """The lines ``leir.printer.pretty`` writes for a block, each with the path it belongs to."""
    indent = "  " * depth
    yield path, indent + "".join(loop_text(loop) for loop in block.loops) + "["
    for index, item in enumerate(block.items):
        if isinstance(item, Assign):
            yield path + (index,), f"{indent}  {expr_text(item.target)} = {expr_text(item.value)};"
        else:
            yield from _block_lines(item, path + (index,), depth + 1)
    yield path, indent + "];"


def pretty_lines(program: Program | Body) -> list[list[tuple[tuple[int, ...], str]]]:
    """Per top-level block, its pretty lines with their paths (joined, exactly ``pretty(program)``)."""
    body = program.body if isinstance(program, Program) else program
    return [list(_block_lines(block, (index,), 0)) for index, block in enumerate(body.blocks)]


def site_patterns(detail: Mapping[str, Any] | None) -> list[re.Pattern[str]]:
    """Patterns for what a site's ``detail`` names: its loop (``L^{16}_{a=0}``) or tensor (``A^{f32,g}``)."""
    patterns = []
    if detail:
        loop = detail.get("loop")
        if isinstance(loop, str) and loop:
            patterns.append(re.compile(r"[A-Za-z]\^\{\d+\}_\{" + re.escape(loop) + r"=0\}"))
        tensor = detail.get("tensor")
        if isinstance(tensor, str) and tensor:
            patterns.append(re.compile(r"(?<![A-Za-z0-9_])" + re.escape(tensor) + r"\^\{[^}]*\}"))
    return patterns


def _mark_site(tokens: tuple[Token, ...], patterns: Sequence[re.Pattern[str]]) -> tuple[Token, ...]:
    """Split the tokens where the patterns match the line and flag the matching pieces as ``site``."""
    text = "".join(t.text for t in tokens)
    inside = [False] * len(text)
    for pattern in patterns:
        for match in pattern.finditer(text):
            inside[match.start():match.end()] = [True] * (match.end() - match.start())
    if not any(inside):
        return tokens
    out: list[Token] = []
    offset = 0
    for token in tokens:
        start = offset
        for index in range(offset + 1, offset + len(token.text) + 1):
            if index == offset + len(token.text) or inside[index] != inside[start]:
                out.append(Token(text[start:index], token.changed, inside[start]))
                start = index
        offset += len(token.text)
    return tuple(out)


def _under(path: tuple[int, ...], site: tuple[int, ...] | None) -> bool:
    return site is not None and len(site) > 0 and path[:len(site)] == site


class _Numbering:
    """Hands out line numbers of one program's pretty text in order."""

    def __init__(self, blocks: Sequence[Sequence[tuple[tuple[int, ...], str]]]) -> None:
        self.start: list[int] = []
        line = 1
        for block in blocks:
            self.start.append(line)
            line += len(block)


def _line(entry: tuple[tuple[int, ...], str], number: int, site: tuple[int, ...] | None,
          tokens: tuple[Token, ...] | None = None,
          patterns: Sequence[re.Pattern[str]] = ()) -> Line:
    path, text = entry
    at_site = _under(path, site)
    tokens = tokens or (Token(text),)
    if at_site and patterns:
        tokens = _mark_site(tokens, patterns)
    return Line(path=path, number=number, tokens=tokens, at_site=at_site)


def _token_pair(old: str, new: str) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
    """Both lines as tokens, the ones that differ marked ``changed`` (adjacent runs merged)."""
    a, b = tokenize(old), tokenize(new)
    left: list[Token] = []
    right: list[Token] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        changed = tag != "equal"
        if i2 > i1:
            left.append(Token("".join(a[i1:i2]), changed))
        if j2 > j1:
            right.append(Token("".join(b[j1:j2]), changed))
    return tuple(left), tuple(right)


def _rows(before: Sequence[tuple[tuple[int, ...], str]], after: Sequence[tuple[tuple[int, ...], str]],
          first_before: int, first_after: int, site_before: tuple[int, ...] | None,
          site_after: tuple[int, ...] | None, patterns: Sequence[re.Pattern[str]]) -> list[Row]:
    old = [text for _, text in before]
    new = [text for _, text in after]
    rows: list[Row] = []

    def left(k: int, tokens: tuple[Token, ...] | None = None) -> Line:
        return _line(before[k], first_before + k, site_before, tokens, patterns)

    def right(k: int, tokens: tuple[Token, ...] | None = None) -> Line:
        return _line(after[k], first_after + k, site_after, tokens, patterns)

    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                rows.append(Row("same", left(i1 + k), right(j1 + k)))
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            old_tokens, new_tokens = _token_pair(old[i1 + k], new[j1 + k])
            rows.append(Row("changed", left(i1 + k, old_tokens), right(j1 + k, new_tokens)))
        for k in range(i1 + pairs, i2):
            rows.append(Row("removed", left(k, (Token(old[k], True),)), None))
        for k in range(j1 + pairs, j2):
            rows.append(Row("added", None, right(k, (Token(new[k], True),))))
    return rows


def diff_programs(before: Program | Body, after: Program | Body, *, site: Sequence[int] | None = None,
                  site_detail: Mapping[str, Any] | None = None) -> ProgramDiff:
    """Align ``after`` with ``before`` block by block, line by line, token by token.

    ``site`` is the strategy's ``Site.path`` (an address in ``before``); lines at or under it are marked
    in the before-program, and the same address is marked in the after-program when its block changed.
    ``site_detail`` (``Site.detail``) narrows the mark on those lines to the loop or tensor it names.
    """
    site_path = tuple(site) if site else None
    patterns = site_patterns(site_detail)
    old_blocks, new_blocks = pretty_lines(before), pretty_lines(after)
    old_body = before.body if isinstance(before, Program) else before
    new_body = after.body if isinstance(after, Program) else after
    old_keys = [canonical(block) for block in old_body.blocks]
    new_keys = [canonical(block) for block in new_body.blocks]
    old_start, new_start = _Numbering(old_blocks).start, _Numbering(new_blocks).start
    blocks: list[BlockDiff] = []

    def pair(kind: Kind, i: int | None, j: int | None) -> None:
        old = old_blocks[i] if i is not None else []
        new = new_blocks[j] if j is not None else []
        first_old = old_start[i] if i is not None else 0
        first_new = new_start[j] if j is not None else 0
        site_after = site_path if kind == "changed" else None
        rows = _rows(old, new, first_old, first_new, site_path, site_after, patterns)
        blocks.append(BlockDiff(kind, i, j, tuple(rows)))

    matcher = SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                pair("same", i1 + k, j1 + k)
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for k in range(pairs):
            pair("changed", i1 + k, j1 + k)
        for k in range(i1 + pairs, i2):
            pair("removed", k, None)
        for k in range(j1 + pairs, j2):
            pair("added", None, k)
    return ProgramDiff(tuple(blocks))
