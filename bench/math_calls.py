"""What one math call costs per element in a built kernel: ``erf``, ``exp`` and ``log`` on the CPU.

Usage: ``python bench/math_calls.py [--n N] [--funcs erf,exp,log] [--target T] [--baseline REV]``

For each function, ``C_a = f(A_a)`` over ``N`` float32 elements (default 4,194,304: 16 MB in, 16 MB out)
is built by the verifier's lowering in three loop forms a tuner meets — ``serial`` (``L^{N}``, what a
source program is; LLVM may vectorise it by itself), ``vector`` (``L^{N/16}V^{16}``) and ``parallel``
(``P^{N/16}V^{16}``, on every usable core, as in a sandbox worker) — and timed by the verifier's
timing (best of the repeats). PyTorch eager applies the same function to the same array in the same
run (``torch.erf``/``exp``/``log`` with its default threads: vectorised SLEEF/MKL code), so
``eager/kernel`` > 1 is a kernel that beats it. Each row also gives the kernel's largest error against
float64 NumPy in units of ``u`` = 2^-24 (relative; absolute for ``erf``), beside what
``verifier.error_bound.LIBRARY_ULPS`` grants the call.

``--baseline REV`` measures git revision ``REV`` the same way in the same run (``bench/_revision.py``)
and adds ``REV ms / these ms``: how much a lowering change moved each form (REV 53e5aa5 calls libm's
``expf``/``logf`` per element; later revisions lower both to arithmetic, ``verifier.vector_math``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._revision import rows_at_revision  # noqa: E402

VECTOR = 16
FORMS = {"serial": "L^{{{n}}}_{{a=0}}", "vector": "L^{{{outer}}}_{{a=0}}V^{{16}}_{{b=0}}",
         "parallel": "P^{{{outer}}}_{{a=0}}V^{{16}}_{{b=0}}"}


def inputs(func: str, n: int):
    """Values where the function has work to do: log of positive numbers, exp without overflow."""
    import numpy as np

    rng = np.random.default_rng(0)
    if func == "log":
        return np.exp(rng.uniform(-20, 20, n)).astype(np.float32)
    if func == "exp":
        return rng.uniform(-20, 20, n).astype(np.float32)
    return (2 * rng.standard_normal(n)).astype(np.float32)


def shape(form: str, n: int) -> tuple[int, ...]:
    """1-D for the serial loop; rows of 16 for the others, so every loop indexes its own dimension."""
    return (n,) if form == "serial" else (n // VECTOR, VECTOR)


def program_text(func: str, form: str, n: int) -> str:
    index = "a" if form == "serial" else "a,b"
    loops = FORMS[form].format(n=n, outer=n // VECTOR)
    dims = ", ".join(map(str, shape(form, n)))
    return (f"input A: f32[{dims}]\noutput C: f32[{dims}]\n---\n"
            f"{loops}[C^{{f32,g}}_{{{index}}}={func}(A^{{f32,g}}_{{{index}}});];\n")


def error_in_u(func: str, x, got) -> float:
    import numpy as np

    exact = {"exp": np.exp, "log": np.log}.get(func)
    x64 = x.astype(np.float64)
    if exact is None:
        exact_values = np.array([math.erf(v) for v in x64[:200_000]])
        return float(np.abs(got[:200_000] - exact_values).max() / 2.0**-24)
    values = exact(x64)
    scale = np.maximum(np.abs(values), np.finfo(np.float32).tiny)
    return float((np.abs(got - values) / scale).max() / 2.0**-24)


def eager_ms(func: str, x, repeat: int) -> float:
    import torch

    tensor = torch.from_numpy(x)
    call = getattr(torch, func)
    call(tensor)
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(5):
            call(tensor)
        best = min(best, (time.perf_counter() - start) / 5)
    return best * 1e3


def measure(funcs: list[str], n: int, target: str, repeat: int) -> list[dict]:
    from leir.program import load_program
    from verifier.build import build
    from verifier.sandbox import kernel_threads

    # as a sandbox worker does: TVM's own default pool is half the logical CPUs on x86-64
    os.environ["TVM_NUM_THREADS"] = str(kernel_threads())

    rows = []
    for func in funcs:
        x = inputs(func, n)
        eager = eager_ms(func, x, repeat)
        for form in FORMS:
            kernel = build(load_program(program_text(func, form, n)), target, cache=False)
            arrays = {"A": x.reshape(shape(form, n))}
            got = kernel.run(arrays)["C"].astype("float64").reshape(-1)
            seconds = min(kernel.time(arrays, number=3, repeat=repeat, min_repeat_ms=50))
            rows.append({"func": func, "form": form, "n": n, "target": target, "kernel_ms": seconds * 1e3,
                         "eager_ms": eager, "error_u": error_in_u(func, x, got)})
            print(f"  {func} {form}: {seconds * 1e3:.2f} ms", file=sys.stderr, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    from verifier.error_bound import LIBRARY_ULPS
    from verifier.targets import TUNING_TARGET

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4_194_304, help="elements (a multiple of 16)")
    parser.add_argument("--funcs", default="erf,exp,log")
    parser.add_argument("--target", default=TUNING_TARGET)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV, in this run")
    parser.add_argument("--json", metavar="OUT.json")
    args = parser.parse_args(argv)
    if args.n % VECTOR:
        parser.error(f"--n must be a multiple of {VECTOR}")
    funcs = args.funcs.split(",")
    inner = ["--n", str(args.n), "--funcs", args.funcs, "--target", args.target, "--repeat", str(args.repeat)]
    base = {}
    if args.baseline:
        base = {(r["func"], r["form"]): r for r in rows_at_revision(__file__, args.baseline, inner)}
    rows = measure(funcs, args.n, args.target, args.repeat)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
        return 0
    print(f"f32 C_a = f(A_a), {args.n:,} elements, target {args.target}; eager: PyTorch on the same array; "
          "error in u = 2^-24 (erf: absolute)" + (f"; baseline {args.baseline}" if base else ""))
    print(f"{'call':5} {'form':9} {'kernel ms':>9} {'ns/elem':>7} {'eager ms':>8} {'eager/kernel':>12} "
          f"{'error u':>7} {'granted':>7}" + (f" {'base ms':>8} {'speedup':>7}" if base else ""))
    for r in rows:
        line = (f"{r['func']:5} {r['form']:9} {r['kernel_ms']:9.2f} {r['kernel_ms'] * 1e6 / r['n']:7.3f} "
                f"{r['eager_ms']:8.2f} {r['eager_ms'] / r['kernel_ms']:12.2f} {r['error_u']:7.2f} "
                f"{LIBRARY_ULPS[r['func']]:7.1f}")
        b = base.get((r["func"], r["form"]))
        if b:
            line += f" {b['kernel_ms']:8.2f} {b['kernel_ms'] / r['kernel_ms']:7.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
