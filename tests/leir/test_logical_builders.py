"""``land``/``lor`` build conditions whose text reads back as the same tree (LEIR conditions have no
parentheses and one left-associative precedence level for ``&`` and ``|``)."""

from __future__ import annotations

import itertools

import pytest

from leir import builders as E
from leir.ast import Var
from leir.errors import LeirError
from leir.parser import parse_expr
from leir.printer import expr_text


def _truth(text: str, values: dict[str, int]) -> bool:
    """Evaluate a printed condition the way the parser groups it: left to right, ``&``/``|`` equal."""
    node = parse_expr(f"if_then_else({text},1,0)")
    return bool(_eval(node.cond, values))


def _eval(cond, values):
    from leir.ast import Compare, Logical

    if isinstance(cond, Logical):
        left, right = _eval(cond.left, values), _eval(cond.right, values)
        return (left and right) if cond.op == "&" else (left or right)
    assert isinstance(cond, Compare)
    return values[cond.operands[0].name] < int(cond.operands[1].value)


def _leaf(name: str):
    return E.cmp(Var(name), "<", 1)


@pytest.mark.parametrize("outer, inner", [("|", "&"), ("&", "|"), ("|", "|"), ("&", "&")])
def test_a_logical_right_operand_prints_as_the_same_condition(outer, inner):
    build = {"&": E.land, "|": E.lor}
    cond = build[outer](_leaf("x"), build[inner](_leaf("y"), _leaf("z")))
    text = expr_text(cond)
    for x, y, z in itertools.product((0, 1), repeat=3):
        a, b, c = x < 1, y < 1, z < 1
        inner_value = (b and c) if inner == "&" else (b or c)
        want = (a and inner_value) if outer == "&" else (a or inner_value)
        assert _truth(text, {"x": x, "y": y, "z": z}) == want, (text, x, y, z)


def test_two_logical_operands_under_different_operators_are_refused():
    with pytest.raises(LeirError, match="no spelling"):
        E.land(E.lor(_leaf("a"), _leaf("b")), E.lor(_leaf("c"), _leaf("d")))
