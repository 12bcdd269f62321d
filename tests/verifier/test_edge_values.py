"""The edge-value rules of docs/leir.md §6, each checked three ways: the interpreter (vectorised and one
iteration at a time), the TVM llvm kernel, and an independent computation of the *rule* in plain
Python/NumPy — on the inputs the rule is about: NaN, ±inf, out-of-range floats, zero divisors.

A kernel that traps (SIGFPE) kills the test process, which fails the run loudly as well.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from leir.checker import check
from leir.interpreter import run as interpret
from leir.program import load_program
from verifier.build import build
from verifier.lowering import to_tvmscript

NAN, INF = math.nan, math.inf
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
INTS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def _all_three(text: str, inputs: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """Outputs of the interpreter (both plans) and of the kernel (run twice: no garbage between calls)."""
    program = load_program(text)
    info = check(program)
    assert info.ok, [str(d) for d in info.errors]
    kernel = build(program, info=info)
    first, second = kernel.run(inputs), kernel.run(inputs)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name], err_msg=f"{name}: kernel not repeatable")
    return {"vectorised": interpret(program, inputs, info=info),
            "sequential": interpret(program, inputs, info=info, vectorise=False), "kernel": first}


def _assert_rule(results: dict[str, dict[str, np.ndarray]], expected: dict[str, np.ndarray]) -> None:
    for who, outputs in results.items():
        for name, want in expected.items():
            got = np.asarray(outputs[name])
            assert got.dtype == want.dtype, (who, name, got.dtype, want.dtype)
            # NaN must sit exactly where the rule puts it; everything else is bit-exact in value
            np.testing.assert_array_equal(got, want, err_msg=f"{who}: {name}")


def _ref(name: str, dtype: str, *idx: str) -> str:
    return f"{name}^{{{dtype},g}}" + ("_{" + ",".join(idx) + "}" if idx else "")


# ------------------------------------------------------------------ order of reductions (header order)


@st.composite
def _reduction_nests(draw):
    """A pure reduction S plus a recurrence Y along one loop, under random header orders and kinds."""
    names = ["i", "k", "j"][: draw(st.integers(2, 3))]
    extents = {v: draw(st.integers(2, 4)) for v in names}
    order = draw(st.permutations(names))
    kinds = {v: draw(st.sampled_from("LPVU")) for v in names}
    carried = draw(st.sampled_from(names))
    split = draw(st.integers(0, len(order) - 1))  # outer block loops / nested block loops
    values = draw(st.lists(st.sampled_from([1e8, -1e8, 1.0, 3.5, -2.25, 1e-3, 7.0]),
                           min_size=math.prod(extents.values()), max_size=math.prod(extents.values())))
    return names, extents, order, kinds, carried, split, np.array(values, np.float32).reshape(
        [extents[v] for v in names])


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_reduction_nests())
def test_reductions_combine_in_header_order_whatever_runs_vectorised(nest):
    names, extents, order, kinds, carried, split, a = nest
    prev = [f"{v}-1" if v == carried else v for v in names]
    body = (f"{_ref('S', 'f32')}={_ref('S', 'f32')}+{_ref('A', 'f32', *names)};"
            f"{_ref('R', 'f32', names[0])}={_ref('R', 'f32', names[0])}+{_ref('A', 'f32', *names)};"
            f"{_ref('Y', 'f32', *names)}=if_then_else({carried}-1<0,0,{_ref('Y', 'f32', *prev)})"
            f"+{_ref('A', 'f32', *names)};")
    heads = [f"{kinds[v]}^{{{extents[v]}}}_{{{v}=0}}" for v in order]
    inner = "".join(heads[split:]) + f"[{body}]"
    nest_text = "".join(heads[:split]) + f"[{inner};];" if split else inner + ";"
    shape = ",".join(str(extents[v]) for v in names)
    text = (f"input A: f32[{shape}]\noutput S: f32[]\noutput R: f32[{extents[names[0]]}]\n"
            f"output Y: f32[{shape}]\n---\n{nest_text}\n")
    # the rule: one iteration at a time, in header order, rounding to f32 after every addition
    s = np.float32(0)
    r = np.zeros(extents[names[0]], np.float32)
    y = np.zeros(a.shape, np.float32)
    for values in itertools.product(*(range(extents[v]) for v in order)):
        at = dict(zip(order, values, strict=True))
        idx = tuple(at[v] for v in names)
        s = np.float32(s + a[idx])
        r[idx[0]] = np.float32(r[idx[0]] + a[idx])
        before = tuple(at[v] - (v == carried) for v in names)
        y[idx] = np.float32((0 if at[carried] == 0 else y[before]) + a[idx])
    _assert_rule(_all_three(text, {"A": a}), {"S": np.array(s), "R": r, "Y": y})


def test_the_reported_mixed_nest_sums_to_one():
    text = ("input A: f32[2,2]\noutput S: f32[]\noutput Y: f32[2,2]\n---\n"
            "L^{2}_{i=0}L^{2}_{k=0}[S^{f32,g}=S^{f32,g}+A^{f32,g}_{i,k};Y^{f32,g}_{i,k}=if_then_else(k-1<0,0,"
            "Y^{f32,g}_{i,k-1})+A^{f32,g}_{i,k};];\n")
    a = np.array([[1e8, 1], [-1e8, 1]], np.float32)
    for outputs in _all_three(text, {"A": a}).values():
        assert outputs["S"] == np.float32(1)


# ------------------------------------------------------------------------------ NaN through max / min

EDGE_FLOATS = [NAN, INF, -INF, -1.0, 0.0, -0.0, 2.5, -3.0, 1e30]


def _nan_max(a, b):
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def _nan_min(a, b):
    return math.nan if math.isnan(a) or math.isnan(b) else min(a, b)


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
def test_max_and_min_propagate_nan_binary_and_in_reductions(dtype):
    n = len(EDGE_FLOATS)
    a = np.array([[x, y] for x in EDGE_FLOATS for y in EDGE_FLOATS], FLOATS[dtype]).T.copy()  # (2, n*n)
    m = n * n
    r = lambda name, *i: _ref(name, dtype, *i)  # noqa: E731
    text = (f"input A: {dtype}[2,{m}]\noutput C: {dtype}[{m}]\noutput D: {dtype}[{m}]\n"
            f"output E: {dtype}[{m}]\noutput F: {dtype}[{m}]\noutput G: {dtype}[2]\noutput H: {dtype}[2]\n"
            f"output K: {dtype}[2]\noutput Q: {dtype}[2,{m}]\n---\n"
            f"L^{{{m}}}_{{c=0}}[{r('C', 'c')}=max({r('A', '0', 'c')},{r('A', '1', 'c')});"
            f"{r('D', 'c')}=min({r('A', '0', 'c')},{r('A', '1', 'c')});"
            f"{r('E', 'c')}=max(sqrt({r('A', '0', 'c')}),0);{r('F', 'c')}=max(0,{r('A', '1', 'c')});];\n"
            # G, H: pure reductions (scatter path); K: a max reduction the block also reads (sequential)
            f"L^{{2}}_{{a=0}}L^{{{m}}}_{{c=0}}[{r('G', 'a')}=max({r('G', 'a')},{r('A', 'a', 'c')});"
            f"{r('H', 'a')}=min({r('A', 'a', 'c')},{r('H', 'a')});"
            f"{r('K', 'a')}=max({r('K', 'a')},{r('A', 'a', 'c')});{r('Q', 'a', 'c')}={r('K', 'a')};];\n")
    t = FLOATS[dtype]
    x, y = a[0].astype(float), a[1].astype(float)
    with np.errstate(invalid="ignore"):
        sq = np.sqrt(x)
    expected = {
        "C": np.array([_nan_max(p, q) for p, q in zip(x, y, strict=True)], t),
        "D": np.array([_nan_min(p, q) for p, q in zip(x, y, strict=True)], t),
        "E": np.array([_nan_max(p, 0.0) for p in sq], t),
        "F": np.array([_nan_max(0.0, q) for q in y], t),
        "G": np.array([_fold(_nan_max, -INF, row) for row in a.astype(float)], t),
        "H": np.array([_fold(_nan_min, INF, row) for row in a.astype(float)], t),
        "K": np.array([_fold(_nan_max, -INF, row) for row in a.astype(float)], t),
        "Q": np.array([list(itertools.accumulate(row, _nan_max)) for row in a.astype(float)], t),
    }
    _assert_rule(_all_three(text, {"A": a}), expected)


def _fold(fn, init, values):
    out = init
    for v in values:
        out = fn(out, v)
    return out


# ------------------------------------------------------------------------------- float → int conversion

CONVERT = [NAN, INF, -INF, -2.0, -0.5, 0.0, 3.99, 127.5, 128.0, -129.0, 255.9, 256.0, 300.0, 65535.5,
           -32769.0, 2.0**31, -(2.0**31) - 1.0, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30]


def _saturate(value: float, dtype: str) -> int:
    """The rule, in plain Python: NaN → 0, truncate, clamp to the type."""
    info = np.iinfo(INTS[dtype])
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return int(info.max) if value > 0 else int(info.min)
    return min(max(math.trunc(value), int(info.min)), int(info.max))


@pytest.mark.parametrize("src", ["f32", "f64", "f16"])
def test_float_to_int_truncates_and_saturates_and_nan_is_zero(src):
    a = np.array(CONVERT, FLOATS[src])
    n = len(CONVERT)
    names = {d: "C" + "abcdefgh"[k] for k, d in enumerate(INTS)}
    header = f"input A: {src}[{n}]\n" + "".join(f"output {names[d]}: {d}[{n}]\n" for d in INTS)
    header += f"output Z: bool[{n}]\noutput Sq: i32[{n}]\noutput Lit: u8[{n}]\noutput Back: f64[{n}]\n---\n"
    body = "".join(f"{_ref(names[d], d, 'c')}={_ref('A', src, 'c')};" for d in INTS)
    body += f"{_ref('Z', 'bool', 'c')}={_ref('A', src, 'c')};"
    body += f"{_ref('Sq', 'i32', 'c')}=sqrt({_ref('A', src, 'c')}*{_ref('A', src, 'c')});"
    # in-range float literals truncate (out-of-range ones are refused by the checker: literal-out-of-range)
    body += f"{_ref('Lit', 'u8', 'c')}=if_then_else({_ref('A', src, 'c')}<0,2.5,254.7);"
    # a cast read: an f64 intermediate read as i16, then converted to the f64 statement
    body += f"{_ref('X', 'f64', 'c')}={_ref('A', src, 'c')};{_ref('Back', 'f64', 'c')}={_ref('X', 'i16', 'c')};"
    text = header + f"L^{{{n}}}_{{c=0}}[{body}];\n"
    values = a.astype(np.float64)
    expected = {names[d]: np.array([_saturate(v, d) for v in values], INTS[d]) for d in INTS}
    # bool statements compute in i64, then store value != 0
    expected["Z"] = np.array([_saturate(v, "i64") != 0 for v in values])
    # sqrt's argument is computed in i32 (A converted first), its float result converted back
    sq_arg = [np.int32(_saturate(v, "i32")) for v in values]
    with np.errstate(over="ignore"):
        expected["Sq"] = np.array([_saturate(math.sqrt(float(np.int32(s * s))) if np.int32(s * s) >= 0
                                             else math.nan, "i32") for s in sq_arg], np.int32)
    expected["Lit"] = np.array([2 if v < 0 else 254 for v in values], np.uint8)
    expected["Back"] = np.array([float(_saturate(v, "i16")) for v in values], np.float64)
    _assert_rule(_all_three(text, {"A": a}), expected)


# ----------------------------------------------------------------------------- integer // % / by zero


def _wrap(value: int, dtype: str) -> int:
    bits = np.iinfo(INTS[dtype]).bits
    value %= 1 << bits
    return value - (1 << bits) if dtype.startswith("i") and value >= 1 << (bits - 1) else value


def _int_rule(op: str, a: int, b: int, dtype: str) -> int:
    if b == 0:
        return 0
    return _wrap(a % b if op == "%" else a // b, dtype)  # Python's // and % are floor division


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64", "u8", "u32"])
def test_integer_division_and_modulo_by_zero_give_zero_and_floor_otherwise(dtype):
    info = np.iinfo(INTS[dtype])
    signed = info.min < 0
    dividends = [7, 5, 0, 1, int(info.max)] + ([-7, -5, -1, int(info.min)] if signed else [200 % (info.max + 1)])
    divisors = [0, 1, 2, 3] + ([-1, -2, -3, int(info.min)] if signed else [int(info.max)])
    pairs = [(p, q) for p in dividends for q in divisors]
    n = len(pairs)
    i = np.array([p for p, _ in pairs], INTS[dtype])
    j = np.array([q for _, q in pairs], INTS[dtype])
    r = lambda name, *idx: _ref(name, dtype, *idx)  # noqa: E731
    text = (f"input I: {dtype}[{n}]\ninput J: {dtype}[{n}]\n"
            + "".join(f"output {o}: {dtype}[{n}]\n" for o in ("C", "D", "E", "F", "G"))
            + f"---\nL^{{{n}}}_{{c=0}}[{r('C', 'c')}={r('I', 'c')}//{r('J', 'c')};"
            f"{r('D', 'c')}={r('I', 'c')}%{r('J', 'c')};{r('E', 'c')}={r('I', 'c')}/{r('J', 'c')};"
            # loop-variable divisors: c % 9 - 4 runs through zero (and negatives when signed)
            f"{r('F', 'c')}={r('I', 'c')}//(c%9-{4 if signed else 0});"
            f"{r('G', 'c')}={r('I', 'c')}%(c%5);];\n")
    loop_div = [_wrap(c % 9 - (4 if signed else 0), dtype) for c in range(n)]
    expected = {
        "C": np.array([_int_rule("//", p, q, dtype) for p, q in pairs], INTS[dtype]),
        "D": np.array([_int_rule("%", p, q, dtype) for p, q in pairs], INTS[dtype]),
        "E": np.array([_int_rule("//", p, q, dtype) for p, q in pairs], INTS[dtype]),
        "F": np.array([_int_rule("//", p, loop_div[c], dtype) for c, (p, _) in enumerate(pairs)], INTS[dtype]),
        "G": np.array([_int_rule("%", p, c % 5, dtype) for c, (p, _) in enumerate(pairs)], INTS[dtype]),
    }
    _assert_rule(_all_three(text, {"I": i, "J": j}), expected)


# ------------------------------------------------------------------------------------ float // and %

DIVIDENDS = [1.0, -1.0, 7.5, -7.5, 0.0, -0.0, 5.0, 1e30, INF, -INF, NAN, 0.3]
FDIVISORS = [0.1, -0.7, 2.0, -2.0, 0.0, -0.0, INF, -INF, NAN, 3.0, 1e-3]


def _py_floordiv(a: float, b: float) -> float:
    """Python's float // (CPython's float_floor_div is NumPy's and PyTorch's algorithm); b = 0 is IEEE a/b."""
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(INF, a) * math.copysign(1.0, b)
    return a // b


def _py_mod(a: float, b: float) -> float:
    return math.nan if b == 0 else a % b


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
def test_float_floordiv_follows_numpy_and_pytorch_and_float_mod_is_refused(dtype):
    import torch

    pairs = [(p, q) for p in DIVIDENDS for q in FDIVISORS]
    n = len(pairs)
    x = np.array([p for p, _ in pairs], FLOATS[dtype])
    y = np.array([q for _, q in pairs], FLOATS[dtype])
    r = lambda name, *idx: _ref(name, dtype, *idx)  # noqa: E731
    head = f"input X: {dtype}[{n}]\ninput Y: {dtype}[{n}]\noutput C: {dtype}[{n}]\n---\n"
    text = head + f"L^{{{n}}}_{{c=0}}[{r('C', 'c')}={r('X', 'c')}//{r('Y', 'c')};];\n"
    if dtype == "f64":  # independent: CPython's own float arithmetic
        with np.errstate(all="ignore"):
            expected = {"C": np.array([_py_floordiv(p, q) for p, q in pairs])}
    else:  # PyTorch's floor_divide in the dtype itself
        expected = {"C": torch.floor_divide(torch.from_numpy(x), torch.from_numpy(y)).numpy()}
    results = _all_three(text, {"X": x, "Y": y})
    _assert_rule(results, expected)
    if dtype != "f16":  # the reported case (f16's nearest 0.1 is 0.09998, so there 1.0 // it is 10)
        assert results["kernel"]["C"][pairs.index((1.0, 0.1))] == 9
    # float % is refused by the checker (the kernel cannot compute it on every operand form)
    modulo = head + f"L^{{{n}}}_{{c=0}}[{r('C', 'c')}={r('X', 'c')}%{r('Y', 'c')};];\n"
    assert [d.code for d in check(load_program(modulo)).errors] == ["float-modulo"]


# ------------------------------------------------------------------ reads of elements not yet written

READS = ["n-1-i", "(i+1)%n", "(3*i+1)%n", "i//2", "i"]


def _unwritten_expected(index: str, a: np.ndarray, initial: float) -> np.ndarray:
    n = a.shape[0]
    out = np.empty_like(a)
    for i in range(n):
        j = eval(index, {}, {"i": i, "n": n})
        out[i] = a[j] if j <= i else initial  # element j is written in iteration j
    return out


@pytest.mark.parametrize("index", READS)
def test_an_element_read_before_it_is_written_reads_zero(index):
    n = 512
    subscript = index.replace("n", str(n))
    a = np.arange(1, n + 1, dtype=np.float32)
    intermediate = (f"input A: f32[{n}]\noutput C: f32[{n}]\n---\n"
                    f"L^{{{n}}}_{{i=0}}[X^{{f32,g}}_{{i}}=A^{{f32,g}}_{{i}};C^{{f32,g}}_{{i}}=X^{{f32,g}}_{{{subscript}}};];\n")
    output = (f"input A: f32[{n}]\noutput C: f32[{n}]\noutput D: f32[{n}]\n---\n"
              f"L^{{{n}}}_{{i=0}}[C^{{f32,g}}_{{i}}=A^{{f32,g}}_{{i}};D^{{f32,g}}_{{i}}=C^{{f32,g}}_{{{subscript}}};];\n")
    _assert_rule(_all_three(intermediate, {"A": a}), {"C": _unwritten_expected(index, a, 0.0)})
    _assert_rule(_all_three(output, {"A": a}), {"C": a, "D": _unwritten_expected(index, a, 0.0)})
    # the same-iteration read is proved to meet only written elements: no fill (i//2 is filled: the
    # proof is syntactic, and a fill is always correct)
    if index == "i":
        assert "zero_X" not in to_tvmscript(load_program(intermediate))


@pytest.mark.parametrize("index", ["n-1-i", "i"])
def test_a_reduction_read_before_its_update_reads_its_init(index):
    """The init is set once before the top-level block, so an element not yet reduced holds it."""
    n, k = 8, 3
    subscript = index.replace("n", str(n))
    a = np.arange(n * k, dtype=np.float32).reshape(n, k) - 5
    text = (f"input A: f32[{n},{k}]\noutput C: f32[{n}]\n---\n"
            f"L^{{{n}}}_{{i=0}}[L^{{{k}}}_{{c=0}}[M^{{f32,g}}_{{i}}=max(M^{{f32,g}}_{{i}},A^{{f32,g}}_{{i,c}});];"
            f"C^{{f32,g}}_{{i}}=M^{{f32,g}}_{{{subscript}}};];\n")
    _assert_rule(_all_three(text, {"A": a}), {"C": _unwritten_expected(index, a.max(axis=1), -INF)})


# ------------------------------------------------------- random elementwise programs on edge values

_F_LEAVES = ["A^{f,g}_{c}", "B^{f,g}_{c}", "I^{i32,g}_{c}", "2", "0.5", "inf"]
_BIN = ["+", "-", "*", "/", "//", "%"]


@st.composite
def _expressions(draw, depth: int = 3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(_F_LEAVES))
    kind = draw(st.sampled_from(["bin", "bin", "minmax", "call", "ite"]))
    left = draw(_expressions(depth - 1))
    right = draw(_expressions(depth - 1))
    if kind == "bin":
        return f"({left}{draw(st.sampled_from(_BIN))}{right})"
    if kind == "minmax":
        return f"{draw(st.sampled_from(['max', 'min']))}({left},{right})"
    if kind == "call":
        return f"{draw(st.sampled_from(['sqrt', 'abs']))}({left})"
    op = draw(st.sampled_from(["<", "<=", "==", "!=", ">"]))
    return f"if_then_else({left}{op}{right},{right},{left})"


EDGE_A = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.1, 2.5, -7.5, 3e9, -300.5, 1e-3, 255.9, 6.0, -2.0])
EDGE_B = np.array([0.0, 2.0, NAN, -INF, 0.1, -0.0, INF, -1.0, 3.0, 0.5, -4.0, 1e30, 7.0, 0.0, -2.0, 1.0])
EDGE_I = np.array([0, 1, -1, 2, -2, 0, 7, -7, 2**31 - 1, -(2**31), 3, 0, -3, 5, 0, 4], np.int32)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions(), st.sampled_from(["f32", "f64", "i32", "i16"]))
def test_random_expressions_on_edge_values_agree_in_both_semantics(expr, out):
    """Interpreter and kernel compute the same bits for any mix of the edge-value operations."""
    assume(out.startswith("i") or "%" not in expr)  # float % is the checker's float-modulo error
    fd = "f64" if out == "f64" else "f32"
    n = EDGE_A.shape[0]
    text = (f"input A: {fd}[{n}]\ninput B: {fd}[{n}]\ninput I: i32[{n}]\noutput C: {out}[{n}]\n---\n"
            f"L^{{{n}}}_{{c=0}}[C^{{{out},g}}_{{c}}={expr.replace('^{f,', '^{' + fd + ',')};];\n")
    inputs = {"A": EDGE_A.astype(FLOATS[fd]), "B": EDGE_B.astype(FLOATS[fd]), "I": EDGE_I}
    results = _all_three(text, inputs)
    for who in ("sequential", "kernel"):
        np.testing.assert_array_equal(results[who]["C"], results["vectorised"]["C"], err_msg=f"{who}: {text}")


# ------------------------------------------------------------- special values meet the edge cases


def test_special_values_meet_every_edge_the_program_can_meet():
    from verifier.inputs import converted_tensors, make_inputs

    text = ("input A: f32[64]\ninput B: f32[64]\ninput I: i32[64]\ninput J: i32[64]\ninput K: f32[64]\n"
            "output C: f32[64]\noutput D: i32[64]\noutput E: u8[64]\noutput F: i64[64]\n---\n"
            "L^{64}_{c=0}[C^{f32,g}_{c}=log(A^{f32,g}_{c})/B^{f32,g}_{c};D^{i32,g}_{c}=I^{i32,g}_{c}//J^{i32,g}_{c};"
            "E^{u8,g}_{c}=K^{f32,g}_{c};F^{i64,g}_{c}=if_then_else(B^{f32,g}_{c}>0,1,0);];\n")
    program = load_program(text)
    assert converted_tensors(program) == {"K"}  # B is only compared: not a conversion
    plain = make_inputs(program, seed=3)
    special = make_inputs(program, seed=3, special_values=True)
    assert not (plain["J"] == 0).any() and (special["J"] == 0).any()  # zero divisors only when asked
    assert (special["I"] == np.iinfo(np.int32).min).any() or (special["J"] == -1).any()
    assert np.isnan(special["B"]).sum() == 1 and (special["B"] == 0).any()  # float divisor: NaN and 0
    log_arg = special["A"]
    assert np.isnan(log_arg).any() and (log_arg == 0).any() and (log_arg < 0).any()  # log meets -inf, NaN
    k = special["K"]
    assert (np.isinf(k) | (np.abs(k) > 255)).sum() >= 2  # outside u8 for the conversion
    again = make_inputs(program, seed=3, special_values=True)
    assert all(special[n].tobytes() == again[n].tobytes() for n in special)  # determinism
    results = _all_three(text, special)  # and both semantics agree on them
    # log differs in the last ulp between libm and TVM: C within 1e-6, NaN/inf in the same places
    np.testing.assert_allclose(results["kernel"]["C"], results["vectorised"]["C"], rtol=1e-6, equal_nan=True)
    for name in ("D", "E", "F"):
        np.testing.assert_array_equal(results["kernel"][name], results["vectorised"][name], err_msg=name)


# ------------------------------------------------------------------ programs that meet +inf and -inf


def _assert_pattern_and_close(results: dict[str, dict[str, np.ndarray]], expected: dict[str, np.ndarray],
                              rtol: float) -> None:
    """NaN/+inf/-inf exactly where the rule puts them; finite values within ``rtol`` (libm vs LLVM exp)."""
    for who, outputs in results.items():
        for name, want in expected.items():
            got = np.asarray(outputs[name])
            for test in (np.isnan, np.isposinf, np.isneginf):
                np.testing.assert_array_equal(test(got), test(want), err_msg=f"{who}: {name} {test.__name__}")
            finite = np.isfinite(want)
            np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=0, err_msg=f"{who}: {name}")


# rows: +inf with finite, -inf with finite, +inf and -inf together, all finite, all -inf
INF_ROWS = np.array([[1.0, INF, 2.0, -3.0], [-1.0, 0.5, -INF, 2.0], [INF, 1.0, -INF, 0.0],
                     [0.25, -2.0, 3.0, 1.5], [-INF, -INF, -INF, -INF]])


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_reductions_and_softmax_over_infinities_follow_ieee(dtype):
    """max/min/sum over rows holding ±inf, and a softmax: inf wins max, inf-inf is NaN, exp(-inf) is 0."""
    t = FLOATS[dtype]
    a = INF_ROWS.astype(t)
    n, k = a.shape
    r = lambda name, *idx: _ref(name, dtype, *idx)  # noqa: E731
    text = (f"input A: {dtype}[{n},{k}]\noutput X: {dtype}[{n}]\noutput N: {dtype}[{n}]\n"
            f"output S: {dtype}[{n}]\noutput P: {dtype}[{n},{k}]\n---\n"
            f"L^{{{n}}}_{{i=0}}L^{{{k}}}_{{c=0}}[{r('X', 'i')}=max({r('X', 'i')},{r('A', 'i', 'c')});"
            f"{r('N', 'i')}=min({r('N', 'i')},{r('A', 'i', 'c')});{r('S', 'i')}={r('S', 'i')}+{r('A', 'i', 'c')};];\n"
            f"L^{{{n}}}_{{i=0}}L^{{{k}}}_{{c=0}}[{r('Z', 'i')}={r('Z', 'i')}+exp({r('A', 'i', 'c')}-{r('X', 'i')});];\n"
            f"L^{{{n}}}_{{i=0}}L^{{{k}}}_{{c=0}}[{r('P', 'i', 'c')}=exp({r('A', 'i', 'c')}-{r('X', 'i')})"
            f"/{r('Z', 'i')};];\n")
    # the rule, in NumPy: IEEE arithmetic in the program's dtype, NaN-propagating max/min
    with np.errstate(invalid="ignore"):
        x, m = a.max(axis=1), a.min(axis=1)
        s = np.zeros(n, t)
        for c in range(k):
            s = (s + a[:, c]).astype(t)
        e = np.exp(a - x[:, None])
        p = e / e.sum(axis=1, keepdims=True)
    assert np.isposinf(x[0]) and np.isneginf(m[1]) and np.isnan(s[2]) and np.isposinf(s[0])
    assert np.isnan(p[0]).all() and np.isfinite(p[1]).all() and p[1, 2] == 0 and np.isnan(p[4]).all()
    _assert_pattern_and_close(_all_three(text, {"A": a}), {"X": x, "N": m, "S": s, "P": p}, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_elementwise_ops_and_conversions_at_infinities(dtype):
    """exp/log/sqrt of ±inf, division by and of inf, inf-inf, inf*0, and ±inf converted to integers."""
    t = FLOATS[dtype]
    a = np.array([INF, -INF, INF, -INF, 1.0, -1.0, 0.0, INF, -INF, 3.0], t)
    b = np.array([INF, INF, -INF, -INF, INF, INF, INF, 0.0, 2.0, -INF], t)
    n = a.size
    r = lambda name, d=dtype: _ref(name, d, "c")  # noqa: E731
    text = (f"input A: {dtype}[{n}]\ninput B: {dtype}[{n}]\n"
            + "".join(f"output {o}: {dtype}[{n}]\n" for o in "EGHQDMY")
            + f"output I: i32[{n}]\noutput U: u8[{n}]\noutput F: i64[{n}]\n---\n"
            f"L^{{{n}}}_{{c=0}}[{r('E')}=exp({r('A')});{r('G')}=log({r('A')});{r('H')}=sqrt({r('A')});"
            f"{r('Q')}={r('A')}/{r('B')};{r('D')}={r('A')}-{r('B')};{r('M')}={r('A')}*0;"
            f"{r('Y')}={r('A')}//{r('B')};"
            f"{r('I', 'i32')}={r('A')};{r('U', 'u8')}={r('B')};{r('F', 'i64')}={r('Q')};];\n")
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        expected = {"E": np.exp(a), "G": np.log(a), "H": np.sqrt(a), "Q": a / b, "D": a - b, "M": a * t(0),
                    "Y": np.floor_divide(a, b)}
        ratio = a / b
    # float -> integer: truncate, then saturate; NaN -> 0 (docs/leir.md §6)
    def saturate(values: np.ndarray, target) -> np.ndarray:
        info = np.iinfo(target)
        return np.array([0 if math.isnan(v) else info.max if v >= info.max else info.min if v <= info.min
                         else int(v) for v in values.astype(np.float64)], target)

    expected["I"], expected["U"], expected["F"] = saturate(a, np.int32), saturate(b, np.uint8), saturate(
        ratio, np.int64)
    assert np.isnan(expected["D"][0]) and np.isnan(expected["M"][0]) and expected["Q"][4] == 0
    assert np.isposinf(expected["Q"][7]) and expected["E"][1] == 0 and np.isnan(expected["H"][1])
    results = _all_three(text, {"A": a, "B": b})
    floats = {k: v for k, v in expected.items() if k in "EGHQDMY"}
    _assert_pattern_and_close(results, floats, rtol=1e-6)  # exp/log of finite values: an ulp apart
    _assert_rule(results, {k: expected[k] for k in "IUF"})


# ------------------------------------------- TVM's real-number identities are not IEEE: never applied

# each form is one TVM folds or cancels for integers and used to for floats (x*0, 0/x at TIR
# construction; x-x, (x+y)-x in its simplifier), wrong at ±inf and NaN
IDENTITY_FORMS = ["A*0", "0*A", "A*0.0", "0/A", "A*(1-1)", "A*c", "A-A", "A+B-A", "A+B-B", "(A+B)-(A+B)",
                  "A*B-A*B", "exp(A)-exp(A)", "min(A,B)-min(A,B)", "A+A-A", "A-(A-A)", "(A-A)*B", "A*0+B",
                  "(A*0)/(A*0)", "A/(c-c)"]


@pytest.mark.parametrize("dtype", ["f32", "f64", "f16"])
@pytest.mark.parametrize("form", IDENTITY_FORMS)
def test_float_identities_of_real_numbers_are_not_folded(form, dtype):
    """Kernel = interpreter = NumPy's IEEE evaluation of the form, at ±inf, NaN, ±0 and finite values."""
    t = FLOATS[dtype]
    a = np.array([INF, -INF, NAN, 1.0, -0.0, 0.0, 2.0, -3.0], t)
    b = np.array([0.0, INF, 1.0, NAN, 2.0, -INF, 0.0, 1.0], t)
    expr = form.replace("A", _ref("A", dtype, "c")).replace("B", _ref("B", dtype, "c"))
    # an extent-1 loop: c is the constant 0 to TVM
    text = (f"input A: {dtype}[8]\ninput B: {dtype}[8]\noutput C: {dtype}[8]\n---\n"
            f"L^{{8}}_{{i=0}}L^{{1}}_{{c=0}}[{_ref('C', dtype, 'i')}={expr.replace('_{c}', '_{i}')};];\n")
    c = t(0)
    with np.errstate(all="ignore"):
        want = eval(form.replace("exp", "np.exp").replace("min(", "np.minimum("),
                    {"np": np, "A": a, "B": b, "c": c})
    want = np.asarray(want, t)
    assert np.isnan(want).any()  # every form meets a NaN the identity would hide
    _assert_pattern_and_close(_all_three(text, {"A": a, "B": b}), {"C": want}, rtol=0)


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64", "bf16"])
@pytest.mark.parametrize("target", ["llvm", "llvm-host"])
def test_nan_propagating_max_and_min_vectorise_under_a_v_loop(dtype, target):
    """The NaN test is a bit test (``edge_ops.isnan``): ``T.isnan`` made TVM's vectoriser run a clamp
    under a ``V`` loop one lane at a time. Vectorised, it still propagates NaN, in every float dtype."""
    import re

    text = (f"input A: {dtype}[4, 32]\noutput C: {dtype}[4, 32]\n---\n"
            f"L^{{4}}_{{a=0}}KIND^{{32}}_{{b=0}}[C^{{{dtype},g}}_{{a,b}}="
            f"min(max(A^{{{dtype},g}}_{{a,b}},-1),1);];")
    values = np.linspace(-3, 3, 128).reshape(4, 32)
    values[0, :6] = [NAN, -NAN, INF, -INF, -0.0, 0.5]
    values = values.astype(np.float32 if dtype == "bf16" else FLOATS[dtype])
    vector = build(load_program(text.replace("KIND", "V")), target, cache=False)
    serial = build(load_program(text.replace("KIND", "L")), target, cache=False)
    # every comparison across all 32 lanes (scalarised by TVM, the clamp came back from LLVM's SLP
    # vectoriser in 2- to 8-lane pieces)
    compares = re.findall(r"fcmp \w+ <(\d+) x", vector.source("llvm"))
    assert compares and set(compares) == {"32"}, compares
    got = vector.run({"A": values})["C"]
    assert got.tobytes() == serial.run({"A": values})["C"].tobytes()
    assert np.isnan(got[0, :2]).all() and list(got[0, 2:6].astype(np.float64)) == [1.0, -1.0, -0.0, 0.5]


# ------------------------------------------------------------------------- comparisons (one promotion rule)


def test_a_call_on_an_untyped_float_literal_compares_in_the_other_operands_type():
    """``exp(1.0) < A`` compares in A's type everywhere: the literal, and a call on it, adopt it (the
    lowering once took such a call as f64, so an f16 kernel compared e = 2.71828… where the interpreter
    compared its f16 rounding 2.71875)."""
    e_f16 = np.float16(math.e)
    assert float(e_f16) == 2.71875
    a = np.array([e_f16, np.nextafter(e_f16, np.float16(np.inf))], dtype=np.float16)
    text = ("input A: f16[2]\noutput C: f16[2]\n---\n"
            f"L^{{2}}_{{i=0}}[{_ref('C', 'f16', 'i')}=if_then_else(exp(1.0)<{_ref('A', 'f16', 'i')},1,0);];\n")
    # in f16, e is not below its own rounding; in f64 (the old kernel) it was
    _assert_rule(_all_three(text, {"A": a}), {"C": np.array([0, 1], dtype=np.float16)})
