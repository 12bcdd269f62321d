"""Reading ``.leir`` files the same way in every command (check, fmt, run, lower, verify, tokens).

One reader so that an unreadable or non-UTF-8 file, an empty file and a bare body (no signature header)
are answered identically everywhere: unreadable files are usage errors (exit 2), LEIR problems are
invalid input (exit 1), and a bare body is accepted with a note saying what was inferred.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from steptp_cli.main import UsageError


def read_text(file: str) -> tuple[str, str]:
    """The text of FILE (``-``: standard input) and the name to print; ``UsageError`` if unreadable."""
    if file == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # an already-decoded stream (tests, embedding)
            return sys.stdin.read(), "<stdin>"
        data, name = stream.read(), "<stdin>"
    else:
        name = file
        try:
            data = Path(file).read_bytes()
        except FileNotFoundError:
            raise UsageError(f"no such file: {file}") from None
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read {name}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start})") from None


@dataclass(frozen=True)
class Loaded:
    """A program read from a file, and whether its signature was inferred from a bare body."""

    text: str
    name: str
    program: object
    inferred: bool


def load(file: str, *, note: bool = True) -> Loaded:
    """Read and parse FILE; ``LeirError`` for bad LEIR. With ``note``, say on stderr what a bare body's
    inferred signature is, so nobody mistakes a guess for a declaration."""
    from leir.program import is_bare, load_program

    text, name = read_text(file)
    program = load_program(text)
    inferred = is_bare(text)
    if inferred and note:
        note_inferred(name, program)
    return Loaded(text, name, program, inferred)


def note_inferred(name: str, program) -> None:
    from leir.program import signature_text

    lines = signature_text(program.signature).rstrip("\n").replace("\n", "; ")
    print(f"{name}: note: no signature header, inferred from the body: {lines}", file=sys.stderr)
