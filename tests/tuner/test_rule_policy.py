"""RulePolicy's ranking: the cost model maps loop kinds as the CPU lowering does, and the ranking spreads
its first proposals over different kinds of steps."""

from __future__ import annotations

from leir.printer import canonical
from leir.program import load_program
from strategies import apply_strategy, candidates
from tuner.cost import AUTO_VECTOR_MIN_EXTENT, program_cost
from tuner.policies import RulePolicy
from tuner.policies.rule import spread
from tuner.proposals import SearchContext

HEAD = """input A: f32[64, 128]
input D: f32[128, 96]
output C: f32[64, 96]
---
"""
# C = A @ D with the reduction innermost (D read with a stride of 96 along c) and the frontend's
# ``B^{..}_{tx}`` outer loop, which the CPU lowering runs serially.
MATMUL = HEAD + "B^{64}_{tx=0}L^{96}_{a=0}L^{128}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*D^{f32,g}_{c,a};];"


def _cost(text: str, target: str = "llvm") -> float:
    return program_cost(load_program(text), target).total


def test_a_thread_axis_binding_is_serial_on_the_cpu_and_parallel_on_a_gpu():
    serial = MATMUL.replace("B^{64}_{tx=0}", "L^{64}_{i=0}")
    assert _cost(MATMUL) == _cost(serial)
    assert _cost(MATMUL, "cuda") < _cost(serial, "cuda")
    block_axis = MATMUL.replace("B^{64}_{tx=0}", "B^{64}_{bx=0}").replace("_{tx,", "_{bx,")
    assert _cost(block_axis) < _cost(MATMUL)  # a block axis is a parallel loop on the CPU


def test_parallel_loops_count_once_per_nest_and_outermost_is_cheapest():
    outer = MATMUL.replace("B^{64}_{tx=0}", "P^{64}_{tx=0}")
    inner = MATMUL.replace("L^{96}_{a=0}", "P^{96}_{a=0}")
    nested = outer.replace("L^{96}_{a=0}", "P^{96}_{a=0}")
    assert _cost(outer) < _cost(inner) < _cost(MATMUL)  # a fork-join per entry of an inner loop
    assert _cost(nested) == _cost(outer)  # LLVM runs one parallel level: the inner P is serial


def test_strided_access_along_the_innermost_loop_is_dearer_than_contiguous():
    # the same product with a innermost: D and C move contiguously, A is invariant
    reordered = HEAD + ("B^{64}_{tx=0}L^{128}_{c=0}L^{96}_{a=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}"
                        "+A^{f32,g}_{tx,c}*D^{f32,g}_{c,a};];")
    assert _cost(reordered) < _cost(MATMUL) / 4  # and LLVM vectorises the contiguous loop by itself
    vectorised = reordered.replace("L^{96}_{a=0}", "V^{96}_{a=0}")
    assert _cost(vectorised) == _cost(reordered)  # so marking it V saves nothing more
    strided = reordered.replace("D^{f32,g}_{c,a}", "D^{f32,g}_{a,c}").replace("f32[128, 96]", "f32[96, 128]")
    assert _cost(strided) > _cost(reordered) * 4  # a stride along a: neither contiguous nor vectorised


def test_a_short_inner_loop_is_scalar_unless_marked_v():
    # LLVM unrolls a short constant loop before its loop vectoriser sees it (tests/verifier/test_targets.py
    # reads the IR): the 22-wide row of a conv3d ran 66 ms as L and 13 ms as V
    head = "input A: f32[32, {n}]\noutput C: f32[32, {n}]\n---\n"
    body = "L^{{32}}_{{i=0}}L^{{{n}}}_{{a=0}}[C^{{f32,g}}_{{i,a}}=A^{{f32,g}}_{{i,a}}*2;];"
    short = (head + body).format(n=22)
    assert _cost(short.replace("L^{22}", "V^{22}")) < _cost(short) / 4
    long = (head + body).format(n=AUTO_VECTOR_MIN_EXTENT)
    assert _cost(long) == _cost(long.replace(f"L^{{{AUTO_VECTOR_MIN_EXTENT}}}", f"V^{{{AUTO_VECTOR_MIN_EXTENT}}}"))


def test_llvm_vectorises_only_dependence_free_contiguous_inner_loops():
    head = "input A: f32[64]\noutput C: f32[64]\n---\n"
    plain = head + "L^{64}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}*2;];"
    # TVM lowers exp and max, and our lowering erf (verifier.vector_math), to inline arithmetic LLVM
    # vectorises (tests/verifier/test_targets.py reads the IR)
    for call in ("exp(A^{f32,g}_{a})", "max(A^{f32,g}_{a},0)", "erf(A^{f32,g}_{a})"):
        vectorised = plain.replace("A^{f32,g}_{a}*2", call)
        assert _cost(vectorised) == _cost(vectorised.replace("L^{64}", "V^{64}")), call
    # each carried loop beside a loop of the same arithmetic without the dependence (another input read
    # where the loop read C, into an element of its own)
    two = head.replace("input A: f32[64]", "input A: f32[64]\ninput B: f32[64]")
    serial = {
        "a recurrence": (head.replace("C: f32[64]", "C: f32[65]")
                         + "L^{64}_{a=0}[C^{f32,g}_{a+1}=C^{f32,g}_{a}+A^{f32,g}_{a};];",
                         two.replace("C: f32[64]", "C: f32[65]")
                         + "L^{64}_{a=0}[C^{f32,g}_{a+1}=B^{f32,g}_{a}+A^{f32,g}_{a};];"),
        "a reduction": (head.replace("C: f32[64]", "C: f32[1]")
                        + "L^{64}_{a=0}[C^{f32,g}_{0}=C^{f32,g}_{0}+A^{f32,g}_{a};];",
                        two + "L^{64}_{a=0}[C^{f32,g}_{a}=B^{f32,g}_{a}+A^{f32,g}_{a};];"),
    }
    assert _cost(plain) == _cost(plain.replace("L^{64}", "V^{64}"))  # vectorised whether marked V or not
    for why, (text, free) in serial.items():
        # LLVM leaves the loop scalar where the same loop without the dependence vectorises
        assert _cost(free) < _cost(text) / 2, why
        # and a V along the dependence runs serially in the kernel (the lowering reports it as not
        # honoured), which the model, counting the lowering's own loop mapping, counts the same
        assert _cost(text.replace("L^{6", "V^{6")) == _cost(text), why


def test_rule_policy_ranks_the_contiguous_reorder_and_the_parallel_loop_first():
    proposals = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    # a innermost: D and C contiguous, so LLVM vectorises it; then the outer rows run in parallel, by
    # rebinding the serial thread axis tx to the block axis bx (one fork-join) ahead of making the inner
    # serial loop a parallel (one fork-join per row)
    assert proposals[0].strategy == "loop_reorder" and proposals[0].step.site.key == "0[inner=c,outer=a]"
    assert not proposals[0].enables  # the reorder needs no enabling step here
    # then the register tile two steps away (test_a_row_split_is_scored_by_the_unrolled_rows_it_enables)
    assert proposals[1].strategy == "loop_split" and proposals[1].enables
    direct = [p for p in proposals if not p.enables]
    assert direct[1].strategy == "loop_binding" and direct[1].step.params == {"axis": "bx"}
    assert canonical(direct[1].step.after.body).startswith("B^{64}_{bx=0}L^{96}_{a=0}")
    assert direct[2].strategy == "loop_parallelization"
    assert "P^{96}_{a=0}" in canonical(direct[2].step.after.body)
    assert direct[2].score > 0.4 and direct[1].score > direct[2].score
    assert all(p.strategy == "loop_split" for p in proposals if p.enables)
    # a thread-axis binding runs serially here: modelled as no gain, behind every step that gains
    bindings = [p for p in proposals if p.strategy == "loop_binding" and "t" in str(p.step.params)]
    assert all(p.score <= 0.0 for p in bindings)
    # deterministic for a seed
    again = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    assert [(p.strategy, p.step.site.key, sorted(p.step.params.items())) for p in proposals] == \
        [(p.strategy, p.step.site.key, sorted(p.step.params.items())) for p in again]


def test_spread_puts_one_step_per_strategy_and_block_first():
    ranked = RulePolicy(seed=0).propose(load_program(MATMUL), SearchContext())
    families = [(p.strategy, p.step.site.key.split("[")[0]) for p in ranked]
    leaders = len(set(families))
    assert len(set(families[:leaders])) == leaders  # no family twice before every family had a turn
    assert spread(ranked) == ranked  # already spread: a fixed point
    assert sorted(map(id, spread(list(reversed(ranked))))) == sorted(map(id, ranked))  # a permutation


def test_a_split_is_scored_by_the_vector_loop_it_enables():
    # 48 is too short for LLVM to vectorise the loop by itself (AUTO_VECTOR_MIN_EXTENT) and too long for
    # one V loop (MAX_VECTOR_EXTENT)
    text = """input A: f32[32, 48]
output C: f32[32, 48]
---
B^{32}_{tx=0}L^{48}_{a=0}[C^{f32,g}_{tx,a}=erf(A^{f32,g}_{tx,a});];"""
    proposals = RulePolicy(seed=0).propose(load_program(text), SearchContext())
    splits = [p for p in proposals if p.strategy == "loop_split"]
    assert not any(p.strategy == "loop_vectorization" for p in proposals)  # not possible in one step
    best = max(splits, key=lambda p: p.score)
    assert best.step.params["factor"] == 16  # the widest vector loop, added even if sampling missed it
    assert best.score > 0.3 and "enables" in best.rationale and best.enables
    assert all(p.score < best.score for p in splits if p.step.params["factor"] < 8)  # fewer lanes filled


LINEAR = """input A: f32[48, 256]
param D: f32[320, 256]
output C: f32[48, 320]
---
B^{48}_{tx=0}L^{320}_{a=0}L^{256}_{c=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*D^{f32,g}_{a,c};];"""


def test_a_transpose_is_scored_by_the_contiguous_reorder_it_enables():
    # x @ W^T: W is read along its rows, so no reorder alone makes every operand contiguous
    proposals = RulePolicy(seed=0).propose(load_program(LINEAR), SearchContext())
    transpose = next(p for p in proposals if p.strategy == "layout_transformation"
                     and p.step.params["layout"] == "transpose:0,1" and "tensor=D" in p.step.site.key)
    assert transpose.enables and "enables" in transpose.rationale
    assert _cost_of(transpose.step.after) > _cost(LINEAR)  # slower by itself: a copy, and D now strided
    assert transpose.score > 0.5
    others = [p for p in proposals if p.strategy == "layout_transformation" and p is not transpose]
    assert all(p.score < transpose.score for p in others)
    # steps whose follow-up is only the parallel loop available anyway are not marked as enabling
    assert not any(p.enables for p in proposals if p.strategy == "loop_split")


def _cost_of(program) -> float:
    return program_cost(program).total




def test_a_split_is_scored_by_the_parallel_loop_it_enables_two_steps_later():
    # x @ W^T for one row after the transpose and the reorder: a is innermost and contiguous, but the
    # only serial spatial loop is a, inside the reduction c (the unit row loop has nothing to spread); a
    # parallel loop needs a split of a and a reorder of its outer part out of c first
    text = """input A: f32[1, 256]
param D: f32[256, 320]
output C: f32[1, 320]
---
B^{1}_{tx=0}L^{256}_{c=0}L^{320}_{a=0}[C^{f32,g}_{tx,a}=C^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*D^{f32,g}_{c,a};];"""
    proposals = RulePolicy(seed=0).propose(load_program(text), SearchContext())
    direct = next(p for p in proposals if p.strategy == "loop_parallelization")
    assert direct.score < 0.1  # a fork-join per iteration of c: what a parallel a costs where it stands
    top = proposals[0]
    assert top.strategy == "loop_split" and top.enables and top.score > 0.3
    assert top.step.params["factor"] < 320  # an outer loop of several iterations to spread over cores


def test_a_scan_along_an_outer_loop_vectorises_over_its_lanes():
    # M_{f,d} = M_{f-1,d} + A_{f,d}: the recurrence runs along f, so the inner d loop carries nothing
    head = "input A: f32[64, 128]\noutput M: f32[64, 128]\n---\n"
    lanes_inner = head + ("L^{64}_{f=0}L^{128}_{d=0}[M^{f32,g}_{f,d}=if_then_else(f-1<0,0,"
                          "M^{f32,g}_{f-1,d})+A^{f32,g}_{f,d};];")
    assert _cost(lanes_inner) == _cost(lanes_inner.replace("L^{128}_{d=0}", "V^{128}_{d=0}"))
    scan_inner = head + ("L^{128}_{d=0}L^{64}_{f=0}[M^{f32,g}_{f,d}=if_then_else(f-1<0,0,"
                         "M^{f32,g}_{f-1,d})+A^{f32,g}_{f,d};];")
    assert _cost(scan_inner) > _cost(lanes_inner) * 4  # strided and scalar along the scan


def test_a_unit_trailing_dimension_keeps_an_access_contiguous():
    head = "input X: f32[256, 1]\ninput Y: f32[256]\noutput C: f32[256]\n---\n"
    trailing = head + "L^{256}_{c=0}[C^{f32,g}_{c}=X^{f32,g}_{c,0}*2;];"
    flat = head + "L^{256}_{c=0}[C^{f32,g}_{c}=Y^{f32,g}_{c}*2;];"
    assert _cost(trailing) == _cost(flat)
    wide = trailing.replace("X: f32[256, 1]", "X: f32[256, 2]")
    assert _cost(wide) > _cost(flat)  # a stride of two elements is no longer contiguous


BIG = 512  # a 512 x 128 x 128 f32 intermediate is 32 MiB: more than the model's cache
PRODUCT = f"""input A: f32[{BIG}, 128]
input D: f32[{BIG}, 128]
output M: f32[{BIG}, 128, 128]
---
L^{{{BIG}}}_{{a=0}}L^{{128}}_{{c=0}}L^{{128}}_{{d=0}}[K^{{f32,g}}_{{a,c,d}}=A^{{f32,g}}_{{a,c}}*D^{{f32,g}}_{{a,d}};];
"""
# a scan over a (the outermost subscript), its loops already reordered so the lanes d run innermost
SCAN = PRODUCT + (f"L^{{128}}_{{c=0}}L^{{{BIG}}}_{{a=0}}L^{{128}}_{{d=0}}[M^{{f32,g}}_{{a,c,d}}=if_then_else(a-1<0,0,"
                  "M^{f32,g}_{a-1,c,d})+K^{f32,g}_{a,c,d};];")


def test_a_large_intermediate_costs_a_pass_through_memory_per_block_that_touches_it():
    from tuner.cost import CACHE_BYTES, STREAM_WEIGHT

    lanes_inner = SCAN.replace(f"L^{{128}}_{{c=0}}L^{{{BIG}}}_{{a=0}}L^{{128}}_{{d=0}}[M",
                               f"L^{{{BIG}}}_{{a=0}}L^{{128}}_{{c=0}}L^{{128}}_{{d=0}}[M")
    assert lanes_inner != SCAN and abs(_cost(lanes_inner) / _cost(SCAN) - 1) < 1e-3  # loop control aside
    inlined = lanes_inner.split("---\n")[0] + "---\n" + (
        f"L^{{{BIG}}}_{{a=0}}L^{{128}}_{{c=0}}L^{{128}}_{{d=0}}[M^{{f32,g}}_{{a,c,d}}=if_then_else(a-1<0,0,"
        "M^{f32,g}_{a-1,c,d})+A^{f32,g}_{a,c}*D^{f32,g}_{a,d};];")
    size = BIG * 128 * 128 * 4
    assert size > CACHE_BYTES
    # K is written by one block and read by the next: two passes the inlined program does not make
    assert _cost(lanes_inner) - _cost(inlined) > 2 * size * STREAM_WEIGHT * 0.9
    cost = program_cost(load_program(lanes_inner))
    assert cost.streamed == (size * STREAM_WEIGHT, 2 * size * STREAM_WEIGHT)  # K; K and M
    # what loop steps can change leaves the streaming out
    assert abs(cost.loop_share(0) + cost.loop_share(1) - 1) < 1e-9
    assert cost.loop_share(1) == (cost.blocks[1] - cost.streamed[1]) / (cost.total - sum(cost.streamed))
    small = lanes_inner.replace(str(BIG), "8")
    assert program_cost(load_program(small)).streamed == (0.0, 0.0)  # in cache: no pass to pay


def test_a_reorder_is_scored_by_the_inline_it_enables():
    # the scan's loops run (c, a, d), its producer's (a, c, d): compute_inline needs the same header, so
    # the reorder that swaps c and a, worth nothing by itself, is what lets K (32 MiB, streamed twice) go
    program = load_program(SCAN)
    from strategies.engine import candidates

    assert candidates(program, "compute_inline") == []
    proposals = RulePolicy(seed=0).propose(program, SearchContext())
    enabling = [p for p in proposals if p.strategy == "loop_reorder" and p.enables]
    assert enabling and all(candidates(p.step.after, "compute_inline") for p in enabling)
    best = enabling[0]
    assert "enables" in best.rationale and best.score > 0
    assert best is proposals[0] or best.score > proposals[3].score  # measured in a branch of four


# x @ W with one output row per iteration of the row loop and the weight already [k, n]: the 1.6 MB
# weight is read again for every row, more of it between two reads than a core's L2 holds
ROWS_HEAD = """input A: f32[96, 256]
param D: f32[256, 1600]
output C: f32[96, 1600]
---
"""
ROW_AT_A_TIME = ROWS_HEAD + ("B^{96}_{bx=0}L^{256}_{c=0}L^{1600}_{a=0}[C^{f32,g}_{bx,a}=C^{f32,g}_{bx,a}"
                             "+A^{f32,g}_{bx,c}*D^{f32,g}_{c,a};];")


def _rows_at_a_time(rows: int, kind: str = "U") -> str:
    return ROWS_HEAD + (f"B^{{{96 // rows}}}_{{bx=0}}L^{{256}}_{{c=0}}L^{{1600}}_{{a=0}}{kind}^{{{rows}}}_{{d=0}}["
                        f"C^{{f32,g}}_{{bx*{rows}+d,a}}=C^{{f32,g}}_{{bx*{rows}+d,a}}"
                        f"+A^{{f32,g}}_{{bx*{rows}+d,c}}*D^{{f32,g}}_{{c,a}};];")


def test_unrolled_rows_share_the_weight_vector_they_all_read():
    # measured on a 96x1664x1600 GEMM (tuner/cost.py: L2_BYTES, SPILLED_SHARE): 17.1 ms a row at a time,
    # 6.6 ms six rows unrolled innermost (LLVM vectorises a for all six copies and loads D once), 9.7 ms
    # for eight or more rows, whose values no longer fit the 16 vector registers
    one, six, eight = _cost(ROW_AT_A_TIME), _cost(_rows_at_a_time(6)), _cost(_rows_at_a_time(8))
    assert six < one / 1.5
    assert six < eight < one
    # an unrolled innermost loop leaves a innermost for LLVM: vectorised as before, not strided along d
    assert _cost(_rows_at_a_time(6, "L")) > one * 4


def _register_tile(rows: int, scope: str) -> str:
    """Rows ``bx*rows+d`` by 16 columns ``e*16+f`` accumulated over all of ``c``, into ``C`` itself
    (``g``) or into a local accumulator copied back once per tile (``l``, a ``cache_read_write``)."""
    head = f"B^{{{96 // rows}}}_{{bx=0}}L^{{100}}_{{e=0}}"
    tile = f"L^{{256}}_{{c=0}}U^{{{rows}}}_{{d=0}}V^{{16}}_{{f=0}}"
    product = f"A^{{f32,g}}_{{bx*{rows}+d,c}}*D^{{f32,g}}_{{c,e*16+f}}"
    if scope == "g":
        return ROWS_HEAD + (f"{head}{tile}[C^{{f32,g}}_{{bx*{rows}+d,e*16+f}}="
                            f"C^{{f32,g}}_{{bx*{rows}+d,e*16+f}}+{product};];")
    return ROWS_HEAD + (f"{head}[L^{{{rows}}}_{{g=0}}L^{{16}}_{{h=0}}[H^{{f32,l}}_{{bx,g,h}}=0;];"
                        f"{tile}[H^{{f32,l}}_{{bx,d,f}}=H^{{f32,l}}_{{bx,d,f}}+{product};];"
                        f"L^{{{rows}}}_{{g=0}}L^{{16}}_{{h=0}}[C^{{f32,g}}_{{bx*{rows}+g,e*16+h}}=H^{{f32,l}}_{{bx,g,h}};];];")


def test_a_local_accumulator_of_a_register_tile_stays_in_registers():
    # measured on the 96x1664x1600 GEMM of level2/gemm_scale (docs/leir.md, private copies): rows
    # unrolled innermost 9.4 ms, the 6x16 tile into C itself 11.6 ms (C loaded and stored every step),
    # into a local accumulator 6.2 ms (allocated per iteration of bx, kept in registers); the tile reads
    # D a row of 6400 bytes per step of c, past the prefetchers (PREFETCH_MISS_WEIGHT), which the model
    # counts against it
    from leir.ast import Loop, TensorRef, Var
    from tuner.cost import register_accumulator

    rows_innermost, into_c, local = (_cost(_rows_at_a_time(6), "llvm-host"), _cost(_register_tile(6, "g"), "llvm-host"),
                                     _cost(_register_tile(6, "l"), "llvm-host"))
    assert local < rows_innermost / 1.2 and local < into_c / 1.2
    tile = (Loop("B", 16, "bx"), Loop("L", 100, "e"), Loop("L", 256, "c"), Loop("U", 6, "d"), Loop("V", 16, "f"))
    accumulator = TensorRef("H", "f32", "l", (Var("bx"), Var("d"), Var("f")))
    assert register_accumulator(accumulator, tile)
    assert not register_accumulator(TensorRef("H", "f32", "g", accumulator.indices), tile)  # global memory
    moving = TensorRef("H", "f32", "l", (Var("bx"), Var("c"), Var("f")))  # moves with the reduction
    assert not register_accumulator(moving, tile)
    # twelve rows of two registers each do not fit beside the shared loads
    assert not register_accumulator(accumulator, tile[:3] + (Loop("U", 12, "d"), tile[4]))


def test_avx512_registers_hold_a_register_tile_twice_as_tall():
    # measured on AMD EPYC Zen 5, llvm-native, one thread, 576x512 by 512x944 (verifier/targets.py,
    # AVX512_UNIT): 6x16 tile 165 GFLOP/s, 8x16 195, 12x16 213, 16x16 83 (a 1 KB accumulator is no
    # stack slot, so it is loaded and stored on every step)
    from leir.ast import Loop, TensorRef, Var
    from tuner.cost import STACK_ALLOCA_BYTES, max_sharing_copies, register_accumulator
    from verifier import lowering
    from verifier.targets import AVX512_UNIT, MODELLED_UNIT

    def tile(rows: int) -> tuple:
        return (Loop("B", 96 // rows, "bx"), Loop("L", 100, "e"), Loop("L", 256, "c"), Loop("U", rows, "d"),
                Loop("V", 16, "f"))

    accumulator = TensorRef("H", "f32", "l", (Var("bx"), Var("d"), Var("f")))
    assert register_accumulator(accumulator, tile(12), AVX512_UNIT)  # one zmm a row: 12 + 1 + 1 of 32
    assert not register_accumulator(accumulator, tile(12), MODELLED_UNIT)  # two ymm a row: 27 of 16
    assert not register_accumulator(accumulator, tile(16), AVX512_UNIT)  # fits 32 registers, not the stack
    assert STACK_ALLOCA_BYTES == lowering.STACK_ALLOCA_BYTES  # the model's limit is the lowering's
    assert (max_sharing_copies(MODELLED_UNIT), max_sharing_copies(AVX512_UNIT)) == (7, 15)


def test_the_modelled_tile_follows_the_targets_vector_unit():
    from tuner.cost import max_sharing_copies
    from verifier.targets import AVX512_UNIT, vector_unit

    six, twelve = _register_tile(6, "l"), _register_tile(12, "l")
    # llvm-host keeps AVX2's registers on every x86-64 (its -fma switches AVX-512 off): six rows it is
    assert _cost(six, "llvm-host") < _cost(twelve, "llvm-host")
    state = ROWS_HEAD + ("B^{96}_{bx=0}L^{1600}_{a=0}L^{256}_{c=0}[C^{f32,g}_{bx,a}=C^{f32,g}_{bx,a}"
                         "+A^{f32,g}_{bx,c}*D^{f32,g}_{c,a};];")
    rows = max_sharing_copies(vector_unit("llvm-native"))
    split = RulePolicy(seed=0, target="llvm-native").propose(load_program(state), SearchContext())[0]
    assert split.strategy == "loop_split" and split.step.site.get("loop") == "bx"
    assert split.step.params == {"factor": max(f for f in range(1, rows + 1) if 96 % f == 0)}
    if vector_unit("llvm-native") == AVX512_UNIT:  # this CPU has AVX-512: the taller tile is cheaper
        assert split.step.params == {"factor": 12}
        assert _cost(twelve, "llvm-native") < _cost(six, "llvm-native")


def test_a_transpose_reads_rows_and_writes_columns():
    # measured on AMD EPYC Zen 5, 2 threads, 944x512 (tuner/cost.py, STRIDED_STORE_WEIGHT): 0.073 ms
    # reading rows and writing columns, 0.334 ms reading columns and writing rows
    head = "input C: f32[944, 512]\noutput E: f32[512, 944]\n---\n"
    rows_read = head + "B^{944}_{bx=0}L^{512}_{a=0}[E^{f32,g}_{a,bx}=C^{f32,g}_{bx,a};];"
    columns_read = head + "B^{512}_{bx=0}L^{944}_{a=0}[E^{f32,g}_{bx,a}=C^{f32,g}_{a,bx};];"
    assert _cost(rows_read, "llvm-host") < _cost(columns_read, "llvm-host")


def test_a_weight_read_again_per_row_costs_an_l2_miss_only_when_it_outgrows_l2():
    from leir.ast import Loop, TensorRef, Var
    from tuner.cost import L2_BYTES, L2_MISS_WEIGHT, reread_weight

    weight = TensorRef("D", "f32", "g", (Var("c"), Var("a")))
    columns = L2_BYTES // 4 // 256  # a 256 x n weight of exactly L2_BYTES
    assert reread_weight(weight, (Loop("B", 96, "bx"), Loop("L", 256, "c"), Loop("L", columns, "a"))) == 1.0
    assert reread_weight(weight, (Loop("B", 96, "bx"), Loop("L", 256, "c"), Loop("L", columns + 8, "a"))) \
        == L2_MISS_WEIGHT
    # no loop repeats it: read once whatever its size
    assert reread_weight(weight, (Loop("L", 256, "c"), Loop("L", 4 * columns, "a"))) == 1.0


def test_a_row_split_is_scored_by_the_unrolled_rows_it_enables():
    # before the reorder that puts a innermost: split the rows, move the row loop innermost, unroll it
    state = ROWS_HEAD + ("B^{96}_{bx=0}L^{1600}_{a=0}L^{256}_{c=0}[C^{f32,g}_{bx,a}=C^{f32,g}_{bx,a}"
                         "+A^{f32,g}_{bx,c}*D^{f32,g}_{c,a};];")
    proposals = RulePolicy(seed=0).propose(load_program(state), SearchContext())
    top = proposals[0]
    assert top.strategy == "loop_split" and top.step.site.get("loop") == "bx" and top.enables
    assert top.step.params == {"factor": 6}  # the most rows whose copies fit the registers
    assert "the 2 steps" in top.rationale
    reorder = next(p for p in proposals if p.strategy == "loop_reorder" and not p.enables)
    assert reorder.step.site.key == "0[inner=c,outer=a]" and reorder.score < top.score
    # the split's child: the reorder that moves the row loop innermost, then the unroll, ranked first
    child = RulePolicy(seed=0).propose(top.step.after, SearchContext())[0]
    inner = top.step.after.body.blocks[0].loops[1].var
    assert child.strategy == "loop_reorder" and child.enables
    assert child.step.after.body.blocks[0].loops[-1].var == inner
    grandchild = RulePolicy(seed=0).propose(child.step.after, SearchContext())[0]
    assert grandchild.strategy == "loop_unrolling" and grandchild.step.site.get("loop") == inner
    assert _cost_of(grandchild.step.after) < _cost(ROW_AT_A_TIME)  # better than the row-at-a-time order


def test_a_split_that_a_chain_does_not_need_enables_nothing():
    # the row loop is split already: splitting it again adds nothing the reorder and unroll of the
    # existing inner loop would not reach alone
    state = ROWS_HEAD + ("B^{16}_{bx=0}L^{6}_{d=0}L^{1600}_{a=0}L^{256}_{c=0}[C^{f32,g}_{bx*6+d,a}="
                         "C^{f32,g}_{bx*6+d,a}+A^{f32,g}_{bx*6+d,c}*D^{f32,g}_{c,a};];")
    proposals = RulePolicy(seed=0).propose(load_program(state), SearchContext())
    assert not any(p.enables for p in proposals if p.strategy == "loop_split")
    assert proposals[0].strategy == "loop_reorder" and proposals[0].enables


def test_rows_unrolled_innermost_are_one_planned_recipe_from_a_register_tile():
    """From ``…L_c L_a U_d`` the tile is four steps away and none of the first three pays alone: the
    first is proposed with the other three planned (``Proposal.then``), ranked by where they end; a
    state part-way continues the recipe; without the write cache among its strategies there is no plan."""
    from tests.tuner.test_search import ROWS_UNROLLED
    from tuner.policies.register_tile import register_tile_chains

    program = load_program(ROWS_UNROLLED)
    top = RulePolicy(seed=0, target="llvm-host").propose(program, SearchContext())[0]
    assert top.strategy == "loop_split" and top.step.params == {"factor": 16} and top.enables
    assert [s.strategy for s in top.then] == ["loop_vectorization", "loop_reorder", "cache_read_write"]
    assert top.then[0].before == top.step.after and top.then[2].params == {"scope": "l"}
    end = top.then[-1].after
    assert program_cost(end, "llvm-host").total < _cost(ROWS_UNROLLED, "llvm-host") / 1.2
    part_way = register_tile_chains(top.then[0].after, (0,), "llvm-host")[0]
    assert [s.strategy for s in part_way.steps] == ["loop_reorder", "cache_read_write"]
    no_cache = RulePolicy(seed=0, target="llvm-host", strategies=("loop_split", "loop_vectorization",
                                                                  "loop_reorder", "loop_unrolling"))
    assert all(not p.then for p in no_cache.propose(program, SearchContext()))


PANEL_HEAD = """input A: f32[96, 256]
param W: f32[1600, 256]
output C: f32[96, 1600]
---
"""


def _tile_over(weight: str, copy: str = "") -> str:
    """A 6x16 register tile of ``C = A @ W^T`` reading the weight as ``weight`` (with ``c`` the reduction
    and ``e*16+f`` the output column), after ``copy`` (the block that lays the weight out)."""
    return PANEL_HEAD + copy + (
        "B^{16}_{bx=0}L^{100}_{e=0}[L^{6}_{g=0}L^{16}_{h=0}[H^{f32,l}_{bx,g,h}=0;];"
        f"L^{{256}}_{{c=0}}V^{{16}}_{{f=0}}U^{{6}}_{{d=0}}[H^{{f32,l}}_{{bx,d,f}}=H^{{f32,l}}_{{bx,d,f}}"
        f"+A^{{f32,g}}_{{bx*6+d,c}}*{weight};];"
        "L^{6}_{g=0}V^{16}_{h=0}[C^{f32,g}_{bx*6+g,e*16+h}=H^{f32,l}_{bx,g,h};];];")


TRANSPOSED = "B^{1600}_{bx=0}L^{256}_{a=0}[D^{f32,g}_{a,bx}=W^{f32,g}_{bx,a};];"


def test_a_register_tile_reads_its_weight_packed_in_panels():
    # measured on level1/linear_no_bias_3d (Intel Xeon, AVX-512, 2 threads; tuner/cost.py,
    # PREFETCH_STRIDE_BYTES): the 12x16 tile read its 16 columns from the transposed [512, 944] weight,
    # a row of 3776 bytes per step of the reduction, in 3.42 ms, and from the packed [59, 512, 16] one in
    # 2.29 ms
    from leir.ast import Loop, TensorRef, Var
    from leir.parser import parse_expr
    from tuner.cost import PREFETCH_MISS_WEIGHT, PREFETCH_STRIDE_BYTES, access_weight

    across_rows = _tile_over("D^{f32,g}_{c,e*16+f}", TRANSPOSED)
    packed = _tile_over("D^{f32,g}_{e,c,f}", "B^{1600}_{bx=0}L^{256}_{a=0}[D^{f32,g}_{bx//16,a,bx%16}=W^{f32,g}_{bx,a};];")
    assert _cost(packed, "llvm-host") < _cost(across_rows, "llvm-host") / 1.15
    # the same packed read spelt as the layout map leaves it costs the same: the lowering simplifies it
    as_mapped = packed.replace("D^{f32,g}_{e,c,f}", "D^{f32,g}_{(e*16+f)//16,c,(e*16+f)%16}")
    assert _cost(as_mapped, "llvm-host") == _cost(packed, "llvm-host")
    # the weight moves 1600 floats per step of c around the tile: past the prefetchers' reach
    tile = (Loop("B", 16, "bx"), Loop("L", 100, "e"), Loop("L", 256, "c"), Loop("V", 16, "f"), Loop("U", 6, "d"))
    row = TensorRef("D", "f32", "g", (Var("c"), parse_expr("e*16+f")))
    assert access_weight(row, tile, (256, 1600)) == PREFETCH_MISS_WEIGHT > 1.0
    assert 1600 * 4 > PREFETCH_STRIDE_BYTES >= 16 * 4
    assert access_weight(row, tile, (256, PREFETCH_STRIDE_BYTES // 4)) == 1.0  # a row the prefetchers follow
    # the same read in a loop LLVM vectorises by itself (no tile around it) is the innermost loop's business
    assert access_weight(row, tile[:3] + (Loop("L", 16, "f"),), (256, 1600)) == 1.0


def test_the_policy_packs_a_transposed_weight_a_register_tile_reads():
    state = load_program(_tile_over("D^{f32,g}_{c,e*16+f}", TRANSPOSED))
    top = RulePolicy(seed=0, target="llvm-host").propose(state, SearchContext())[0]
    assert (top.strategy, top.step.site.get("tensor"), top.step.params) == \
        ("set_storage_layout", "D", {"layout": "pack:1:16"})
    assert "D^{f32,g}_{bx//16,a,bx%16}" in canonical(top.step.after.body)


def test_an_on_chip_buffer_is_cheap_on_the_cpu_only_as_a_stack_slot():
    # a 2 KB row of W staged per iteration is no private copy on the CPU (verifier.lowering,
    # STACK_ALLOCA_BYTES) but a 1600x256 buffer written and read again: measured 0.32 ms against 0.12 ms
    # unstaged for the 944x512 weight of level1/linear_no_bias_3d (Intel Xeon, 2 threads)
    from leir.analysis import program_info
    from tuner.cost import stack_slots, tensor_shapes

    unstaged = PANEL_HEAD.replace("output C: f32[96, 1600]", "output D: f32[100, 256, 16]") + (
        "B^{1600}_{bx=0}L^{256}_{a=0}[D^{f32,g}_{bx//16,a,bx%16}=W^{f32,g}_{bx,a};];")
    staged = unstaged.replace("B^{1600}_{bx=0}L^{256}_{a=0}[D^{f32,g}_{bx//16,a,bx%16}=W^{f32,g}_{bx,a};];",
                              "B^{1600}_{bx=0}[L^{256}_{j=0}[G^{f32,l}_{bx,j}=W^{f32,g}_{bx,j};];"
                              "L^{256}_{a=0}[D^{f32,g}_{bx//16,a,bx%16}=G^{f32,l}_{bx,a};];];")
    assert _cost(staged, "llvm-host") > _cost(unstaged, "llvm-host")
    program = load_program(staged)
    assert program_info(program).tensors["G"].shape == (1600, 256)
    assert stack_slots(program.body.blocks[0], tensor_shapes(program)) == frozenset()
    # the tile's 6x16 accumulator, one slice per iteration of bx, is one
    tile = load_program(_tile_over("D^{f32,g}_{e,c,f}", "B^{1600}_{bx=0}L^{256}_{a=0}"
                                   "[D^{f32,g}_{bx//16,a,bx%16}=W^{f32,g}_{bx,a};];"))
    assert stack_slots(tile.body.blocks[1], tensor_shapes(tile)) == frozenset({"H"})


# two element-wise passes over 1 MiB, each under the frontend's serial ``tx`` loop
TWO_PASSES = """input A: f32[16, 16384]
input C: f32[16384]
input E: f32[16384]
output F: f32[16, 16384]
---
B^{16}_{tx=0}L^{16384}_{a=0}[D^{f32,g}_{tx,a}=A^{f32,g}_{tx,a}*C^{f32,g}_{a};];B^{16}_{tx=0}L^{16384}_{a=0}[F^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+E^{f32,g}_{a};];"""


def test_a_fusion_is_scored_by_the_one_parallel_loop_it_enables():
    # binding either pass alone saves more than fusing them, but the fused block bound once beats both
    # passes bound: the fusion ranks first, and says what it enables
    proposals = RulePolicy(seed=0).propose(load_program(TWO_PASSES), SearchContext())
    first = proposals[0]
    assert first.strategy == "operator_fusion" and first.enables and "enables" in first.rationale
    binding = next(p for p in proposals if p.strategy == "loop_binding")
    assert first.score > binding.score
    fused_bound = RulePolicy(seed=0).propose(first.step.after, SearchContext())
    assert fused_bound[0].strategy in ("loop_binding", "loop_parallelization")


# A 3-D convolution's nest, nine loops deep, with the frontend's serial ``B^{..}_{tx}`` outer loop.
CONV3D = """input A: f32[4, 3, 10, 10, 10]
input D: f32[6, 3, 3, 3, 3]
output C: f32[4, 6, 8, 8, 8]
---
B^{4}_{tx=0}L^{6}_{a=0}L^{8}_{c=0}L^{8}_{d=0}L^{8}_{f=0}L^{3}_{g=0}L^{3}_{h=0}L^{3}_{i=0}L^{3}_{j=0}[C^{f32,g}_{tx,a,c,d,f}=C^{f32,g}_{tx,a,c,d,f}+A^{f32,g}_{tx,g,c+h,d+i,f+j}*D^{f32,g}_{a,g,h,i,j};];"""


def test_a_splits_lookahead_tries_only_the_loops_its_chain_touches(monkeypatch):
    from tuner.policies import rule

    program = load_program(CONV3D)
    attempts = {"n": 0}
    real_attempt = rule.attempt

    def counted(*args, **kwargs):
        attempts["n"] += 1
        return real_attempt(*args, **kwargs)

    def ranked() -> tuple[list, int]:
        attempts["n"] = 0
        proposals = RulePolicy(seed=0).propose(program, SearchContext())
        return [(p.strategy, p.step.site.key, sorted(p.step.params.items()), p.score, p.rationale)
                for p in proposals], attempts["n"]

    monkeypatch.setattr(rule, "attempt", counted)
    focused, focused_attempts = ranked()
    monkeypatch.setattr(rule, "_split_loops", lambda step: None)  # every loop, as before the focus
    every, every_attempts = ranked()
    # a follow-up at a loop the chain did not touch is open without the split, so it never made the
    # split enabling: the ranking, scores and rationales are the same, for a fraction of the attempts
    assert focused == every
    assert any("enables" in rationale for *_, rationale in focused)
    assert focused_attempts * 2 < every_attempts


def test_split_loops_are_the_split_loop_and_the_one_it_adds():
    from tuner.policies.rule import _split_loops

    program = load_program(CONV3D)
    step = next(s for s in RulePolicy(seed=0)._steps(program, "conv")
                if s.strategy == "loop_split" and s.site.get("loop") == "f")
    made = _split_loops(step)
    assert "f" in made and len(made) == 2
    assert not made & {"tx", "a", "c", "d", "g", "h", "i", "j"}


def _rows_outer_tile(columns: int) -> str:
    """Two 6-row blocks (``tx``) of a 6x16 tile over ``columns`` output columns of ``C = A @ G``, one
    step before the write cache: the rows lead, so each row block reads the whole of ``G`` again."""
    return (f"input A: f32[12, 512]\nparam G: f32[512, {columns}]\noutput C: f32[12, {columns}]\n---\n"
            f"B^{{2}}_{{tx=0}}L^{{{columns // 16}}}_{{a=0}}L^{{512}}_{{c=0}}V^{{16}}_{{f=0}}U^{{6}}_{{d=0}}["
            "C^{f32,g}_{tx*6+d,a*16+f}=C^{f32,g}_{tx*6+d,a*16+f}+A^{f32,g}_{tx*6+d,c}*G^{f32,g}_{c,a*16+f};];")


def _site_index(program, strategy: str, key: str) -> int:
    return next(i for i, site in enumerate(candidates(program, strategy)) if site.key == key)


def test_a_tile_whose_weight_outgrows_l2_is_planned_panel_outer():
    """A 2 MB weight read once per row block misses L2 every time: the recipe's last stage then swaps the
    row blocks inward and binds the column panels (each parallel iteration streams one 32 KB panel past
    both row blocks) before caching the tile; the end state verifies bit for bit. A 512 KB weight stays
    in L2 and gets no such plan."""
    from verifier.verify import verify

    program = load_program(_rows_outer_tile(1024))
    top = RulePolicy(seed=0, target="llvm-host").propose(program, SearchContext())[0]
    assert (top.strategy, top.step.site.key) == ("loop_reorder", "0[inner=a,outer=tx]")
    assert [(s.strategy, s.params) for s in top.then] == [("loop_binding", {"axis": "bx"}),
                                                          ("cache_read_write", {"scope": "l"})]
    end = top.then[-1].after
    text = canonical(end.body)
    assert text.startswith("B^{64}_{bx=0}B^{2}_{tx=0}[") and "D^{f32,l}_{bx,tx,d,f}" in text
    bound = apply_strategy(program, "loop_binding", _site_index(program, "loop_binding", "0[loop=tx]"),
                           {"axis": "bx"}).after
    rows_outer = apply_strategy(bound, "cache_read_write", _site_index(
        bound, "cache_read_write", "0.0[at=2,direction=write,tensor=C]"), {"scope": "l"}).after
    assert canonical(rows_outer.body).startswith("B^{2}_{bx=0}L^{64}_{a=0}[")
    assert program_cost(end, "llvm-host").total < program_cost(rows_outer, "llvm-host").total
    result = verify(end, parent=program, target="llvm-host", cache=False)
    assert result.outcome.value == "equal_pass", result.error
    small = RulePolicy(seed=0, target="llvm-host").propose(load_program(_rows_outer_tile(256)), SearchContext())
    assert not any(p.strategy == "loop_reorder" and p.then for p in small)
