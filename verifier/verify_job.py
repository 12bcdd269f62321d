"""The sandboxed side of a verification: the job one sandbox worker runs, and only that.

``verifier.verify`` (the caller) checks the program, consults the result cache, prepares a ``JobSpec``
and interprets what comes back; ``verify_job(spec)`` runs inside a worker of ``verifier.sandbox`` —
building the state (and its parent and source), running it on seeded inputs, running the reference,
comparing within the error bound and timing — so a crash, hang or memory blow-up anywhere here is an
outcome for the caller, never its own failure. Everything here is picklable in and plain data out; the
stages it marks on stderr (``STAGE_MARK``) let the caller say where a job died.
"""

from __future__ import annotations

import contextlib
import functools
import time as _time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from leir.ast import Program
from verifier import cpu_share
from verifier import reuse as reuse_mod
from verifier.compare import Comparison, ScaledAllowance, compare_outputs, outputs_bitwise_equal
from verifier.errors import VerifierError
from verifier.inputs import InputDomain, fresh_seed, make_inputs
from verifier.reference import (
    BOUND_MAX_ITERATIONS,
    InterpreterReference,
    Reference,
    TorchSourceReference,
    iteration_count,
    unstable_reference,
)
from verifier.result import Outcome
from verifier.sandbox import raise_if_memory_error

#: What the job prints on stderr as it enters a stage (``_stage``): the caller reads the last one.
STAGE_MARK = "[steptp-verify] stage="


@dataclass
class JobSpec:
    """Everything the sandboxed job needs (picklable)."""

    program: Program
    parent: Program | None
    source: Program | None
    target: str
    seed: int
    special_values: bool
    time: bool
    run: bool
    reference: Reference | None
    params: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]]
    repeats: int = 7
    min_repeat_ms: float = 50.0
    notes: list[str] = field(default_factory=list)
    #: Programs with more statement executions are compared with the fixed tolerance (no bound).
    max_bound_iterations: int = BOUND_MAX_ITERATIONS
    #: Reuse kernels, outputs and error bounds this worker already computed (``verifier.reuse``): the
    #: result is the same bytes either way; ``False`` is the baseline that recomputes everything.
    reuse: bool = True
    #: Also reuse timings of the parent and the source taken in earlier jobs on the same inputs.
    reuse_timings: bool = False
    #: Outputs bitwise equal to the parent's (the expected ones) pass any tolerance: skip the error bound
    #: (only the fixed-tolerance comparison is reported). ``False``: the old path that evaluates it anyway.
    equal_skips_bound: bool = False
    #: Float inputs are ``offset + N(0, 1)``; a program compared with another trusted program must be
    #: about as accurate as it there too (``verifier.accuracy``).
    large_offset: bool = False
    #: The source's input domains by tensor name (``verifier.inputs.InputDomain``); empty: a PyTorch
    #: reference's own, if it has them.
    domains: dict[str, InputDomain] = field(default_factory=dict)


def _stage(name: str) -> None:
    """Mark the stage in the worker log so a crash or timeout can be attributed to it."""
    import sys

    print(STAGE_MARK + name, file=sys.stderr, flush=True)


def _kernel(program: Program, target: str, reuse: bool = True) -> tuple[Any, float, bool]:
    """(kernel, build seconds, reused) — with ``reuse``, built once per worker per program and target
    (``verifier.reuse.KERNELS``); without, built afresh (the baseline ``bench/tune_build.py`` measures)."""
    from leir.program import program_hash
    from verifier.build import build

    start = _time.perf_counter()
    if not reuse:
        return build(program, target=target, cache=False), _time.perf_counter() - start, False
    # build's own in-process cache stays out of it: one table (reuse.KERNELS) holds the worker's kernels
    kernel, hit = reuse_mod.KERNELS.get_or((program_hash(program), target),
                                           lambda: build(program, target=target, cache=False), share=True)
    return kernel, (0.0 if hit else _time.perf_counter() - start), hit


def _outputs(kernel: Any, program: Program, target: str, arrays: Mapping[str, np.ndarray],
             digest: str | None) -> dict[str, np.ndarray]:
    """``kernel.run(arrays)``; with a ``digest`` of ``arrays``, memoised per (program, target, inputs)."""
    if digest is None:
        outputs: dict[str, np.ndarray] = kernel.run(arrays)  # the kernel is TVM's, untyped
        return outputs
    from leir.program import program_hash

    value: dict[str, np.ndarray]
    value, _hit = reuse_mod.OUTPUTS.get_or((program_hash(program), target, digest),
                                           lambda: kernel.run(arrays))
    return value


def _bound_fn(digest: str | None) -> Callable[[Program, Mapping[str, np.ndarray]], Any] | None:
    """The error-bound evaluation ``bounded_compare`` uses: memoised per (program, inputs) with a digest."""
    if digest is None:
        return None
    from leir.program import program_hash
    from verifier.error_bound import program_bound

    def bound(program: Program, arrays: Mapping[str, np.ndarray]) -> Any:
        value, _hit = reuse_mod.BOUNDS.get_or((program_hash(program), digest),
                                              lambda: program_bound(program, arrays).outputs)
        return value

    return bound


def _timed_together(timed: Mapping[str, tuple[Any, Program]], spec: JobSpec,
                    arrays: Mapping[str, np.ndarray], digest: str | None,
                    options: Mapping[str, Any]) -> dict[str, Any]:
    """``timing.time_kernels`` over the named kernels, interleaved; with ``reuse_timings`` each is memoised
    per (program, target, inputs, options), and only those this worker has not timed yet are timed (still
    together): a state's parent is timed once per worker and its timing shared by its children."""
    from verifier import timing

    if digest is not None and spec.reuse_timings:
        from leir.program import program_hash

        keys = {name: (program_hash(program), spec.target, digest, options["repeats"],
                       options["min_repeat_ms"]) for name, (_k, program) in timed.items()}
        # What this worker has not timed yet is timed together, interleaved; the rest is reused.
        missing = [name for name in timed if keys[name] not in reuse_mod.TIMINGS.entries]
        taken = dict(zip(missing, timing.time_kernels([timed[name][0] for name in missing], arrays,
                                                      **options), strict=True)) if missing else {}
        return {name: reuse_mod.TIMINGS.get_or(keys[name], functools.partial(taken.__getitem__, name))[0]
                for name in timed}
    stats = timing.time_kernels([k for k, _program in timed.values()], arrays, **options)
    return dict(zip(timed, stats, strict=True))


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _output_dtypes(program: Program) -> dict[str, str]:
    return {d.name: d.dtype for d in program.signature.by_role("output")}


def _max_errors(comparisons: Mapping[str, Comparison]) -> tuple[float | None, float | None]:
    if not comparisons:
        return None, None
    return (max(c.max_abs_error for c in comparisons.values()),
            max(c.max_rel_error for c in comparisons.values()))


def _trusted_program(spec: JobSpec, reference: Reference | None, compared_with: str) -> Program:
    """The LEIR program whose rounding stands for the reference's: what the reference computes."""
    if isinstance(reference, InterpreterReference):
        return reference.program
    if compared_with == "parent" and spec.parent is not None:
        return spec.parent
    return spec.source or spec.parent or spec.program


def bounded_compare(program: Program, trusted: Program, outputs: Mapping[str, np.ndarray],
                    expected: Mapping[str, np.ndarray], arrays: Mapping[str, np.ndarray], *,
                    notes: list[str] | None = None,
                    max_iterations: int = BOUND_MAX_ITERATIONS,
                    bound: Callable[[Program, Mapping[str, np.ndarray]], Any] | None = None,
                    ) -> dict[str, Any]:
    """Compare ``outputs`` (of ``program``) with ``expected`` (computed like ``trusted``) on ``arrays``.

    The ``scaled`` tolerance where the error bounds can be evaluated (``verifier.error_bound``): each
    element's allowance adds the bounds of the program under test and of the trusted program, since both
    the kernel and the reference round. Otherwise the ``fixed`` one, with the reason in ``notes``.
    ``bound(program, arrays)`` gives a program's per-output bounds (default: ``program_bound(...).outputs``;
    the worker passes a memoised one).
    """
    from leir.program import program_hash
    from verifier.compare import EXACT_DTYPES
    from verifier.error_bound import program_bound

    notes = notes if notes is not None else []

    def note(text: str) -> None:
        if text not in notes:
            notes.append(text)

    dtypes = _output_dtypes(program)
    allowances: dict[str, ScaledAllowance] = {}
    magnitudes: dict[str, np.ndarray] = {}
    programs = [program] + ([trusted] if program_hash(trusted) != program_hash(program) else [])
    sizes = [iteration_count(p) for p in programs]
    if all(dtype in EXACT_DTYPES for dtype in dtypes.values()):
        pass  # integer and bool outputs are compared exactly: no bound to evaluate (nor its f64 arrays)
    elif max(sizes) > max_iterations:
        note(f"error bound not evaluated: {max(sizes):,} statement executions > {max_iterations:,}; "
             "fixed per-dtype tolerance used")
    else:
        try:
            bounds = [(bound or (lambda q, a: program_bound(q, a).outputs))(p, arrays) for p in programs]
        except MemoryError:
            raise  # the sandbox reports memory_limit, with the size the bound needed
        except Exception as exc:
            note(f"error bound not evaluated ({error_text(exc)}); fixed per-dtype tolerance used")
            bounds = []
        if bounds:
            own, other = bounds[0], bounds[-1]
            for name, dtype in dtypes.items():
                if name in own and name in other and name in expected:
                    # computed a chunk at a time inside the comparison, never as a whole array
                    allowances[name] = ScaledAllowance(dtype, np.asarray(expected[name]),
                                                       [own[name].error, other[name].error])
                    magnitudes[name] = own[name].magnitude
    return compare_outputs(dict(outputs), dict(expected), dtypes, allowances=allowances,
                           magnitudes=magnitudes)


def _tolerance_summary(comparisons: Mapping[str, Comparison]) -> tuple[str | None, float | None]:
    """(method used — ``scaled``, ``fixed``, ``exact`` or ``mixed`` —, worst error/allowance ratio)."""
    if not comparisons:
        return None, None
    methods = {c.method for c in comparisons.values()} - ({"exact"} if len(comparisons) > 1 else set())
    method = methods.pop() if len(methods) == 1 else ("mixed" if methods else "exact")
    return method, max(c.error_ratio for c in comparisons.values())


def _nonfinite_class(values: np.ndarray) -> np.ndarray:
    """0 finite, 1 NaN, 2 +inf, 3 -inf, per element (integer arrays are all finite)."""
    v = np.asarray(values)
    if v.dtype.kind not in "fc" and v.dtype.name != "bfloat16":
        return np.zeros(v.shape, np.int8)
    v = v.astype(np.float64)
    return np.select([np.isnan(v), np.isposinf(v), np.isneginf(v)], [1, 2, 3], 0).astype(np.int8)


def _nonfinite_by_f64(reference: Reference | None, outputs: Mapping[str, np.ndarray],
                      expected: dict[str, np.ndarray],
                      arrays: Mapping[str, np.ndarray], notes: list[str]) -> dict[str, np.ndarray]:
    """Where PyTorch's reduced-precision kernels disagree with its own f64 path on NaN/±inf, f64 decides.

    Some vectorised f32 kernels do not follow IEEE at infinities (f32 ``gelu(+inf)`` is NaN, f64 gives
    inf as the formula does). Only elements where the program's NaN/±inf class differs from the f32
    reference's are re-checked: the same source module run in f64 on the same inputs; where its class
    there differs from the f32 one, its value (rounded to the output's dtype) is the expected value, held
    to the same rule. A note counts them. Where both PyTorch paths agree, the program must too.
    """
    if getattr(reference, "dtype", "f64") == "f64" or not isinstance(reference, TorchSourceReference):
        return expected
    differs = {name: _nonfinite_class(outputs[name]) != _nonfinite_class(want)
               for name, want in expected.items() if name in outputs}
    if not any(mask.any() for mask in differs.values()):
        return expected
    wide = TorchSourceReference(reference.path, reference.sets, "f64",
                                getattr(reference, "input_shapes", None)).outputs(arrays)
    fixed = dict(expected)
    moved = 0
    for name, mask in differs.items():
        want = np.asarray(expected[name])
        take = mask & (_nonfinite_class(wide[name]) != _nonfinite_class(want))
        if take.any():
            fixed[name] = want.copy()
            with np.errstate(over="ignore", invalid="ignore"):
                fixed[name][take] = np.asarray(wide[name])[take].astype(want.dtype)
            moved += int(take.sum())
    if moved:
        notes.append(f"{moved} element(s) where PyTorch's {reference.dtype} kernels and its f64 path "
                     "disagree on NaN/±inf: held to the f64 path there (docs/verification.md §2)")
    return fixed


def _domains(spec: JobSpec, reference: Reference | None, notes: list[str]) -> dict[str, InputDomain]:
    """The caller's input domains, else a PyTorch source reference's own (what its get_inputs() gives)."""
    if spec.domains:
        return dict(spec.domains)
    own = getattr(reference, "input_domains", None)
    if own is None:
        return {}
    try:
        return dict(own())
    except Exception as exc:
        note = f"the source's input domains could not be read ({error_text(exc)}): default inputs"
        if note not in notes:
            notes.append(note)
        return {}


def _inaccurate(spec: JobSpec, trusted: Program, outputs: Mapping[str, np.ndarray],
                expected: Mapping[str, np.ndarray], arrays: Mapping[str, np.ndarray], digest: str | None,
                notes: list[str]) -> list[str]:
    """Why ``outputs`` are much less accurate than ``expected`` against ``trusted`` in float64 (empty: they
    are not, or there is nothing to measure: the same program, or no float64 value to measure with)."""
    from leir.program import program_hash
    from verifier.accuracy import accuracy
    from verifier.error_bound import program_bound

    if program_hash(trusted) == program_hash(spec.program):
        return []
    if iteration_count(trusted) > spec.max_bound_iterations:
        notes.append("large-offset accuracy not measured: the trusted program is too large to evaluate "
                     "in f64")
        return []
    bound = _bound_fn(digest) or (lambda q, a: program_bound(q, a).outputs)
    try:
        exact = {name: b.value for name, b in bound(trusted, arrays).items()}
    except Exception as exc:
        notes.append(f"large-offset accuracy not measured ({error_text(exc)})")
        return []
    found = accuracy(outputs, expected, exact, _output_dtypes(spec.program))
    notes.extend(f"large-offset accuracy {a.reason()}" for a in found)
    return [a.reason() for a in found if not a.ok]


def verify_job(spec: JobSpec) -> dict[str, Any]:
    """Runs inside a sandbox worker; returns the fields of a ``VerificationResult``."""
    from verifier import timing

    out: dict[str, Any] = {"notes": list(spec.notes), "hardware": timing.hardware()}
    try:
        from verifier.build import build  # noqa: F401 - fail early, clearly, if the lowering is missing
    except ImportError as exc:
        out.update(outcome=Outcome.BUILD_ERROR.value,
                   error=f"the lowering is not available: {error_text(exc)}")
        return out
    reference = spec.reference
    params = dict(spec.params)
    if reference is not None:
        try:
            ref_params = reference.params() or {}
            params = {**ref_params, **params}
        except Exception as exc:
            out["notes"].append(f"reference {reference.kind} failed to give params: {error_text(exc)}")
            reference = None

    _stage("build")
    try:
        kernel, out["build_seconds"], reused = _kernel(spec.program, spec.target, spec.reuse)
    except Exception as exc:
        raise_if_memory_error(exc)
        out.update(outcome=Outcome.BUILD_ERROR.value, error=error_text(exc),
                   error_class=type(exc).__name__ if isinstance(exc, VerifierError) else "BuildError")
        return out
    lowered = getattr(kernel, "lowered", None)
    out["unhonoured_loops"] = [u.to_json() for u in getattr(lowered, "unhonoured_loops", ())]
    versions = getattr(kernel, "versions", None)
    if isinstance(versions, Mapping):
        out["versions"] = {str(k): str(v) for k, v in versions.items()}
    if not spec.run:
        out["outcome"] = Outcome.BUILD.value
        return out

    _stage("inputs")
    domains = _domains(spec, reference, out["notes"])
    arrays = make_inputs(spec.program, seed=spec.seed, special_values=spec.special_values, params=params,
                         shapes=spec.shapes, large_offset=spec.large_offset, domains=domains)
    if spec.large_offset:
        out["notes"].append("large-offset inputs: every float input is offset + N(0, 1) "
                            "(offset 1000 in f32/f64, 64 in bf16, 32 in f16)")
    digest = reuse_mod.arrays_digest(arrays) if spec.reuse else None
    _stage("run")
    run_start = _time.perf_counter()
    try:
        outputs = kernel.run(arrays)
    except Exception as exc:
        raise_if_memory_error(exc)  # the sandbox reports memory_limit
        out.update(outcome=Outcome.RUNTIME_ERROR.value, error=error_text(exc))
        return out

    parent_kernel = None
    parent_outputs = None
    if spec.parent is not None:
        _stage("parent")
        try:
            parent_kernel, _seconds, _reused = _kernel(spec.parent, spec.target, spec.reuse)
            parent_outputs = _outputs(parent_kernel, spec.parent, spec.target, arrays, digest)
        except Exception as exc:
            out["notes"].append(f"the parent could not be built/run, no equal-pass check: {error_text(exc)}")
            parent_kernel = None

    expected = None
    if reference is not None:
        _stage("reference")
        try:
            expected = reference.outputs(arrays)
            out["reference"] = reference.kind
        except Exception as exc:
            out["notes"].append(f"reference {reference.kind} failed: {error_text(exc)}")
    unstable = expected is not None and unstable_reference(reference, arrays, expected, out["notes"])
    if expected is not None and out.get("reference") == "torch" and spec.special_values:
        expected = _nonfinite_by_f64(reference, outputs, expected, arrays, out["notes"])
    if expected is None and parent_outputs is not None:
        expected = parent_outputs
        out["reference"] = "parent"

    dtypes = _output_dtypes(spec.program)
    if parent_outputs is not None:
        out["bitwise_equal_parent"] = outputs_bitwise_equal(
            {k: outputs[k] for k in dtypes if k in outputs}, {k: parent_outputs[k] for k in dtypes
                                                               if k in parent_outputs})
    if unstable:
        out["outcome"] = Outcome.UNSTABLE_REFERENCE.value
    elif expected is None:
        out["outcome"] = Outcome.EXECUTE.value
    else:
        trusted = _trusted_program(spec, reference, out.get("reference", ""))
        if spec.equal_skips_bound and expected is parent_outputs and out.get("bitwise_equal_parent"):
            # bitwise equal to what it is compared with: within any bound, so none is evaluated
            comparisons = compare_outputs(dict(outputs), dict(expected), dtypes)
            out["notes"].append("outputs bitwise equal to the parent's: error bound not evaluated")
        else:
            _stage("bound")
            comparisons = bounded_compare(spec.program, trusted, outputs, expected, arrays,
                                          notes=out["notes"], max_iterations=spec.max_bound_iterations,
                                          bound=_bound_fn(digest))
        out["outputs"] = {k: c.to_json() for k, c in comparisons.items()}
        out["max_abs_error"], out["max_rel_error"] = _max_errors(comparisons)
        out["tolerance"], out["max_error_ratio"] = _tolerance_summary(comparisons)
        same = expected is parent_outputs and out.get("bitwise_equal_parent")  # as accurate, bit for bit
        inaccurate = (_inaccurate(spec, trusted, outputs, expected, arrays, digest, out["notes"])
                      if spec.large_offset and not same and all(c.ok for c in comparisons.values()) else [])
        if not all(c.ok for c in comparisons.values()):
            out["outcome"] = Outcome.FAIL.value
        elif inaccurate:
            out["outcome"] = Outcome.FAIL.value
            out["error"] = ("on large-offset inputs the program is much less accurate than the program it "
                            "is compared with (catastrophic cancellation?): " + "; ".join(inaccurate))
        elif out.get("bitwise_equal_parent"):
            out["outcome"] = Outcome.EQUAL_PASS.value
        else:
            out["outcome"] = Outcome.PASS.value
    out["run_seconds"] = _time.perf_counter() - run_start
    if spec.time and out["outcome"] != Outcome.FAIL.value:
        _stage("time")
        time_start = _time.perf_counter()
        _time_all(spec, kernel, parent_kernel, reference, params, out)
        out["time_seconds"] = _time.perf_counter() - time_start
    return out


def _timed_outputs_ok(spec: JobSpec, reference: Reference | None, compared_with: str,
                      timed_outputs: Mapping[str, np.ndarray],
                      expected: Mapping[str, np.ndarray], fresh: Mapping[str, np.ndarray], notes: list[str],
                      digest: str | None) -> bool:
    """Whether the timed binary's outputs on the fresh inputs match the reference's.

    Outputs identical to the reference's bit for bit match under any tolerance, so their error bound is
    not evaluated: it only decides this check, and it runs the program through the interpreter, which on
    a restructured nest (a local accumulator four loops deep, 16x512x14x14 average pooling) takes
    minutes — a search spent its time budget there, not on candidates.
    """
    names = list(_output_dtypes(spec.program))
    if all(k in timed_outputs and k in expected for k in names) and outputs_bitwise_equal(
            {k: timed_outputs[k] for k in names}, {k: expected[k] for k in names}):
        return True
    trusted = _trusted_program(spec, reference, compared_with)
    comparisons = bounded_compare(spec.program, trusted, timed_outputs, expected, fresh, notes=notes,
                                  max_iterations=spec.max_bound_iterations, bound=_bound_fn(digest))
    return all(c.ok for c in comparisons.values())


@contextlib.contextmanager
def _cpus_alone(spec: JobSpec, out: dict[str, Any]) -> Iterator[None]:
    """Time with this host's CPUs to this job (``cpu_share``) on a CPU target; note it when they were not."""
    from verifier.targets import is_gpu

    if is_gpu(spec.target):
        yield
        return
    with cpu_share.alone() as held:
        yield
    if (note := held.note()) is not None and note not in out["notes"]:
        out["notes"].append(note)


def _time_all(spec: JobSpec, kernel: Any, parent_kernel: Any, reference: Reference | None,
              params: dict[str, np.ndarray], out: dict[str, Any]) -> None:
    """Time the state, its parent and the source (interleaved) and PyTorch eager (last) on fresh inputs;
    re-check the state's timed binary."""
    from verifier import timing

    fresh = make_inputs(spec.program, seed=fresh_seed(spec.seed), special_values=False, params=params,
                        domains=_domains(spec, reference, []),
                        shapes=spec.shapes)
    digest = reuse_mod.arrays_digest(fresh) if spec.reuse else None
    options = {"repeats": spec.repeats, "min_repeat_ms": spec.min_repeat_ms}
    timed = {"timing": (kernel, spec.program)}
    if parent_kernel is not None and spec.parent is not None:  # a parent kernel is built from spec.parent
        timed["parent_timing"] = (parent_kernel, spec.parent)
    if spec.source is not None:
        try:
            source_kernel, _s, _r = _kernel(spec.source, spec.target, spec.reuse)
            timed["source_timing"] = (source_kernel, spec.source)
        except Exception as exc:
            out["notes"].append(f"the source program could not be timed: {error_text(exc)}")
    # Before any PyTorch forward (the reference below), whose thread pool may still spin afterwards.
    with _cpus_alone(spec, out):
        out.update(_timed_together(timed, spec, fresh, digest, options))
    if "parent_timing" in out:
        out["speedup_vs_parent"] = timing.speedup(out["parent_timing"], out["timing"])
    if "source_timing" in out:
        out["speedup_vs_source"] = timing.speedup(out["source_timing"], out["timing"])
    # Re-check the binary that was just timed on the same fresh inputs.
    timed_outputs = kernel.run(fresh)
    expected = None
    if reference is not None:
        try:
            expected = reference.outputs(fresh)
        except Exception as exc:
            out["notes"].append(f"reference failed on the timing inputs: {error_text(exc)}")
    compared_with = reference.kind if expected is not None and reference is not None else "parent"
    if expected is None and parent_kernel is not None and spec.parent is not None:
        expected = _outputs(parent_kernel, spec.parent, spec.target, fresh, digest)
    if expected is not None:
        out["timed_output_ok"] = _timed_outputs_ok(spec, reference, compared_with, timed_outputs, expected,
                                                   fresh, out["notes"], digest)
        if not out["timed_output_ok"]:
            out["outcome"] = Outcome.FAIL.value
            out["notes"].append("the timed binary's output on the fresh inputs did not match the reference")
    time_eager = getattr(reference, "time_eager", None)
    if time_eager is not None:
        try:
            with _cpus_alone(spec, out):
                out["torch_timing"], what = time_eager(fresh, **options)
            out["speedup_vs_torch"] = timing.speedup(out["torch_timing"], out["timing"])
            out["notes"].append(f"PyTorch timing: {what}")
        except Exception as exc:
            out["notes"].append(f"PyTorch eager could not be timed: {error_text(exc)}")
