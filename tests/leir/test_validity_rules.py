"""Valid and invalid mean the same thing everywhere (issue 7): the checker's rules, written against the rule.

Each class is swept rather than shown by one example: every reserved name, every integer dtype's range
edges, divisors over whole ranges, random non-linear indices compared with brute-force enumeration.
"""

from __future__ import annotations

import itertools
import pickle
import random

import pytest

from leir.checker import CODES, RESERVED_NAMES, check
from leir.errors import LeirFormatError, LeirSyntaxError
from leir.inference import infer_signature
from leir.limits import MAX_LITERAL_EXTENT, MAX_LOOPS, MAX_NESTING, MAX_TERMS
from leir.parser import parse_body
from leir.program import is_bare, load_program

INT_RANGES = {
    "i8": (-(2**7), 2**7 - 1), "i16": (-(2**15), 2**15 - 1), "i32": (-(2**31), 2**31 - 1),
    "i64": (-(2**63), 2**63 - 1), "u8": (0, 2**8 - 1), "u16": (0, 2**16 - 1), "u32": (0, 2**32 - 1),
    "u64": (0, 2**64 - 1),
}


def prog(header: str, body: str):
    return load_program(header + "\n---\n" + body)


def codes(program, severity: str = "error") -> list[str]:
    return [d.code for d in check(program).diagnostics if d.severity.value == severity]


def literal(value: int) -> str:
    return str(value) if value >= 0 else f"-{-value}"


# ------------------------------------------------------------------------------------- reserved names


@pytest.mark.parametrize("name", sorted(RESERVED_NAMES))
def test_every_reserved_name_is_refused_as_a_loop_variable_at_its_header(name):
    p = prog("input A: f32[4]\noutput C: f32[4]", f"L^{{4}}_{{i=0}}L^{{4}}_{{{name}=0}}[C^{{f32,g}}_{{i}}=A^{{f32,g}}_{{i}};];")
    diags = [d for d in check(p).errors if d.code == "reserved-name"]
    assert len(diags) == 1
    assert (diags[0].line, diags[0].column) == (4, len("L^{4}_{i=0}") + 1)
    assert diags[0] == check(p).errors[0]  # the header comes first, before any use of the name


def test_ordinary_names_that_merely_contain_reserved_ones_are_fine():
    for name in ("expo", "inf2", "maxi", "min_", "abs1"):
        p = prog("input A: f32[4]\noutput C: f32[4]", f"L^{{4}}_{{{name}=0}}[C^{{f32,g}}_{{{name}}}=A^{{f32,g}}_{{{name}}};];")
        assert check(p).ok, name


# -------------------------------------------------------------------------------- divisors in indices


@pytest.mark.parametrize("op", ["//", "%"])
@pytest.mark.parametrize("offset", range(-4, 3))
def test_an_index_divisor_is_refused_exactly_when_its_range_contains_zero(op, offset):
    """j runs over [0, 3]; the divisor j+offset can be zero iff -offset is in [0, 3]."""
    divisor = f"j+{offset}" if offset >= 0 else f"j-{-offset}"
    body = f"L^{{4}}_{{i=0}}L^{{4}}_{{j=0}}[C^{{f32,g}}_{{i,j}}=A^{{f32,g}}_{{(i+8){op}({divisor})%4}};];"
    found = codes(prog("input A: f32[4]\noutput C: f32[4, 4]", body))
    can_be_zero = 0 <= -offset <= 3
    assert ("zero-divisor" in found) == can_be_zero, found
    if not can_be_zero:
        assert found == []


def test_a_guard_that_excludes_zero_makes_the_divisor_safe_and_a_gather_divisor_is_refused():
    header = "input A: f32[4]\ninput G: i32[4]\noutput C: f32[4, 4]"
    guarded = "L^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=if_then_else(j>0,A^{f32,g}_{i//j},0)+G^{i32,g}_{i};];"
    assert codes(prog(header, guarded)) == []
    gather = "L^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i%G^{i32,g}_{j}};];"
    assert codes(prog(header, gather)) == ["zero-divisor"]
    assert codes(prog(header, "L^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i//0+4}+G^{i32,g}_{i};];")) == [
        "zero-divisor"]


# ----------------------------------------------------------------------------- bounds are never false


def _random_index(rng: random.Random, depth: int = 0) -> str:
    if depth > 2 or rng.random() < 0.3:
        return rng.choice(["i", "j", str(rng.randint(0, 3))])
    op = rng.choice(["+", "-", "*", "//", "%"])
    left = _random_index(rng, depth + 1)
    right = str(rng.randint(1, 3)) if op in ("//", "%") else _random_index(rng, depth + 1)
    return f"({left}){op}({right})"


def _brute(index: str, ni: int, nj: int) -> tuple[int, int]:
    values = [eval(index, {}, {"i": i, "j": j}) for i in range(ni) for j in range(nj)]
    return min(values), max(values)


def test_bounds_verdicts_agree_with_brute_force_on_random_nonlinear_indices():
    """Refused ⇒ some loop value really leaves the tensor, and the reported range is the true one;
    accepted ⇒ none does. Python's // and % are floor division and modulo, LEIR's rule."""
    rng = random.Random(7)
    for _ in range(300):
        index = _random_index(rng)
        lo, hi = _brute(index, 5, 3)
        size = rng.randint(1, 12)
        body = f"L^{{5}}_{{i=0}}L^{{3}}_{{j=0}}[C^{{f32,g}}_{{i,j}}=A^{{f32,g}}_{{{index}}};];"
        info = check(prog(f"input A: f32[{size}]\noutput C: f32[5, 3]", body))
        oob = [d for d in info.diagnostics if d.code == "index-out-of-bounds"]
        truly_out = lo < 0 or hi >= size
        assert bool(oob) == truly_out, (index, size, lo, hi, [d.message for d in info.diagnostics])
        if oob:
            assert f"takes values in [{lo}, {hi}]" in oob[0].message
        assert not any(d.code == "unproven-bounds" for d in info.diagnostics)  # small: always exact


def test_square_index_is_exact_and_guards_on_several_variables_count():
    assert codes(prog("input A: f32[5]\noutput C: f32[5]", "L^{5}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{(i-2)*(i-2)};];")) == []
    padded = "L^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=if_then_else(i+j<4,A^{f32,g}_{i+j},0);];"
    assert codes(prog("input A: f32[4]\noutput C: f32[4, 4]", padded)) == []
    unguarded = "L^{4}_{i=0}L^{4}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{i+j};];"
    assert codes(prog("input A: f32[4]\noutput C: f32[4, 4]", unguarded)) == ["index-out-of-bounds"]


def test_what_cannot_be_enumerated_or_proved_is_a_warning_not_a_false_error():
    body = "L^{300}_{i=0}L^{300}_{j=0}[C^{f32,g}_{i,j}=A^{f32,g}_{(i-j)*(i-j)//900};];"  # truly in [0, 99]
    p = prog("input A: f32[100]\noutput C: f32[300, 300]", body)
    assert codes(p) == []
    warned = [d for d in check(p).warnings if d.code == "unproven-bounds"]
    assert len(warned) == 1 and "cannot be proved" in warned[0].message


def test_an_out_of_bounds_read_of_an_output_is_one_error_not_also_a_shape_error():
    body = "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};D^{f32,g}_{i}=C^{f32,g}_{i+1};];"
    assert codes(prog("input A: f32[4]\noutput C: f32[4]\noutput D: f32[4]", body)) == ["index-out-of-bounds"]


# ------------------------------------------------------------------------------------ arithmetic types


@pytest.mark.parametrize("dtype", sorted(INT_RANGES))
def test_integer_literals_must_fit_the_statement_type_at_both_edges(dtype):
    lo, hi = INT_RANGES[dtype]
    header = f"input A: {dtype}[4]\noutput C: {dtype}[4]"
    for value, fits in ((hi, True), (hi + 1, False), (lo, True), (lo - 1, False)):
        p = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=max(A^{{{dtype},g}}_{{i}},{literal(value)});];")
        assert ("literal-out-of-range" in codes(p)) == (not fits), (dtype, value)


@pytest.mark.parametrize("dtype", sorted(INT_RANGES))
def test_literals_in_a_comparison_must_fit_the_type_the_comparison_runs_in(dtype):
    lo, hi = INT_RANGES[dtype]
    header = f"input A: {dtype}[4]\noutput C: f32[4]"
    for value, fits in ((hi, True), (hi + 1, False)):
        body = f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}=if_then_else(A^{{{dtype},g}}_{{i}}<{value},1,0);];"
        assert ("literal-out-of-range" in codes(prog(header, body))) == (not fits), (dtype, value)


@pytest.mark.parametrize("dtype,limit", [("f16", "65504"), ("f32", "3.4028234e38"), ("f64", "3.4028234e38")])
def test_float_literals_beyond_the_largest_finite_value_are_refused(dtype, limit):
    header = f"input A: {dtype}[4]\noutput C: {dtype}[4]"
    ok = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=A^{{{dtype},g}}_{{i}}+{limit};];")
    assert codes(ok) == []
    for beyond in ("3.5e38", "1e309"):
        over = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=A^{{{dtype},g}}_{{i}}+{beyond};];")
        assert codes(over) == ["literal-out-of-range"]


def test_literals_of_thousands_of_digits_are_refused_cleanly_everywhere():
    digits = "9" * 5000
    for dtype in ("f32", "i32"):
        p = prog(f"input A: {dtype}[4]\noutput C: {dtype}[4]", f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=A^{{{dtype},g}}_{{i}}+{digits};];")
        found = [d for d in check(p).errors if d.code == "literal-out-of-range"]
        assert len(found) == 1 and len(found[0].message) < 300
    p = prog("input A: f32[4]\noutput C: f32[4]", f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}=A^{{f32,g}}_{{{digits}}};];")
    (found,) = check(p).errors  # a literal index is out of the tensor's bounds, whatever its size
    assert found.code == "index-out-of-bounds" and len(found.message) < 300


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64", "bf16", "i32", "u8", "i64"])
def test_modulo_is_integer_only_in_values_and_in_comparisons(dtype):
    header = f"input A: {dtype}[4]\noutput C: {dtype}[4]"
    value = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=A^{{{dtype},g}}_{{i}}%3;];")
    is_float = dtype.startswith(("f", "b"))
    assert ("float-modulo" in codes(value)) == is_float
    cond = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=if_then_else(A^{{{dtype},g}}_{{i}}%3<1,1,0);];")
    assert ("float-modulo" in codes(cond)) == is_float


@pytest.mark.parametrize("dtype", ["f16", "f32", "bf16", "i32"])
def test_floor_division_in_bf16_is_refused_with_its_position(dtype):
    """TVM cannot build ``//`` in bfloat16 (issue 7): refused where it is computed, in values and in
    comparisons, at the operator's line and column; every other dtype keeps it."""
    header = f"input A: {dtype}[4]\noutput C: {dtype}[4]"
    for body in (f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=i//(A^{{{dtype},g}}_{{i}}+1);];",
                 f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=if_then_else(A^{{{dtype},g}}_{{i}}//2<1,1,0);];"):
        found = [d for d in check(prog(header, body)).errors if d.code == "bf16-floordiv"]
        assert len(found) == (dtype == "bf16")
        if found:
            assert found[0].line == 4 and found[0].column is not None and "f32" in found[0].message


@pytest.mark.parametrize("dtype", ["u64", "u32", "i64"])
def test_u64_division_by_a_loop_variable_subtraction_is_refused_with_its_position(dtype):
    """TVM divides such a u64 divisor wrongly (issue 7): refused at the operator; tensor, literal and sum
    divisors, and every other dtype, keep ``//`` and ``%``."""
    header = f"input A: {dtype}[8]\noutput C: {dtype}[8]"
    a = f"A^{{{dtype},g}}_{{i}}"
    for divisor, refused in (("(i-3)", True), ("(3-i)", True), ("(-i+9)", True), ("(i+1)", False),
                             (a, False), ("(" + a + "-1)", False), ("2", False)):
        for op in ("//", "%"):
            body = f"L^{{8}}_{{i=0}}[C^{{{dtype},g}}_{{i}}={a}{op}{divisor};];"
            found = [d for d in check(prog(header, body)).errors if d.code == "u64-divisor"]
            assert len(found) == (refused and dtype == "u64"), (divisor, op)
            if found:
                assert found[0].line == 4 and found[0].column is not None and "i64" in found[0].message


@pytest.mark.parametrize("dtype", ["i32", "u64", "f32"])
def test_integer_powers_need_a_small_literal_exponent(dtype):
    header = f"input A: {dtype}[4]\noutput C: {dtype}[4]"
    is_float = dtype == "f32"
    for exponent in ("0", "3", "8", "9", "i", f"A^{{{dtype},g}}_{{i}}"):
        p = prog(header, f"L^{{4}}_{{i=0}}[C^{{{dtype},g}}_{{i}}=A^{{{dtype},g}}_{{i}}**{exponent};];")
        refused = exponent not in ("0", "3", "8") and not is_float
        assert ("int-power" in codes(p)) == refused, (dtype, exponent)


# ----------------------------------------------------------------------------------------- the limits


def test_loop_extents_beyond_i64_are_refused_at_their_digits():
    header = "input A: f32[4]\noutput C: f32[4]"
    largest = 2**63 - 1
    body = "L^{1}_{j=0}L^{%s}_{i=0}[C^{f32,g}_{0}=A^{f32,g}_{0};];"
    assert largest == MAX_LITERAL_EXTENT
    assert prog(header, body % f"000{largest}").body.blocks[0].loops[1].extent == largest
    for digits in (str(largest + 1), "9" * 5000, "1" + "0" * 4400):
        with pytest.raises(LeirSyntaxError) as caught:
            prog(header, body % digits)
        error = caught.value
        assert (error.code, error.line, error.column) == ("literal-out-of-range", 4, 15)  # the second loop's digits
        assert f"loop extent {digits[:40]}" in error.message and str(largest) in error.message
        assert len(error.message) < 200


def test_limits_are_refused_with_positions_at_every_size():
    header = "input A: f32[4]\noutput C: f32[4]"
    for n in (MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 350):
        right_nested = "(A^{f32,g}_{i}+" * n + "A^{f32,g}_{i}" + ")" * n
        found = check(prog(header, f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}={right_nested};];")).errors
        # the outer pair is a Paren the lowering drops: n - 1 operator levels, plus the index brackets
        assert bool(found) == (n > MAX_NESTING), n
        if found:
            assert [(d.code, d.line, d.column) for d in found] == [("too-deep", 4, 13)]
    for n in (MAX_LOOPS, MAX_LOOPS + 1):
        body = "".join(f"L^{{1}}_{{j{k}=0}}[" for k in range(n - 1)) + "L^{4}_{i=0}[C^{f32,g}_{i}=A^{f32,g}_{i};];" + "];" * (n - 1)
        found = check(prog(header, body)).errors
        assert [d.code for d in found] == ([] if n <= MAX_LOOPS else ["too-deep"])
        if found:
            assert found[0].line == 4 and found[0].column > 1
    flat = "+".join(["A^{f32,g}_{i}"] * (MAX_TERMS + 5))
    with pytest.raises(LeirSyntaxError) as caught:
        prog(header, f"L^{{4}}_{{i=0}}[\nC^{{f32,g}}_{{i}}={flat};];")
    assert (caught.value.code, caught.value.line, caught.value.column) == ("too-deep", 5, 1)


def test_long_flat_sums_are_within_the_limits_and_pickle_like_any_program():
    body = "L^{4}_{i=0}[C^{f32,g}_{i}=" + "+".join(["A^{f32,g}_{i}"] * 900) + ";];"
    p = prog("input A: f32[4]\noutput C: f32[4]", body)
    assert check(p).ok
    assert pickle.loads(pickle.dumps(p)) == p


def test_every_new_code_is_documented():
    for code in ("reserved-name", "zero-divisor", "float-modulo", "literal-out-of-range", "int-power",
                 "unproven-bounds", "too-deep", "bf16-floordiv", "u64-divisor"):
        assert code in CODES


# ---------------------------------------------------------------------------------------- bare bodies


def test_bare_body_roles_follow_reads_and_writes():
    body = ("B^{4}_{tx=0}L^{8}_{a=0}[D^{f32,g}_{tx}=max(D^{f32,g}_{tx},A^{f32,g}_{tx,a});];"
            "B^{4}_{tx=0}L^{8}_{a=0}[E^{f32,g}_{tx}=E^{f32,g}_{tx}+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx});];"
            "B^{4}_{tx=0}L^{8}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx})/E^{f32,g}_{tx};];")
    assert is_bare(body)
    p = load_program(body)
    assert [(d.role, d.name, d.dtype, d.shape) for d in p.signature.tensors] == [
        ("input", "A", "f32", (4, 8)), ("output", "C", "f32", (4, 8))]
    assert check(p).ok
    # a written tensor that another statement reads is an intermediate; one only in shared scope too
    with pytest.raises(LeirFormatError, match="cannot infer the outputs"):
        load_program(body[:-2] + "S^{f32,s}_{tx}=C^{f32,g}_{tx,a};];")


def test_bare_body_with_several_inputs_outputs_and_scalars():
    body = "L^{3}_{i=0}L^{5}_{j=0}[Y^{i64,g}_{j}=X^{i64,g}_{i,j}*K^{i64,g};Z^{i64,g}=Z^{i64,g}+X^{i64,g}_{i,j};];"
    sig = infer_signature(parse_body(body))
    assert [(d.role, d.name, d.shape) for d in sig.tensors] == [
        ("input", "X", (3, 5)), ("input", "K", ()), ("output", "Y", (5,)), ("output", "Z", ())]


def test_what_a_bare_body_lacks_is_said():
    with pytest.raises(LeirFormatError, match="cannot infer a shape"):
        load_program("L^{4}_{i=0}[C^{f32,g}_{G^{i32,g}_{i}}=A^{f32,g}_{i};];")
    with pytest.raises(LeirFormatError, match="empty"):
        load_program("\n# just a comment\n")
    assert not is_bare("input A: f32[4]\noutput C: f32[4]\n---\n[C^{f32,g}=1;];")
    assert not is_bare("input A: f32[4]\n")  # a header missing its --- line is not a body


# ------------------------------------------------------------------------------------------- messages


def _syntax(text: str) -> LeirSyntaxError:
    with pytest.raises(LeirSyntaxError) as caught:
        parse_body(text)
    return caught.value


@pytest.mark.parametrize("bad", ["$", "<", "&", "A^{f32,g}_{i}", ")"])
def test_after_a_value_in_a_statement_only_valid_continuations_are_offered(bad):
    err = _syntax(f"L^{{4}}_{{i=0}}[C^{{f32,g}}_{{i}}=A^{{f32,g}}_{{i}}{bad}2;];")
    offered = " ".join(err.expected)
    assert "';'" in offered and "an operator" in offered
    assert "'&'" not in offered and "comparison" not in offered and "')'" not in offered


def test_inside_a_condition_comparisons_and_logic_are_offered():
    err = _syntax("L^{4}_{i=0}[C^{f32,g}_{i}=if_then_else(i<2 $ 1,1,2);];")
    offered = " ".join(err.expected)
    assert "'&' or '|'" in offered and "comparison" in offered and "';'" not in offered


def test_every_syntax_error_of_a_sweep_names_what_was_expected():
    good = "L^{4}_{i=0}[C^{f32,g}_{i}=if_then_else(i<2,exp(A^{f32,g}_{i}),max(1,A^{f32,g}_{i}));];"
    for cut, junk in itertools.product(range(1, len(good)), ("$", "")):
        text = good[:cut] + junk
        try:
            parse_body(text)
        except LeirSyntaxError as err:
            assert err.expected, text
            assert "expected one of" in str(err)
