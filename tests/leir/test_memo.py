"""``leir.memo``: results kept per node object, and the rewrites that keep untouched nodes the same
objects so those results are found again."""

from __future__ import annotations

import threading

from leir.analysis import program_info, stmt_reads
from leir.ast import Body
from leir.memo import IdentityMemo, memo_by_identity
from leir.printer import _block_text, canonical
from leir.program import load_program
from leir.rewrite import normalize, with_body

TEXT = """input A: f32[8, 16]
output C: f32[8, 16]
output D: f32[8, 16]
---
B^{8}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx,a}=(A^{f32,g}_{tx,a}*2);];
B^{8}_{tx=0}L^{16}_{a=0}[D^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+1;];"""


def test_a_value_is_found_for_the_same_object_only():
    memo: IdentityMemo[list, str] = IdentityMemo(4)
    key, equal = [1, 2], [1, 2]
    memo.put(key, "kept")
    assert memo.get(key) == "kept"
    assert memo.get(equal) is None  # equal but another object: computed afresh, never confused
    memo.put(key, "other extra", extra="x")
    assert memo.get(key, "x") == "other extra" and memo.get(key) == "kept"


def test_the_memo_is_bounded_and_drops_the_least_recently_used():
    memo: IdentityMemo[object, int] = IdentityMemo(3)
    objs = [object() for _ in range(4)]
    for index, obj in enumerate(objs[:3]):
        memo.put(obj, index)
    assert memo.get(objs[0]) == 0  # now the most recently used
    memo.put(objs[3], 3)
    assert len(memo) == 3
    assert memo.get(objs[1]) is None  # the least recently used went
    assert [memo.get(o) for o in (objs[0], objs[2], objs[3])] == [0, 2, 3]


def test_a_decorated_function_runs_once_per_object_and_is_safe_across_threads():
    calls: list[int] = []

    @memo_by_identity(64)
    def size(items: tuple) -> int:
        calls.append(1)
        return len(items)

    shared = tuple(range(5))
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.extend(size(shared) for _ in range(200)))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [5] * 800
    assert 1 <= len(calls) <= 4  # at most one computation per racing thread, then always found
    size.memo.clear()
    assert size(shared) == 5 and len(calls) <= 5


def test_normalize_keeps_clean_blocks_and_rebuilds_only_what_carries_positions_or_parentheses():
    parsed = load_program(TEXT)
    clean = normalize(parsed.body)
    assert clean is not parsed.body  # positions and the Paren dropped
    assert canonical(parsed.body).count("(") == 1 and "(" not in canonical(clean)
    assert canonical(clean) == canonical(parsed.body).replace("(", "").replace(")", "")
    assert normalize(clean) is clean  # nothing left to drop: the very same objects
    swapped = Body((clean.blocks[0], clean.blocks[1]))
    again = normalize(swapped)
    assert all(a is b for a, b in zip(again.blocks, clean.blocks, strict=True))
    program = with_body(parsed, clean)
    assert program.body is clean


def test_memoised_readings_are_the_ones_computed_afresh():
    program = with_body(load_program(TEXT), normalize(load_program(TEXT).body))
    info = program_info(program)
    assert program_info(program) is info  # kept for the object
    fresh = program_info.__wrapped__(program)
    assert fresh.statements == info.statements and fresh.ok == info.ok
    stmt = program.body.blocks[1].items[0]
    assert stmt_reads(stmt) == stmt_reads.__wrapped__(stmt)
    assert [r.name for r in stmt_reads(stmt)] == ["C"]
    # the canonical text of a body is the same with its blocks' texts kept or printed anew
    assert canonical(program.body) == "".join(_block_text(b) + ";" for b in program.body.blocks)
