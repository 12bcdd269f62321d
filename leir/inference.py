"""The signature of a bare body: which tensors are inputs and outputs, with their dtypes and shapes.

The public data stores bodies without a header; a ``.leir`` file without a ``---`` line is such a bare
body. Its known tensors follow from the order of reads and writes (docs/leir.md §5):

* an **input** is a tensor read before any statement writes it (a statement's reads of its own target
  do not count: ``S=S+A`` is a reduction, not a read of S);
* an **output** is a written tensor in global scope that no other statement reads;
* every other tensor is an intermediate.

Dtypes come from the references; every shape is 1 + the largest index each dimension takes, the rule
intermediates already follow. What cannot be inferred (a dimension indexed only through gathers, a body
whose every written tensor is read again) is a ``LeirFormatError`` naming the tensor.
"""

from __future__ import annotations

from leir.ast import Body, Program, Signature, TensorDecl, tensor_refs
from leir.ast import statements as iter_statements
from leir.errors import LeirFormatError

__all__ = ["infer_signature"]


def _roles(body: Body) -> tuple[list[str], list[str]]:
    """(inputs in order of first read, outputs in order of first write)."""
    written: set[str] = set()
    inputs: list[str] = []
    readers: dict[str, set[tuple[int, ...]]] = {}
    writes: list[tuple[str, str]] = []
    for path, stmt, _ in iter_statements(body):
        target = stmt.target.name
        reads = [r for r in tensor_refs(stmt.value)]
        reads += [r for index in stmt.target.indices for r in tensor_refs(index)]
        for ref in reads:
            if ref.name == target:
                continue
            readers.setdefault(ref.name, set()).add(path)
            if ref.name not in written and ref.name not in inputs:
                inputs.append(ref.name)
        if target not in written:
            writes.append((target, stmt.target.scope))
        written.add(target)
    outputs = [name for name, scope in writes if scope == "g" and name not in readers and name not in inputs]
    return inputs, outputs


def infer_signature(body: Body) -> Signature:
    """The signature a bare body implies (module docstring); raises ``LeirFormatError`` when it cannot."""
    from leir.checker import check

    inputs, outputs = _roles(body)
    if not outputs:
        raise LeirFormatError(
            "cannot infer the outputs of this bare body: every tensor it writes is read again by another "
            "statement; add a signature header (input/output lines and ---)", line=1)
    info = check(Program(Signature(()), body))
    unknown = [d for d in info.errors if d.code == "unknown-shape"]
    if unknown:
        raise LeirFormatError(
            f"cannot infer a shape for this bare body: {unknown[0].message}; add a signature header",
            line=unknown[0].line)
    decls = []
    for role, names in (("input", inputs), ("output", outputs)):
        for name in names:
            tensor = info.tensors.get(name)
            if tensor is None:
                raise LeirFormatError(f"cannot infer tensor {name} of this bare body; add a signature header",
                                      line=1)
            decls.append(TensorDecl(name, role, tensor.dtype, tuple(tensor.shape)))
    return Signature(tuple(decls))
