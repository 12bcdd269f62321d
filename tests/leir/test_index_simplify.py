"""simplify_index: floor division and modulo by a constant, simplified only where the ranges prove it."""

from __future__ import annotations

import itertools

import pytest

from leir.index_simplify import simplify_index
from leir.parser import parse_expr
from leir.printer import expr_text

RANGES = {"a": (0, 471), "d": (0, 511), "g": (0, 15), "h": (0, 31)}


@pytest.mark.parametrize(("text", "simplified"), [
    ("(a%59*16+g)//16", "a%59"),  # a packed panel's index after a split by the panel width
    ("(a%59*16+g)%16", "g"),
    ("(d*32+g*2+1)%32", "g*2+1"),
    ("(d*32+g*2+33)//32", "d+1"),
    ("d+(h*16+g)//16*2", "d+h*2"),  # inside a larger subscript
])
def test_divides_when_the_remainder_stays_inside_the_divisor(text, simplified):
    assert expr_text(simplify_index(parse_expr(text), RANGES)) == simplified


@pytest.mark.parametrize("text", [
    "d//16",  # d runs past 16: the quotient changes inside the loop
    "d%16",
    "(h*16+g+1)//16",  # g+1 reaches 16
    "(16*d+g)//8",  # g reaches past 8
    "(d-1)//16",  # the remainder part can be negative
    "x//4",  # x has no range
])
def test_leaves_what_the_ranges_do_not_prove(text):
    expr = parse_expr(text)
    assert simplify_index(expr, RANGES) is expr


@pytest.mark.parametrize("text", ["(a%59*16+g)//16", "(a%59*16+g)%16", "(d*32+g*2+33)//32", "(h*16+g+1)//16"])
def test_the_simplified_index_has_the_same_value_everywhere(text):
    expr = parse_expr(text)
    simpler = simplify_index(expr, RANGES)
    for a, g in itertools.product(range(0, 472, 7), range(16)):
        env = {"a": a, "g": g, "d": a % 512, "h": a % 32}
        assert _value(simpler, env) == _value(expr, env)


def _value(expr, env):
    text = expr_text(expr)
    return eval(text, {}, dict(env))
