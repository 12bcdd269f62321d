"""``steptp check``, ``steptp fmt`` and ``steptp run``: the LEIR language tools on ``.leir`` files.

* ``check FILE [--json]`` — parse and check; each problem printed compiler-style as
  ``FILE:line:col: error: message [code]`` followed by the source line and a caret under the fragment.
  Exit 1 when there is any error (syntax or check), 0 with warnings only.
* ``fmt FILE [--pretty|--canonical] [-i]`` — reprint the program (pretty by default). A file without a
  ``---`` signature separator is taken as a bare body. ``-i`` rewrites the file in place.
* ``run FILE [--inputs X.npz] --out Y.npz [--all] [--seed N]`` — execute with the NumPy reference
  interpreter; without ``--inputs`` the inputs are drawn from a seeded normal distribution.

``FILE`` may be ``-`` for standard input. Unreadable files and bad arguments exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError

_WINDOW = 100


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "check",
        help="check a .leir program (shapes, dtypes, scopes, bounds, dataflow)",
        description="Parse and check a .leir file; print every problem with its position.",
    )
    check.add_argument("file", metavar="FILE", help="a .leir file, or - for standard input")
    check.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    check.set_defaults(handler=run_check)

    fmt = subparsers.add_parser(
        "fmt",
        help="reprint a .leir program in pretty or canonical form",
        description="Reprint a .leir file (signature + body, or a bare body).",
    )
    fmt.add_argument("file", metavar="FILE", help="a .leir file, or - for standard input")
    style = fmt.add_mutually_exclusive_group()
    style.add_argument("--pretty", dest="style", action="store_const", const="pretty",
                       help="one block per line, nested blocks indented (default)")
    style.add_argument("--canonical", dest="style", action="store_const", const="canonical",
                       help="the compact canonical body on one line")
    fmt.add_argument("-i", "--in-place", action="store_true", help="rewrite FILE instead of printing")
    fmt.set_defaults(handler=run_fmt, style="pretty")

    run = subparsers.add_parser(
        "run",
        help="run a .leir program with the NumPy reference interpreter",
        description="Execute a checked .leir program on inputs from an .npz file (keys = tensor names).",
    )
    run.add_argument("file", metavar="FILE", help="a .leir file, or - for standard input")
    run.add_argument("--inputs", metavar="X.npz", help="input/param/const values (default: seeded random)")
    run.add_argument("--out", metavar="Y.npz", required=True, help="where to write the outputs")
    run.add_argument("--all", action="store_true", help="also write every intermediate tensor")
    run.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    run.set_defaults(handler=run_run)


# --------------------------------------------------------------------------------------------- input


def _read(file: str) -> tuple[str, str]:
    """The text of FILE (or stdin) and the name to print in messages."""
    from steptp_cli.files import read_text

    return read_text(file)


def _has_signature(text: str) -> bool:
    from leir.program import SEPARATOR

    return any(line.strip() == SEPARATOR for line in text.split("\n"))


def _load(text: str, name: str = "<stdin>"):
    from leir.program import is_bare, load_program
    from steptp_cli.files import note_inferred

    program = load_program(text)
    if is_bare(text):
        note_inferred(name, program)
    return program


# ------------------------------------------------------------------------------------------- printing


def render_diagnostic(name: str, text: str, severity: str, message: str, code: str,
                      line: int | None, column: int | None, fragment: str) -> str:
    """``FILE:line:col: severity: message [code]``, the source line and a caret under the fragment."""
    if line is None or column is None:
        head = f"{name}: {severity}: {message} [{code}]"
        return head + (f"\n  in `{fragment}`" if fragment else "")
    head = f"{name}:{line}:{column}: {severity}: {message} [{code}]"
    lines = text.split("\n")
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    start = 0
    if len(source) > _WINDOW:
        start = max(0, min(column - 1 - _WINDOW // 3, len(source) - _WINDOW))
    shown = source[start : start + _WINDOW]
    offset = column - 1 - start
    width = len(fragment) if fragment and source[column - 1 : column - 1 + len(fragment)] == fragment else 1
    width = max(1, min(width, len(shown) - offset))
    marker = " " * max(offset, 0) + "^" + "~" * (width - 1)
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + _WINDOW < len(source) else ""
    pad = " " * len(prefix)
    return f"{head}\n  {prefix}{shown}{suffix}\n  {pad}{marker}"


def _syntax_report(exc) -> dict:
    return {
        "severity": "error",
        "code": getattr(exc, "code", "syntax"),
        "message": exc.message,
        "line": exc.line,
        "column": exc.column,
        "fragment": "",
        "expected": list(exc.expected),
    }


def _format_report(exc) -> dict:
    return {
        "severity": "error",
        "code": "format",
        "message": exc.message,
        "line": exc.line,
        "column": 1 if exc.line is not None else None,
        "fragment": "",
    }


def _diag_dict(d) -> dict:
    return {
        "severity": d.severity.value,
        "code": d.code,
        "message": d.message,
        "line": d.line,
        "column": d.column,
        "fragment": d.fragment,
    }


def _print_reports(name: str, text: str, reports: list[dict]) -> None:
    for r in reports:
        message = r["message"]
        if r.get("expected"):
            message += "; expected one of: " + ", ".join(r["expected"])
        print(render_diagnostic(name, text, r["severity"], message, r["code"], r["line"],
                                r["column"], r["fragment"]))


def _summary(reports: list[dict]) -> str:
    errors = sum(r["severity"] == "error" for r in reports)
    warnings = len(reports) - errors
    return f"{errors} error(s), {warnings} warning(s)"


# ------------------------------------------------------------------------------------------- commands


def _parse_and_check(text: str, name: str = "<stdin>"):
    """(program, info, reports): program/info are None when the text does not parse."""
    from leir.checker import check
    from leir.errors import LeirFormatError, LeirSyntaxError

    try:
        program = _load(text, name)
    except LeirSyntaxError as exc:
        return None, None, [_syntax_report(exc)]
    except LeirFormatError as exc:
        return None, None, [_format_report(exc)]
    info = check(program)
    return program, info, [_diag_dict(d) for d in info.diagnostics]


def run_check(args: argparse.Namespace) -> int:
    text, name = _read(args.file)
    _, info, reports = _parse_and_check(text, name)
    ok = not any(r["severity"] == "error" for r in reports)
    if args.json:
        payload: dict = {"file": name, "ok": ok, "diagnostics": reports}
        if info is not None:
            payload["tensors"] = [
                {"name": t.name, "role": t.role, "dtype": t.dtype, "scope": t.scope, "shape": list(t.shape)}
                for t in info.tensors.values()
            ]
            payload["statements"] = [
                {"path": list(s.path), "kind": s.kind.value, "reduce_vars": list(s.reduce_vars),
                 "combiner": s.combiner}
                for s in info.statements.values()
            ]
        print(json.dumps(payload, indent=2))
    else:
        _print_reports(name, text, reports)
        print(f"{name}: {'ok' if ok else 'invalid'} ({_summary(reports)})", file=sys.stderr)
    return EXIT_OK if ok else EXIT_INVALID


def run_fmt(args: argparse.Namespace) -> int:
    from leir.errors import LeirFormatError, LeirSyntaxError
    from leir.parser import parse_body
    from leir.printer import canonical, pretty
    from leir.program import dump_program

    if args.in_place and args.file == "-":
        raise UsageError("-i needs a file, not standard input")
    text, name = _read(args.file)
    try:
        if _has_signature(text):
            program = _load(text, name)
            comments = []
            for line in text.split("\n"):
                stripped = line.strip()
                if stripped.startswith("#"):
                    comments.append(stripped[1:].strip())
                elif stripped:
                    break
            out = dump_program(program, pretty_body=args.style == "pretty",
                               comment="\n".join(comments) if comments else None)
        else:
            if not any(line.strip() and not line.strip().startswith("#") for line in text.split("\n")):
                _load(text, name)  # the empty file: the same format error as every other command
            body = parse_body(text)
            out = pretty(body) if args.style == "pretty" else canonical(body) + "\n"
    except LeirSyntaxError as exc:
        _print_reports(name, text, [_syntax_report(exc)])
        return EXIT_INVALID
    except LeirFormatError as exc:
        _print_reports(name, text, [_format_report(exc)])
        return EXIT_INVALID
    if not out.endswith("\n"):
        out += "\n"
    if args.in_place:
        try:
            Path(args.file).write_text(out, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {args.file}: {exc}") from None
    else:
        sys.stdout.write(out)
    return EXIT_OK


def _random_inputs(program, seed: int) -> dict:
    import numpy as np

    rng = np.random.default_rng(seed)
    values = {}
    for decl in program.signature.tensors:
        if decl.role == "output":
            continue
        shape = tuple(decl.shape)
        if decl.dtype == "bool":
            values[decl.name] = rng.random(shape) > 0.5
        elif decl.dtype.startswith(("i", "u")):
            # small non-negative integers: valid gather indices for the usual small dimensions
            values[decl.name] = rng.integers(0, 2, size=shape)
        else:
            values[decl.name] = rng.standard_normal(shape)
    return values


def run_run(args: argparse.Namespace) -> int:
    import numpy as np

    from leir.interpreter import InterpreterError, check_budget, run

    text, name = _read(args.file)
    program, info, reports = _parse_and_check(text, name)
    if program is None or not info.ok:
        _print_reports(name, text, [r for r in reports if r["severity"] == "error"])
        return EXIT_INVALID
    try:
        check_budget(program, info)  # before the inputs are made: they can be the largest allocation
    except InterpreterError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    if args.inputs:
        try:
            with np.load(args.inputs, allow_pickle=False) as archive:
                inputs = {key: archive[key] for key in archive.files}
        except FileNotFoundError:
            raise UsageError(f"no such file: {args.inputs}") from None
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read {args.inputs} as .npz: {exc}") from None
    else:
        inputs = _random_inputs(program, args.seed)
    try:
        outputs = run(program, inputs, info=info, return_all=args.all)
    except InterpreterError as exc:
        print(f"{name}: error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        with open(args.out, "wb") as handle:
            np.savez(handle, **outputs)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc}") from None
    for key, value in outputs.items():
        print(f"{key}: {value.dtype}{list(value.shape)}")
    return EXIT_OK
