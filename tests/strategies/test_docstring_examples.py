"""Every strategy's docstring example is a real step: its Before, run through the engine, gives its After.

The docstring is the contract a reader learns the strategy from (and ``docs/strategies.md`` prints it),
so its example must be one the code produces. The Before body gets the signature it implies
(``leir.inference.infer_signature``); some site and parameter choice of the strategy must give the After
text exactly, printed canonically.
"""

from __future__ import annotations

import itertools
import re

import pytest

from leir.ast import Program
from leir.inference import infer_signature
from leir.parser import parse_body
from leir.printer import canonical
from strategies import StrategyError, all_strategies, apply_strategy, candidates

#: Parameter combinations tried per site, at most (every site of every example stays well under it).
MAX_COMBINATIONS = 512

#: ``Before: ``body```` or ``After (what was chosen): ``body```` at the start of a docstring line.
_EXAMPLE = re.compile(r"^\s*(Before|After)\b(?: \([^\n]*?\))?:\s*``([^`]+)``", re.MULTILINE)


def docstring_example(doc: str) -> tuple[str, str]:
    """The first ``Before: ``...```` and the first ``After: ``...```` body of a docstring."""
    found: dict[str, str] = {}
    for label, text in _EXAMPLE.findall(doc):
        found.setdefault(label, text)
    assert set(found) == {"Before", "After"}, "the docstring needs a Before: ``...`` and an After: ``...``"
    return found["Before"], found["After"]


def afters(program: Program, name: str):
    """The canonical after-body of every site and parameter choice the engine accepts."""
    for index, site in enumerate(candidates(program, name)):
        choices = list(itertools.islice(itertools.product(*(spec.values for spec in site.params)),
                                        MAX_COMBINATIONS))
        for values in choices:
            params = {spec.name: value for spec, value in zip(site.params, values, strict=True)}
            try:
                step = apply_strategy(program, name, index, params)
            except StrategyError:
                continue
            yield canonical(step.after.body)


@pytest.mark.parametrize("name", [s.name for s in all_strategies()])
def test_docstring_example_reproduces_through_the_engine(name):
    strategy = next(s for s in all_strategies() if s.name == name)
    before_text, after_text = docstring_example(type(strategy).__doc__ or "")
    body = parse_body(before_text)
    program = Program(infer_signature(body), body)
    wanted = canonical(parse_body(after_text))
    produced = []
    for after in afters(program, name):
        if after == wanted:
            return
        produced.append(after)
    shown = "\n".join(produced[:4]) or "(no site applies)"
    pytest.fail(f"{name}: the docstring's After is not among the engine's results:\n{wanted}\ngot:\n{shown}")
