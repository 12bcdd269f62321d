"""Named build targets and the GPU limits checked before a cuda build.

Targets are plain dicts (TVM 0.27 builds ``Target`` objects from dicts) so they can be cached, stored
and compared as JSON. ``llvm`` is this machine's CPU as baseline x86-64 (2 cores are shared by everyone,
so TVM's thread pool is pinned to 2): the dataset's target, the same code on every x86-64 machine.
``llvm-host`` is the same with this CPU's vector ISA (``host_llvm``): the tuner's. ``llvm-native`` adds the
fused multiply-add unit (``native_llvm``), as PyTorch's own kernels use it, for speed comparisons with
eager. ``cuda`` defaults to
sm_90 (H100/H200). The limits are the CUDA hardware limits every sm_5x+ part shares, defined once in
``leir.gpu_limits``; checking them ourselves gives an error that names the LEIR loop instead of a
runtime launch failure.
"""

from __future__ import annotations

import copy
import json
import platform
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

# The CUDA limits live in leir (strategies check them too); re-exported for the verifier's callers.
from leir.gpu_limits import MAX_BLOCKS, MAX_SHARED_BYTES, MAX_THREADS, MAX_THREADS_PER_BLOCK  # noqa: F401

TARGETS: dict[str, dict[str, Any]] = {
    "llvm": {"kind": "llvm", "num-cores": 2},
    # this CPU's own vector ISA (``host_llvm``), filled in when first resolved
    "llvm-host": {"kind": "llvm", "num-cores": 2},
    # the same with fused multiply-add (``native_llvm``)
    "llvm-native": {"kind": "llvm", "num-cores": 2},
    "cuda": {"kind": "cuda", "arch": "sm_90"},
}
#: What each named target is, in the order a tuning run offers them (the tuner's default first): the
#: choices of the run form, the API and ``manage.py tune``. ``cuda:sm_XX`` also resolves (``resolve``).
TARGET_LABELS: dict[str, str] = {
    "llvm-host": "llvm-host (this CPU's vector ISA)",
    "llvm-native": "llvm-native (this CPU's vector ISA and fused multiply-add)",
    "llvm": "llvm (baseline x86-64)",
    "cuda": "cuda (a GPU worker)",
}
#: TVM keeps a CPU allocation of fewer bytes than this on the stack (``runtime::kMaxStackAlloca``); a
#: larger one is a workspace call each time its scope is entered. The lowering places private copies by
#: it and the tuner's cost model counts register accumulators by it.
STACK_ALLOCA_BYTES = 1024
#: What the tuner builds for unless told otherwise; dataset generation and verification keep ``llvm``.
TUNING_TARGET = "llvm-host"
#: Disabled on x86-64 for ``llvm-host``: a fused multiply-add rounds once where the baseline x86-64
#: build (no FMA unit) rounds twice, so with them an exact step's bits would depend on the CPU.
X86_NO_CONTRACTION = ["-fma", "-fma4"]


@lru_cache(maxsize=1)
def host_llvm() -> dict[str, Any]:
    """``llvm`` compiled for this machine's CPU (AVX2 on a recent x86-64) instead of baseline x86-64.

    Baseline x86-64 is SSE2: 4 f32 lanes, while PyTorch's kernels use the full vector width, so a tuned
    kernel compared with eager on ``llvm`` is handicapped twice over for compute-bound work. FMA stays
    off on x86-64: every operation then rounds exactly as in the baseline build — the same bits
    (``tests/verifier/test_targets.py`` checks it) — so verdicts do not depend on the CPU, only timings.
    """
    from verifier import tvm_adapter

    spec = dict(TARGETS["llvm"])
    cpu = tvm_adapter.system_cpu()
    if cpu and cpu != "generic":
        spec["mcpu"] = cpu
        if platform.machine().lower() in ("x86_64", "amd64"):
            spec["mattr"] = list(X86_NO_CONTRACTION)
    return spec


@lru_cache(maxsize=1)
def native_llvm() -> dict[str, Any]:
    """``llvm-host`` with the fused multiply-add unit: every instruction this CPU has. On an AVX-512 CPU
    that includes the 512-bit registers, which LLVM switches off with FMA (AVX512F requires it), so
    ``llvm-host`` there has AVX2's 8 lanes and this target 16.

    A GEMM's inner step is one instruction instead of two, on twice the lanes (``bench/fma.py``: a 6x16
    register tile at 251 GFLOP/s on ``llvm-host``, 337 here, eager 201, AMD EPYC Zen 5), which is what
    MKL/oneDNN use, so a speed comparison with eager is like for like. The price is that results depend
    on the CPU: a product rounds once when LLVM fuses it into the add that uses it, so an exact step
    that moves the two into separate statements, or joins them, changes the last bit and fails its
    equal pass here (``bench/fma.py``, 30 suite programs: 21 of 38 ``expression_splitting`` steps, 2 of
    21 ``compute_inline``, 2 of 24 ``operator_fusion``, 1 of 12 ``common_subexpression_elimination``;
    none of 538 loop and memory steps). The dataset's verdicts are made on ``llvm``; this target is for
    measuring speed.
    """
    spec = dict(host_llvm())
    spec.pop("mattr", None)
    return spec


#: Each contracting target's twin without contraction: the same CPU and vector width, but every product
#: rounds before the add that uses it, as in the baseline build. A fused multiply-add rounds once, so on a
#: contracting target an exact step that joins a product and its sum into one statement (an operator
#: fusion of ``D = A*C`` into ``F = D + E``), or splits them, changes the last bit: what the step did is
#: exact, what LLVM then did is not. Its twin is where such a step's equal pass is judged
#: (``tuner.measure``) and where the source the tuning is credited against is timed (``bench/tune.py``).
CONTRACTION_FREE_TWIN: dict[str, str] = {"llvm-native": TUNING_TARGET}


def contraction_free_twin(target: str | dict[str, Any]) -> str | None:
    """The name of ``target``'s twin without fused multiply-adds (``None``: ``target`` does not fuse them,
    or has no twin). Only x86-64 ``llvm-host`` turns contraction off (``X86_NO_CONTRACTION``)."""
    if not isinstance(target, str) or target not in CONTRACTION_FREE_TWIN:
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    return CONTRACTION_FREE_TWIN[target]


def resolve(target: str | dict[str, Any]) -> dict[str, Any]:
    """A target name (``llvm``, ``cuda``, ``cuda:sm_80``) or dict → a fresh target dict."""
    if isinstance(target, dict):
        if "kind" not in target:
            raise ValueError(f"target dict needs a 'kind': {target!r}")
        return copy.deepcopy(target)
    name, _, arch = target.partition(":")
    if name not in TARGETS:
        raise ValueError(f"unknown target {target!r}; known: {', '.join(TARGETS)} (or cuda:sm_XX)")
    own = {"llvm-host": host_llvm, "llvm-native": native_llvm}
    spec = copy.deepcopy(own[name]() if name in own else TARGETS[name])
    if arch:
        if name != "cuda":
            raise ValueError(f"only cuda takes an arch suffix, got {target!r}")
        spec["arch"] = arch
    return spec


@dataclass(frozen=True)
class VectorUnit:
    """The vector registers a target's code has: how many, and how many f32 lanes each holds. The tuner's
    cost model sizes register tiles by it (``tuner.cost``): a tile's accumulators, the operand they share
    and a broadcast must fit the register file, or LLVM spills them on every step of the reduction."""

    registers: int
    f32_lanes: int


#: What the cost model assumes wherever the target does not say more: AVX2's sixteen 8-lane ``ymm``
#: registers (the tuner's ``llvm-host`` on a recent x86-64, and the model the tuner was calibrated on).
MODELLED_UNIT = VectorUnit(registers=16, f32_lanes=8)
#: AVX-512's thirty-two 16-lane ``zmm`` registers: ``llvm-native`` on an AVX-512 CPU. Twice the
#: registers hold a register tile twice as tall, which hides the fused multiply-add's latency: on AMD
#: EPYC Zen 5 (one thread, 576x512 by 512x944) a 6x16 tile ran 165 GFLOP/s, 8x16 195, 12x16 213.
AVX512_UNIT = VectorUnit(registers=32, f32_lanes=16)


def vector_unit(target: str | dict[str, Any]) -> VectorUnit:
    """The vector unit ``target``'s code uses, as LLVM sees the target (``AVX512_UNIT`` when it has AVX-512
    foundation instructions: ``llvm-native`` on such a CPU, not ``llvm-host``, whose ``-fma`` switches
    them off), else ``MODELLED_UNIT``. Baseline ``llvm`` (SSE2, 4 lanes) and cuda keep the modelled unit
    too: the cost model's other weights were measured with it."""
    return _vector_unit(key(target))


@cache
def _vector_unit(target_key: str) -> VectorUnit:
    spec = json.loads(target_key)
    if spec.get("kind") != "llvm" or "mcpu" not in spec:
        return MODELLED_UNIT  # baseline x86-64 or a GPU: nothing to ask LLVM
    from verifier import tvm_adapter

    return AVX512_UNIT if tvm_adapter.target_has_feature(spec, "avx512f") else MODELLED_UNIT


def kind(target: str | dict[str, Any]) -> str:
    return str(resolve(target)["kind"])


def is_gpu(target: str | dict[str, Any]) -> bool:
    return kind(target) == "cuda"


def runs_here(target: str | dict[str, Any]) -> bool:
    """Only CPU kernels run on this machine; cuda kernels are built here and run on a GPU worker."""
    return kind(target) == "llvm"


def key(target: str | dict[str, Any]) -> str:
    """A stable text key for caches and database rows."""
    return json.dumps(resolve(target), sort_keys=True, separators=(",", ":"))
