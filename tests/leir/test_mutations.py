"""Robustness: mangled LEIR only ever fails with the LEIR layer's own errors.

Random character and token edits of real corpus programs must either be rejected by the parser with
``LeirSyntaxError`` or reach the checker, which reports problems as diagnostics (``LeirCheckError`` from
``require_valid``) — never an IndexError, KeyError, RecursionError or a lark internal. Small programs that
still check cleanly are also run through the interpreter, which may only add ``InterpreterError``.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leir.ast import Program
from leir.checker import check, require_valid
from leir.corpus import load_corpus
from leir.errors import LeirCheckError, LeirSyntaxError
from leir.interpreter import InterpreterError, run
from leir.parser import parse_body
from leir.program import load_program

ALPHABET = "[]{}^_=,;()+-*/%<>!&|.0123456789aceijkLPVUBACDEFGxtf"
TOKEN_RE = re.compile(
    r"[A-Z][a-z]*\^\{[a-z0-9]+,[a-z]\}|[LPVUB]\^\{\d+\}_\{[a-z]+=0\}|if_then_else|[a-z]+|\d+(?:\.\d+)?"
    r"|\*\*|//|<=|>=|==|!=|."
)

CORPUS = load_corpus()
# keep the examples varied but short enough that hypothesis shrinks quickly
SOURCES = sorted((e for e in CORPUS if len(e.leir) < 1500), key=lambda e: e.id)


def _category(token: str) -> str:
    if "^{" in token:
        return "loop" if token[0] in "LPVUB" and "=0}" in token else "tensor"
    if token[0].isdigit():
        return "number"
    if token[0].isalpha():
        return "word"
    return "operator"


@st.composite
def mutated(draw, texts):
    index = draw(st.integers(0, len(texts) - 1))
    text = texts[index]
    for _ in range(draw(st.integers(1, 3))):
        # the kind-preserving edits (digits, same-category tokens) mostly still parse, so they exercise
        # the checker; the raw character edits exercise the parser's error paths
        kind = draw(st.sampled_from(["delete", "insert", "replace", "token-delete", "token-replace",
                                     "token-duplicate", "digit", "digit", "digit", "same-kind", "same-kind"]))
        if kind in ("delete", "insert", "replace"):
            i = draw(st.integers(0, max(len(text) - 1, 0)))
            ch = draw(st.sampled_from(ALPHABET))
            if kind == "delete":
                text = text[:i] + text[i + 1 :]
            elif kind == "insert":
                text = text[:i] + ch + text[i:]
            else:
                text = text[:i] + ch + text[i + 1 :]
        elif kind == "digit":
            spots = [m.start() for m in re.finditer(r"\d", text)]
            if spots:
                i = draw(st.sampled_from(spots))
                text = text[:i] + draw(st.sampled_from("0123456789")) + text[i + 1 :]
        else:
            tokens = TOKEN_RE.findall(text)
            if not tokens:
                continue
            i = draw(st.integers(0, len(tokens) - 1))
            if kind == "same-kind":
                same = sorted({t for t in tokens if _category(t) == _category(tokens[i])})
                tokens[i] = draw(st.sampled_from(same))
            elif kind == "token-delete":
                del tokens[i]
            elif kind == "token-replace":
                tokens[i] = draw(st.sampled_from(tokens))
            else:
                tokens.insert(i, tokens[i])
            text = "".join(tokens)
    return index, text


def _check_or_syntax_error(signature_of, text):
    try:
        body = parse_body(text)
    except LeirSyntaxError:
        return None
    program = Program(signature_of, body)
    info = check(program)  # must never raise
    try:
        require_valid(program)
    except LeirCheckError as exc:
        assert exc.diagnostics and not info.ok
    else:
        assert info.ok
    return program, info


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(mutated([e.leir for e in SOURCES]))
def test_mutated_corpus_programs_fail_only_with_leir_errors(case):
    index, text = case
    _check_or_syntax_error(SOURCES[index].program.signature, text)


SMALL = [
    (
        "input A: f64[3, 4]\noutput C: f64[3, 4]",
        "B^{3}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
        "B^{3}_{tx=0}L^{4}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
        "B^{3}_{tx=0}L^{4}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];",
    ),
    (
        "input A: f32[3, 5]\noutput C: i64[3]",
        "B^{3}_{tx=0}L^{5}_{a=0}[M^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,M^{f32,g}_{tx,a-1}),"
        "A^{f32,g}_{tx,a});I^{i64,g}_{tx,a}=if_then_else(a-1<0,0,if_then_else(A^{f32,g}_{tx,a}>"
        "M^{f32,g}_{tx,a-1},a,I^{i64,g}_{tx,a-1}));];B^{3}_{tx=0}[C^{i64,g}_{tx}=I^{i64,g}_{tx,4};];",
    ),
    (
        "input A: f64[4]\ninput G: i64[4]\noutput C: f64[4]",
        "B^{4}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{G^{i64,g}_{tx}}*2+A^{f64,g}_{(tx+1)%4}**2;];",
    ),
    (
        "input A: f64[2, 6]\ninput M: bool[2, 6]\noutput C: f64[2, 6]",
        "B^{2}_{tx=0}[L^{6}_{a=0}[S^{f64,g}_{tx}=S^{f64,g}_{tx}+if_then_else(M^{bool,g}_{tx,a},"
        "A^{f64,g}_{tx,a},0);];L^{6}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}//(S^{f64,g}_{tx}+1)%3;];];",
    ),
]


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(mutated([body for _, body in SMALL]))
def test_mutated_small_programs_run_or_fail_with_leir_errors(case):
    index, text = case
    header = SMALL[index][0]
    try:
        program = load_program(header + "\n---\n" + text)
    except LeirSyntaxError:
        return
    info = check(program)
    if not info.ok:
        return
    if any(np.prod(t.shape, dtype=np.int64) > 10_000 for t in info.tensors.values()):
        return  # a mutated extent may ask for a huge intermediate; not what this test is about
    rng = np.random.default_rng(index)
    inputs = {}
    for decl in program.signature.tensors:
        if decl.role == "output":
            continue
        if decl.dtype == "i64":
            inputs[decl.name] = rng.integers(0, 4, size=decl.shape)
        elif decl.dtype == "bool":
            inputs[decl.name] = rng.random(decl.shape) > 0.5
        else:
            inputs[decl.name] = rng.standard_normal(decl.shape)
    try:
        out = run(program, inputs, info=info)
    except InterpreterError:
        return
    for decl in program.signature.by_role("output"):
        assert out[decl.name].shape == tuple(decl.shape)
