"""``llvm-host``: this CPU's vector ISA, with every result bit-identical to the baseline ``llvm`` build."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest

from leir.program import load_program
from tests.strategies.helpers import workload
from tuner.cost import program_cost
from verifier import targets
from verifier.build import build
from verifier.inputs import make_inputs

MATMUL = """input A: f32[64, 96]
input B: f32[96, 80]
output C: f32[64, 80]
---
P^{64}_{i=0}L^{96}_{k=0}L^{80}_{j=0}[C^{f32,g}_{i,j}=C^{f32,g}_{i,j}+A^{f32,g}_{i,k}*B^{f32,g}_{k,j};];
"""


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def test_llvm_host_is_an_llvm_target_for_this_cpu_without_fused_multiply_add():
    spec = targets.resolve("llvm-host")
    assert spec["kind"] == "llvm" and spec["num-cores"] == targets.TARGETS["llvm"]["num-cores"]
    assert targets.runs_here("llvm-host") and not targets.is_gpu("llvm-host")
    assert targets.resolve("llvm") == {"kind": "llvm", "num-cores": 2}  # the dataset's target is unchanged
    if "mcpu" in spec and spec["mcpu"] and "avx2" in _cpu_flags():
        assert "-fma" in spec["mattr"]
    with pytest.raises(ValueError, match="only cuda takes an arch"):
        targets.resolve("llvm-host:sm_80")


@pytest.mark.skipif("avx2" not in _cpu_flags(), reason="the wider-vector check needs an AVX2 CPU")
def test_llvm_host_uses_the_wider_vectors_of_an_avx2_cpu():
    program = load_program(MATMUL)
    widths = {name: {int(w) for w in re.findall(r"<(\d+) x float>", build(program, name, cache=False)
                                                   .source("llvm"))} for name in ("llvm", "llvm-host")}
    assert max(widths["llvm-host"]) >= 8 > max(widths["llvm"])


@pytest.mark.parametrize("text_or_workload", [MATMUL, "level1/gelu", "level1/softmax", "level1/layer_norm",
                                              "level1/conv2d", "level2/gemm_batchnorm_eval_relu"])
def test_llvm_host_computes_the_same_bits_as_baseline_llvm(text_or_workload):
    program = load_program(text_or_workload) if "---" in text_or_workload else workload(text_or_workload)
    arrays = make_inputs(program, seed=7)
    baseline = build(program, "llvm", cache=False).run(arrays)
    host = build(program, "llvm-host", cache=False).run(arrays)
    assert baseline.keys() == host.keys()
    for name, values in baseline.items():
        assert values.tobytes() == host[name].tobytes(), f"{name} differs between llvm and llvm-host"
    assert np.isfinite(next(iter(host.values()))).any()


def test_the_cost_model_maps_llvm_host_like_llvm():
    program = workload("level1/layer_norm")
    assert program_cost(program, "llvm-host") == program_cost(program, "llvm")


@pytest.mark.parametrize("target", ["llvm", "llvm-host"])
def test_llvm_vectorises_loops_calling_exp_max_or_erf(target):
    """What ``tuner.cost._auto_vectorisable`` assumes (no call keeps LLVM's vectoriser out), read off the
    LLVM IR of real builds."""
    for call in ("exp", "log", "sqrt", "abs", "sin", "cos", "max", "min", "erf"):
        value = f"{call}(A^{{f32,g}}_{{tx,a}},0)" if call in ("max", "min") else f"{call}(A^{{f32,g}}_{{tx,a}})"
        program = load_program("input A: f32[16, 256]\noutput C: f32[16, 256]\n---\n"
                               f"B^{{16}}_{{tx=0}}L^{{256}}_{{a=0}}[C^{{f32,g}}_{{tx,a}}={value};];")
        vectorised = bool(re.search(r"<\d+ x float>", build(program, target, cache=False).source("llvm")))
        assert vectorised, call


@pytest.mark.parametrize("target", ["llvm", "llvm-host"])
def test_llvm_vectorises_a_serial_inner_loop_by_itself_only_from_the_cost_models_length(target):
    """What ``tuner.cost.AUTO_VECTOR_MIN_EXTENT`` says: shorter constant loops are fully unrolled before
    the loop vectoriser runs and stay scalar; from that length on the vectoriser takes them."""
    from tuner.cost import AUTO_VECTOR_MIN_EXTENT

    def vectorised(extent: int, value: str) -> bool:
        program = load_program(f"input A: f32[16, {extent}]\noutput C: f32[16, {extent}]\n---\n"
                               f"B^{{16}}_{{tx=0}}L^{{{extent}}}_{{a=0}}[C^{{f32,g}}_{{tx,a}}={value};];")
        return bool(re.search(r"<\d+ x float>", build(program, target, cache=False).source("llvm")))

    for value in ("A^{f32,g}_{tx,a}*2+1", "cos(A^{f32,g}_{tx,a})"):
        assert not vectorised(16, value) and not vectorised(32, value), value
        assert vectorised(AUTO_VECTOR_MIN_EXTENT, value) and vectorised(4 * AUTO_VECTOR_MIN_EXTENT, value), value
        # and a V loop of the short length is vectorised as written
        program = load_program("input A: f32[16, 32]\noutput C: f32[16, 32]\n---\n"
                               f"B^{{16}}_{{tx=0}}V^{{32}}_{{a=0}}[C^{{f32,g}}_{{tx,a}}={value};];")
        assert re.search(r"<\d+ x float>", build(program, target, cache=False).source("llvm")), value
    # a body calling exp (arithmetic, verifier.vector_math) gives the SLP vectoriser enough even at 16
    assert vectorised(16, "exp(A^{f32,g}_{tx,a})")


FUSED = """input A: f32[4096]
input B: f32[4096]
input C: f32[4096]
output D: f32[4096]
---
L^{4096}_{i=0}[D^{f32,g}_{i}=A^{f32,g}_{i}*B^{f32,g}_{i}+C^{f32,g}_{i};];
"""
#: ``FUSED`` with the product in a statement of its own (what ``expression_splitting`` makes).
SPLIT = """input A: f32[4096]
input B: f32[4096]
input C: f32[4096]
output D: f32[4096]
---
L^{4096}_{i=0}[E^{f32,g}_{i}=A^{f32,g}_{i}*B^{f32,g}_{i};];
L^{4096}_{i=0}[D^{f32,g}_{i}=E^{f32,g}_{i}+C^{f32,g}_{i};];
"""


def test_llvm_native_is_llvm_host_with_fused_multiply_add():
    host, native = targets.resolve("llvm-host"), targets.resolve("llvm-native")
    assert "mattr" not in native and {k: v for k, v in host.items() if k != "mattr"} == native
    assert targets.runs_here("llvm-native") and "llvm-native" in targets.TARGET_LABELS
    assert targets.TUNING_TARGET == "llvm-host"  # the tuner's records keep CPU-independent verdicts


@pytest.mark.skipif("fma" not in _cpu_flags(), reason="fusion needs a CPU with an FMA unit")
def test_llvm_native_fuses_a_product_into_its_add_and_so_an_exact_split_loses_its_bits():
    from verifier.verify import verify

    fused, split = load_program(FUSED), load_program(SPLIT)
    arrays = make_inputs(fused, seed=7)
    once = build(fused, "llvm-native", cache=False).run(arrays)["D"]
    twice = build(fused, "llvm-host", cache=False).run(arrays)["D"]
    assert once.tobytes() != twice.tobytes()  # one rounding instead of two, somewhere among 4096
    a, b, c = (arrays[name].astype(np.float64) for name in "ABC")
    exact = a * b + c
    assert np.abs(once - exact).max() <= np.abs(twice - exact).max()
    # the split is exact on a target without fusion, only close where the parent fused
    outcome = {t: verify(split, parent=fused, target=t, reference="parent", cache=False).outcome.value
               for t in ("llvm-host", "llvm-native")}
    assert outcome == {"llvm-host": "equal_pass", "llvm-native": "pass"}


def test_a_loop_step_keeps_its_bits_on_llvm_native():
    from verifier.verify import verify

    parent = load_program(MATMUL)
    child = load_program(MATMUL.replace("L^{96}_{k=0}L^{80}_{j=0}", "L^{96}_{k=0}L^{5}_{jo=0}V^{16}_{ji=0}")
                         .replace("_{i,j}", "_{i,jo*16+ji}").replace("_{k,j}", "_{k,jo*16+ji}"))
    assert child != parent
    assert verify(child, parent=parent, target="llvm-native", reference="parent",
                  cache=False).outcome.value == "equal_pass"


@pytest.mark.skipif("avx512f" not in _cpu_flags(), reason="the register-width check needs an AVX-512 CPU")
def test_only_llvm_native_uses_avx512_since_llvm_ties_it_to_fma():
    program = load_program("input A: f32[64, 256]\ninput B: f32[64, 256]\noutput C: f32[64, 256]\n---\n"
                           "B^{64}_{tx=0}V^{16}_{a=0}L^{16}_{b=0}"
                           "[C^{f32,g}_{tx,a*16+b}=A^{f32,g}_{tx,a*16+b}*B^{f32,g}_{tx,a*16+b}+1;];")
    host, native = (build(program, name, cache=False).source("asm") for name in ("llvm-host", "llvm-native"))
    assert host and native
    assert "zmm" not in host and "vfmadd" not in host
    assert "zmm" in native and "vfmadd" in native


def test_the_vector_unit_is_what_llvm_builds_for():
    from verifier.targets import AVX512_UNIT, MODELLED_UNIT, vector_unit

    assert vector_unit("llvm") == vector_unit("cuda") == MODELLED_UNIT  # nothing to ask LLVM about
    assert vector_unit("llvm-host") == MODELLED_UNIT  # its -fma switches AVX-512 off, on any x86-64 CPU
    on_avx512 = platform.machine() == "x86_64" and "avx512f" in _cpu_flags()
    assert vector_unit("llvm-native") == (AVX512_UNIT if on_avx512 else MODELLED_UNIT)
    assert vector_unit(targets.resolve("llvm-native")) == vector_unit("llvm-native")  # a dict names it too


@pytest.mark.skipif(platform.machine() != "x86_64", reason="reads x86-64 register names")
def test_a_cpu_build_shows_its_assembly():
    text = build(load_program(MATMUL), "llvm", cache=False).source("asm")
    assert "ret" in text and "xmm" in text  # machine code, with baseline x86-64's SSE registers
