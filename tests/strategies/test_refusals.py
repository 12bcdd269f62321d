"""Strategies as primitives: one legality function (``check``) and refusals with stable, declared codes.

``candidates`` and ``apply`` both go through ``check``, so every listed site passes it; every code a
strategy raises is declared (with its meaning, which ``docs/strategies.md`` prints) and every declared
code is raised somewhere; a refusal carries the strategy, the code, the site and a message.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from leir.ast import Program
from leir.inference import infer_signature
from leir.parser import parse_body
from strategies import (
    ENGINE_REFUSALS,
    NotApplicableError,
    Site,
    all_strategies,
    apply_strategy,
    candidates,
    get_strategy,
)
from strategies.loop.nest import LOOP_SITE_REFUSALS

from .helpers import leir, workload
from .test_docstring_examples import docstring_example

STRATEGIES = Path(__file__).resolve().parents[2] / "strategies"
CODE = re.compile(r"^[a-z]+(-[a-z]+)*$")
NAMES = [s.name for s in all_strategies()]


def literal_codes(path: Path) -> set[str]:
    """Every code a module raises: the literal passed first to ``.refuse(...)`` (a helper that forwards
    its ``code`` parameter is followed to its callers: ``check_loop(self, program, site, "code", ...)``)."""
    codes = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name == "refuse":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Name) and first.id == "code":
                continue
            assert isinstance(first, ast.Constant) and isinstance(first.value, str), \
                f"{path.name}:{node.lineno}: refuse() takes a literal code first"
            codes.add(first.value)
        elif name == "check_loop":
            codes.add(node.args[3].value)  # type: ignore[attr-defined]
    return codes


@pytest.mark.parametrize("name", NAMES)
def test_every_code_a_strategy_module_raises_is_declared_with_a_meaning(name):
    strategy = get_strategy(name)
    module = Path(inspect.getfile(type(strategy)))
    assert strategy.refusals, f"{name} declares no refusal codes"
    assert literal_codes(module) <= set(strategy.refusals), name
    for code, meaning in strategy.refusals.items():
        assert CODE.match(code) and meaning.strip(), (name, code)
    if strategy.level.value == "loop":
        assert set(LOOP_SITE_REFUSALS) <= set(strategy.refusals), "loop sites resolve through nest.find_loop"


def test_every_declared_code_is_raised_somewhere_and_helpers_raise_only_declared_codes():
    raised = set().union(*(literal_codes(p) for p in STRATEGIES.rglob("*.py")))
    declared = set().union(*(s.refusals for s in all_strategies()))
    assert declared <= raised, f"declared but never raised: {sorted(declared - raised)}"
    assert raised <= declared, f"raised but declared by no strategy: {sorted(raised - declared)}"
    assert literal_codes(STRATEGIES / "loop" / "nest.py") <= set(LOOP_SITE_REFUSALS)
    assert not set(ENGINE_REFUSALS) & declared - {"no-such-site"}, "a strategy reuses an engine code"


def _programs(name: str) -> list[Program]:
    before, _after = docstring_example(type(get_strategy(name)).__doc__ or "")
    body = parse_body(before)
    return [Program(infer_signature(body), body)] + [workload(w) for w in ("level1/softmax", "level1/layer_norm")]


@pytest.mark.parametrize("name", NAMES)
def test_every_candidate_passes_check_with_and_without_parameters(name):
    strategy = get_strategy(name)
    checked = 0
    for program in _programs(name):
        for site in candidates(program, strategy):
            strategy.check(program, site)  # raises if candidates and check disagree
            strategy.check(program, site, strategy.default_params(site))
            checked += 1
    assert checked, f"{name} has no site on its own docstring example"


SERIAL_AND_PARALLEL = ("input A: f32[4,8]\noutput C: f32[4,8]\n---\n"
                       "P^{4}_{i=0}L^{8}_{a=0}[C^{f32,g}_{i,a}=A^{f32,g}_{i,a};];")


def test_a_refusal_carries_the_strategy_its_code_the_site_and_a_message():
    program = leir(SERIAL_AND_PARALLEL)
    site = Site((0,), (("loop", "i"),))
    with pytest.raises(NotApplicableError) as direct:
        get_strategy("loop_unrolling").check(program, site)
    refusal = direct.value
    assert (refusal.strategy, refusal.code, refusal.site) == ("loop_unrolling", "not-serial", site)
    assert str(refusal) == "loop_unrolling: [not-serial] the loop over i is P, not serial L"
    assert refusal.reason == "[not-serial] the loop over i is P, not serial L"
    with pytest.raises(NotApplicableError) as engine:
        apply_strategy(program, "loop_unrolling", site)
    assert (engine.value.code, engine.value.site) == ("no-such-site", site)
    with pytest.raises(NotApplicableError) as gone:
        get_strategy("loop_split").check(program, Site((0,), (("loop", "z"),)))
    assert gone.value.code == "no-such-loop"
