"""Hypothesis strategies for random *syntactically* valid LEIR trees (no semantic promises).

The printers and the parser must agree on every tree the AST can express, so these draw from the whole
syntax: every loop kind, dtype and scope, nested blocks, gathers, chained comparisons, all operators.
"""

from __future__ import annotations

from hypothesis import strategies as st

from leir.ast import (
    DTYPES,
    LOOP_KINDS,
    SCOPES,
    Assign,
    BinOp,
    Block,
    Body,
    Call,
    Compare,
    IfThenElse,
    Inf,
    Logical,
    Loop,
    Neg,
    Num,
    Program,
    Signature,
    TensorDecl,
    TensorRef,
    Var,
)

LOOP_VARS = st.sampled_from(["tx", "a", "c", "d", "f", "g", "bx", "tyk", "i2"])
NAMES = st.sampled_from(["A", "C", "D", "Ah", "Aq", "Z", "M"])
NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.sampled_from(["0.5", "1e-05", "1.0e-5", "2.", "3.25E+3", "0"]),
)


def _tref(index: st.SearchStrategy) -> st.SearchStrategy:
    return st.builds(
        TensorRef,
        NAMES,
        st.sampled_from(DTYPES),
        st.sampled_from(SCOPES),
        st.lists(index, max_size=3).map(tuple),
    )


def _index_leaf() -> st.SearchStrategy:
    return st.one_of(LOOP_VARS.map(Var), st.integers(min_value=0, max_value=99).map(lambda n: Num(str(n))))


INDEX = st.recursive(
    _index_leaf(),
    lambda inner: st.one_of(
        st.builds(BinOp, st.sampled_from(["+", "-", "*", "//", "%"]), inner, inner),
        _tref(inner),
    ),
    max_leaves=6,
)

REFS = _tref(INDEX)


def _expr_leaf() -> st.SearchStrategy:
    return st.one_of(NUMBERS.map(Num), st.just(Inf()), LOOP_VARS.map(Var), REFS)


def _expressions(inner: st.SearchStrategy) -> st.SearchStrategy:
    cond = st.one_of(
        st.builds(
            lambda first, rest: Compare((first, *(e for _, e in rest)), tuple(op for op, _ in rest)),
            inner,
            st.lists(st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!="]), inner), min_size=1, max_size=2),
        ),
        REFS,
    )
    cond = st.one_of(cond, st.builds(Logical, st.sampled_from(["&", "|"]), cond, cond.filter(lambda c: True)))
    return st.one_of(
        st.builds(BinOp, st.sampled_from(["+", "-", "*", "/", "**", "//", "%"]), inner, inner),
        st.builds(Neg, inner),
        st.builds(lambda f, a: Call(f, (a,)), st.sampled_from(["exp", "log", "sqrt", "abs", "erf"]), inner),
        st.builds(lambda f, a, b: Call(f, (a, b)), st.sampled_from(["max", "min"]), inner, inner),
        st.builds(IfThenElse, cond, inner, inner),
    )


EXPRS = st.recursive(_expr_leaf(), _expressions, max_leaves=10)

LOOPS = st.lists(
    st.builds(Loop, st.sampled_from(LOOP_KINDS), st.integers(min_value=1, max_value=4096), LOOP_VARS),
    max_size=3,
).map(tuple)

STATEMENTS = st.builds(Assign, REFS, EXPRS)


def _blocks(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.builds(Block, LOOPS, st.lists(st.one_of(STATEMENTS, inner), min_size=1, max_size=3).map(tuple))


BLOCKS = st.recursive(
    st.builds(Block, LOOPS, st.lists(STATEMENTS, min_size=1, max_size=3).map(tuple)), _blocks, max_leaves=4
)

BODIES = st.lists(BLOCKS, min_size=1, max_size=3).map(lambda blocks: Body(tuple(blocks)))

DECLS = st.builds(
    TensorDecl,
    NAMES,
    st.sampled_from(["input", "param", "const", "output"]),
    st.sampled_from(DTYPES),
    st.lists(st.integers(min_value=1, max_value=64), max_size=3).map(tuple),
)

PROGRAMS = st.builds(
    lambda decls, body: Program(Signature(tuple({d.name: d for d in decls}.values())), body),
    st.lists(DECLS, max_size=4),
    BODIES,
)
