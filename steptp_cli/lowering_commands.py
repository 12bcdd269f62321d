"""``steptp lower`` and ``steptp tokens``: see what TVM makes of a LEIR program, and what it costs.

* ``lower FILE --to tir|cuda [--target T]`` — print the TIR (TVM's printed TVMScript) of the lowering for
  target T (default ``llvm`` for ``--to tir``, ``cuda`` for ``--to cuda``), or the CUDA C source TVM
  generates. T is a name (``llvm``, ``cuda``, ``cuda:sm_80``) or a JSON target dict.
* ``tokens FILE... [--json]`` — Qwen2.5 token counts of each program as canonical LEIR, as TIR and as CUDA,
  with the LEIR/TIR and LEIR/CUDA ratios and their geometric means.

Exit codes: 0 ok; 1 the program is invalid or cannot be lowered/built for the target; 2 usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError


def register(subparsers) -> None:
    lower = subparsers.add_parser(
        "lower", help="lower a .leir program to TVM TIR or CUDA source",
        description="Print the TIR (TVMScript) or the generated CUDA source of a .leir program.")
    lower.add_argument("file", metavar="FILE", help="a .leir file (signature + body), or - for stdin")
    lower.add_argument("--to", choices=("tir", "cuda"), default="tir", help="what to print (default tir)")
    lower.add_argument("--target", metavar="T", default=None,
                       help="llvm, cuda, cuda:sm_XX or a JSON target dict "
                            "(default: llvm for tir, cuda for cuda)")
    lower.set_defaults(handler=run_lower)

    tokens = subparsers.add_parser(
        "tokens", help="count Qwen tokens of LEIR vs TIR vs CUDA",
        description="Token counts of .leir programs as canonical LEIR, TVM TIR (cuda lowering) and CUDA.")
    tokens.add_argument("files", nargs="+", metavar="FILE", help=".leir files")
    tokens.add_argument("--json", action="store_true", help="print a JSON report")
    tokens.set_defaults(handler=run_tokens)


def _target(value: str | None, default: str) -> str | dict[str, Any]:
    from verifier.targets import resolve

    raw: str | dict[str, Any] = value or default
    if isinstance(raw, str) and raw.lstrip().startswith("{"):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--target is not valid JSON: {exc}") from None
    try:
        return resolve(raw)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _load(file: str):
    """(program, name) or raise UsageError for unreadable files; LEIR errors propagate."""
    from steptp_cli.files import load

    loaded = load(file)
    return loaded.program, loaded.name


def run_lower(args: argparse.Namespace) -> int:
    from leir.errors import LeirError
    from verifier.build import cuda_source
    from verifier.lowering import LoweringError, lower

    target = _target(args.target, "cuda" if args.to == "cuda" else "llvm")
    if args.to == "cuda" and target["kind"] != "cuda":
        raise UsageError("--to cuda needs a cuda target")
    try:
        program, name = _load(args.file)
        if args.to == "tir":
            print(lower(program, target).script, end="")
        else:
            print(cuda_source(program, target=target), end="")
    except (LeirError, LoweringError) as exc:
        print(f"steptp lower: {exc}", file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK


def run_tokens(args: argparse.Namespace) -> int:
    from leir.errors import LeirError
    from verifier.lowering import LoweringError
    from verifier.tokens import program_tokens, summary

    rows = []
    failed = False
    for file in args.files:
        try:
            program, name = _load(file)
            rows.append((name, program_tokens(program)))
        except (LeirError, LoweringError) as exc:
            print(f"steptp tokens: {file}: {exc}", file=sys.stderr)
            failed = True
    stats = summary(c for _, c in rows)
    if args.json:
        print(json.dumps({"programs": [{"file": n, **c.to_json()} for n, c in rows], "summary": stats},
                         indent=2))
    else:
        print(f"{'file':40s} {'leir':>6s} {'tir':>7s} {'cuda':>7s} {'leir/tir':>9s} {'leir/cuda':>10s}")
        for name, c in rows:
            cuda = "-" if c.cuda is None else str(c.cuda)
            per_cuda = "-" if c.leir_per_cuda is None else f"{c.leir_per_cuda:.3f}"
            print(f"{name[-40:]:40s} {c.leir:6d} {c.tir:7d} {cuda:>7s} {c.leir_per_tir:9.3f} {per_cuda:>10s}"
                  + (f"  ({c.note})" if c.note else ""))
        if rows:
            print(f"geomean over {stats['programs']}: leir/tir {stats['geomean_leir_per_tir']:.3f}, "
                  f"leir/cuda {stats['geomean_leir_per_cuda']:.3f} ({stats['with_cuda']} with cuda)")
    return EXIT_INVALID if failed else EXIT_OK
