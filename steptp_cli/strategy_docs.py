"""Regenerate ``docs/strategies.md``: translate the built-in suite, load the corpus, render the registry.

``steptp strategies --markdown`` prints it; ``python -m steptp_cli.strategy_docs [--write]`` prints or
rewrites ``docs/strategies.md`` in place (one command for the integrator after merging strategies).
The rendering itself (``strategies.docs``) needs no torch; translating the suite does, so it is here.
"""

from __future__ import annotations

import argparse
import sys
from functools import cache
from pathlib import Path

DOCS_FILE = Path(__file__).resolve().parents[1] / "docs" / "strategies.md"


@cache
def suite_programs(dtype: str = "f32") -> tuple:
    """``(workload id, program)`` for every built-in workload at its default shapes."""
    from frontend import translate_file
    from workloads.registry import list_workloads

    return tuple((w.id, translate_file(w.path, dtype=dtype).program) for w in list_workloads())


def corpus_programs() -> tuple:
    from leir.corpus import load_corpus

    return tuple((entry.id, entry.program) for entry in load_corpus())


def markdown() -> str:
    from strategies.docs import strategies_markdown

    return strategies_markdown(suite_programs(), corpus_programs())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m steptp_cli.strategy_docs", description=__doc__)
    parser.add_argument("--write", action="store_true", help=f"rewrite {DOCS_FILE}")
    args = parser.parse_args(argv)
    text = markdown()
    if args.write:
        DOCS_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {DOCS_FILE}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
