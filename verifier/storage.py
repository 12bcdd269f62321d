"""Storage planning of the lowering: which tensors are zero- or init-filled, and where buffers live.

Decided from the checker's facts before any text is written (``verifier.emit_tir`` asks): a reduction
uses ``T.init`` only where that is exactly the implicit init (``init_exact``); an output or intermediate
is zero-filled unless its first reference writes all of it before anything reads it (``needs_zero``);
on the CPU a small on-chip intermediate private to one iteration of its block's leading loops becomes a
stack slot per iteration (``private_copy``); on cuda an on-chip tensor is allocated in the kernel of the
one top-level block that uses it (``owners``). The rules are those of ``verifier.lowering``'s docstring.
"""

from __future__ import annotations

from leir import ast as A
from leir.dtypes import tensor_nbytes
from leir.semantics import ProgramInfo, StmtInfo, StmtKind
from verifier.errors import LoweringError
from verifier.loop_mapping import stmt_refs
from verifier.targets import STACK_ALLOCA_BYTES

#: Every statement of a program with its path and enclosing loops, in execution order.
Statements = list[tuple[tuple[int, ...], A.Assign, tuple[A.Loop, ...]]]


def mentions(stmt: A.Assign, name: str) -> bool:
    """Whether the statement refers to tensor ``name`` anywhere (target, subscripts or value)."""
    return any(r.name == name for r in stmt_refs(stmt))


class StoragePlan:
    """The storage decisions of one lowering: fills, ``T.init`` and private copies."""

    def __init__(self, program: A.Program, info: ProgramInfo) -> None:
        self.program = program
        self.info = info
        self.stmt_order: Statements = list(A.statements(program.body))
        #: reduction path -> whether ``T.init`` is its exact init (else a whole-tensor init fill)
        self.use_init = {path: self.init_exact(path, stmt, loops)
                         for path, stmt, loops in self.stmt_order
                         if self.kind(path) is StmtKind.REDUCE}

    def kind(self, path: tuple[int, ...]) -> StmtKind:
        return self.sinfo(path).kind

    def sinfo(self, path: tuple[int, ...]) -> StmtInfo:
        try:
            return self.info.statements[path]
        except KeyError:
            raise LoweringError(f"checker gave no facts for statement {path}") from None

    def owners(self, name: str) -> list[int]:
        """The top-level blocks whose statements mention ``name``, in order."""
        return sorted({path[0] for path, stmt, _ in self.stmt_order if mentions(stmt, name)})

    def private_copy(self, name: str) -> tuple[int, int] | None:
        """Where an on-chip (``l``/``s``) intermediate can live as one small buffer per iteration.

        ``cache_read_write`` gives every iteration of the parallel loops around a staged region its own
        copy, as leading dimensions indexed by those loops. Allocated once for the whole program, such a
        buffer is memory LLVM cannot tell apart from the tensors the loop reads, so it loads and stores a
        register-tile accumulator on every step of the reduction (the GEMM of ``gemm_scale``: 12 stores
        per iteration). When the tensor belongs to one top-level block whose first ``k`` header loops
        index its first ``k`` dimensions with exactly their variables in every reference, each
        iteration of those loops owns its slice; allocated inside them without those dimensions it is a
        stack slot LLVM keeps in registers. Exact: every element an iteration reads it has written
        before (no zero fill, no init fill outside the block), and no other iteration touches its slice.
        Returns ``(block index, k)``, or None where it stays one buffer.
        """
        t = self.info.tensors[name]
        if t.scope not in ("l", "s") or t.role != "intermediate" or self.needs_zero(name):
            return None
        found = [(path, stmt) for path, stmt, _ in self.stmt_order if mentions(stmt, name)]
        owners = {path[0] for path, _ in found}
        if len(owners) != 1:
            return None
        owner = owners.pop()
        if any(stmt.target.name == name and self.kind(path) is StmtKind.REDUCE and not self.use_init[path]
               for path, stmt in found):
            return None  # its init fill runs over the whole tensor before the block
        refs = [ref for _, stmt in found for ref in stmt_refs(stmt) if ref.name == name]
        header = self.program.body.blocks[owner].loops
        k = 0
        while k < min(len(header), len(t.shape)) and all(
                isinstance(index := A.strip_parens(ref.indices[k]), A.Var) and index.name == header[k].var
                for ref in refs):
            k += 1
        if k == 0 or tensor_nbytes(t.dtype, t.shape[k:]) >= STACK_ALLOCA_BYTES:
            return None
        return owner, k

    def init_exact(self, path: tuple[int, ...], stmt: A.Assign, loops: tuple[A.Loop, ...]) -> bool:
        """True when ``T.init`` is exactly the implicit init (see ``verifier.lowering``): every element
        gets its init before anything can read it, as the whole-tensor init before the block would give."""
        sinfo = self.sinfo(path)
        if not sinfo.reduce_vars or not self.covering(stmt, loops):
            return False
        name = stmt.target.name
        for other_path, other, _ in self.stmt_order:
            if other_path == path:
                break
            if other_path[0] == path[0] and mentions(other, name):
                return False
        return self.written_before_read(path, stmt, loops)

    def written_before_read(self, path: tuple[int, ...], stmt: A.Assign, loops: tuple[A.Loop, ...]) -> bool:
        """True when no later read in the same top-level block can meet an element ``stmt`` (a covering
        write, the tensor's first reference) has not written yet in execution order.

        A read runs inside the loops it shares with the write; the write has already run for every
        element whose shared-loop subscripts are the current values, and for all of its own inner loops.
        So a read is safe when it indexes each dimension the write indexes by a *shared* loop variable
        with exactly that variable (``X_{i}`` after ``X_{i}=…``); ``X_{511-i}`` is not, and then the tensor
        is zero-filled (or init-filled) first — the semantics' "unwritten elements read 0".
        """
        name = stmt.target.name
        lhs = [A.strip_parens(i) for i in stmt.target.indices]
        later = False
        for other_path, other, other_loops in self.stmt_order:
            if other_path == path:
                later = True
                continue
            if not later or other_path[0] != path[0]:
                continue
            shared = 0
            while shared < min(len(loops), len(other_loops)) and loops[shared] is other_loops[shared]:
                shared += 1
            shared_vars = {lp.var for lp in loops[:shared]}
            reads = list(A.tensor_refs(other.value))
            for index in other.target.indices:
                reads.extend(A.tensor_refs(index))
            for ref in reads:
                if ref.name != name:
                    continue
                for mine, theirs in zip(lhs, ref.indices, strict=False):
                    theirs = A.strip_parens(theirs)
                    if isinstance(mine, A.Var) and mine.name in shared_vars and not (
                            isinstance(theirs, A.Var) and theirs.name == mine.name):
                        return False
        return True

    def covering(self, stmt: A.Assign, loops: tuple[A.Loop, ...]) -> bool:
        """Whether the statement's target subscript is distinct plain loop variables spanning the tensor."""
        shape = self.info.tensors[stmt.target.name].shape
        idx = [A.strip_parens(i) for i in stmt.target.indices]
        names = [i.name for i in idx if isinstance(i, A.Var)]
        if len(idx) != len(shape) or len(names) != len(idx):
            return False
        if len(set(names)) != len(names):
            return False
        extents = {lp.var: lp.extent for lp in loops}
        return all(extents.get(name) == n for name, n in zip(names, shape, strict=True))

    def needs_zero(self, name: str) -> bool:
        """Whether an output or intermediate is zero-filled at the start of ``main``."""
        for path, stmt, loops in self.stmt_order:
            if not mentions(stmt, name):
                continue
            if stmt.target.name != name:
                return True
            kind = self.kind(path)
            if kind is StmtKind.REDUCE:
                return False  # T.init (exact, see init_exact) or the whole-tensor init fill
            if kind is StmtKind.ASSIGN:
                reads_self = any(r.name == name for r in A.tensor_refs(stmt.value)) or any(
                    r.name == name for i in stmt.target.indices for r in A.tensor_refs(i))
                return reads_self or not self.covering(stmt, loops) or not self.written_before_read(
                    path, stmt, loops)
            return True
        return True  # an output no statement writes is all zeros
