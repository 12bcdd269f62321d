"""``steptp verify``: check, build, run and compare one LEIR state (optionally against its parent), time it.

Exit status: 0 when the outcome is ``pass``, ``equal_pass`` or ``build`` (compiled for a target that cannot
run here); 1 for every other outcome (a failed check, build, run or comparison, a crash, a timeout, a
memory-limit hit — and ``execute``, which means nothing was compared); 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError

CLI_SUCCESS = frozenset({"pass", "equal_pass", "build"})


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "verify", help="verify a LEIR program (sandboxed build + run + compare, optional timing)",
        description="Verify a .leir program: check it, build it with TVM, run it in a sandboxed worker on "
                    "seeded inputs and compare with a reference (PyTorch source, the LEIR interpreter, or "
                    "the parent state). Params are read from FILE.npz beside FILE when present.")
    parser.add_argument("file", metavar="FILE", help="the .leir program to verify")
    parser.add_argument("--against", metavar="PARENT", help="the parent state (.leir): compare bitwise "
                        "for equal_pass, and time it for the speedup")
    parser.add_argument("--first", metavar="SOURCE_STATE", help="the trajectory's first state (.leir), "
                        "timed for the speedup vs the source program")
    parser.add_argument("--target", default="llvm", help="llvm (default) or cuda[:sm_XX]")
    parser.add_argument("--time", action="store_true", help="time the kernel (and parent, source, PyTorch)")
    parser.add_argument("--seed", type=int, default=0, help="input seed (default 0)")
    parser.add_argument("--special-values", action="store_true",
                        help="mix edge values into the inputs: zeros (integer divisors too), negatives, "
                             "large magnitudes, a few NaN/+inf/-inf, out-of-range values where floats "
                             "are converted to integers (docs/leir.md §6)")
    parser.add_argument("--large-offset", action="store_true",
                        help="draw every float input as offset + N(0, 1) (offset 1000 in f32/f64, 64 in "
                             "bf16, 32 in f16): catches rewrites that cancel catastrophically; with "
                             "--against, the program must also be about as accurate as its parent there")
    parser.add_argument("--domains", metavar="FILE.json",
                        help="input domains keyed by LEIR name (default: FILE.inputs.json beside FILE, which "
                             "translate writes; else the --source's own get_inputs())")
    parser.add_argument("--source", metavar="X.py", help="the PyTorch source program: the reference")
    parser.add_argument("--set", metavar="N=V", action="append", default=[],
                        help="override a size of the source program (repeatable)")
    parser.add_argument("--input-shape", metavar="INDEX=SHAPE", action="append", default=[],
                        dest="input_shapes",
                        help="resize input INDEX of the source's get_inputs() (repeatable)")
    parser.add_argument("--params", metavar="FILE.npz", help="parameter/constant values keyed by LEIR name")
    parser.add_argument("--reference", choices=("auto", "interpreter", "parent", "none"), default="auto",
                        help="what to compare with when no --source is given (default: auto)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    parser.add_argument("--timeout", type=float, default=None, help="wall-time limit in seconds")
    parser.add_argument("--memory-mb", type=int, default=None, help="memory limit of the job in MiB")
    parser.add_argument("--max-bound-iterations", type=int, default=None, metavar="N",
                        help="largest program (statement executions) whose rounding-error bound is "
                             "evaluated for the scaled tolerance; above it the fixed per-dtype tolerance "
                             "is used (default 32,000,000; 0 forces the fixed rule). About 0.1-0.75 us and "
                             "up to 24 bytes per element of each tensor per execution: give --memory-mb "
                             "and --timeout room when raising it")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(handler=run_verify)


def _read_program(path_text: str):
    from leir.errors import LeirError
    from steptp_cli.files import load

    try:
        return load(path_text).program
    except LeirError as exc:
        raise _InvalidInput(f"{path_text}: {exc}") from None


class _InvalidInput(Exception):
    """The file was read but is not a valid program (exit 1, not 2)."""


def _parse_input_shapes(items: list[str]) -> dict[int, tuple[int, ...]]:
    """``--input-shape`` values read exactly as ``translate`` reads them."""
    from frontend.loading import SourceError, parse_input_shape

    try:
        return dict(parse_input_shape(item) for item in items)
    except SourceError as exc:
        raise UsageError(str(exc)) from exc


def _parse_sets(items: list[str]) -> dict[str, object]:
    """``--set`` values read exactly as ``translate`` reads them (Python literals: ints, floats, tuples...).

    A tuple such as ``input_shape=(16,)`` must reach the source as a tuple, or the reference cannot
    rebuild the inputs the program was translated for.
    """
    from frontend.errors import FrontendError
    from frontend.loading import parse_set

    try:
        return dict(parse_set(item) for item in items)
    except FrontendError as exc:
        raise UsageError(str(exc)) from None


def _load_params(path: Path) -> dict:
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read params {path}: {exc}") from None


def domains_path(leir_path: Path) -> Path:
    """Where ``translate`` writes the input domains of ``OUT.leir``: ``OUT.inputs.json`` beside it."""
    return leir_path.with_suffix(".inputs.json")


def _load_domains(path: Path) -> dict:
    from verifier.inputs import domains_from_json

    try:
        return domains_from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        raise UsageError(f"cannot read input domains {path}: {exc}") from None


def source_dtype(program) -> str:
    """The float dtype the source model is loaded in: the first float tensor, inputs first.

    Not simply the first output's dtype: an argmax or a comparison outputs i64/bool, and loading the
    model in an integer dtype fails, which left such programs unverified ("execute"); and a bf16 model
    that upcasts (fp8 scales, sampling probabilities in f32) outputs f32 while ``translate --dtype``
    loaded its float inputs in bf16.
    """
    from frontend.loading import DTYPES  # the dtypes ``translate --dtype`` can load a model in

    for decl in program.signature.by_role("input") + program.signature.by_role("output", "param", "const"):
        if decl.dtype in DTYPES:
            return decl.dtype
    return "f32"


def run_verify(args: argparse.Namespace) -> int:
    from verifier.reference import BOUND_MAX_ITERATIONS, InterpreterReference, TorchSourceReference
    from verifier.verify import verify

    try:
        program = _read_program(args.file)
        parent = _read_program(args.against) if args.against else None
        first = _read_program(args.first) if args.first else None
    except _InvalidInput as exc:
        print(f"steptp verify: {exc}", file=sys.stderr)
        return EXIT_INVALID
    params = {}
    beside = Path(args.file).with_suffix(".npz")
    if args.params:
        params = _load_params(Path(args.params))
    elif beside.exists():
        params = _load_params(beside)
    domains = {}
    if args.domains:
        domains = _load_domains(Path(args.domains))
    elif domains_path(Path(args.file)).exists():
        domains = _load_domains(domains_path(Path(args.file)))
    if (args.set or args.input_shapes) and not args.source:
        raise UsageError("--set and --input-shape need --source")
    reference: object
    if args.source:
        if not Path(args.source).is_file():
            raise UsageError(f"cannot read {args.source}")
        reference = TorchSourceReference(args.source, _parse_sets(args.set), source_dtype(program),
                                         _parse_input_shapes(args.input_shapes))
    elif args.reference == "interpreter":
        reference = InterpreterReference(first or parent or program)
    elif args.reference in ("parent", "none"):
        reference = args.reference
    else:
        reference = None
    try:
        from verifier.targets import resolve

        resolve(args.target)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    result = verify(program, parent=parent, source=first, target=args.target, seed=args.seed,
                    special_values=args.special_values, time=args.time, reference=reference, params=params,
                    large_offset=args.large_offset, domains=domains,
                    cache=not args.no_cache, timeout=args.timeout, memory_limit_mb=args.memory_mb,
                    max_bound_iterations=(BOUND_MAX_ITERATIONS if args.max_bound_iterations is None
                                          else args.max_bound_iterations))
    if args.json:
        print(json.dumps(result.to_json(), indent=2, sort_keys=True))
    else:
        print(result.summary())
    return EXIT_OK if result.outcome.value in CLI_SUCCESS else EXIT_INVALID
