"""``strategy_sites``: a state's candidate sites are listed once per program object, and what a caller
does with the list it gets never changes what the next caller gets."""

from __future__ import annotations

from leir.program import load_program
from strategies import engine
from strategies.engine import apply_strategy, strategy_sites
from strategies.registry import get_strategy

TEXT = """input A: f32[8, 16]
output C: f32[8, 16]
---
B^{8}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*2;];"""


class CountingSplit:
    """loop_split, counting how often its sites are listed."""

    def __init__(self):
        self.inner = get_strategy("loop_split")
        self.name, self.calls = self.inner.name, 0

    def candidates(self, program):
        self.calls += 1
        return self.inner.candidates(program)


def test_sites_are_listed_once_per_program_object_and_handed_out_as_copies():
    program = load_program(TEXT)
    counting = CountingSplit()
    first = strategy_sites(counting, program)
    first.clear()  # a caller's own list
    again = strategy_sites(counting, program)
    assert again and again == counting.inner.candidates(program)
    assert counting.calls == 1
    equal_but_new = load_program(TEXT)  # the same text, another object: listed afresh, same sites
    assert strategy_sites(counting, equal_but_new) == again and counting.calls == 2


def test_applying_reuses_the_listed_sites_and_the_memo_stays_bounded():
    program = load_program(TEXT)
    split = get_strategy("loop_split")
    sites = strategy_sites(split, program)
    step = apply_strategy(program, split, 0, {"factor": sites[0].params[0].values[0]})
    assert step.site == sites[0]
    for _ in range(engine.SITES_KEPT + 5):
        strategy_sites(split, load_program(TEXT))
    assert len(engine._SITES) <= engine.SITES_KEPT
