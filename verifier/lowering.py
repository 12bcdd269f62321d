"""LEIR → TVM TIR: a checked program becomes one ``@T.prim_func(s_tir=True)`` named ``main``.

The entry point (``lower``, ``to_tvmscript``) over four modules, one job each: ``verifier.storage``
plans fills, ``T.init`` and where buffers live; ``verifier.loop_mapping`` decides what each loop runs as
(the function the tuner's cost model calls too); ``verifier.gpu_legality`` refuses what cuda cannot run;
``verifier.emit_tir`` writes the text.

The lowering writes TVMScript *text* and lets TVM parse it. Text is deterministic by construction (no
object identities, no dict-order surprises), readable when a build fails, and the module TVM parses back
prints (``mod.script()``) identically for the same program in any process.

Mapping (documented in ``docs/leir.md`` by the lead from this docstring):

* Parameters are the signature's tensors in signature order; intermediates are ``T.alloc_buffer``.
  Scopes: on cuda ``s`` → ``shared`` and ``l`` → ``local``; on the CPU every buffer is ``global`` (a large
  ``local`` array would land on the stack). On the CPU an ``s``/``l`` intermediate that one top-level
  block owns, whose first ``k`` dimensions every reference indexes with exactly the variables of the
  block's first ``k`` loops (``cache_read_write``'s private copies), and that needs no fill, is allocated
  inside those loops without those dimensions when the rest is under 1 KB: a stack slot per iteration,
  which LLVM keeps in registers (``verifier.storage.StoragePlan.private_copy``).
* One ``T.sblock`` per statement, inside exactly the loops around it; every enclosing loop variable is a
  block iterator (``v_<name>``). Reductions (checker kind REDUCE) mark their reduce loops ``R`` and put the
  implicit init in ``T.init()`` when that is exact: the LHS subscript is distinct plain loop variables and
  nothing earlier in the same top-level block touches the tensor (then TVM's "init when every reduce
  iterator is 0" is exactly "once per element, before its first update"). Otherwise the whole tensor is
  filled with the init value in its own nest right before the top-level block — the semantics' own
  definition.
* Zero fill: an output or intermediate is zero-filled at the start of ``main`` unless its first
  referencing statement is a plain write or a reduction that covers the whole tensor (LHS = distinct
  plain loop variables whose extents are the tensor's dimensions) and reads nothing else of it, and no
  later read in the same top-level block can meet an element before it is written
  (``StoragePlan.written_before_read``); a reduction that cannot use ``T.init`` for the same reason is
  init-filled.
* Arithmetic is evaluated in the LHS dtype (every tensor operand, literal and loop variable is converted
  by the language's rules); comparisons run in the promoted type of their two operands; ``**`` with
  literal exponent 2 on a leaf is ``x*x``, otherwise ``T.pow``. Edge values follow docs/leir.md §6 via
  ``verifier.edge_ops``: NaN-propagating ``max``/``min``, trap-free integer ``/ // %`` (0 for a zero
  divisor), NumPy's float ``//`` and ``%``, saturating float → int, IEEE ``!=``, wrapping i32/u32 and
  unsigned subtraction (``a + ~b + 1``), all safe from TVM's constant folding.
* Bindings (``verifier.emit_tir.Writer.let``): an operand a rule mentions twice is evaluated once —
  ``T.bind`` at the top of the sblock, or a one-element buffer when the value mentions another binding (TVM's
  simplifier substitutes ``T.bind`` values: a chain of them grew 2^depth inside TVM), or, under a
  vectorised loop, a buffer with one element per lane allocated right before the loop (``global`` on the
  CPU, a stack slot; ``local`` on cuda: see ``Writer.binding_scope``). TVM's build time is then linear
  in the nesting depth (``bench/build_depth.py``).
* The text has only the parentheses Python needs (``a + b + c``): a sum of hundreds of terms stays
  within Python's 200 nested brackets. Deep programs are the checker's ``too-deep`` (``leir.limits``).
* Guarded reads: any tensor index whose range over the loops can leave the tensor (``D_{a-1}`` under
  ``a-1<0``, padding reads) is clamped into range, so evaluating both sides of ``T.if_then_else`` never
  touches memory outside a buffer; the discarded value does not matter. Inside a branch every index the
  interval analysis cannot bound (a gather, a product of variables) is clamped too: bindings run
  whether or not their branch is taken.
* Loops: ``L`` serial, ``P`` ``T.parallel``, ``V`` ``T.vectorized``, ``U`` ``T.unroll``. Kinds never change
  the result (the language's rule), so a ``P``/``V``/``B`` loop along which a statement inside depends on
  itself — a *race axis*: an enclosing variable absent from the LHS subscript (reductions, accumulations,
  last-writer assignments) or the axis a recurrence carries, or one along which two statements pass
  values through a tensor (``leir.analysis.loop_race_reason``, the rule the strategies use) — is emitted
  serial. Only one vectorised level per nest (TVM cannot build nested ``T.vectorized``); LLVM cannot nest
  parallel loops, so a ``P`` inside another parallel loop is serial. Every loop whose kind is not
  honoured this way is *reported* (``Lowered.unhonoured_loops``: loop, block path, reason), and the
  verification record carries the list, so no step claims an effect the built kernel does not have.
* ``B`` on the CPU (deterministic): block axes (``b<x|y|z>…``) become ``T.parallel`` unless they are race
  axes; thread axes (``t<x|y|z>…``, and any other name) stay serial.
* ``B`` on cuda is ``T.thread_binding``: ``b<x|y|z>…`` binds ``blockIdx``, ``t<x|y|z>…`` binds ``threadIdx``,
  any other name binds ``threadIdx.x`` (a second binding of the same axis inside one is a
  ``LoweringError``). Each top-level block is its own launch; one without any ``B`` loop runs in a unit
  launch (``u_bx``/``u_tx``: one block, one thread). Loops outside the bindings run on the host and are
  serial (TVM cannot unroll or vectorise around a launch); ``P`` is serial on cuda; ``V`` is vectorised
  only for widths CUDA has vector types for (2 or 4 lanes of 32-bit, 2 of 64-bit), serial otherwise.
  ``shared``/``local`` intermediates are allocated inside their kernel (shared: under the leading
  ``blockIdx`` loops; local: under all leading bound loops); one used by two top-level blocks, or one that
  would need a whole-tensor fill, is a ``LoweringError``. A reduction over a ``threadIdx`` loop uses TVM's
  cross-thread reduction (combiners ``+ * max min``, reduce loops innermost; ``max``/``min`` start from the
  dtype's finite extreme, TVM's reducer identity, instead of ``∓inf``); any other dependence across a
  bound loop (``blockIdx`` reductions, accumulations) would race and is a ``LoweringError``. GPU limits
  (threads per block ≤ 1024, x/y ≤ 1024 and z ≤ 64 threads, grid y/z ≤ 65535, static shared memory ≤ 48 KB)
  are checked before building by ``leir.gpu_limits.gpu_limit_violations`` (the function ``loop_binding``
  checks too) and raise ``GpuLimitError`` naming the loop or tensor.
* Indices are int32 (every corpus tensor has < 2^31 elements; a larger tensor is a ``LoweringError``).
  ``bool`` statements compute in i64 and store ``value != 0``; a read annotated with another dtype than
  the tensor's converts the stored value to the annotation first (as the interpreter does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from leir import ast as A
from leir.limits import ensure_recursion_limit
from leir.semantics import ProgramInfo
from verifier import targets as tg
from verifier import tvm_adapter as tvm_a
from verifier.emit_tir import Writer
from verifier.errors import BuildError, GpuLimitError, LoweringError
from verifier.loop_mapping import UnhonouredLoop
from verifier.targets import STACK_ALLOCA_BYTES

#: What callers import from here (the errors, the reported loops and the stack limit are re-exported).
__all__ = ["STACK_ALLOCA_BYTES", "BuildError", "GpuLimitError", "Lowered", "LoweringError", "Param",
           "UnhonouredLoop", "lower", "to_tvmscript"]


@dataclass(frozen=True)
class Param:
    """One PrimFunc parameter: a known tensor of the signature, in signature order."""

    name: str
    role: str
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Lowered:
    """A lowered program: the IRModule handle, its printed TIR, and what built it."""

    mod: Any
    #: ``mod.script()``: TVM's own printing of the module (the TIR that token counts compare).
    script: str
    #: The TVMScript text this module generated and TVM parsed.
    source: str
    target: dict[str, Any]
    params: tuple[Param, ...]
    program: A.Program
    info: ProgramInfo
    versions: dict[str, str] = field(default_factory=dict)
    #: Every ``P``/``V``/``B`` loop the kernel does not run as its kind says (and why): the verification
    #: record carries it, so no step claims an effect the built kernel does not have.
    unhonoured_loops: tuple[UnhonouredLoop, ...] = ()


def lower(program: A.Program, target: str | dict[str, Any] = "llvm", *,
          info: ProgramInfo | None = None) -> Lowered:
    """Check (unless ``info`` is given), lower and parse one program for ``target``."""
    ensure_recursion_limit()
    if info is None:
        info = _check(program)
    spec = tg.resolve(target)
    writer = Writer(program, info, spec)
    text = writer.run()
    try:
        mod = tvm_a.parse_script(text)
    except tvm_a.AdapterError as exc:
        raise LoweringError(f"TVM rejected the generated TIR: {exc}") from exc
    params = tuple(Param(d.name, d.role, info.tensors[d.name].dtype, tuple(d.shape))
                   for d in program.signature.tensors)
    return Lowered(mod=mod, script=tvm_a.script(mod), source=text, target=spec, params=params,
                   program=program, info=info, versions=dict(tvm_a.versions()),
                   unhonoured_loops=tuple(writer.unhonoured))


def to_tvmscript(program: A.Program, target: str | dict[str, Any] = "llvm", *,
                 info: ProgramInfo | None = None) -> str:
    """The TVMScript text of the program (no TVM call; checks GPU limits for cuda)."""
    ensure_recursion_limit()
    if info is None:
        info = _check(program)
    return Writer(program, info, tg.resolve(target)).run()


def _check(program: A.Program) -> ProgramInfo:
    from leir.checker import require_valid

    return require_valid(program)
