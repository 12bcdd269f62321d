"""The semantic checker: the whole corpus passes, and every diagnostic kind is reported precisely.

Negative programs are ``.leir`` documents whose body starts on line 5, so every test can assert the line
and the column (pointing at the offending fragment), the code, the message and the fragment.
"""

from __future__ import annotations

import pytest

from leir.ast import (
    Assign,
    Block,
    Body,
    Call,
    Compare,
    Inf,
    Loop,
    Neg,
    Num,
    Program,
    Signature,
    TensorDecl,
    TensorRef,
    Var,
    statements,
)
from leir.checker import CODES, check, require_valid
from leir.corpus import load_corpus
from leir.errors import LeirCheckError, LeirSyntaxError
from leir.program import load_program
from leir.semantics import Severity, StmtKind

BODY_LINE = 5


def program(body: str, header: str = "input A: f64[4]\nparam W: f64[4, 3]\noutput C: f64[4]") -> Program:
    lines = header.strip().split("\n")
    assert len(lines) == 3, "tests keep the header at three lines so the body is on line 5"
    return load_program("\n".join(lines) + "\n---\n" + body + "\n")


def only(body: str, code: str, header: str | None = None):
    """The single diagnostic with ``code`` (asserting there is exactly one)."""
    info = check(program(body) if header is None else program(body, header))
    found = [d for d in info.diagnostics if d.code == code]
    assert len(found) == 1, info.diagnostics
    return found[0], body


def assert_at(diag, body: str, fragment: str, occurrence: int = 0) -> None:
    """The diagnostic points at ``fragment`` (its ``occurrence``-th appearance) on the body line."""
    start = -1
    for _ in range(occurrence + 1):
        start = body.index(fragment, start + 1)
    assert diag.fragment == fragment
    assert (diag.line, diag.column) == (BODY_LINE, start + 1)


GOOD = "B^{4}_{i=0}L^{3}_{j=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+A^{f64,g}_{i}*W^{f64,g}_{i,j};];"


# --------------------------------------------------------------------------------------------- corpus


def test_whole_corpus_has_no_errors():
    entries = load_corpus()
    assert len(entries) == 388
    allowed_warnings = {"unused-tensor", "dtype-cast-read"}
    bad = {}
    warned = 0
    for entry in entries:
        info = check(entry.program)
        if info.errors:
            bad[entry.id] = [str(d) for d in info.errors]
        assert {d.code for d in info.warnings} <= allowed_warnings, (entry.id, info.warnings)
        warned += bool(info.warnings)
        # every statement is classified and every tensor gets a shape
        n_stmts = sum(1 for _ in statements(entry.program.body))
        assert len(info.statements) == n_stmts
        for t in info.intermediates:
            assert all(s >= 1 for s in t.shape), (entry.id, t)
    assert bad == {}
    assert 0 < warned < 80  # a few workloads list unused params; 18 f32 rows read a scalar as i32


def test_corpus_facts_for_softmax_and_conv():
    by_id = {e.id: e for e in load_corpus()}
    info = check(by_id["level1/2/softmax@f64"].program)
    assert list(info.tensors) == ["A", "C", "D", "E"]
    assert info.tensors["D"].shape == (16,) and info.tensors["D"].role == "intermediate"
    s0 = info.statements[(0, 0)]
    assert s0.kind is StmtKind.REDUCE and s0.combiner == "max" and s0.init == Neg(Inf())
    assert s0.reduce_vars == ("a",)
    assert info.statements[(1, 0)].combiner == "+" and info.statements[(1, 0)].init == Num("0")
    assert info.statements[(2, 0)].kind is StmtKind.ASSIGN
    conv = next(e for e in by_id.values() if "E^{f64,g}_{tx,a,c,d}=if_then_else(2<=c<258" in e.leir)
    cinfo = check(conv.program)
    assert cinfo.ok
    assert cinfo.tensors["E"].shape[2:] == (260, 258)


# ------------------------------------------------------------------------------------ statement kinds


def test_statement_kinds_reduce_accumulate_recurrence():
    body = (
        "B^{4}_{i=0}L^{3}_{j=0}[C^{f64,g}_{i}=max(A^{f64,g}_{i},C^{f64,g}_{i});];"
        "B^{4}_{i=0}[C^{f64,g}_{i}=C^{f64,g}_{i}*2;];"
        "B^{4}_{i=0}[D^{f64,g}_{i}=if_then_else(i-1<0,0,D^{f64,g}_{i-1})+W^{f64,g}_{i,0};];"
        "B^{4}_{i=0}[C^{f64,g}_{i}=C^{f64,g}_{i}-D^{f64,g}_{i};];"
        "B^{4}_{i=0}L^{3}_{j=0}[E^{i32,g}=min(E^{i32,g},j);];"
        "B^{4}_{i=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+E^{i32,g};];"
    )
    info = check(program(body))
    assert info.ok, info.diagnostics
    kinds = {path: s.kind for path, s in info.statements.items()}
    assert kinds == {
        (0, 0): StmtKind.REDUCE,
        (1, 0): StmtKind.ACCUMULATE,
        (2, 0): StmtKind.RECURRENCE,
        (3, 0): StmtKind.ACCUMULATE,
        (4, 0): StmtKind.REDUCE,
        (5, 0): StmtKind.ACCUMULATE,
    }
    assert info.statements[(0, 0)].combiner == "max" and info.statements[(0, 0)].reduce_vars == ("j",)
    e = info.statements[(4, 0)]
    assert e.combiner == "min" and e.init == Inf() and e.reduce_vars == ("i", "j")
    assert info.statements[(1, 0)].combiner is None and info.statements[(1, 0)].reduce_vars == ()
    assert info.tensors["E"].shape == () and info.tensors["E"].dtype == "i32"


def test_intermediate_shape_is_one_plus_max_and_tensor_order():
    body = (
        "B^{4}_{i=0}L^{3}_{j=0}[Z^{f32,s}_{j*4+i,2}=W^{f64,g}_{i,j};];"
        "B^{4}_{i=0}[Y^{f32,l}_{i//2,i%3}=Z^{f32,s}_{i,0};];"
        "B^{4}_{i=0}[C^{f64,g}_{i}=Y^{f32,l}_{0,0}+Z^{f32,s}_{11,2};];"
    )
    info = check(program(body))
    assert info.ok, info.diagnostics
    assert list(info.tensors) == ["A", "W", "C", "Z", "Y"]
    assert info.tensors["Z"].shape == (12, 3) and info.tensors["Z"].scope == "s"
    assert info.tensors["Y"].shape == (2, 3) and info.tensors["Y"].dtype == "f32"
    assert [d.code for d in info.diagnostics] == ["unused-tensor"]


def test_guards_narrow_bounds_of_padding_and_recurrences():
    body = (
        "B^{6}_{i=0}[D^{f64,g}_{i}=if_then_else(1<=i<5,A^{f64,g}_{i-1},0);];"
        "B^{6}_{i=0}[E^{f64,g}_{i}=if_then_else(i-1<0,0,E^{f64,g}_{i-1})+D^{f64,g}_{i};];"
        "B^{4}_{i=0}[C^{f64,g}_{i}=if_then_else(i>=1&i<=4,E^{f64,g}_{i+1},W^{f64,g}_{i,0});];"
    )
    info = check(program(body))
    assert info.ok, info.diagnostics
    assert info.tensors["D"].shape == (6,) and info.tensors["E"].shape == (6,)


def test_all_problems_reported_at_once_and_require_valid():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i+1}+Q^{f64,g}_{i}+k;];"
    info = check(program(body))
    codes = sorted(d.code for d in info.errors)
    assert codes == ["index-out-of-bounds", "read-before-write", "unknown-loop-var"]
    with pytest.raises(LeirCheckError) as exc:
        require_valid(program(body))
    assert len(exc.value.diagnostics) == 3
    assert require_valid(program(GOOD)).ok


def test_codes_are_documented():
    info = check(program("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i+9}/k;];"))
    assert info.errors and all(d.code in CODES for d in info.diagnostics)


# ------------------------------------------------------------------------------ one test per problem


def test_unknown_loop_var():
    d, body = only("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i}*k;];", "unknown-loop-var")
    assert_at(d, body, "k")
    assert "k" in d.message and "not defined" in d.message and d.severity is Severity.ERROR


def test_unknown_loop_var_in_index():
    d, body = only("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{q};];", "unknown-loop-var")
    assert_at(d, body, "q")


def test_shadowed_loop_var():
    body = "B^{4}_{i=0}[L^{3}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i};];];"
    d, _ = only(body, "shadowed-loop-var")
    assert_at(d, body, "L^{3}_{i=0}")
    assert "already defined" in d.message and "i" in d.message


def test_zero_extent_built_in_code():
    stmt = Assign(TensorRef("C", "f64", "g", (Num("0"),)), Num("1"))
    prog = Program(
        Signature((TensorDecl("C", "output", "f64", (1,)),)),
        Body((Block((Loop("L", 0, "i"),), (stmt,)),)),
    )
    (d,) = [x for x in check(prog).diagnostics if x.code == "bad-extent"]
    assert d.line is None and d.column is None
    assert d.fragment == "L^{0}_{i=0}" and "extent 0" in d.message


def test_unsupported_dtype():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=Z^{c64,g}_{i};];"
    d, _ = only(body, "unsupported-dtype")
    assert_at(d, body, "Z^{c64,g}_{i}")
    assert "c64" in d.message and "not supported" in d.message


def test_dtype_mismatch_between_writes():
    body = "B^{4}_{i=0}[Y^{f32,g}_{i}=A^{f64,g}_{i};Y^{f64,g}_{i}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f32,g}_{i};];"
    d, _ = only(body, "dtype-mismatch")
    assert_at(d, body, "Y^{f64,g}_{i}")
    assert "f64" in d.message and "f32" in d.message


def test_dtype_mismatch_with_signature():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f32,g}_{i};];"
    d, _ = only(body, "dtype-mismatch")
    assert_at(d, body, "A^{f32,g}_{i}")
    assert "declared f64" in d.message


def test_dtype_cast_read_is_a_warning():
    body = "B^{1}_{i=0}[O^{f64,g}=16;];B^{4}_{i=0}[C^{f64,g}_{i}=sqrt(O^{i32,g})*A^{f64,g}_{i};];"
    d, _ = only(body, "dtype-cast-read")
    assert d.severity is Severity.WARNING
    assert_at(d, body, "O^{i32,g}")
    assert "stored as f64" in d.message


def test_scope_mismatch():
    body = "B^{4}_{i=0}[Y^{f64,s}_{i}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f64,l}_{i};];"
    d, _ = only(body, "scope-mismatch")
    assert_at(d, body, "Y^{f64,l}_{i}")
    assert "scope l" in d.message and "scope s" in d.message


def test_known_tensor_not_global():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,s}_{i};];"
    d, _ = only(body, "known-not-global")
    assert_at(d, body, "A^{f64,s}_{i}")
    assert "scope g" in d.message


def test_wrong_rank_of_known_tensor():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=W^{f64,g}_{i};];"
    d, _ = only(body, "wrong-rank")
    assert_at(d, body, "W^{f64,g}_{i}")
    assert "2 dimension(s)" in d.message and "1 index" in d.message


def test_rank_mismatch_of_intermediate():
    body = "B^{4}_{i=0}[Y^{f64,g}_{i,0}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f64,g}_{i};];"
    d, _ = only(body, "rank-mismatch")
    assert_at(d, body, "Y^{f64,g}_{i}", occurrence=0)
    assert "1 indices here but with 2" in d.message


def test_index_out_of_bounds_known():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{3-i*2};];"
    d, _ = only(body, "index-out-of-bounds")
    assert_at(d, body, "A^{f64,g}_{3-i*2}")
    assert "[-3, 3]" in d.message and "size 4" in d.message and "3-i*2" in d.message


def test_index_out_of_bounds_upper_with_split_indices():
    body = "B^{4}_{i=0}L^{4}_{j=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+W^{f64,g}_{i,(i*4+j)%5};];"
    d, _ = only(body, "index-out-of-bounds")
    assert "[0, 4]" in d.message and "size 3" in d.message


def test_negative_index_of_intermediate():
    body = "B^{4}_{i=0}[Y^{f64,g}_{i}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f64,g}_{i-1};];"
    d, _ = only(body, "index-out-of-bounds")
    assert_at(d, body, "Y^{f64,g}_{i-1}")
    assert "negative" in d.message and "-1" in d.message


def test_unguarded_recurrence_is_out_of_bounds():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=if_then_else(i<0,0,C^{f64,g}_{i-1})+A^{f64,g}_{i};];"
    d, _ = only(body, "index-out-of-bounds")
    assert_at(d, body, "C^{f64,g}_{i-1}")


def test_gather_with_float_index_tensor():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{A^{f64,g}_{i}};];"
    d, _ = only(body, "non-integer-index")
    assert_at(d, body, "A^{f64,g}_{i}")
    assert "gather" in d.message and "integer dtype" in d.message


def test_gather_with_integer_tensor_is_not_bounded_statically():
    header = "input A: f64[4]\ninput G: i64[4]\noutput C: f64[4]"
    info = check(program("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{G^{i64,g}_{i}};];", header))
    assert info.ok and not info.diagnostics


def test_non_integer_index_literal_division_and_call():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i/2}+A^{f64,g}_{0.5}+A^{f64,g}_{abs(i)};];"
    info = check(program(body))
    found = [d for d in info.errors if d.code == "non-integer-index"]
    assert [d.fragment for d in found] == ["i/2", "0.5", "abs(i)"]
    assert "use //" in found[0].message
    assert_at(found[1], body, "0.5")
    assert "not allowed in an index" in found[2].message


def test_read_before_write():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=Y^{f64,g}_{i};];B^{4}_{i=0}[Y^{f64,g}_{i}=A^{f64,g}_{i};];"
    d, _ = only(body, "read-before-write")
    assert_at(d, body, "Y^{f64,g}_{i}")
    assert "Y" in d.message and "before any statement writes it" in d.message


def test_read_before_write_later_in_same_block():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=Y^{f64,g}_{i};Y^{f64,g}_{i}=A^{f64,g}_{i};];"
    d, _ = only(body, "read-before-write")
    assert_at(d, body, "Y^{f64,g}_{i}")


def test_output_not_written():
    header = "input A: f64[4]\noutput C: f64[4]\noutput D: f64[4]"
    d, _ = only("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i};];", "output-not-written", header)
    assert d.fragment == "D" and d.line == 3 and "never written" in d.message  # at its declaration


def test_output_only_read_is_not_written():
    header = "input A: f64[4]\noutput C: f64[4]\noutput D: f64[4]"
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i}+D^{f64,g}_{i};];"
    d, _ = only(body, "output-not-written", header)
    assert_at(d, body, "D^{f64,g}_{i}")


def test_output_shape_mismatch():
    header = "input A: f64[4]\ninput Z: f64[1]\noutput C: f64[4, 2]"
    body = "B^{4}_{i=0}[C^{f64,g}_{i,0}=A^{f64,g}_{i}+Z^{f64,g}_{0};];"
    d, _ = only(body, "shape-mismatch", header)
    assert "C" in d.message and "(4, 1)" in d.message and "(4, 2)" in d.message
    assert_at(d, body, "C^{f64,g}_{i,0}")


def test_write_to_input():
    body = "B^{4}_{i=0}[A^{f64,g}_{i}=A^{f64,g}_{i}*2;C^{f64,g}_{i}=A^{f64,g}_{i};];"
    info = check(program(body))
    (d,) = [x for x in info.errors if x.code == "write-to-input"]
    assert_at(d, body, "A^{f64,g}_{i}")
    assert "input" in d.message and "must not be written" in d.message


def test_unused_known_tensor_is_a_warning_only():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i};];"
    info = check(program(body))
    assert info.ok
    (d,) = info.diagnostics
    assert d.code == "unused-tensor" and d.severity is Severity.WARNING and d.fragment == "W"
    assert "never used" in d.message


def test_max_with_wrong_arity_built_in_code():
    call = Call("max", (TensorRef("A", "f64", "g", (Var("i"),)),))
    prog = Program(
        Signature((TensorDecl("A", "input", "f64", (4,)), TensorDecl("C", "output", "f64", (4,)))),
        Body((Block((Loop("B", 4, "i"),), (Assign(TensorRef("C", "f64", "g", (Var("i"),)), call),)),)),
    )
    info = check(prog)
    (d,) = info.errors
    assert d.code == "bad-arity" and d.fragment == "max(A^{f64,g}_{i})"
    assert "takes 2 argument(s) but is given 1" in d.message


def test_unknown_function_and_condition_as_value_built_in_code():
    a = TensorRef("A", "f64", "g", (Var("i"),))
    value = Call("tanh", (Compare((a, Num("0")), (">",)),))
    prog = Program(
        Signature((TensorDecl("A", "input", "f64", (4,)), TensorDecl("C", "output", "f64", (4,)))),
        Body((Block((Loop("B", 4, "i"),), (Assign(TensorRef("C", "f64", "g", (Var("i"),)), value),)),)),
    )
    codes = sorted(d.code for d in check(prog).errors)
    assert codes == ["condition-as-value", "unknown-function"]


def test_empty_block_and_bad_loop_kind_built_in_code():
    prog = Program(
        Signature((TensorDecl("C", "output", "f64", (1,)),)),
        Body(
            (
                Block((Loop("Q", 1, "i"),), (Assign(TensorRef("C", "f64", "g", (Num("0"),)), Num("1")),)),
                Block((Loop("L", 1, "i"),), ()),
            )
        ),
    )
    codes = sorted(d.code for d in check(prog).errors)
    assert codes == ["bad-loop-kind", "empty-block"]


def test_bad_reduction():
    body = "B^{4}_{i=0}L^{3}_{j=0}[C^{f64,g}_{i}=W^{f64,g}_{i,j}-C^{f64,g}_{i};];"
    d, _ = only(body, "bad-reduction")
    assert d.fragment == "C^{f64,g}_{i}=W^{f64,g}_{i,j}-C^{f64,g}_{i}"
    assert (d.line, d.column) == (BODY_LINE, body.index("C^{f64,g}_{i}=") + 1)
    assert "not a recognised reduction" in d.message


def test_non_bool_condition():
    body = "B^{4}_{i=0}[C^{f64,g}_{i}=if_then_else(A^{f64,g}_{i},1,0);];"
    d, _ = only(body, "non-bool-condition")
    assert_at(d, body, "A^{f64,g}_{i}")
    header = "input A: f64[4]\ninput M: bool[4]\noutput C: f64[4]"
    ok = check(program("B^{4}_{i=0}[C^{f64,g}_{i}=if_then_else(M^{bool,g}_{i},A^{f64,g}_{i},0);];", header))
    assert ok.ok and not ok.diagnostics


def test_unknown_shape_of_gathered_intermediate():
    header = "input A: f64[4]\ninput G: i64[4]\noutput C: f64[4]"
    body = "B^{4}_{i=0}[Y^{f64,g}_{G^{i64,g}_{i}}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f64,g}_{i};];"
    info = check(program(body, header))
    assert info.ok
    body2 = "B^{4}_{i=0}[Y^{f64,g}_{G^{i64,g}_{i}}=A^{f64,g}_{i};C^{f64,g}_{i}=Y^{f64,g}_{G^{i64,g}_{i}};];"
    d, _ = only(body2, "unknown-shape", header)
    assert "Y" in d.message and "gathers" in d.message


def test_diagnostic_str_has_position_and_code():
    d, _ = only("B^{4}_{i=0}[C^{f64,g}_{i}=A^{f64,g}_{i}*k;];", "unknown-loop-var")
    assert str(d).startswith(f"{BODY_LINE}:") and "[unknown-loop-var]" in str(d)


# ------------------------------------------------------------------------------------ interval analysis


def test_interval_linear_forms_are_tight():
    from leir.intervals import index_range
    from leir.parser import parse_expr

    ranges = {"t": (0, 15), "a": (0, 7), "c": (0, 3)}
    cases = {
        "t*4+a-t*4": (0, 7),  # plain interval arithmetic would say [-60, 67]
        "3999-a": (3992, 3999),
        "c*2+a*3": (0, 27),
        "t//4": (0, 3),
        "t%4": (0, 3),
        "(t//4)*4+t%4": (0, 15),
        "(a+1)%8": (0, 7),
        "a%8+2": (2, 9),
        "-a+7": (0, 7),
        "t*a": (0, 105),
    }
    for text, expected in cases.items():
        assert index_range(parse_expr(text), ranges) == expected, text
    assert index_range(parse_expr("t//(a-a)"), ranges) is None  # division by a range holding 0
    assert index_range(parse_expr("q+1"), ranges) is None


def test_interval_refinement_by_conditions():
    from leir.ast import IfThenElse
    from leir.intervals import refine
    from leir.parser import parse_expr

    ranges = {"c": (0, 259), "d": (0, 257), "a": (0, 0)}

    def cond(text):
        node = parse_expr(f"if_then_else({text},0,1)")
        assert isinstance(node, IfThenElse)
        return node.cond

    assert refine(cond("2<=c<258&1<=d<257"), True, ranges) == {"c": (2, 257), "d": (1, 256), "a": (0, 0)}
    assert refine(cond("2<=c<258"), False, ranges) == ranges  # a disjunction: nothing to narrow
    assert refine(cond("c-1<0"), False, ranges)["c"] == (1, 259)
    assert refine(cond("c*2>=10|d==3"), False, ranges) == {"c": (0, 4), "d": (0, 257), "a": (0, 0)}
    assert refine(cond("a-1<0"), False, ranges) is None  # dead branch under an extent-1 loop
    assert refine(cond("3-c>0"), True, ranges)["c"] == (0, 2)


def test_absurdly_deep_nesting_is_refused_with_its_position_not_a_crash():
    text = "output C: f64[]\n---\nB^{1}_{i=0}[C^{f64,g}=" + "-" * 5000 + "1;];"
    with pytest.raises(LeirSyntaxError) as caught:
        load_program(text)
    assert caught.value.code == "too-deep"
    assert (caught.value.line, caught.value.column) == (3, 13)


def test_bad_signature_built_in_code():
    stmt = Assign(TensorRef("C", "f64", "g", (Var("i"),)), TensorRef("A", "f64", "g", (Var("i"),)))
    prog = Program(
        Signature(
            (
                TensorDecl("A", "weights", "f64", (4,)),
                TensorDecl("A", "input", "f64", (4,)),
                TensorDecl("C", "output", "f64", (4, 0)),
            )
        ),
        Body((Block((Loop("L", 4, "i"),), (stmt,)),)),
    )
    messages = [d.message for d in check(prog).errors if d.code == "bad-signature"]
    assert len(messages) == 3
    assert "declared twice" in messages[1] and "role 'weights'" in messages[0] and "(4, 0)" in messages[2]


def test_diagnostics_come_in_source_order_signature_level_ones_at_their_declarations():
    info = check(program(
        "L^{4}_{i=0}[C^{f64,g}_{q}=E^{f64,g}_{i}+A^{f64,g}_{q};];\n"
        "L^{4}_{i=0}[C^{f64,g}_{i}=C^{f64,g}_{i}+A^{f64,g}_{i+1};];"
    ))
    positioned = [(d.line, d.column) for d in info.diagnostics if d.line is not None]
    assert len(positioned) >= 3
    assert positioned == sorted(positioned)
    unused = [d for d in info.diagnostics if d.code == "unused-tensor"]
    assert unused and all(d.line is not None and d.line < 4 for d in unused)
