"""--max-steps-per-state draws every strategy with sites in proportion, not round-robin from #1."""

from __future__ import annotations

from collections import Counter

from dataset.planning import plan_steps
from leir.program import program_hash
from strategies import all_strategies

from .helpers import sources


def _states():
    return [(s.program, program_hash(s.program)) for s in sources()]


def _counts(program, state_hash, seed, cap):
    plan = plan_steps(program, state_hash, all_strategies(), seed=seed, max_steps=cap)
    return Counter(step.strategy.name for step in plan.steps)


def test_a_cap_at_least_the_strategy_count_draws_every_strategy_with_sites_in_proportion():
    for program, state_hash in _states():
        full = _counts(program, state_hash, 0, None)
        cap = len(full) + 10
        if sum(full.values()) <= cap:
            continue
        drawn = _counts(program, state_hash, 0, cap)
        assert sum(drawn.values()) == cap
        assert set(drawn) == set(full), f"strategies with sites never drawn: {set(full) - set(drawn)}"
        most = max(full, key=lambda n: (full[n], n))
        fewest = min(full, key=lambda n: (full[n], n))
        if full[most] > 4 * full[fewest]:  # a strategy with many sites gets a larger share than one with few
            assert drawn[most] > drawn[fewest], (most, full[most], drawn[most], fewest, drawn[fewest])


def test_a_cap_below_the_strategy_count_is_a_fair_seeded_draw_across_states():
    """With a cap of 8, strategies beyond the eight lowest catalogue numbers are drawn too, and each
    strategy with sites is drawn in some state over a few seeds (the old round-robin started at #1)."""
    cap = 8
    seen: Counter[str] = Counter()
    offered: set[str] = set()
    for seed in range(6):
        for program, state_hash in _states():
            full = _counts(program, state_hash, seed, None)
            offered.update(full)
            drawn = _counts(program, state_hash, seed, cap)
            assert sum(drawn.values()) == min(cap, sum(full.values()))
            assert all(n == 1 for n in drawn.values()) or len(full) <= cap
            seen.update(drawn)
    numbers = {s.name: s.number for s in all_strategies()}
    assert max(numbers[n] for n in seen) > 18, "no memory or math strategy was ever drawn"
    missed = offered - set(seen)
    assert len(missed) <= len(offered) // 4, f"never drawn over 6 seeds x {len(_states())} states: {missed}"


def test_the_draw_is_deterministic_and_depends_on_the_seed():
    program, state_hash = _states()[0]
    first = plan_steps(program, state_hash, all_strategies(), seed=1, max_steps=8).steps
    again = plan_steps(program, state_hash, all_strategies(), seed=1, max_steps=8).steps
    other = plan_steps(program, state_hash, all_strategies(), seed=2, max_steps=8).steps
    key = [(s.strategy.name, s.site.key) for s in first]
    assert key == [(s.strategy.name, s.site.key) for s in again]
    assert key != [(s.strategy.name, s.site.key) for s in other]
