"""``steptp translate FILE.py``: a KernelBench-style PyTorch file → a checked ``.leir`` program.

Writes ``OUT.leir`` (``leir.program.dump_program``) and, when the program has parameters or constants,
their values in ``OUT.npz`` beside it (keys = LEIR tensor names), and the domain of each input that
``get_inputs()`` draws from (``frontend.domains``) in ``OUT.inputs.json``; ``steptp verify`` picks both up.
Exit codes: 0 written; 1 the model cannot be translated (unsupported operator, check failure);
2 bad arguments or an unreadable file / unknown ``--set`` constant.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from steptp_cli.main import EXIT_INVALID, EXIT_OK, UsageError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "translate",
        help="translate a PyTorch module file (KernelBench convention) to LEIR",
        description="Trace Model from FILE.py with torch.fx on get_inputs(), emit a checked LEIR program.",
    )
    parser.add_argument("file", metavar="FILE.py")
    parser.add_argument("--dtype", choices=("f32", "f64", "f16", "bf16"), default="f32",
                        help="floating-point dtype of the model and inputs (default f32)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="sets",
                        help="override a module-level constant before the file runs (repeatable)")
    parser.add_argument("--input-shape", action="append", default=[], metavar="INDEX=SHAPE",
                        dest="input_shapes",
                        help="resize input INDEX of get_inputs() (sizes written there, e.g. 0=2,3,32,32; "
                             "repeatable)")
    parser.add_argument("--target-neutral", action="store_true",
                        help="plain L loops only (default: first output dimension bound to B^{n}_{tx=0})")
    parser.add_argument("--keep-dead-blocks", action="store_true",
                        help="keep blocks whose results the model never uses (a dead_code_elimination "
                             "source); by default they are dropped")
    parser.add_argument("-o", "--output", metavar="OUT.leir",
                        help="write the program here (and OUT.npz for parameters); default stdout")
    parser.set_defaults(handler=run_translate)


def run_translate(args: argparse.Namespace) -> int:
    from frontend import SourceError, parse_input_shape, parse_set, translate_file
    from frontend.values import save_npz
    from leir.errors import LeirError
    from leir.program import dump_program
    from steptp_cli.files import read_text
    from steptp_cli.verifier_commands import domains_path

    path = Path(args.file)
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    read_text(str(path))  # unreadable or not UTF-8: the same usage error as every other command
    try:
        sets = dict(parse_set(text) for text in args.sets)
        shapes = dict(parse_input_shape(text) for text in args.input_shapes)
        translation = translate_file(path, sets=sets, dtype=args.dtype, target_neutral=args.target_neutral,
                                     keep_dead_blocks=args.keep_dead_blocks, input_shapes=shapes)
    except SourceError as exc:
        raise UsageError(str(exc)) from exc
    except LeirError as exc:
        print(f"steptp translate: {exc}", file=sys.stderr)
        return EXIT_INVALID
    for note in translation.write_order:  # the source's own result can change from run to run
        print(f"steptp translate: warning: {note}", file=sys.stderr)
    options = [*args.sets, *(f"input {s}" for s in args.input_shapes)]
    comment = f"translated from {path.name}" + (f" with {' '.join(options)}" if options else "")
    text = dump_program(translation.program, comment=comment)
    if args.output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        if translation.values:
            print("steptp translate: parameters not written (use -o OUT.leir to get OUT.npz)",
                  file=sys.stderr)
        return EXIT_OK
    out = Path(args.output)
    try:
        out.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        npz = out.with_suffix(".npz")
        if translation.values:
            save_npz(npz, translation.values)
        elif npz.exists():
            npz.unlink()  # a stale file from an earlier translation would feed wrong values
        domains = domains_path(out)
        if translation.input_domains:
            domains.write_text(json.dumps(translation.input_domains, indent=1, sort_keys=True) + "\n",
                               encoding="utf-8")
        elif domains.exists():
            domains.unlink()  # stale domains would draw inputs from another program's distribution
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc}") from exc
    beside = ((npz, translation.values), (domains, translation.input_domains))
    written = [str(path) for path, kept in beside if kept]
    print(f"wrote {out}" + "".join(f" and {p}" for p in written), file=sys.stderr)
    return EXIT_OK
