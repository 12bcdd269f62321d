"""LEIR → TIR lowering: structure of the generated TIR, CPU/GPU mappings, limits, and exact results.

Every numeric test runs the real TVM build on this machine and compares with NumPy or the LEIR
interpreter; cuda tests compile with nvcc here (nothing runs on a GPU).
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leir.errors import LeirCheckError
from leir.interpreter import run as interpret
from leir.program import load_program
from verifier import targets
from verifier.build import BuildError, build, cuda_source
from verifier.lowering import GpuLimitError, LoweringError, lower, to_tvmscript
from verifier.tvm_adapter import cuda_kernel_text, versions

REPO = Path(__file__).resolve().parents[2]

SOFTMAX = """input A: f64[4, 8]
output C: f64[4, 8]
---
B^{4}_{tx=0}L^{8}_{a=0}[D^{f64,g}_{tx}=max(D^{f64,g}_{tx},A^{f64,g}_{tx,a});];
B^{4}_{tx=0}L^{8}_{a=0}[E^{f64,g}_{tx}=E^{f64,g}_{tx}+exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx});];
B^{4}_{tx=0}L^{8}_{a=0}[C^{f64,g}_{tx,a}=exp(A^{f64,g}_{tx,a}-D^{f64,g}_{tx})/E^{f64,g}_{tx};];
"""


def prog(text: str):
    return load_program(text)


def one(sig: str, body: str):
    return load_program(sig.strip() + "\n---\n" + body + "\n")


def rand_inputs(program, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for d in program.signature.tensors:
        if d.role == "output":
            continue
        if d.dtype == "bool":
            out[d.name] = rng.random(d.shape) < 0.5
        elif d.dtype.startswith(("i", "u")):
            out[d.name] = rng.integers(-7, 8, d.shape).astype(np.int64).astype(
                {"i32": np.int32, "i64": np.int64}[d.dtype])
        else:
            out[d.name] = rng.standard_normal(d.shape).astype({"f32": np.float32, "f64": np.float64}[d.dtype])
    return out


def assert_matches_interpreter(program, inputs=None, *, rtol=1e-12):
    inputs = rand_inputs(program) if inputs is None else inputs
    expected = interpret(program, inputs, vectorise=False)
    got = build(program).run(inputs)
    assert set(got) == set(expected)
    for name, value in expected.items():
        assert got[name].dtype == value.dtype, name
        np.testing.assert_allclose(got[name].astype(np.float64), value.astype(np.float64), rtol=rtol,
                                   atol=rtol, equal_nan=True, err_msg=name)
    return got


# ------------------------------------------------------------------------------------ structure


def test_softmax_lowers_to_reductions_with_init_and_runs():
    lowered = lower(prog(SOFTMAX))
    script = lowered.script
    assert script.count("with T.init():") == 2
    assert 'T.float64("-inf")' in script
    assert 'T.axis.remap("SR", [tx, a])' in script
    assert "def main(A: T.Buffer((4, 8), \"float64\"), C: T.Buffer((4, 8), \"float64\")):" in script
    assert "D = T.alloc_buffer((4,), \"float64\")" in script
    assert lowered.versions == versions() and lowered.versions["tvm"].startswith("0.27")
    a = np.random.default_rng(1).standard_normal((4, 8))
    out = build(lowered).run({"A": a})["C"]
    ref = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=1e-12)


def test_params_follow_signature_order_and_intermediates_are_allocated():
    p = one("input Z: f32[3]\ninput A: f32[3]\noutput C: f32[3]",
            "L^{3}_{a=0}[D^{f32,g}_{a}=Z^{f32,g}_{a}*A^{f32,g}_{a};];L^{3}_{a=0}[C^{f32,g}_{a}=D^{f32,g}_{a}+1;];")
    lowered = lower(p)
    assert [x.name for x in lowered.params] == ["Z", "A", "C"]
    assert lowered.script.index("Z: T.Buffer") < lowered.script.index("A: T.Buffer")
    assert "D = T.alloc_buffer((3,))" in lowered.script  # float32 is TVMScript's default dtype


def test_script_is_deterministic_in_process_and_across_processes():
    first = lower(prog(SOFTMAX), "cuda").script
    assert lower(prog(SOFTMAX), "cuda").script == first
    code = (
        "import hashlib,sys;from leir.program import load_program;from verifier.lowering import lower;"
        "print(hashlib.sha256(lower(load_program(sys.stdin.read()),'cuda').script.encode()).hexdigest())"
    )
    digests = {
        subprocess.run([sys.executable, "-c", code], input=SOFTMAX, capture_output=True, text=True,
                       cwd=REPO, check=True).stdout.strip()
        for _ in range(2)
    }
    assert digests == {hashlib.sha256(first.encode()).hexdigest()}


def test_invalid_program_raises_check_error_before_any_tvm_call():
    bad = SOFTMAX.replace("output C: f64[4, 8]", "output C: f64[4, 9]")
    with pytest.raises(LeirCheckError):
        lower(prog(bad))


# ------------------------------------------------------------------------------ loop kinds (CPU)


def test_cpu_loop_kinds():
    p = one("input A: f32[4, 8]\noutput C: f32[4, 8]",
            "P^{4}_{a=0}V^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c}*2;];")
    text = to_tvmscript(p)
    assert "for a in T.parallel(4):" in text and "for c in T.vectorized(8):" in text
    u = one("input A: f32[4, 8]\noutput C: f32[4, 8]", "L^{4}_{a=0}U^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c};];")
    assert "for c in T.unroll(8):" in to_tvmscript(u)
    assert_matches_interpreter(p, rtol=0)


def test_cpu_mapping_of_b_loops():
    """Block axes become parallel, thread axes serial; a block axis reduced over stays serial."""
    p = one("input A: f64[4, 8]\noutput C: f64[4, 8]\noutput D: f64[]",
            "B^{4}_{bx=0}B^{8}_{tx=0}[C^{f64,g}_{bx,tx}=A^{f64,g}_{bx,tx}+1;];"
            "B^{4}_{bx=0}L^{8}_{a=0}[D^{f64,g}=D^{f64,g}+A^{f64,g}_{bx,a};];")
    text = to_tvmscript(p)
    first, second = text.split('with T.sblock("C_0_0")')[0], text.split('with T.sblock("C_0_0")')[1]
    assert "for bx in T.parallel(4):" in first and "for tx in range(8):" in first
    assert "for bx in range(4):" in second  # reduction over bx: a parallel loop would race
    assert_matches_interpreter(p)


def test_nested_parallel_becomes_serial():
    p = one("input A: f32[4, 8]\noutput C: f32[4, 8]", "P^{4}_{a=0}P^{8}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c};];")
    text = to_tvmscript(p)
    assert "for a in T.parallel(4):" in text and "for c in range(8):" in text
    assert_matches_interpreter(p, rtol=0)


def test_regression_vectorised_loop_inside_vectorised_loop_builds():
    # TVM: "VectorizeLoop before LiftStorageAlloc" for nested T.vectorized
    p = one("input A: f32[2, 4]\noutput C: f32[2, 4]", "V^{4}_{d=0}V^{2}_{f=0}[C^{f32,g}_{f,d}=A^{f32,g}_{f,d}+1;];")
    text = to_tvmscript(p)
    assert "for d in T.vectorized(4):" in text and "for f in range(2):" in text
    assert_matches_interpreter(p, rtol=0)


@pytest.mark.parametrize("kind", ["V", "P"])
def test_regression_vectorised_or_parallel_reduction_axis_is_serial(kind):
    # lanes/threads of a reduce axis would race on the same element: was off by 0.6 with T.vectorized
    p = one("input A: f32[2, 4]\noutput D: f32[2]",
            f"L^{{2}}_{{f=0}}{kind}^{{4}}_{{d=0}}[D^{{f32,g}}_{{f}}=D^{{f32,g}}_{{f}}+A^{{f32,g}}_{{f,d}};];")
    assert "for d in range(4):" in to_tvmscript(p)
    assert_matches_interpreter(p, rtol=1e-6)


# ------------------------------------------------------------------------------- statement kinds


def test_argmax_accumulate_after_write_and_loop_variable_value():
    p = one("input A: f64[2, 5, 3]\noutput C: i64[2, 3]",
            "B^{2}_{tx=0}L^{5}_{a=0}L^{3}_{c=0}[D^{f64,g}_{tx,c}=max(D^{f64,g}_{tx,c},A^{f64,g}_{tx,a,c});"
            "C^{i64,g}_{tx,c}=0;];B^{2}_{tx=0}L^{5}_{a=0}L^{3}_{c=0}[C^{i64,g}_{tx,c}=if_then_else("
            "A^{f64,g}_{tx,a,c}>=D^{f64,g}_{tx,c},a,C^{i64,g}_{tx,c});];")
    text = to_tvmscript(p)
    assert 'T.Cast("int64", v_a)' in text
    a = np.random.default_rng(3).standard_normal((2, 5, 3))
    out = build(p).run({"A": a})["C"]
    np.testing.assert_array_equal(out, a.argmax(1))


def test_online_softmax_recurrence_guards_are_clamped():
    p = one("input A: f32[4, 16]\noutput C: f32[4, 16]",
            "B^{4}_{tx=0}L^{16}_{a=0}[D^{f32,g}_{tx,a}=max(if_then_else(a-1<0,-inf,D^{f32,g}_{tx,a-1}),"
            "A^{f32,g}_{tx,a});F^{f32,g}_{tx,a}=if_then_else(a-1<0,1,F^{f32,g}_{tx,a-1})*exp(if_then_else("
            "a-1<0,-inf,D^{f32,g}_{tx,a-1})-D^{f32,g}_{tx,a})+exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,a});];"
            "B^{4}_{tx=0}L^{16}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a}-D^{f32,g}_{tx,15})/F^{f32,g}_{tx,15};];")
    text = to_tvmscript(p)
    assert "D[v_tx, T.max(v_a - 1, 0)]" in text
    a = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    out = build(p).run({"A": a})["C"]
    ref = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(out, ref / ref.sum(1, keepdims=True), rtol=1e-5)


def test_padding_reads_are_clamped_on_both_sides():
    p = one("input A: f64[2, 4, 5]\noutput C: f64[2, 8, 7]",
            "B^{2}_{tx=0}L^{8}_{c=0}L^{7}_{d=0}[C^{f64,g}_{tx,c,d}=if_then_else(2<=c<6&1<=d<6,"
            "A^{f64,g}_{tx,c-2,d-1},0);];")
    text = to_tvmscript(p)
    assert "T.min(T.max(v_c - 2, 0), 3)" in text and "T.min(T.max(v_d - 1, 0), 4)" in text
    a = np.random.default_rng(0).standard_normal((2, 4, 5))
    out = build(p).run({"A": a})["C"]
    np.testing.assert_array_equal(out, np.pad(a, ((0, 0), (2, 2), (1, 1))))


def test_reduction_with_non_injective_lhs_is_filled_before_its_block():
    p = one("input A: f64[8]\noutput C: f64[4]",
            "L^{8}_{c=0}[D^{f64,g}_{c//2}=D^{f64,g}_{c//2}+A^{f64,g}_{c};];L^{4}_{a=0}[C^{f64,g}_{a}=D^{f64,g}_{a}*1;];")
    text = to_tvmscript(p)
    assert "T.init()" not in text and 'with T.sblock("init_D_0_0")' in text
    a = np.arange(8.0)
    np.testing.assert_array_equal(build(p).run({"A": a})["C"], a.reshape(4, 2).sum(1))


def test_all_four_reduction_inits():
    p = one("input A: f64[3, 4]\noutput C: f64[3]",
            "L^{3}_{a=0}U^{4}_{c=0}[D^{f64,g}_{a}=D^{f64,g}_{a}*A^{f64,g}_{a,c};E^{f64,g}_{a}=min(E^{f64,g}_{a},"
            "A^{f64,g}_{a,c});F^{f64,g}_{a}=F^{f64,g}_{a}-A^{f64,g}_{a,c};G^{f64,g}_{a}=max(G^{f64,g}_{a},"
            "A^{f64,g}_{a,c});];L^{3}_{a=0}[C^{f64,g}_{a}=D^{f64,g}_{a}+E^{f64,g}_{a}+F^{f64,g}_{a}+G^{f64,g}_{a};];")
    a = np.random.default_rng(5).standard_normal((3, 4))
    out = build(p).run({"A": a})["C"]
    np.testing.assert_allclose(out, a.prod(1) + a.min(1) - a.sum(1) + a.max(1), rtol=1e-12)


def test_nested_blocks_run_in_order_inside_the_outer_loop():
    p = one("input A: f64[4, 8]\noutput C: f64[4, 8]",
            "L^{4}_{a=0}[L^{8}_{c=0}[S^{f64,g}_{a}=S^{f64,g}_{a}+A^{f64,g}_{a,c};];"
            "L^{8}_{c=0}[C^{f64,g}_{a,c}=A^{f64,g}_{a,c}/S^{f64,g}_{a};];];")
    a = np.random.default_rng(0).random((4, 8)) + 0.5
    np.testing.assert_allclose(build(p).run({"A": a})["C"], a / a.sum(1, keepdims=True), rtol=1e-12)


# --------------------------------------------------------------------------------- zero fill


def test_partial_writes_zero_fill_the_rest_and_covering_writes_do_not():
    partial = one("input A: f64[3]\noutput C: f64[5]", "L^{3}_{a=0}[C^{f64,g}_{a*2}=A^{f64,g}_{a}+1;];")
    assert 'T.sblock("zero_C")' in to_tvmscript(partial)
    out = build(partial).run({"A": np.array([1.0, 2.0, 3.0])})["C"]
    np.testing.assert_array_equal(out, [2.0, 0.0, 3.0, 0.0, 4.0])
    assert "zero_" not in to_tvmscript(prog(SOFTMAX))


def test_scalar_output_and_reduction_over_everything():
    p = one("input A: f64[8, 1]\noutput G: f64[]",
            "B^{8}_{tx=0}L^{1}_{a=0}[H^{f64,g}=H^{f64,g}+A^{f64,g}_{tx,a};];B^{1}_{tx=0}[G^{f64,g}=H^{f64,g}/8;];")
    a = np.random.default_rng(0).standard_normal((8, 1))
    out = build(p).run({"A": a})["G"]
    assert out.shape == ()
    np.testing.assert_allclose(out, a.mean(), rtol=1e-12)


# ------------------------------------------------------------------------------- types and ops


def test_integer_division_and_modulo_are_floor_semantics():
    p = one("input I: i32[4, 6]\noutput C: i32[4, 6]",
            "L^{4}_{a=0}L^{6}_{c=0}[C^{i32,g}_{a,c}=I^{i32,g}_{a,c}/3+I^{i32,g}_{a,c}%4*10-I^{i32,g}_{a,c}//2;];")
    i = np.arange(-12, 12, dtype=np.int32).reshape(4, 6)
    out = build(p).run({"I": i})["C"]
    np.testing.assert_array_equal(out, i // 3 + (i % 4) * 10 - i // 2)


def test_mixed_dtypes_convert_to_the_lhs_dtype():
    p = one("input I: i64[3]\ninput M: bool[3, 4]\noutput C: f32[3, 4]",
            "L^{3}_{a=0}L^{4}_{c=0}[C^{f32,g}_{a,c}=a*0.5+c+I^{i64,g}_{a}/2+M^{bool,g}_{a,c};];")
    inputs = {"I": np.array([1, 2, 7]), "M": np.random.default_rng(0).random((3, 4)) < 0.5}
    text = to_tvmscript(p)
    assert 'T.Cast("float32", I[v_a])' in text and 'T.Cast("float32", v_a)' in text
    got = assert_matches_interpreter(p, inputs, rtol=0)
    a, c = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    np.testing.assert_array_equal(got["C"], (a * 0.5 + c + inputs["I"][:, None] / 2 + inputs["M"]).astype(np.float32))


def test_bool_output_inf_masks_pow_and_erf():
    p = one("input A: f64[3, 4]\ninput M: bool[3, 4]\noutput C: bool[3, 4]\noutput D: f64[3, 4]",
            "L^{3}_{a=0}L^{4}_{c=0}[C^{bool,g}_{a,c}=if_then_else(A^{f64,g}_{a,c}>0,1,0);];"
            "L^{3}_{a=0}L^{4}_{c=0}[D^{f64,g}_{a,c}=if_then_else(M^{bool,g}_{a,c},-inf,"
            "A^{f64,g}_{a,c}**2+erf(A^{f64,g}_{a,c})+abs(A^{f64,g}_{a,c})**1.5);];")
    text = to_tvmscript(p)
    assert "(A[v_a, v_c] * A[v_a, v_c])" in text and "T.pow(" in text and "T.erf(" in text
    got = assert_matches_interpreter(p)
    assert got["C"].dtype == np.bool_ and np.isneginf(got["D"]).any()


def test_gather_reads_indices_from_an_integer_tensor():
    p = one("input G: i64[5]\ninput H: f32[4, 3]\noutput C: f32[5, 3]",
            "B^{5}_{tx=0}L^{3}_{a=0}[C^{f32,g}_{tx,a}=H^{f32,g}_{G^{i64,g}_{tx},a}*2;];")
    assert 'H[T.Cast("int32", G[v_tx]), v_a]' in to_tvmscript(p)
    g = np.array([3, 0, 0, 2, 1])
    h = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(build(p).run({"G": g, "H": h})["C"], h[g] * 2)


def test_annotated_read_dtype_converts_the_stored_value_first():
    # the public corpus reads an f64 tensor as O^{i32,g}: the value is truncated to i32 first
    p = one("input A: f64[4]\noutput C: f64[4]",
            "L^{4}_{a=0}[O^{f64,g}_{a}=A^{f64,g}_{a}*3;];L^{4}_{a=0}[C^{f64,g}_{a}=O^{i32,g}_{a}+0.5;];")
    a = np.array([0.4, 1.7, -2.2, 3.0])
    got = assert_matches_interpreter(p, {"A": a}, rtol=0)
    np.testing.assert_array_equal(got["C"], np.trunc(a * 3) + 0.5)


# ------------------------------------------------------------------------------------- cuda


def test_cuda_bindings_follow_variable_names():
    p = one("input A: f32[4, 8, 2]\noutput C: f32[4, 8, 2]",
            "B^{4}_{bya=0}B^{8}_{ty=0}B^{2}_{k=0}[C^{f32,g}_{bya,ty,k}=A^{f32,g}_{bya,ty,k};];")
    text = to_tvmscript(p, "cuda")
    assert 'T.thread_binding(4, thread="blockIdx.y")' in text
    assert 'T.thread_binding(8, thread="threadIdx.y")' in text
    assert 'T.thread_binding(2, thread="threadIdx.x")' in text  # a name outside the pattern: threadIdx.x
    cuda_source(p)
    clash = one("input A: f32[8, 2]\noutput C: f32[8, 2]", "B^{8}_{tx=0}B^{2}_{k=0}[C^{f32,g}_{tx,k}=A^{f32,g}_{tx,k};];")
    with pytest.raises(LoweringError, match=r"B\^\{2\}_\{k=0\} binds threadIdx.x again"):
        lower(clash, "cuda")


def test_cuda_block_without_b_loop_runs_in_a_unit_launch():
    p = one("input A: f32[4]\noutput C: f32[4]", "L^{4}_{a=0}[C^{f32,g}_{a}=A^{f32,g}_{a}+1;];")
    text = to_tvmscript(p, "cuda")
    assert 'for u_bx in T.thread_binding(1, thread="blockIdx.x"):' in text
    assert "__global__" in cuda_source(p)


def test_cuda_shared_and_local_buffers_live_inside_their_kernel():
    p = one("input A: f32[4, 8]\noutput C: f32[4, 8]\noutput D: f32[4]",
            "B^{4}_{bx=0}[B^{8}_{tx=0}[S^{f32,s}_{tx}=A^{f32,g}_{bx,tx};];B^{8}_{tx=0}[C^{f32,g}_{bx,tx}="
            "S^{f32,s}_{7-tx};];];B^{4}_{tx=0}[L^{8}_{a=0}[R^{f32,l}_{tx}=R^{f32,l}_{tx}+A^{f32,g}_{tx,a};];"
            "D^{f32,g}_{tx}=R^{f32,l}_{tx}*2;];")
    src = cuda_kernel_text(cuda_source(p))
    assert "__shared__ alignas(64) float S_ptr[8];" in src and "__syncthreads();" in src
    assert "float R_ptr[1];" in src
    assert "S_ptr" not in src.split("{")[0]  # not a kernel parameter
    assert_matches_interpreter(p, rtol=1e-6)  # on the CPU the same program is plain global memory


REGISTER_TILE = """input A: f32[8, 64]
input B: f32[64, 32]
output C: f32[8, 32]
---
B^{2}_{bx=0}L^{2}_{e=0}[
  L^{4}_{g=0}L^{16}_{h=0}[H^{f32,l}_{bx,g,h}=0;];
  L^{64}_{c=0}U^{4}_{d=0}V^{16}_{f=0}[H^{f32,l}_{bx,d,f}=H^{f32,l}_{bx,d,f}+A^{f32,g}_{bx*4+d,c}*B^{f32,g}_{c,e*16+f};];
  L^{4}_{g=0}L^{16}_{h=0}[C^{f32,g}_{bx*4+g,e*16+h}=H^{f32,l}_{bx,g,h};];
];
"""


def _self_loop_blocks(ir: str) -> list[str]:
    """The LLVM basic blocks that branch back to themselves: the innermost loops of the kernel."""
    blocks = re.split(r"\n(?=[\w.]+:)", ir)
    out = []
    for block in blocks:
        label = block.split(":", 1)[0].strip()
        if re.search(rf"br i1 [^\n]*label %{re.escape(label)}\b", block):
            out.append(block)
    return out


def test_cpu_private_copies_live_per_iteration_so_an_accumulator_tile_stays_in_registers():
    """A local accumulator with one copy per parallel iteration, allocated once for the program, was
    memory LLVM could not tell apart from the inputs: every step of the reduction stored the whole
    tile. Allocated inside the parallel loop without its private dimension it is a stack slot, and
    the reduction loop keeps the tile in registers (no store in the loop)."""
    program = prog(REGISTER_TILE)
    script = lower(program, "llvm-host").script
    assert re.search(r"for bx in T.parallel\(2\):\n(.*\n){1,3}.*H = T.alloc_buffer\(\(4, 16\)", script)
    assert "H[v_d, v_f] = H[v_d, v_f] + A[v_bx * 4 + v_d, v_c]" in script
    assert "(2, 4, 16)" not in script
    ir = build(program, "llvm-host", cache=False).source("llvm")
    loops = [b for b in _self_loop_blocks(ir) if "fmuladd.v16f32" in b or "fmul <16 x float>" in b]
    assert loops and all("store" not in b for b in loops), loops
    got = assert_matches_interpreter(program, rtol=1e-6)
    inputs = rand_inputs(program)
    np.testing.assert_allclose(got["C"], inputs["A"] @ inputs["B"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("body, why", [
    # read before any write: the semantics' zero fill covers the whole tensor, so it stays one buffer
    ("B^{2}_{bx=0}[L^{4}_{c=0}[H^{f32,l}_{bx,c}=H^{f32,l}_{bx,c}+A^{f32,g}_{bx,c};];"
     "L^{4}_{c=0}[C^{f32,g}_{bx,c}=H^{f32,l}_{bx,c};];];", "zero fill"),
    # the private dimension is not indexed by the block's leading loop
    ("B^{2}_{bx=0}L^{4}_{c=0}[H^{f32,l}_{c,bx}=A^{f32,g}_{bx,c}*2;C^{f32,g}_{bx,c}=H^{f32,l}_{c,bx};];",
     "not leading"),
    # a global intermediate keeps its one buffer
    ("B^{2}_{bx=0}L^{4}_{c=0}[H^{f32,g}_{bx,c}=A^{f32,g}_{bx,c}*2;C^{f32,g}_{bx,c}=H^{f32,g}_{bx,c};];",
     "global"),
])
def test_cpu_buffers_that_are_not_private_copies_stay_whole(body, why):
    program = one("input A: f32[2, 4]\noutput C: f32[2, 4]", body)
    script = lower(program, "llvm").script
    header = script.split("for ", 1)[0]
    assert "H = T.alloc_buffer(" in header, why
    assert_matches_interpreter(program, rtol=1e-6)


def test_cpu_private_copies_stay_whole_from_a_kilobyte():
    """TVM keeps an allocation under 1 KB on the stack; a larger one would be a workspace call each
    time its loop is entered, so it stays one buffer for the program."""
    big = REGISTER_TILE.replace("L^{4}_{g=0}L^{16}_{h=0}[H", "L^{4}_{g=0}L^{64}_{h=0}[H")
    program = one("input A: f32[8, 64]\ninput B: f32[64, 32]\noutput C: f32[8, 32]",
                  "B^{2}_{bx=0}[L^{4}_{g=0}L^{64}_{h=0}[H^{f32,l}_{bx,g,h}=A^{f32,g}_{bx*4+g,h};];"
                  "L^{4}_{g=0}L^{32}_{h=0}[C^{f32,g}_{bx*4+g,h}=H^{f32,l}_{bx,g,h}+H^{f32,l}_{bx,g,h+32};];];")
    assert big != REGISTER_TILE
    script = lower(program, "llvm").script
    assert "H = T.alloc_buffer((2, 4, 64)" in script.split("for ", 1)[0]
    assert_matches_interpreter(program, rtol=1e-6)


def test_cuda_cross_thread_reduction_and_its_limits():
    add = one("input A: f32[4, 128]\noutput D: f32[4]",
              "B^{4}_{bx=0}B^{32}_{tx=0}L^{4}_{a=0}[D^{f32,g}_{bx}=D^{f32,g}_{bx}+A^{f32,g}_{bx,tx*4+a};];")
    assert "__shfl_down_sync" in cuda_source(add)
    mx = one("input A: f32[4, 32]\noutput D: f32[4]",
             "B^{4}_{bx=0}B^{32}_{tx=0}[D^{f32,g}_{bx}=max(D^{f32,g}_{bx},A^{f32,g}_{bx,tx});];")
    assert 'T.min_value("float32")' in to_tvmscript(mx, "cuda")
    assert "max(red_buf0" in cuda_source(mx)
    sub = one("input A: f32[4, 32]\noutput D: f32[4]",
              "B^{4}_{bx=0}B^{32}_{tx=0}[D^{f32,g}_{bx}=D^{f32,g}_{bx}-A^{f32,g}_{bx,tx};];")
    with pytest.raises(LoweringError, match="supports"):
        build(sub, "cuda")
    outer = one("input A: f64[4, 3]\noutput C: f64[4]",
                "B^{3}_{tx=0}L^{4}_{f=0}[C^{f64,g}_{f}=C^{f64,g}_{f}+A^{f64,g}_{f,tx};];")
    with pytest.raises(LoweringError, match="innermost"):
        build(outer, "cuda")
    blocks = one("input A: f64[4, 8]\noutput D: f64[]", "B^{4}_{bx=0}L^{8}_{a=0}[D^{f64,g}=D^{f64,g}+A^{f64,g}_{bx,a};];")
    with pytest.raises(LoweringError, match="race"):
        build(blocks, "cuda")
    assert_matches_interpreter(blocks)  # the same program is fine on the CPU (bx stays serial)


@pytest.mark.parametrize("body, sig, needle", [
    ("B^{64}_{tx=0}B^{32}_{ty=0}[C^{f32,g}_{tx,ty}=A^{f32,g}_{tx,ty};];",
     "input A: f32[64, 32]\noutput C: f32[64, 32]", "2048 threads per block"),
    ("B^{2048}_{tx=0}[C^{f32,g}_{tx,0}=A^{f32,g}_{tx,0};];", "input A: f32[2048, 1]\noutput C: f32[2048, 1]",
     "B^{2048}_{tx=0} binds threadIdx.x to 2048"),
    ("B^{128}_{tz=0}[C^{f32,g}_{tz,0}=A^{f32,g}_{tz,0};];", "input A: f32[128, 1]\noutput C: f32[128, 1]",
     "threadIdx.z to 128; the limit is 64"),
    ("B^{70000}_{by=0}[C^{f32,g}_{by,0}=A^{f32,g}_{by,0};];", "input A: f32[70000, 1]\noutput C: f32[70000, 1]",
     "blockIdx.y to 70000; the limit is 65535"),
    ("B^{4}_{bx=0}[B^{8}_{tx=0}L^{2000}_{a=0}[S^{f32,s}_{tx,a}=A^{f32,g}_{bx,a};];B^{8}_{tx=0}[C^{f32,g}_{bx,tx}="
     "S^{f32,s}_{tx,0};];];", "input A: f32[4, 2000]\noutput C: f32[4, 8]", "shared tensors S need 64000 bytes"),
])
def test_gpu_limits_are_checked_before_building(body, sig, needle):
    p = one(sig, body)
    with pytest.raises(GpuLimitError, match=needle.replace("^", r"\^").replace("{", r"\{").replace("}", r"\}")):
        lower(p, "cuda")
    build(p, "llvm")  # the CPU has no such limits


def test_regression_cuda_host_loops_and_vector_widths_build():
    # TVM could not build an unrolled host loop around a launch, nor double x5 vectors
    host = one("input A: f64[4, 2]\noutput E: f64[4, 2]", "U^{2}_{g=0}B^{4}_{by=0}[E^{f64,g}_{by,g}=A^{f64,g}_{by,g};];")
    assert "for g in range(2):" in to_tvmscript(host, "cuda")
    cuda_source(host)
    vec = one("input A: f64[2, 5]\noutput F: f64[2, 5]", "B^{2}_{tx=0}V^{5}_{d=0}[F^{f64,g}_{tx,d}=A^{f64,g}_{tx,d};];")
    assert "T.vectorized" not in to_tvmscript(vec, "cuda")
    cuda_source(vec)
    vec4 = one("input A: f32[2, 4]\noutput F: f32[2, 4]", "B^{2}_{tx=0}V^{4}_{d=0}[F^{f32,g}_{tx,d}=A^{f32,g}_{tx,d};];")
    assert "float4" in cuda_source(vec4)


# ------------------------------------------------------------------------------------- Kernel API


def test_kernel_api_run_time_sources_and_errors():
    kernel = build(prog(SOFTMAX))
    assert kernel.output_names == ("C",) and kernel.input_names == ("A",)
    a = np.random.default_rng(0).standard_normal((4, 8))
    times = kernel.time({"A": a}, number=2, repeat=3)
    assert len(times) == 3 and all(t > 0 for t in times)
    assert kernel.source("tir") == kernel.lowered.script
    assert "define" in kernel.source("llvm")
    with pytest.raises(KeyError):
        kernel.source("cuda")
    with pytest.raises(ValueError, match="missing input"):
        kernel.run({})
    with pytest.raises(ValueError, match="shape"):
        kernel.run({"A": np.zeros((4, 9))})
    assert kernel.versions["tvm_ffi"] == versions()["tvm_ffi"]
    gpu = build(prog(SOFTMAX), "cuda")
    assert "main_kernel" in gpu.source("cuda")
    with pytest.raises(LoweringError, match="cannot run"):
        gpu.run({"A": a})


def test_build_reuses_a_lowering_for_the_same_kind_and_relowers_for_another():
    lowered = lower(prog(SOFTMAX))
    assert build(lowered, {"kind": "llvm", "num-cores": 1}).lowered is lowered
    assert build(lowered, "cuda").lowered.target["kind"] == "cuda"
    assert targets.resolve("cuda:sm_80") == {"kind": "cuda", "arch": "sm_80"}
    with pytest.raises(ValueError):
        targets.resolve("rocm")


def test_build_error_is_a_lowering_error():
    assert issubclass(BuildError, LoweringError) and issubclass(GpuLimitError, LoweringError)


# ------------------------------------------------------------------------------- tokens and CLI


def test_token_counts_of_the_three_forms():
    from leir.printer import canonical
    from verifier.tokens import count_tokens, geomean, program_tokens, summary

    program = prog(SOFTMAX)
    counts = program_tokens(program)
    assert counts.leir == count_tokens(canonical(program.body)) > 0
    assert counts.tir == count_tokens(lower(program, "cuda").script)
    assert counts.tir_target == "cuda" and counts.cuda is not None
    assert counts.leir < counts.tir and counts.cuda < counts.cuda_full
    assert counts.to_json()["leir_per_tir"] == pytest.approx(counts.leir / counts.tir, abs=1e-6)
    over = one("input A: f32[2048, 1]\noutput C: f32[2048, 1]", "B^{2048}_{tx=0}[C^{f32,g}_{tx,0}=A^{f32,g}_{tx,0};];")
    refused = program_tokens(over)
    assert refused.cuda is None and refused.tir_target == "llvm" and "threadIdx.x" in refused.note
    stats = summary([counts, refused])
    assert stats["programs"] == 2 and stats["with_cuda"] == 1
    assert stats["geomean_leir_per_tir"] == pytest.approx(geomean([counts.leir_per_tir, refused.leir_per_tir]))
    assert geomean([2.0, 8.0]) == pytest.approx(4.0)


def test_cli_lower_and_tokens(tmp_path, capsys):
    import json

    from steptp_cli.main import main as steptp

    path = tmp_path / "softmax.leir"
    path.write_text(SOFTMAX, encoding="utf-8")
    assert steptp(["lower", str(path), "--to", "tir"]) == 0
    assert capsys.readouterr().out == lower(prog(SOFTMAX)).script
    assert steptp(["lower", str(path), "--to", "cuda", "--target", "cuda:sm_80"]) == 0
    assert "__global__" in capsys.readouterr().out
    assert steptp(["lower", str(path), "--to", "cuda", "--target", "llvm"]) == 2
    assert steptp(["lower", str(path), "--target", "{not json"]) == 2
    assert steptp(["lower", str(tmp_path / "missing.leir")]) == 2
    bad = tmp_path / "bad.leir"
    bad.write_text(SOFTMAX.replace("output C: f64[4, 8]", "output C: f64[4, 9]"), encoding="utf-8")
    assert steptp(["lower", str(bad)]) == 1
    capsys.readouterr()
    assert steptp(["tokens", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["programs"][0]["file"] == str(path) and report["summary"]["programs"] == 1
    assert 0 < report["programs"][0]["leir_per_tir"] < 1
    assert steptp(["tokens", str(path), str(bad)]) == 1
    assert "geomean over 1" in capsys.readouterr().out


@pytest.mark.parametrize("dtype", ["f16", "bf16", "u8", "i8", "i16", "u32"])
def test_narrow_and_unsigned_dtypes_build_for_both_targets_and_run(dtype):
    floaty = dtype in ("f16", "bf16")
    a = f"A^{{{dtype},g}}_{{a,c}}"
    value = f"exp({a})*0.5+max({a},0)" if floaty else f"{a}//2+{a}%3"
    p = one(f"input A: {dtype}[4, 3]\noutput D: {dtype}[4]",
            f"L^{{4}}_{{a=0}}L^{{3}}_{{c=0}}[C^{{{dtype},g}}_{{a,c}}={value};];"
            f"L^{{4}}_{{a=0}}L^{{3}}_{{c=0}}[D^{{{dtype},g}}_{{a}}=D^{{{dtype},g}}_{{a}}+C^{{{dtype},g}}_{{a,c}};];")
    assert "__global__" in cuda_source(p)
    values = (np.random.default_rng(0).random((4, 3)) * 5).astype(np.float32)
    if not floaty:
        values = values.astype({"u8": np.uint8, "i8": np.int8, "i16": np.int16, "u32": np.uint32}[dtype])
    got = build(p).run({"A": values})["D"]
    expected = interpret(p, {"A": values})["D"]
    tol = {"f16": 2e-2, "bf16": 5e-2}.get(dtype, 0)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol)


def test_tensors_beyond_int32_indexing_are_refused_clearly():
    p = one("input A: f32[65536, 32768]\noutput C: f32[65536, 32768]",
            "L^{65536}_{a=0}L^{32768}_{c=0}[C^{f32,g}_{a,c}=A^{f32,g}_{a,c};];")
    with pytest.raises(LoweringError, match="int32"):
        to_tvmscript(p)


def test_cuda_refuses_a_dependence_carried_across_private_copies():
    # sequentially F accumulates over bx too; on cuda every thread would have its own F
    p = one("input A: f64[3, 3]\noutput H: f64[3, 3]",
            "B^{3}_{bx=0}[B^{3}_{tx=0}[E^{f64,s}_{tx}=A^{f64,g}_{bx,tx}*2;];B^{3}_{tx=0}[L^{3}_{g=0}[F^{f64,l}_{tx}="
            "F^{f64,l}_{tx}+E^{f64,s}_{g};];H^{f64,g}_{bx,tx}=F^{f64,l}_{tx}-E^{f64,s}_{2-tx};];];")
    with pytest.raises(LoweringError, match="one copy per thread"):
        lower(p, "cuda")
    assert_matches_interpreter(p)
    fixed = one("input A: f64[3, 3]\noutput H: f64[3, 3]",
                "B^{3}_{bx=0}[B^{3}_{tx=0}[E^{f64,s}_{bx,tx}=A^{f64,g}_{bx,tx}*2;];B^{3}_{tx=0}[L^{3}_{g=0}["
                "F^{f64,l}_{bx,tx}=F^{f64,l}_{bx,tx}+E^{f64,s}_{bx,g};];H^{f64,g}_{bx,tx}=F^{f64,l}_{bx,tx}-"
                "E^{f64,s}_{bx,2-tx};];];")
    assert "__shared__" in cuda_source(fixed)
    assert_matches_interpreter(fixed)


def test_kernels_of_equal_programs_are_shared_from_a_bounded_cache():
    from verifier import build as build_mod

    first = build(prog(SOFTMAX))
    assert build(prog(SOFTMAX)) is first  # parsed again: equal program, same kernel
    assert build(prog(SOFTMAX), cache=False) is not first
    assert build(prog(SOFTMAX), {"kind": "llvm", "num-cores": 1}) is not first
    a = np.random.default_rng(0).standard_normal((4, 8))
    np.testing.assert_array_equal(first.run({"A": a})["C"], build(prog(SOFTMAX)).run({"A": a})["C"])
    for n in range(build_mod.KERNEL_CACHE_SIZE + 1):
        build(one("input A: f32[2]\noutput C: f32[2]", f"L^{{2}}_{{a=0}}[C^{{f32,g}}_{{a}}=A^{{f32,g}}_{{a}}+{n};];"))
    assert len(build_mod._KERNELS) == build_mod.KERNEL_CACHE_SIZE
    assert build(prog(SOFTMAX)) is not first  # evicted
