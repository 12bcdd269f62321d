"""The NumPy reference interpreter against hand-computed NumPy results.

Each program is a corpus pattern with its shapes shrunk, written as LEIR text; the expected values are
computed independently with plain NumPy. Sizes are tiny so the whole file runs in seconds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leir.ast import Assign, BinOp, Block, Body, Loop, Program, Signature, TensorDecl, TensorRef, Var
from leir.checker import check
from leir.errors import LeirCheckError, LeirError
from leir.interpreter import InterpreterError, _vector_loops, run
from leir.parser import parse_body
from leir.program import load_program

RNG = np.random.default_rng(0)


def prog(header: str, body: str) -> Program:
    return load_program(header.strip() + "\n---\n" + body.strip() + "\n")


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def test_matmul():
    p = prog(
        "input A: f64[3, 5]\ninput C: f64[5, 4]\noutput D: f64[3, 4]",
        "B^{3}_{tx=0}L^{4}_{a=0}L^{5}_{c=0}[D^{f64,g}_{tx,a}=D^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}*C^{f64,g}_{c,a};];",
    )
    a, c = rand(3, 5), rand(5, 4)
    out = run(p, {"A": a, "C": c})["D"]
    assert out.shape == (3, 4) and out.dtype == np.float64
    np.testing.assert_allclose(out, a @ c, rtol=1e-12)


def test_matmul_reduction_order_is_sequential():
    """Fully vectorised reductions use an unbuffered scatter in iteration order: bitwise sequential."""
    p = prog(
        "input A: f32[2, 7]\noutput D: f32[2]",
        "B^{2}_{tx=0}L^{7}_{a=0}[D^{f32,g}_{tx}=D^{f32,g}_{tx}+A^{f32,g}_{tx,a};];",
    )
    a = (rand(2, 7) * 1e4).astype(np.float32)
    out = run(p, {"A": a})["D"]
    expected = np.zeros(2, np.float32)
    for t in range(2):
        for k in range(7):
            expected[t] = np.float32(expected[t] + a[t, k])
    assert np.array_equal(out, expected)


SOFTMAX = (
    "B^{4}_{tx=0}L^{6}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];"
    "B^{4}_{tx=0}L^{6}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];"
    "B^{4}_{tx=0}L^{6}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];"
)


def test_softmax():
    p = prog("input A: f64[4, 6]\noutput C: f64[4, 6]", SOFTMAX)
    a = rand(4, 6) * 3
    out = run(p, {"A": a})["C"]
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def test_softmax_return_all_exposes_intermediates():
    p = prog("input A: f64[4, 6]\noutput C: f64[4, 6]", SOFTMAX)
    a = rand(4, 6)
    allt = run(p, {"A": a}, return_all=True)
    assert set(allt) == {"A", "C", "D", "E"}
    np.testing.assert_allclose(allt["D"], a.max(axis=1))


def test_layernorm():
    n, d = 3, 8
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{d}}}_{{a=0}}[M^{{f64,g}}_{{tx}}=M^{{f64,g}}_{{tx}}+A^{{f64,g}}_{{tx,a}};];"
        f"B^{{{n}}}_{{tx=0}}[N^{{f64,g}}_{{tx}}=M^{{f64,g}}_{{tx}}/{d};];"
        f"B^{{{n}}}_{{tx=0}}L^{{{d}}}_{{a=0}}[Q^{{f64,g}}_{{tx}}=Q^{{f64,g}}_{{tx}}+"
        f"(A^{{f64,g}}_{{tx,a}}-N^{{f64,g}}_{{tx}})**2;];"
        f"B^{{{n}}}_{{tx=0}}L^{{{d}}}_{{a=0}}[C^{{f64,g}}_{{tx,a}}=(A^{{f64,g}}_{{tx,a}}-N^{{f64,g}}_{{tx}})/"
        f"sqrt(Q^{{f64,g}}_{{tx}}/{d}+1e-05)*G^{{f64,g}}_{{a}}+H^{{f64,g}}_{{a}};];"
    )
    p = prog(f"input A: f64[{n}, {d}]\nparam G: f64[{d}]\nparam H: f64[{d}]\noutput C: f64[{n}, {d}]", body)
    a, g, h = rand(n, d), rand(d), rand(d)
    out = run(p, {"A": a, "G": g, "H": h})["C"]
    mean = a.mean(axis=1, keepdims=True)
    var = ((a - mean) ** 2).mean(axis=1, keepdims=True)
    np.testing.assert_allclose(out, (a - mean) / np.sqrt(var + 1e-5) * g + h, rtol=1e-10)


def test_padded_conv2d():
    """The corpus conv: explicit zero padding into E by a guarded read, then a strided convolution."""
    n, ci, co, hh, ww, kh, kw = 2, 2, 3, 5, 6, 3, 2
    ph, pw, sw = 1, 1, 2
    hp, wp = hh + 2 * ph, ww + 2 * pw
    ho, wo = hp - kh + 1, (wp - kw) // sw + 1
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{ci}}}_{{a=0}}L^{{{hp}}}_{{c=0}}L^{{{wp}}}_{{d=0}}"
        f"[E^{{f64,g}}_{{tx,a,c,d}}=if_then_else({ph}<=c<{hh + ph}&{pw}<=d<{ww + pw},"
        f"A^{{f64,g}}_{{tx,a,c-{ph},d-{pw}}},0);];"
        f"B^{{{n}}}_{{tx=0}}L^{{{co}}}_{{a=0}}L^{{{ho}}}_{{c=0}}L^{{{wo}}}_{{d=0}}L^{{{ci}}}_{{f=0}}"
        f"L^{{{kh}}}_{{g=0}}L^{{{kw}}}_{{h=0}}[C^{{f64,g}}_{{tx,a,c,d}}=C^{{f64,g}}_{{tx,a,c,d}}+"
        f"E^{{f64,g}}_{{tx,f,c+g,d*{sw}+h}}*D^{{f64,g}}_{{a,f,g,h}};];"
    )
    p = prog(
        f"input A: f64[{n}, {ci}, {hh}, {ww}]\nparam D: f64[{co}, {ci}, {kh}, {kw}]\n"
        f"output C: f64[{n}, {co}, {ho}, {wo}]",
        body,
    )
    assert check(p).ok
    a, w = rand(n, ci, hh, ww), rand(co, ci, kh, kw)
    out = run(p, {"A": a, "D": w})["C"]
    padded = np.pad(a, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    expected = np.zeros((n, co, ho, wo))
    for i in range(ho):
        for j in range(wo):
            patch = padded[:, :, i : i + kh, j * sw : j * sw + kw]
            expected[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_max_pooling():
    n, hh, k = 2, 6, 2
    ho = hh // k
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{ho}}}_{{a=0}}L^{{{ho}}}_{{c=0}}L^{{{k}}}_{{d=0}}L^{{{k}}}_{{f=0}}"
        f"[C^{{f32,g}}_{{tx,a,c}}=max(C^{{f32,g}}_{{tx,a,c}},A^{{f32,g}}_{{tx,a*{k}+d,c*{k}+f}});];"
    )
    p = prog(f"input A: f32[{n}, {hh}, {hh}]\noutput C: f32[{n}, {ho}, {ho}]", body)
    a = rand(n, hh, hh, dtype=np.float32)
    out = run(p, {"A": a})["C"]
    assert out.dtype == np.float32
    assert np.array_equal(out, a.reshape(n, ho, k, ho, k).max(axis=(2, 4)))


def test_avg_pooling_integer_literal_division():
    body = (
        "B^{2}_{tx=0}L^{3}_{a=0}L^{2}_{d=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+A^{f64,g}_{tx,a*2+d};];"
        "B^{2}_{tx=0}L^{3}_{a=0}[F^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}/2;];"
    )
    p = prog("input A: f64[2, 6]\noutput F: f64[2, 3]", body)
    a = rand(2, 6)
    np.testing.assert_allclose(run(p, {"A": a})["F"], a.reshape(2, 3, 2).mean(axis=2))


ARGMAX_FIRST = (
    # running max as a prefix recurrence; the index moves only on a strictly greater value → first index
    "B^{3}_{tx=0}L^{5}_{a=0}["
    "M^{f64,g}_{tx,a}=max(if_then_else(a-1<0,-inf,M^{f64,g}_{tx,a-1}),A^{f64,g}_{tx,a});"
    "I^{i64,g}_{tx,a}=if_then_else(a-1<0,0,if_then_else(A^{f64,g}_{tx,a}>M^{f64,g}_{tx,a-1},a,"
    "I^{i64,g}_{tx,a-1}));];"
    "B^{3}_{tx=0}[C^{i64,g}_{tx}=I^{i64,g}_{tx,4};];"
)


def test_argmax_picks_first_index_on_ties():
    p = prog("input A: f64[3, 5]\noutput C: i64[3]", ARGMAX_FIRST)
    a = np.array(
        [[1.0, 3.0, 3.0, 0.0, 3.0], [5.0, 5.0, 5.0, 5.0, 5.0], [-1.0, -2.0, 0.5, 0.5, 0.25]]
    )
    out = run(p, {"A": a})["C"]
    assert out.dtype == np.int64
    assert out.tolist() == np.argmax(a, axis=1).tolist() == [1, 0, 2]
    b = rand(3, 5)
    assert run(p, {"A": b})["C"].tolist() == np.argmax(b, axis=1).tolist()


def test_corpus_argmax_picks_last_index_on_ties():
    """The reference converter's ``>=`` form keeps the last tie: the interpreter reproduces it faithfully."""
    body = (
        "B^{2}_{tx=0}L^{4}_{a=0}L^{3}_{c=0}[D^{f64,g}_{tx,c}=max(D^{f64,g}_{tx,c},A^{f64,g}_{tx,a,c});"
        "C^{i64,g}_{tx,c}=0;];"
        "B^{2}_{tx=0}L^{4}_{a=0}L^{3}_{c=0}[C^{i64,g}_{tx,c}=if_then_else(A^{f64,g}_{tx,a,c}>=D^{f64,g}_{tx,c},"
        "a,C^{i64,g}_{tx,c});];"
    )
    p = prog("input A: f64[2, 4, 3]\noutput C: i64[2, 3]", body)
    a = np.zeros((2, 4, 3))
    a[0, 1, 0] = a[0, 3, 0] = 2.0
    out = run(p, {"A": a})["C"]
    last = 3 - np.argmax(a[:, ::-1, :], axis=1)
    assert out.tolist() == last.tolist()
    assert out[0, 0] == 3


def test_cross_entropy_with_gathers():
    n, k = 6, 4
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{k}}}_{{a=0}}[F^{{f64,g}}_{{tx}}=max(F^{{f64,g}}_{{tx}},A^{{f64,g}}_{{tx,a}});];"
        f"B^{{{n}}}_{{tx=0}}L^{{{k}}}_{{a=0}}[G^{{f64,g}}_{{tx}}=G^{{f64,g}}_{{tx}}+"
        f"exp(A^{{f64,g}}_{{tx,a}}-F^{{f64,g}}_{{tx}});];"
        f"B^{{{n}}}_{{tx=0}}L^{{{k}}}_{{a=0}}[E^{{f64,g}}_{{tx,a}}=A^{{f64,g}}_{{tx,a}}-F^{{f64,g}}_{{tx}}-"
        f"log(G^{{f64,g}}_{{tx}});];"
        f"B^{{{k}}}_{{tx=0}}[H^{{i64,g}}_{{tx}}=if_then_else(tx!=-100,1,0);];"
        f"B^{{{n}}}_{{tx=0}}[I^{{f64,g}}_{{tx}}=-H^{{i64,g}}_{{C^{{i64,g}}_{{tx}}}}*"
        f"E^{{f64,g}}_{{tx,C^{{i64,g}}_{{tx}}}};];"
        f"B^{{{n}}}_{{tx=0}}[J^{{i64,g}}=J^{{i64,g}}+H^{{i64,g}}_{{C^{{i64,g}}_{{tx}}}};];"
        f"B^{{{n}}}_{{tx=0}}[D^{{f64,g}}=D^{{f64,g}}+I^{{f64,g}}_{{tx}}/J^{{i64,g}};];"
    )
    p = prog(f"input A: f64[{n}, {k}]\ninput C: i64[{n}]\noutput D: f64[]", body)
    a = rand(n, k)
    labels = np.array([0, 3, 1, 1, 2, 0], dtype=np.int64)
    out = run(p, {"A": a, "C": labels})["D"]
    assert out.shape == ()
    logp = a - a.max(axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(out, -logp[np.arange(n), labels].mean(), rtol=1e-12)


def test_gather_out_of_range_is_a_runtime_error():
    body = "B^{3}_{tx=0}[D^{f64,g}_{tx}=A^{f64,g}_{C^{i64,g}_{tx}};];"
    p = prog("input A: f64[4]\ninput C: i64[3]\noutput D: f64[3]", body)
    with pytest.raises(InterpreterError, match="index 0 of A evaluates to 4"):
        run(p, {"A": rand(4), "C": np.array([0, 4, 1])})
    with pytest.raises(InterpreterError, match="evaluates to -1"):
        run(p, {"A": rand(4), "C": np.array([0, -1, 1])})


def test_cumsum_as_prefix_recurrence():
    body = (
        "B^{3}_{tx=0}L^{7}_{a=0}[C^{f64,g}_{tx,a}=if_then_else(a-1<0,0,C^{f64,g}_{tx,a-1})"
        "+A^{f64,g}_{tx,a};];"
    )
    p = prog("input A: f64[3, 7]\noutput C: f64[3, 7]", body)
    info = check(p)
    assert info.ok
    a = rand(3, 7)
    np.testing.assert_allclose(run(p, {"A": a}, info=info)["C"], np.cumsum(a, axis=1), rtol=1e-12)


def test_masked_cumsum_corpus_form_with_bool_tensor():
    body = (
        "B^{2}_{tx=0}L^{5}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*C^{bool,g}_{tx,a};];"
        "B^{2}_{tx=0}L^{5}_{a=0}L^{5}_{c=0}[E^{f64,g}_{tx,a}=E^{f64,g}_{tx,a}+"
        "if_then_else(c<=a,D^{f64,g}_{tx,c},0);];"
    )
    p = prog("input A: f64[2, 5]\ninput C: bool[2, 5]\noutput E: f64[2, 5]", body)
    a = rand(2, 5)
    mask = RNG.random((2, 5)) > 0.5
    np.testing.assert_allclose(run(p, {"A": a, "C": mask})["E"], np.cumsum(a * mask, axis=1), rtol=1e-12)


def test_online_softmax_from_the_reference():
    """LEIR.md section 8's online softmax, shrunk: running max and rescaled running sum, then normalise."""
    n, m = 3, 9
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{m}}}_{{a=0}}[D^{{f32,g}}_{{tx,a}}=max(if_then_else(a-1<0,-inf,"
        f"D^{{f32,g}}_{{tx,a-1}}),A^{{f32,g}}_{{tx,a}});F^{{f32,g}}_{{tx,a}}=if_then_else(a-1<0,1,"
        f"F^{{f32,g}}_{{tx,a-1}})*exp(if_then_else(a-1<0,-inf,D^{{f32,g}}_{{tx,a-1}})-D^{{f32,g}}_{{tx,a}})"
        f"+exp(A^{{f32,g}}_{{tx,a}}-D^{{f32,g}}_{{tx,a}});];"
        f"B^{{{n}}}_{{tx=0}}L^{{{m}}}_{{a=0}}[C^{{f32,g}}_{{tx,a}}=exp(A^{{f32,g}}_{{tx,a}}-"
        f"D^{{f32,g}}_{{tx,{m - 1}}})/F^{{f32,g}}_{{tx,{m - 1}}};];"
    )
    p = prog(f"input A: f32[{n}, {m}]\noutput C: f32[{n}, {m}]", body)
    info = check(p)
    assert info.ok, info.diagnostics
    a = rand(n, m, dtype=np.float32) * 4
    out = run(p, {"A": a}, info=info)["C"]
    e = np.exp(a.astype(np.float64) - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5)


def test_nested_blocks_flash_style():
    """A nested block per row: reduce into a scalar-per-row, then use it in the same outer iteration."""
    body = (
        "B^{3}_{tx=0}[L^{4}_{a=0}[S^{f64,g}_{tx}=S^{f64,g}_{tx}+A^{f64,g}_{tx,a};];"
        "L^{4}_{a=0}[C^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}/S^{f64,g}_{tx};];];"
    )
    p = prog("input A: f64[3, 4]\noutput C: f64[3, 4]", body)
    a = RNG.random((3, 4)) + 0.5
    np.testing.assert_allclose(run(p, {"A": a})["C"], a / a.sum(axis=1, keepdims=True), rtol=1e-12)


def test_same_block_reads_what_earlier_item_wrote_at_other_subscript():
    """``X_{a+1}`` read after ``Y`` writes: statement-major execution would be wrong, so ``a`` runs serially."""
    body = (
        "B^{1}_{tx=0}L^{5}_{a=0}[Y^{f64,g}_{a}=A^{f64,g}_{a}*2;"
        "C^{f64,g}_{a}=if_then_else(a+1<5,Y^{f64,g}_{a+1},7);];"
    )
    p = prog("input A: f64[5]\noutput C: f64[5]", body)
    a = rand(5)
    block = p.body.blocks[0]
    assert _vector_loops(block, {}) == frozenset({"tx"})
    # Y_{a+1} is not written yet when C_{a} reads it (elements nothing wrote are 0); the last is 7
    np.testing.assert_allclose(run(p, {"A": a})["C"], [0, 0, 0, 0, 7])


def test_overwrite_keeps_last_write():
    body = "B^{2}_{tx=0}L^{3}_{a=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx,a};];"
    p = prog("input A: f64[2, 3]\noutput C: f64[2]", body)
    a = rand(2, 3)
    np.testing.assert_array_equal(run(p, {"A": a})["C"], a[:, 2])


def test_loop_variable_as_value_and_integer_semantics():
    body = (
        "B^{2}_{tx=0}L^{7}_{a=0}[C^{i64,g}_{tx,a}=(a-3)/2+(a-3)%2*10+tx;];"
        "B^{2}_{tx=0}L^{7}_{a=0}[D^{f64,g}_{tx,a}=C^{i64,g}_{tx,a}/2;];"
    )
    p = prog("output C: i64[2, 7]\noutput D: f64[2, 7]", body)
    out = run(p, {})
    a = np.arange(7) - 3
    expected = a // 2 + (a % 2) * 10
    assert out["C"].tolist() == [list(expected), list(expected + 1)]
    np.testing.assert_array_equal(out["D"], out["C"] / 2.0)


def test_statement_dtype_converts_operands():
    """``E^{f64}=D*C^{bool}`` converts bool to 0/1; ``K^{i32}`` truncates its float operands."""
    body = (
        "B^{4}_{tx=0}[E^{f64,g}_{tx}=A^{f64,g}_{tx}*C^{bool,g}_{tx};];"
        "B^{4}_{tx=0}[K^{i32,g}_{tx}=A^{f64,g}_{tx}*2;];"
    )
    p = prog("input A: f64[4]\ninput C: bool[4]\noutput E: f64[4]\noutput K: i32[4]", body)
    a = np.array([1.75, -2.5, 3.0, 0.9])
    out = run(p, {"A": a, "C": np.array([True, False, True, False])})
    np.testing.assert_array_equal(out["E"], [1.75, 0, 3.0, 0])
    # A converted to i32 first (1, -2, 3, 0), then doubled
    assert out["K"].dtype == np.int32 and out["K"].tolist() == [2, -4, 6, 0]


def test_integer_max_reduction_inits_at_dtype_minimum():
    body = "B^{2}_{tx=0}L^{3}_{a=0}[C^{i32,g}_{tx}=max(C^{i32,g}_{tx},A^{i32,g}_{tx,a});];"
    p = prog("input A: i32[2, 3]\noutput C: i32[2]", body)
    a = np.array([[-5, -7, -6], [3, 9, 1]], dtype=np.int32)
    assert run(p, {"A": a})["C"].tolist() == [-5, 9]


def test_product_and_min_reductions_and_minus_combiner():
    body = (
        "B^{2}_{tx=0}L^{3}_{a=0}[P^{f64,g}_{tx}=P^{f64,g}_{tx}*A^{f64,g}_{tx,a};];"
        "B^{2}_{tx=0}L^{3}_{a=0}[Q^{f64,g}_{tx}=min(A^{f64,g}_{tx,a},Q^{f64,g}_{tx});];"
        "B^{2}_{tx=0}L^{3}_{a=0}[R^{f64,g}_{tx}=R^{f64,g}_{tx}-A^{f64,g}_{tx,a};];"
        "B^{2}_{tx=0}[C^{f64,g}_{tx}=P^{f64,g}_{tx}+Q^{f64,g}_{tx}*10+R^{f64,g}_{tx}*100;];"
    )
    p = prog("input A: f64[2, 3]\noutput C: f64[2]", body)
    a = rand(2, 3)
    expected = a.prod(axis=1) + a.min(axis=1) * 10 - a.sum(axis=1) * 100
    np.testing.assert_allclose(run(p, {"A": a})["C"], expected, rtol=1e-12)


def test_accumulate_after_write_has_no_init():
    body = (
        "B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+A^{f64,g}_{tx,c}*W^{f64,g}_{a,c};];"
        "B^{2}_{tx=0}L^{3}_{a=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+H^{f64,g}_{a};];"
        "B^{2}_{tx=0}L^{3}_{a=0}L^{2}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}*2;];"
    )
    p = prog("input A: f64[2, 4]\nparam W: f64[3, 4]\nparam H: f64[3]\noutput C: f64[2, 3]", body)
    a, w, h = rand(2, 4), rand(3, 4), rand(3)
    np.testing.assert_allclose(run(p, {"A": a, "W": w, "H": h})["C"], (a @ w.T + h) * 4, rtol=1e-12)


def test_erf_gelu_power_and_abs():
    body = (
        "B^{5}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}*0.5*(1+erf(A^{f64,g}_{tx}/sqrt(2)))"
        "+abs(A^{f64,g}_{tx})**3;];"
    )
    p = prog("input A: f64[5]\noutput C: f64[5]", body)
    a = rand(5)
    expected = [x * 0.5 * (1 + math.erf(x / math.sqrt(2))) + abs(x) ** 3 for x in a]
    np.testing.assert_allclose(run(p, {"A": a})["C"], expected, rtol=1e-12)


def test_inf_and_chained_comparison_and_or():
    body = (
        "B^{6}_{tx=0}[C^{f64,g}_{tx}=if_then_else(1<=tx<3|tx==5,inf,-inf);];"
        "B^{6}_{tx=0}[D^{f64,g}_{tx}=if_then_else(C^{f64,g}_{tx}>0&tx!=2,1,0);];"
    )
    p = prog("output C: f64[6]\noutput D: f64[6]", body)
    out = run(p, {})
    assert out["C"].tolist() == [-np.inf, np.inf, np.inf, -np.inf, -np.inf, np.inf]
    assert out["D"].tolist() == [0, 1, 0, 0, 0, 1]


def test_bool_output_and_bool_condition():
    body = (
        "B^{4}_{tx=0}[M^{bool,g}_{tx}=if_then_else(A^{f32,g}_{tx}>0.5,1,0);];"
        "B^{4}_{tx=0}[C^{f32,g}_{tx}=if_then_else(M^{bool,g}_{tx},A^{f32,g}_{tx},-1);];"
    )
    p = prog("input A: f32[4]\noutput M: bool[4]\noutput C: f32[4]", body)
    a = np.array([0.1, 0.7, 0.5, 2.0], dtype=np.float32)
    out = run(p, {"A": a})
    assert out["M"].dtype == np.bool_ and out["M"].tolist() == [False, True, False, True]
    assert out["C"].tolist() == [-1.0, np.float32(0.7), -1.0, 2.0]


def test_f16_and_bf16():
    body = "B^{3}_{tx=0}[C^{f16,g}_{tx}=A^{f16,g}_{tx}+1;];B^{3}_{tx=0}[D^{bf16,g}_{tx}=E^{bf16,g}_{tx}*3;];"
    p = prog("input A: f16[3]\ninput E: bf16[3]\noutput C: f16[3]\noutput D: bf16[3]", body)
    a = np.array([1000.0, 0.1, 2048.0], dtype=np.float16)
    e = np.array([1.0, 1.0 / 3.0, 1.01], dtype=np.float32)
    out = run(p, {"A": a, "E": e})
    assert out["C"].dtype == np.float16
    assert np.array_equal(out["C"], a + np.float16(1))  # 2048+1 rounds to 2048 in f16
    torch = pytest.importorskip("torch")
    e_bf = torch.tensor(e).to(torch.bfloat16)
    expected = (e_bf.float() * 3).to(torch.bfloat16).float().numpy()
    assert out["D"].dtype == np.float32 and np.array_equal(out["D"], expected)


def test_cast_read_of_intermediate():
    """The corpus writes ``O^{f64}=16`` then reads ``sqrt(O^{i32})``: the read converts to i32."""
    body = "B^{1}_{tx=0}[O^{f64,g}=16.75;];B^{1}_{tx=0}[C^{f64,g}=sqrt(O^{i32,g});];"
    p = prog("output C: f64[]", body)
    assert run(p, {})["C"] == 4.0


def test_invalid_program_and_bad_inputs():
    p = prog("input A: f64[3]\noutput C: f64[3]", "B^{3}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx+1};];")
    with pytest.raises(LeirCheckError):
        run(p, {"A": rand(3)})
    good = prog("input A: f64[3]\noutput C: f64[3]", "B^{3}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx};];")
    with pytest.raises(InterpreterError, match="missing input A"):
        run(good, {})
    with pytest.raises(InterpreterError, match="shape"):
        run(good, {"A": rand(4)})
    with pytest.raises(InterpreterError, match="not in the program's signature"):
        run(good, {"A": rand(3), "Z": rand(3)})


def test_inputs_are_not_modified():
    p = prog("input A: f64[3]\noutput C: f64[3]", "B^{3}_{tx=0}[C^{f64,g}_{tx}=A^{f64,g}_{tx}*2;];")
    a = rand(3)
    before = a.copy()
    run(p, {"A": a})
    assert np.array_equal(a, before)


def test_vectorisation_plan_matches_dependences():
    """The plan vectorises exactly the loops whose iterations are independent."""
    body = parse_body(
        "B^{2}_{tx=0}L^{3}_{a=0}[D^{f64,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f64,g}_{tx,a-1}),"
        "A^{f64,g}_{tx,a});];"
        "B^{2}_{tx=0}L^{3}_{a=0}L^{4}_{c=0}[C^{i64,g}_{tx,c}=if_then_else(A^{f64,g}_{tx,a}>=0,a,"
        "C^{i64,g}_{tx,c});];"
    )
    assert _vector_loops(body.blocks[0], {}) == frozenset({"tx"})
    assert _vector_loops(body.blocks[1], {}) == frozenset({"tx", "c"})


def test_program_built_in_code_runs():
    """ASTs without positions (built by strategies) run the same as parsed ones."""
    ref = TensorRef("C", "f64", "g", (Var("i"),))
    stmt = Assign(ref, BinOp("*", TensorRef("A", "f64", "g", (Var("i"),)), TensorRef("A", "f64", "g", (Var("i"),))))
    program = Program(
        Signature((TensorDecl("A", "input", "f64", (4,)), TensorDecl("C", "output", "f64", (4,)))),
        Body((Block((Loop("P", 4, "i"),), (stmt,)),)),
    )
    a = rand(4)
    np.testing.assert_allclose(run(program, {"A": a})["C"], a * a)


@pytest.mark.parametrize("ident", ["level1/2/softmax@f32", "level1/3/Hingeloss@f64"])
def test_small_corpus_programs_run(ident):
    """Two corpus programs whose shapes are small enough to run as they are."""
    from leir.corpus import load_corpus

    entry = next(e for e in load_corpus() if e.id == ident)
    inputs = {
        d.name: rand(*d.shape).astype(np.float32 if d.dtype == "f32" else np.float64)
        for d in entry.program.signature.tensors
        if d.role != "output"
    }
    out = run(entry.program, inputs)
    if ident.startswith("level1/3"):
        a, c = inputs["A"], inputs["C"]
        np.testing.assert_allclose(out["G"], np.maximum(1 - a * c, 0).mean(), rtol=1e-12)
    else:
        a = inputs["A"].astype(np.float64)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out["C"], e / e.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-9)


# ------------------------------------------------------------------ vectorised == sequential (differential)


_SHAPES = {"A": 2, "X": 2, "Y": 2, "Z": 1}


@st.composite
def _index(draw, scope, shift=None):
    """An index in [0, 2] for loops of extent <= 3: mostly bare variables (what the plan can vectorise)."""
    v = draw(st.sampled_from(scope))
    if shift is not None:
        return shift
    w = draw(st.sampled_from(scope))
    c = draw(st.integers(0, 2))
    return draw(st.sampled_from([v, v, v, f"({v}+1)%3", str(c), f"({v}+{w})%3", f"2-{v}"]))


@st.composite
def _ref(draw, scope, names=("A", "X", "Y", "Z"), shift=None):
    name = draw(st.sampled_from(names))
    rank = _SHAPES[name]
    at = draw(st.integers(0, rank - 1)) if shift is not None else -1
    idx = ",".join(draw(_index(scope, shift if d == at else None)) for d in range(rank))
    return f"{name}^{{i64,g}}_{{{idx}}}"


@st.composite
def _expr(draw, scope, depth=0):
    choice = draw(st.integers(0, 11 if depth < 3 else 3))
    if choice <= 1:
        return draw(_ref(scope))
    if choice == 2:
        return draw(st.sampled_from(scope))
    if choice == 3:
        return str(draw(st.integers(0, 3)))
    a, b = draw(_expr(scope, depth + 1)), draw(_expr(scope, depth + 1))
    if choice <= 6:
        return f"({a}){draw(st.sampled_from('+-*'))}({b})"
    if choice <= 8:
        return f"{draw(st.sampled_from(['max', 'min']))}({a},{b})"
    v = draw(st.sampled_from(scope))
    if choice == 9:
        return f"if_then_else({v}<{draw(st.integers(0, 3))},{a},{b})"
    if choice == 10:  # a guarded read of the previous element (prefix recurrences, shifted reads)
        return f"if_then_else({v}-1<0,{a},{draw(_ref(scope, ('X', 'Y', 'Z'), shift=f'{v}-1'))})"
    return f"if_then_else({v}+1<3,{draw(_ref(scope, ('X', 'Y', 'Z'), shift=f'{v}+1'))},{b})"


@st.composite
def _stmt(draw, scope):
    target = draw(_ref(scope, ("X", "Y", "Z")))
    value = draw(_expr(scope))
    if draw(st.booleans()):  # a self-update: reduction-like patterns and their fast path
        op = draw(st.sampled_from(["+", "*", "max", "min", "-"]))
        value = f"max({target},{value})" if op == "max" else (
            f"min({value},{target})" if op == "min" else f"{target}{op}({value})"
        )
    return f"{target}={value};"


@st.composite
def _block(draw, outer=(), depth=0):
    names = [n for n in "ijk" if n not in outer]
    loops = []
    if names:
        loops = draw(st.lists(st.sampled_from(names), min_size=0 if outer else 1, max_size=len(names),
                              unique=True))
    header = "".join(f"{draw(st.sampled_from('LPV'))}^{{{draw(st.integers(1, 3))}}}_{{{v}=0}}" for v in loops)
    scope = list(outer) + loops
    items = [draw(_stmt(scope)) for _ in range(draw(st.integers(1, 3)))]
    if depth == 0 and draw(st.integers(0, 3)) == 0:
        items.insert(draw(st.integers(0, len(items))), draw(_block(tuple(scope), 1)) + ";")
    return f"{header}[{''.join(items)}]"


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_block(), min_size=1, max_size=3))
def test_vectorised_plan_equals_sequential_execution(blocks):
    """Integer programs (exact arithmetic, any valid reordering is bitwise equal) with random self-reads,
    shifted subscripts, nested blocks and several statements per block: the vectorised plan must give
    exactly what one-iteration-at-a-time execution gives."""
    init = "L^{3}_{i=0}L^{3}_{j=0}[X^{i64,g}_{i,j}=A^{i64,g}_{i,j};Y^{i64,g}_{i,j}=A^{i64,g}_{j,i}*2;Z^{i64,g}_{i}=j;];"
    body = init + "".join(b + ";" for b in blocks)
    p = load_program("input A: i64[3, 3]\n---\n" + body)
    info = check(p)
    assert info.ok, [str(d) for d in info.errors]
    a = np.arange(9, dtype=np.int64).reshape(3, 3) - 4
    fast = run(p, {"A": a}, info=info, return_all=True)
    slow = run(p, {"A": a}, info=info, return_all=True, vectorise=False)
    for name in ("X", "Y", "Z"):
        assert np.array_equal(fast[name], slow[name]), (name, body)


def _corpus_work(program) -> int:
    from leir.ast import iter_items

    return sum(
        math.prod(lp.extent for lp in loops)
        for _, item, loops in iter_items(program.body)
        if not isinstance(item, Block)
    )


def _corpus_inputs(program, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for d in program.signature.tensors:
        if d.role == "output":
            continue
        if d.dtype == "bool":
            out[d.name] = rng.random(d.shape) > 0.5
        elif d.dtype.startswith(("i", "u")):
            out[d.name] = rng.integers(0, 2, d.shape)
        else:
            out[d.name] = rng.standard_normal(d.shape)
    return out


def test_small_corpus_programs_vectorised_equal_sequential():
    """The corpus programs with the least work, executed both ways (the literal order is the oracle)."""
    from leir.corpus import load_corpus

    chosen = [e for e in load_corpus() if e.id in {"level1/3/Hingeloss@f32", "level2/59/Matmul_Min_Subtract@f64"}]
    assert len(chosen) == 2
    for entry in chosen:
        inputs = _corpus_inputs(entry.program, 1)
        fast = run(entry.program, inputs, return_all=True)
        slow = run(entry.program, inputs, return_all=True, vectorise=False)
        assert fast.keys() == slow.keys()
        for name in fast:
            np.testing.assert_allclose(fast[name], slow[name], rtol=1e-12, err_msg=f"{entry.id} {name}")


def test_corpus_programs_up_to_1e5_iterations_run():
    from leir.corpus import load_corpus

    small = [e for e in load_corpus() if _corpus_work(e.program) <= 100_000]
    assert len(small) >= 15
    for entry in small:
        out = run(entry.program, _corpus_inputs(entry.program, 2))
        for decl in entry.program.signature.by_role("output"):
            assert out[decl.name].shape == tuple(decl.shape), entry.id
            assert out[decl.name].dtype == np.dtype("float32" if decl.dtype == "f32" else "float64")


def test_overflowing_literals_are_refused_and_huge_tensors_too():
    """A literal outside its statement's type is a checker error (docs/leir.md §7), not a wrap-around."""
    p = prog("output C: i64[2]", "B^{2}_{i=0}[C^{i64,g}_{i}=9223372036854775808+i;];")
    with pytest.raises(LeirError, match="literal-out-of-range"):
        run(p, {})
    big = prog("output C: f64[2]", "B^{2}_{i=0}[Y^{f64,g}_{99999,99999,9}=1;C^{f64,g}_{i}=Y^{f64,g}_{i,i,i};];")
    with pytest.raises(InterpreterError, match="would have 100000000000 elements"):
        run(big, {})


def test_reduction_read_by_a_later_item_sees_partial_values():
    """``Y`` reads the running sum ``Z`` inside the reducing block: no scatter fast path, ``j`` is serial."""
    body = "B^{2}_{i=0}L^{3}_{j=0}[Z^{f64,g}_{i}=Z^{f64,g}_{i}+A^{f64,g}_{i,j};Y^{f64,g}_{i,j}=Z^{f64,g}_{i};];"
    p = prog("input A: f64[2, 3]\noutput Y: f64[2, 3]", body)
    a = rand(2, 3)
    np.testing.assert_allclose(run(p, {"A": a})["Y"], np.cumsum(a, axis=1), rtol=1e-12)
    assert _vector_loops(p.body.blocks[0], {}) == frozenset({"i"})


def test_lane_cap_serialises_outer_loops_with_same_result(monkeypatch):
    import leir.interpreter as interp

    p = prog("input A: f64[4, 5]\noutput C: f64[4, 5]", SOFTMAX.replace("{4}", "{4}").replace("{6}", "{5}"))
    a = rand(4, 5)
    full = run(p, {"A": a})["C"]
    monkeypatch.setattr(interp, "MAX_LANES", 3)
    capped = run(p, {"A": a})["C"]
    np.testing.assert_allclose(capped, full, rtol=1e-13)


def test_dtype_helpers():
    from leir import dtypes

    assert dtypes.numpy_dtype("bf16") == np.float32 and dtypes.numpy_dtype("u16") == np.uint16
    assert dtypes.is_float("bf16") and dtypes.is_int("u8") and not dtypes.is_int("bool")
    assert dtypes.min_value("i8") == -128 and dtypes.max_value("u32") == 2**32 - 1
    assert dtypes.min_value("f16") == -np.inf and dtypes.max_value("bool") == 1
    assert dtypes.from_numpy_dtype(np.int32) == "i32"
    assert not dtypes.is_supported("c64")
    with pytest.raises(KeyError):
        dtypes.numpy_dtype("c64")
    # ties to even at bf16 precision (8 significant bits): 1+2^-8 is halfway between 1 and 1+2^-7
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, np.nan, np.inf, -0.0], dtype=np.float32)
    r = dtypes.round_bf16(x)
    assert r[0] == 1.0 and r[1] == 1 + 2**-6 and np.isnan(r[2]) and r[3] == np.inf
    ints = dtypes.cast_to(np.array([1.9, -1.9, np.inf, -np.inf, np.nan, 1e30]), "i64")
    assert ints.tolist() == [1, -1, 2**63 - 1, -(2**63), 0, 2**63 - 1]
    assert dtypes.cast_to(np.array([127.0, 300.0, -300.0]), "i8").tolist() == [127, 127, -128]
    assert dtypes.cast_to(np.array([0.0, 2.5]), "bool").tolist() == [False, True]


# ------------------------------------------------------------------ shapes that strategies produce


def test_strategy_shaped_programs():
    """Split/fused loops, a factorised reduction, a cache buffer, a guarded concat, an index table."""
    a, w = rand(4, 8), rand(8, 3)
    cases = {
        # loop_split: c -> co*4+ci
        "B^{4}_{tx=0}L^{3}_{a=0}L^{2}_{co=0}L^{4}_{ci=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+"
        "A^{f64,g}_{tx,co*4+ci}*W^{f64,g}_{co*4+ci,a};];": a @ w,
        # loop_fusion: tx,a -> f with // and %
        "L^{12}_{f=0}L^{8}_{c=0}[C^{f64,g}_{f//3,f%3}=C^{f64,g}_{f//3,f%3}+A^{f64,g}_{f//3,c}*W^{f64,g}_{c,f%3};];": a @ w,
        # reduction_factorization: two partial sums then a combine
        "B^{4}_{tx=0}L^{3}_{a=0}L^{2}_{h=0}L^{4}_{r=0}[P^{f64,g}_{tx,a,h}=P^{f64,g}_{tx,a,h}+"
        "A^{f64,g}_{tx,h*4+r}*W^{f64,g}_{h*4+r,a};];"
        "B^{4}_{tx=0}L^{3}_{a=0}L^{2}_{h=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+P^{f64,g}_{tx,a,h};];": a @ w,
        # cache_read into a shared buffer, then compute from it
        "B^{4}_{tx=0}L^{8}_{c=0}[S^{f64,s}_{tx,c}=A^{f64,g}_{tx,c};];"
        "B^{4}_{tx=0}L^{3}_{a=0}L^{8}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+S^{f64,s}_{tx,c}*W^{f64,g}_{c,a};];": a @ w,
        # precompute_indices: an i64 index table, then an indirect read
        "B^{8}_{tx=0}[G^{i64,g}_{tx}=7-tx;];"
        "B^{4}_{tx=0}L^{3}_{a=0}L^{8}_{c=0}[C^{f64,g}_{tx,a}=C^{f64,g}_{tx,a}+"
        "A^{f64,g}_{tx,G^{i64,g}_{c}}*W^{f64,g}_{G^{i64,g}_{c},a};];": a @ w,
    }
    header = "input A: f64[4, 8]\nparam W: f64[8, 3]\noutput C: f64[4, 3]"
    for body, expected in cases.items():
        p = prog(header, body)
        info = check(p)
        assert info.ok, (body, [str(d) for d in info.errors])
        np.testing.assert_allclose(run(p, {"A": a, "W": w}, info=info)["C"], expected, rtol=1e-12, err_msg=body)


def test_guarded_concat_and_split_back():
    """tensor_concat: copy two inputs into one buffer under a guard, one block over the doubled extent."""
    body = (
        "B^{6}_{a=0}[K^{f64,g}_{a}=if_then_else(a<3,A^{f64,g}_{a},E^{f64,g}_{a-3});];"
        "B^{6}_{a=0}[M^{f64,g}_{a}=exp(K^{f64,g}_{a});];"
        "B^{3}_{a=0}[C^{f64,g}_{a}=M^{f64,g}_{a};D^{f64,g}_{a}=M^{f64,g}_{a+3};];"
    )
    p = prog("input A: f64[3]\ninput E: f64[3]\noutput C: f64[3]\noutput D: f64[3]", body)
    a, e = rand(3), rand(3)
    out = run(p, {"A": a, "E": e})
    np.testing.assert_allclose(out["C"], np.exp(a))
    np.testing.assert_allclose(out["D"], np.exp(e))


def test_flash_attention_without_tiling():
    """One streaming pass: running max, rescaled running sum and rescaled running output (#43)."""
    n, m, d = 2, 5, 3
    body = (
        f"B^{{{n}}}_{{tx=0}}L^{{{m}}}_{{a=0}}["
        f"S^{{f64,g}}_{{tx,a}}=Q^{{f64,g}}_{{tx,0}}*K^{{f64,g}}_{{a,0}}+Q^{{f64,g}}_{{tx,1}}*K^{{f64,g}}_{{a,1}};"
        f"M^{{f64,g}}_{{tx,a}}=max(if_then_else(a-1<0,-inf,M^{{f64,g}}_{{tx,a-1}}),S^{{f64,g}}_{{tx,a}});"
        f"R^{{f64,g}}_{{tx,a}}=exp(if_then_else(a-1<0,-inf,M^{{f64,g}}_{{tx,a-1}})-M^{{f64,g}}_{{tx,a}});"
        f"F^{{f64,g}}_{{tx,a}}=if_then_else(a-1<0,0,F^{{f64,g}}_{{tx,a-1}})*R^{{f64,g}}_{{tx,a}}"
        f"+exp(S^{{f64,g}}_{{tx,a}}-M^{{f64,g}}_{{tx,a}});"
        f"L^{{{d}}}_{{c=0}}[O^{{f64,g}}_{{tx,a,c}}=if_then_else(a-1<0,0,O^{{f64,g}}_{{tx,a-1,c}})*"
        f"R^{{f64,g}}_{{tx,a}}+exp(S^{{f64,g}}_{{tx,a}}-M^{{f64,g}}_{{tx,a}})*V^{{f64,g}}_{{a,c}};];];"
        f"B^{{{n}}}_{{tx=0}}L^{{{d}}}_{{c=0}}[C^{{f64,g}}_{{tx,c}}=O^{{f64,g}}_{{tx,{m - 1},c}}/"
        f"F^{{f64,g}}_{{tx,{m - 1}}};];"
    )
    p = prog(f"input Q: f64[{n}, 2]\ninput K: f64[{m}, 2]\ninput V: f64[{m}, {d}]\noutput C: f64[{n}, {d}]", body)
    info = check(p)
    assert info.ok, [str(x) for x in info.errors]
    q, k, v = rand(n, 2), rand(m, 2), rand(m, d)
    scores = q @ k.T
    probs = np.exp(scores - scores.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(run(p, {"Q": q, "K": k, "V": v}, info=info)["C"], probs @ v, rtol=1e-12)
