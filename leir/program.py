"""Whole programs on disk and on the wire: the ``.leir`` text format, the JSON form, the content hash.

A ``.leir`` file is a short signature header, a ``---`` line, then the body (canonical or pretty)::

    # softmax over the last axis
    input  A: f32[16, 1024]
    output C: f32[16, 1024]
    ---
    B^{16}_{tx=0}L^{1024}_{a=0}[ ... ];

The JSON form uses the same keys as the public reference data (``tensors`` and ``leir``), so corpus
rows load directly. The content hash covers the signature and the canonical body, nothing else: the
same program always hashes the same, however it was spelled.
"""

from __future__ import annotations

import copyreg
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from leir.ast import DTYPES, ROLES, UNSUPPORTED_DTYPES, Pos, Program, Signature, TensorDecl, tensor_refs
from leir.ast import statements as iter_statements
from leir.errors import LeirFormatError
from leir.limits import MAX_EXTENT, tree_depth
from leir.parser import parse_body
from leir.printer import canonical, pretty

SEPARATOR = "---"
_DECL_RE = re.compile(
    r"^\s*(?P<role>[a-z]+)\s+(?P<name>[A-Z][a-z]*)\s*:\s*(?P<dtype>[a-z0-9]+)\s*\[(?P<shape>[^\]]*)\]\s*$"
)
_KNOWN_DTYPES = frozenset(DTYPES) | frozenset(UNSUPPORTED_DTYPES)
#: Longer dimensions are refused as they are read (the checker refuses the others above MAX_EXTENT).
_DIMENSION_DIGITS = 40


def _parse_decl(line: str, lineno: int) -> TensorDecl:
    match = _DECL_RE.match(line)
    if match is None:
        raise LeirFormatError(
            f"expected a tensor declaration like 'input A: f32[16, 64]', got {line.strip()!r}", line=lineno
        )
    role, dtype = match["role"], match["dtype"]
    if role not in ROLES:
        raise LeirFormatError(f"unknown role {role!r} (known: {', '.join(ROLES)})", line=lineno)
    if dtype not in _KNOWN_DTYPES:
        raise LeirFormatError(f"unknown dtype {dtype!r} (known: {', '.join(DTYPES)})", line=lineno)
    shape_text = match["shape"].strip()
    parts = [part.strip() for part in shape_text.split(",")] if shape_text else []
    for index, part in enumerate(parts):
        if part.isdigit() and len(part) > _DIMENSION_DIGITS:
            raise LeirFormatError(f"dimension {index} of {match['name']} has {len(part):,} digits "
                                  f"({part[:6]}…); a dimension may be at most {MAX_EXTENT:,}", line=lineno)
    try:
        shape = tuple(int(part) for part in parts)
    except ValueError:
        quoted = shape_text if len(shape_text) <= 60 else shape_text[:60] + "…"
        raise LeirFormatError(f"shape must be a list of integers, got [{quoted}]", line=lineno) from None
    if any(extent <= 0 for extent in shape):
        raise LeirFormatError(f"shape extents must be positive, got [{shape_text}]", line=lineno)
    column = match.start("name") + 1
    pos = Pos(lineno, column, lineno, column + len(match["name"]), 0, 0)
    return TensorDecl(match["name"], role, dtype, shape, pos=pos)


def load_program(text: str) -> Program:
    """Parse a ``.leir`` document; body line numbers in errors are those of the whole file.

    A document without a ``---`` line whose first line is not a declaration is a *bare body* (the
    public data's form): its signature is inferred (``leir.inference``); ``is_bare`` tells callers so
    they can say what was inferred.
    """
    if is_bare(text):
        return _load_bare(text)
    lines = text.split("\n")
    decls: list[TensorDecl] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped == SEPARATOR:
            body_text = "\n".join(lines[index + 1 :])
            body = parse_body(body_text, line_offset=index + 1)
            return Program(Signature(_unique(decls)), body)
        if not stripped or stripped.startswith("#"):
            continue
        decls.append(_parse_decl(line, index + 1))
    if not decls:
        raise LeirFormatError("the file is empty: expected a signature header, '---' and a body, or a bare "
                              "body", line=1)
    raise LeirFormatError(f"missing the '{SEPARATOR}' line between the signature and the body",
                          line=len(lines) if lines[-1].strip() else max(len(lines) - 1, 1))


def is_bare(text: str) -> bool:
    """Whether ``text`` is a bare body (no ``---`` line, no declaration first): its signature is inferred."""
    lines = text.split("\n")
    if any(line.strip() == SEPARATOR for line in lines):
        return False
    for line in lines:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return _DECL_RE.match(line) is None
    return False


def _load_bare(text: str) -> Program:
    from leir.inference import infer_signature

    body = parse_body(text)
    return Program(infer_signature(body), body)


def _unique(decls: list[TensorDecl]) -> tuple[TensorDecl, ...]:
    seen: dict[str, TensorDecl] = {}
    for decl in decls:
        if decl.name in seen:
            first = seen[decl.name].pos
            where = f" (first on line {first.line})" if first is not None else ""
            raise LeirFormatError(f"tensor {decl.name} is declared twice{where}",
                                  line=decl.pos.line if decl.pos is not None else None)
        seen[decl.name] = decl
    return tuple(decls)


def signature_text(signature: Signature) -> str:
    width = max((len(d.role) for d in signature.tensors), default=0)
    return "".join(
        f"{d.role.ljust(width)} {d.name}: {d.dtype}[{', '.join(str(n) for n in d.shape)}]\n"
        for d in signature.tensors
    )


def dump_program(program: Program, *, pretty_body: bool = True, comment: str | None = None) -> str:
    """The ``.leir`` text of a program (pretty body by default; canonical on one line otherwise)."""
    header = "".join(f"# {line}\n" for line in comment.splitlines()) if comment else ""
    body = pretty(program.body) if pretty_body else canonical(program.body) + "\n"
    return header + signature_text(program.signature) + SEPARATOR + "\n" + body


def program_to_json(program: Program) -> dict[str, Any]:
    """The JSON form: the public data's keys, ``tensors`` in signature order and the canonical ``leir``."""
    return {
        "tensors": [
            {"name": d.name, "role": d.role, "dtype": d.dtype, "shape": list(d.shape)}
            for d in program.signature.tensors
        ],
        "leir": canonical(program.body),
    }


def program_from_json(data: Mapping[str, Any]) -> Program:
    """Build a program from the JSON form.

    A missing tensor dtype (the public f32 rows leave it out) is taken from the body's references; a
    tensor the body never reads (a few public rows list unused constants) gets the body's most common
    floating-point dtype.
    """
    try:
        body = parse_body(data["leir"])
        raw_tensors = data["tensors"]
    except KeyError as exc:
        raise LeirFormatError(f"JSON program needs the key {exc.args[0]!r}") from None
    body_dtypes: dict[str, str] = {}
    for _, stmt, _ in iter_statements(body):
        for ref in (stmt.target, *tensor_refs(stmt.value)):
            body_dtypes.setdefault(ref.name, ref.dtype)
    decls = []
    for raw in raw_tensors:
        name = raw.get("name")
        dtype = raw.get("dtype") or body_dtypes.get(name) or _dominant_float(body_dtypes)
        role = raw.get("role")
        if role not in ROLES:
            raise LeirFormatError(f"tensor {name} has unknown role {role!r}")
        decls.append(TensorDecl(name, role, dtype, tuple(int(n) for n in raw.get("shape", ()))))
    return Program(Signature(_unique(decls)), body)


def _dominant_float(dtypes: Mapping[str, str]) -> str:
    floats = [d for d in dtypes.values() if d in ("f16", "bf16", "f32", "f64")]
    return max(sorted(set(floats)), key=floats.count) if floats else "f32"


def program_hash(program: Program) -> str:
    """Stable content hash (SHA-256 hex) of the signature and the canonical body."""
    return json_program_hash(program_to_json(program))


def json_program_hash(data: Mapping[str, Any]) -> str:
    """``program_hash`` of a program already in its JSON form (saves printing the body twice)."""
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()


# ------------------------------------------------------------------------------------------- pickling

#: Expression depth up to which a program pickles as a tree (pickle's own recursion stays well inside).
_PICKLE_DEPTH = 100


def _reduce_program(program: Program) -> tuple[Any, tuple[Any, ...]]:
    """Pickle deep bodies as their canonical text, which the receiver parses back.

    Pickling walks a tree recursively and fails on long operator chains that every other layer
    handles (a sum of 400 terms is 400 levels deep), so a program that deep crosses process
    boundaries (the verifier's sandbox) as flat text instead; shallow ones pickle as they are.
    Registered with ``copyreg`` (``leir/__init__.py`` imports this module, so it is in force wherever a
    program exists) rather than as ``Program.__reduce__``: the AST must not import the printer and the
    parser that are built on it.
    """
    depth = max((tree_depth(stmt.value) for _, stmt, _ in iter_statements(program.body)), default=0)
    if depth <= _PICKLE_DEPTH:
        return (Program, (program.signature, program.body))
    return (_program_from_text, (program.signature, canonical(program.body)))


def _program_from_text(signature: Signature, body_text: str) -> Program:
    return Program(signature, parse_body(body_text))


copyreg.pickle(Program, _reduce_program)
