"""Parser, printers, file formats and hashing: round trips, exact errors, and the corpus byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from leir.ast import BinOp, Compare, IfThenElse, Inf, Logical, Neg, Num, Paren, TensorRef, Var
from leir.corpus import load_corpus
from leir.errors import LeirFormatError, LeirSyntaxError
from leir.parser import _PARSERS, parse_body, parse_expr
from leir.printer import canonical, pretty
from leir.program import dump_program, load_program, program_from_json, program_hash, program_to_json
from tests.leir.syntax_strategies import BODIES, EXPRS, PROGRAMS

CORPUS = load_corpus()


def lark_parse(text: str):
    """The reference (lark LALR) parse, bypassing the fast descent path."""
    return _PARSERS.lark.parse(text, start="start")


# ---------------------------------------------------------------------------------------------- corpus


def test_corpus_has_every_row():
    assert len(CORPUS) == 388


@pytest.mark.parametrize("entry", CORPUS, ids=[e.id for e in CORPUS])
def test_corpus_prints_back_identically(entry):
    body = parse_body(entry.leir)
    assert canonical(body) == entry.leir
    assert parse_body(pretty(body)) == body
    assert lark_parse(entry.leir) == body, "fast path and lark disagree"


def test_corpus_programs_roundtrip_through_file_and_json_forms():
    for entry in CORPUS:
        program = entry.program
        assert load_program(dump_program(program)) == program
        assert load_program(dump_program(program, pretty_body=False)) == program
        assert program_from_json(program_to_json(program)) == program


def test_corpus_missing_dtypes_are_filled_from_the_body():
    entry = next(e for e in CORPUS if e.id == "level1/77/CrossEntropyLoss@f32")
    dtypes = {d.name: d.dtype for d in entry.program.signature.tensors}
    assert dtypes == {"A": "f32", "C": "i64", "D": "f32"}


# ------------------------------------------------------------------------------------------- structure


def test_expression_structure_follows_precedence():
    assert parse_expr("a-b-c") == BinOp("-", BinOp("-", Var("a"), Var("b")), Var("c"))
    assert parse_expr("-a**2") == Neg(BinOp("**", Var("a"), Num("2")))
    assert parse_expr("a**-b**c") == BinOp("**", Var("a"), Neg(BinOp("**", Var("b"), Var("c"))))
    assert parse_expr("a*b/c") == BinOp("/", BinOp("*", Var("a"), Var("b")), Var("c"))
    assert parse_expr("a*(b/c)") == BinOp("*", Var("a"), BinOp("/", Var("b"), Var("c")))
    assert parse_expr("i//4+i%4") == BinOp("+", BinOp("//", Var("i"), Num("4")), BinOp("%", Var("i"), Num("4")))


def test_redundant_parentheses_are_kept_and_needed_ones_are_not():
    assert parse_expr("(a-b)-c") == BinOp("-", Paren(BinOp("-", Var("a"), Var("b"))), Var("c"))
    assert parse_expr("a-(b-c)") == BinOp("-", Var("a"), BinOp("-", Var("b"), Var("c")))
    for text in ["(a-b)-c", "a-(b-c)", "((a))", "(-a)**2", "-(a+b)*c", "exp((a))"]:
        assert canonical(parse_expr(text)) == text


def test_conditions_chain_and_combine():
    node = parse_expr("if_then_else(2<=c<258&1<=d<257|M^{bool,g}_{c},-inf,0)")
    assert isinstance(node, IfThenElse)
    cond = node.cond
    assert isinstance(cond, Logical) and cond.op == "|"
    assert isinstance(cond.left, Logical) and cond.left.op == "&"
    assert cond.left.left == Compare((Num("2"), Var("c"), Num("258")), ("<=", "<"))
    assert cond.right == TensorRef("M", "bool", "g", (Var("c"),))
    assert node.then == Neg(Inf())


def test_gather_and_expression_indices():
    ref = parse_expr("H^{i64,g}_{C^{i64,g}_{tx}}")
    assert ref.indices == (TensorRef("C", "i64", "g", (Var("tx"),)),)
    ref = parse_expr("A^{f32,s}_{tx*524288+a*512+d,3999-a}")
    assert canonical(ref) == "A^{f32,s}_{tx*524288+a*512+d,3999-a}"


def test_whitespace_is_insignificant():
    spaced = "B ^ {16} _ {tx = 0}  L^{4}_{a=0} [\n  D^{f64, g}_{tx, a} = A^{f64,g}_{ tx , a } * 2 ;\n] ;"
    assert canonical(parse_body(spaced)) == "B^{16}_{tx=0}L^{4}_{a=0}[D^{f64,g}_{tx,a}=A^{f64,g}_{tx,a}*2;];"


def test_nested_blocks_print_as_proper_nested_form():
    text = "B^{2}_{tx=0}[L^{3}_{a=0}[C^{f32,g}_{tx}=C^{f32,g}_{tx}+A^{f32,g}_{tx,a};];D^{f32,g}_{tx}=C^{f32,g}_{tx};];"
    body = parse_body(text)
    assert canonical(body) == text
    assert pretty(body).splitlines() == [
        "B^{2}_{tx=0}[",
        "  L^{3}_{a=0}[",
        "    C^{f32,g}_{tx} = C^{f32,g}_{tx}+A^{f32,g}_{tx,a};",
        "  ];",
        "  D^{f32,g}_{tx} = C^{f32,g}_{tx};",
        "];",
    ]


def test_positions_point_into_the_source():
    body = parse_body("B^{4}_{tx=0}[\n  C^{f32,g}_{tx} = A^{f32,g}_{tx+1};\n];")
    stmt = body.blocks[0].items[0]
    index = stmt.value.indices[0]
    assert (stmt.target.pos.line, stmt.target.pos.column) == (2, 3)
    assert (index.pos.line, index.pos.column) == (2, 31)


# -------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "line", "column", "expects"),
    [
        ("B^{4}_{tx=0}[A^{f32,g}=1;", 1, 26, "']'"),
        ("B^{4}_{tx=0}[A^{f32,g}=1+;];", 1, 26, "a number"),
        ("B^{4}_{tx=0}[\n  A^{f32,g}_{tx} = 1 $ 2;\n];", 2, 22, "an operator"),
        ("B^{4}_{tx=0}[A^{f32,g}=max(1);];", 1, 29, "','"),
        ("B^{4}_{tx=0}[a=1;];", 1, 14, "a tensor reference"),
    ],
)
def test_syntax_errors_name_line_column_and_expected(text, line, column, expects):
    with pytest.raises(LeirSyntaxError) as info:
        parse_body(text)
    error = info.value
    assert (error.line, error.column) == (line, column)
    assert any(expects in e for e in error.expected), error.expected
    assert error.snippet.splitlines()[-1].index("^") == column + 1  # two spaces of indent


@pytest.mark.parametrize(
    ("text", "line", "column", "expects"),
    [
        ("B^{2}_{tx= )0}[A^{f32,g}_{tx}=1;];", 1, 12, "'0'"),
        ("[A^{f32,g}=1;];\n  B^{2}_{tx= )0}[A^{f32,g}_{tx}=1;];", 2, 14, "'0'"),
        ("B^{2}_{tx=0}L^{x}_{a=0}[A^{f32,g}_{tx}=1;];", 1, 16, "the loop extent"),
        ("B^{2}_{tx=0}[\n  L^{3}_{a=0 [A^{f32,g}_{tx}=1;];\n];", 2, 14, "'}'"),
        ("B^{2}_{tx=0}L^{3}_{a=1}[A^{f32,g}_{tx}=1;];", 1, 22, "'0'"),
        ("B^{2}_{tx=0}[A^{f32 g}_{tx}=1;];", 1, 21, "','"),
    ],
)
def test_errors_inside_a_header_token_name_the_real_spot(text, line, column, expects):
    """Loop headers and tensor heads are single tokens; their errors used to point at the token's start."""
    with pytest.raises(LeirSyntaxError) as info:
        parse_body(text)
    error = info.value
    assert (error.line, error.column) == (line, column), str(error)
    assert any(expects in e for e in error.expected), error.expected
    assert "loop header" in error.message or "tensor reference" in error.message
    assert error.snippet.splitlines()[-1].index("^") == column + 1


def test_a_header_error_in_a_file_counts_the_signature_lines():
    text = "input A: f32[4]\noutput C: f32[4]\n---\nL^{4}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a};];\nB^{2}_{tx= )0}[\n];\n"
    with pytest.raises(LeirSyntaxError) as info:
        load_program(text)
    assert (info.value.line, info.value.column) == (5, 12)


def test_semantic_token_errors():
    with pytest.raises(LeirSyntaxError, match="unknown dtype 'f33'"):
        parse_body("[A^{f33,g}=1;];")
    with pytest.raises(LeirSyntaxError, match="unknown memory scope 'q'"):
        parse_body("[A^{f32,q}=1;];")
    with pytest.raises(LeirSyntaxError, match="positive integer"):
        parse_body("L^{0}_{a=0}[A^{f32,g}=1;];")


def test_file_errors_report_file_lines():
    text = "input A: f32[4]\noutput C: f32[4]\n---\nL^{4}_{a=0}[\n  C^{f32,g}_{a} = A^{f32,g}_{a} +;\n];\n"
    with pytest.raises(LeirSyntaxError) as info:
        load_program(text)
    assert info.value.line == 5
    with pytest.raises(LeirFormatError, match="line 1"):
        load_program("input A f32[4]\n---\n[A^{f32,g}=1;];")
    with pytest.raises(LeirFormatError, match="'---'"):
        load_program("input A: f32[4]\n")
    with pytest.raises(LeirFormatError, match="declared twice"):
        load_program("input A: f32[4]\ninput A: f32[4]\n---\n[A^{f32,g}=1;];")


@pytest.mark.parametrize("text", ["", "(" * 5000 + "1", "[" * 3000, "\x00", "B^{99999999999999999999}_{a=0}[A^{f32,g}=1;];x"])
def test_pathological_input_only_raises_syntax_errors(text):
    with pytest.raises(LeirSyntaxError):
        parse_body(text)


# ---------------------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(BODIES)
def test_random_bodies_roundtrip_through_both_printers(body):
    text = canonical(body)
    assert parse_body(text) == body
    assert lark_parse(text) == body
    assert parse_body(pretty(body)) == body
    assert canonical(parse_body(text)) == text


@settings(max_examples=200, deadline=None, derandomize=True)
@given(EXPRS)
def test_random_expressions_roundtrip(expr):
    assert parse_expr(canonical(expr)) == expr


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(PROGRAMS)
def test_random_programs_keep_their_hash_through_every_form(program):
    digest = program_hash(program)
    assert program_hash(load_program(dump_program(program))) == digest
    assert program_hash(load_program(dump_program(program, pretty_body=False))) == digest
    assert program_hash(program_from_json(program_to_json(program))) == digest


def test_hash_changes_with_the_program():
    program = CORPUS[0].program
    other = CORPUS[1].program
    assert program_hash(program) != program_hash(other)
    assert len(program_hash(program)) == 64
