"""LEIR front-end throughput over the public corpus: parse, canonical print and check, in MB/s.

Usage: ``python bench/leir_parse.py [--repeat N]``. Prints MB/s of LEIR text for each stage on one
core (process CPU time, best of N passes), and the same figures as ratios against a baseline measured
in the same run: lark's stock LALR parser building a generic parse tree over the same grammar. The
issue's target is parse + print + check >= 0.5 MB/s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lark import Lark

from leir.checker import check
from leir.corpus import load_corpus
from leir.parser import _GRAMMAR_PATH, parse_body
from leir.printer import canonical


def best_rate(label: str, func, texts: list[str], repeat: int) -> float:
    size = sum(len(t) for t in texts) / 1e6
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for text in texts:
            func(text)
        best = min(best, time.process_time() - start)
    rate = size / best
    print(f"  {label:<34} {rate:7.3f} MB/s   ({best * 1000:7.1f} ms per corpus pass)")
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    entries = load_corpus()
    texts = [e.leir for e in entries]
    programs = {e.leir: e.program for e in entries}
    print(f"corpus: {len(texts)} programs, {sum(map(len, texts)) / 1e3:.0f} KB of canonical LEIR")

    tree_parser = Lark(_GRAMMAR_PATH.read_text(), parser="lalr", start="start")
    baseline = best_rate("baseline: lark LALR parse tree", tree_parser.parse, texts, args.repeat)
    parse = best_rate("parse (AST)", parse_body, texts, args.repeat)
    round_trip = best_rate("parse + canonical print", lambda t: canonical(parse_body(t)), texts, args.repeat)

    def full(text: str) -> None:
        body = parse_body(text)
        canonical(body)
        check(programs[text].__class__(programs[text].signature, body))

    total = best_rate("parse + print + check", full, texts, args.repeat)
    print("ratios vs baseline (same run):")
    for label, rate in [("parse", parse), ("parse + print", round_trip), ("parse + print + check", total)]:
        print(f"  {label:<34} {rate / baseline:6.2f}x")
    verdict = "meets" if total >= 0.5 else "MISSES"
    print(f"target parse + print + check >= 0.5 MB/s: {verdict} ({total:.3f} MB/s)")


if __name__ == "__main__":
    main()
