"""Entry point of the ``steptp`` console script.

Exit codes scripts can rely on (documented in the README):

* ``0`` — success: the program is valid, the verification passed, the file was written.
* ``1`` — the input was read but is wrong: syntax or check errors, a failed verification.
* ``2`` — usage errors: bad arguments, a missing or unreadable file.
* ``3`` — an internal error (a bug in steptp; the traceback is printed).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3

#: Subcommand modules, each exposing ``register(subparsers)``; imported lazily by name so a command
#: that needs no TVM or torch never pays for importing them.
COMMAND_MODULES: tuple[str, ...] = (
    "steptp_cli.leir_commands",
    "steptp_cli.lowering_commands",
    "steptp_cli.verifier_commands",
    "steptp_cli.frontend_commands",
    "steptp_cli.strategy_commands",
    "steptp_cli.dataset_commands",
    "steptp_cli.tune_commands",
    "steptp_cli.reward_commands",
)


class UsageError(Exception):
    """Raised by a command for bad arguments or unreadable files (exit code 2)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="steptp", description="Step-TP pipeline tools (no database).")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return int(args.handler(args) or 0)
    except UsageError as exc:
        print(f"steptp {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception:
        traceback.print_exc()
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
