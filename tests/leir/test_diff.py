"""leir.diff: blocks, lines and tokens aligned the way a reviewer reads a step; no Django involved."""

from __future__ import annotations

from leir.diff import diff_programs, pretty_lines, tokenize
from leir.printer import pretty
from leir.program import load_program

BEFORE = """input A: f32[8, 16]
output B: f32[8, 16]
output C: f32[8]
---
L^{8}_{i=0}L^{16}_{j=0}[B^{f32,g}_{i,j}=A^{f32,g}_{i,j}*2;];
L^{8}_{i=0}[C^{f32,g}_{i}=0;L^{16}_{j=0}[C^{f32,g}_{i}=C^{f32,g}_{i}+B^{f32,g}_{i,j};];];
"""


def _program(text: str = BEFORE):
    return load_program(text)


def test_pretty_lines_are_exactly_the_pretty_printer_with_paths():
    program = _program()
    blocks = pretty_lines(program)
    assert "\n".join(text for block in blocks for _, text in block) + "\n" == pretty(program)
    second = blocks[1]
    assert [path for path, _ in second] == [(1,), (1, 0), (1, 1), (1, 1, 0), (1, 1), (1,)]


def test_tokenize_round_trips_and_keeps_names_and_numbers_whole():
    line = "  C^{f32,g}_{i} = C^{f32,g}_{i}+B^{f32,g}_{i,j}*1.5e-3;"
    tokens = tokenize(line)
    assert "".join(tokens) == line
    assert "^{" in tokens and "1.5e-3" in tokens and "f32" in tokens


def test_identical_programs_give_only_unchanged_rows():
    diff = diff_programs(_program(), _program())
    assert not diff.changed
    assert diff.counts() == {"same": 9, "changed": 0, "removed": 0, "added": 0}


def test_one_changed_token_is_the_only_highlight_and_the_site_is_marked():
    after = _program(BEFORE.replace("L^{8}_{i=0}L^{16}_{j=0}", "P^{8}_{i=0}L^{16}_{j=0}"))
    diff = diff_programs(_program(), after, site=[0])
    first, second = diff.blocks
    assert (first.kind, second.kind) == ("changed", "same")
    changed = [row for row in first.rows if row.kind == "changed"]
    assert len(changed) == 1
    before_tokens = [t.text for t in changed[0].before.tokens if t.changed]
    after_tokens = [t.text for t in changed[0].after.tokens if t.changed]
    assert (before_tokens, after_tokens) == (["L"], ["P"])
    assert changed[0].before.text == "L^{8}_{i=0}L^{16}_{j=0}["
    assert all(row.before.at_site for row in first.rows)
    assert first.at_site and not second.at_site


def test_a_nested_site_marks_only_its_lines():
    diff = diff_programs(_program(), _program(), site=[1, 1])
    marked = [row.before.text.strip() for row in diff.blocks[1].rows if row.before.at_site]
    assert marked == ["L^{16}_{j=0}[", "C^{f32,g}_{i} = C^{f32,g}_{i}+B^{f32,g}_{i,j};", "];"]


def test_an_added_block_and_an_added_statement_are_shown_as_added():
    extra = BEFORE.replace("C^{f32,g}_{i}=0;", "C^{f32,g}_{i}=0;C^{f32,g}_{i}=C^{f32,g}_{i}*1;") + \
        "L^{8}_{i=0}[C^{f32,g}_{i}=C^{f32,g}_{i}*2;];\n"
    diff = diff_programs(_program(), _program(extra))
    assert [block.kind for block in diff.blocks] == ["same", "changed", "added"]
    added_in_block = [row for row in diff.blocks[1].rows if row.kind == "added"]
    assert [row.after.text.strip() for row in added_in_block] == ["C^{f32,g}_{i} = C^{f32,g}_{i}*1;"]
    assert all(row.before is None for row in diff.blocks[2].rows)
    assert diff.blocks[2].after_index == 2 and diff.blocks[2].before_index is None


def test_line_numbers_follow_each_programs_pretty_text():
    extra = "L^{8}_{i=0}[C^{f32,g}_{i}=1;];\n"
    before = _program()
    after = _program(BEFORE.replace("---\n", "---\n" + extra))
    diff = diff_programs(before, after)
    assert [block.kind for block in diff.blocks] == ["added", "same", "same"]
    last = diff.blocks[-1].rows[-1]
    assert (last.before.number, last.after.number) == (9, 12)


def test_the_same_inputs_give_the_same_diff():
    after = _program(BEFORE.replace("*2", "*3"))
    assert diff_programs(_program(), after, site=[0]) == diff_programs(_program(), after, site=[0])


def test_the_site_detail_marks_the_named_loop_and_tensor_tokens_only_on_site_lines():
    after = _program(BEFORE.replace("L^{8}_{i=0}L^{16}_{j=0}", "L^{8}_{i=0}U^{16}_{j=0}"))
    diff = diff_programs(_program(), after, site=[0], site_detail={"loop": "j"})
    header = diff.blocks[0].rows[0]
    for line, kind in ((header.before, "L"), (header.after, "U")):
        assert "".join(t.text for t in line.tokens if t.site) == kind + "^{16}_{j=0}"
        assert line.text.startswith("L^{8}_{i=0}")
    changed = [t.text for t in header.after.tokens if t.changed]
    assert changed == ["U"]  # splitting for the site keeps the change marks as they were
    # the loop over j in block 2 is not at the site: nothing marked there
    assert not any(t.site for row in diff.blocks[1].rows for t in row.before.tokens)

    by_tensor = diff_programs(_program(), _program(), site=[1], site_detail={"tensor": "C"})
    statement = by_tensor.blocks[1].rows[3].before
    assert [t.text for t in statement.tokens if t.site] == ["C^{f32,g}", "C^{f32,g}"]
