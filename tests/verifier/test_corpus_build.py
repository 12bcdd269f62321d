"""Every corpus program lowers and builds for llvm and (within GPU limits) for cuda; small ones run.

388 builds per target take minutes on two shared cores, so the work is spread over a process pool of two
(``spawn``: TVM's thread pool must not be forked). Programs with fewer than 2e6 statement executions (81 of them) also
run on seeded inputs and must match the LEIR interpreter.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import re
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from leir import ast as A
from leir.corpus import load_corpus

RUN_LIMIT = 2_000_000
TOLERANCE = {"f32": (1e-4, 1e-5), "f64": (1e-9, 1e-12)}


def _iterations(program: A.Program) -> int:
    return sum(math.prod(lp.extent for lp in loops) for _, _, loops in A.statements(program.body))


def _exceeds_gpu_limits(program: A.Program) -> bool:
    """An independent reading of the CUDA limits: threads per block, per-axis extents."""
    for block in program.body.blocks:
        extents: dict[str, int] = {}
        stack = [block]
        while stack:
            current = stack.pop()
            for lp in current.loops:
                if lp.kind == "B":
                    m = re.match(r"^([bt])([xyz])", lp.var)
                    tag = (m.group(1) + m.group(2)) if m else "tx"
                    extents[tag] = max(extents.get(tag, 1), lp.extent)
            stack.extend(item for item in current.items if isinstance(item, A.Block))
        threads = math.prod(n for tag, n in extents.items() if tag.startswith("t"))
        if threads > 1024 or extents.get("tz", 1) > 64 or extents.get("by", 1) > 65535 or \
                extents.get("bz", 1) > 65535:
            return True
    return False


def _check_entry(index: int) -> dict:
    """Build (and maybe run) corpus entry ``index``; returns a plain record (runs in a worker)."""
    from leir.checker import check
    from leir.interpreter import run as interpret
    from verifier.build import build
    from verifier.inputs import make_inputs
    from verifier.lowering import GpuLimitError

    entry = load_corpus()[index]
    record: dict = {"id": entry.id, "errors": []}
    info = check(entry.program)
    kernel = build(entry.program, "llvm", info=info)
    record["tir_sha"] = hashlib.sha256(kernel.lowered.script.encode()).hexdigest()
    over = _exceeds_gpu_limits(entry.program)
    try:
        build(entry.program, "cuda", info=info)
        record["cuda"] = "built"
        if over:
            record["errors"].append("cuda built although the bindings exceed GPU limits")
    except GpuLimitError as exc:
        record["cuda"] = "limit"
        if not over:
            record["errors"].append(f"unexpected GpuLimitError: {exc}")
    except Exception as exc:
        record["cuda"] = "error"
        record["errors"].append(f"cuda: {type(exc).__name__}: {str(exc)[-400:]}")
    if _iterations(entry.program) < RUN_LIMIT:
        shapes = {t.name: t.shape for t in info.tensors.values()}
        inputs = make_inputs(entry.program, seed=0, shapes=shapes)
        expected = interpret(entry.program, inputs, info=info)
        got = kernel.run(inputs)
        record["ran"] = True
        for decl in entry.program.signature.by_role("output"):
            rtol, atol = TOLERANCE.get(decl.dtype, (0, 0))
            a = got[decl.name].astype(np.float64)
            b = expected[decl.name].astype(np.float64)
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                diff = np.nanmax(np.abs(a - b)) if a.shape == b.shape else "shape"
                record["errors"].append(f"output {decl.name} differs from the interpreter (max {diff})")
    return record


@pytest.mark.slow
def test_every_corpus_program_builds_and_small_ones_match_the_interpreter():
    count = len(load_corpus())
    assert count == 388
    started = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        records = list(pool.map(_check_entry, range(count), chunksize=8))
    elapsed = time.perf_counter() - started
    failures = [f"{r['id']}: {e}" for r in records for e in r["errors"]]
    ran = sum(1 for r in records if r.get("ran"))
    limited = sum(1 for r in records if r["cuda"] == "limit")
    print(f"\ncorpus: {count} built for llvm, {count - limited} for cuda, {limited} over GPU limits, "
          f"{ran} run and compared, {elapsed:.0f} s")
    assert not failures, "\n".join(failures[:20])
    # the printed TIR is the same in the workers (fresh processes) and here
    from verifier.lowering import lower

    corpus = load_corpus()
    for index in range(0, count, 40):
        here = hashlib.sha256(lower(corpus[index].program).script.encode()).hexdigest()
        assert here == records[index]["tir_sha"], corpus[index].id
    assert ran >= 75  # the small programs really ran (81 are under RUN_LIMIT)
