"""Pattern matching and recurrence builders the streaming (online-softmax) strategies #41–#44 share.

The two-pass softmax statistics are two adjacent top-level blocks over the same iterations,

    ``H[M_{s}=max(M_{s},X);]``  then  ``H[S_{s}=S_{s}+exp(X-M_{s});]``

where ``s`` are the header's other loop variables and ``X`` is any expression over the header (it reads
neither ``M`` nor ``S``). They are found structurally — on the syntax tree and the checker's reading of
each statement (kind, reduce axes, combiner) — so names, dtypes, the position of the streamed axis and
anything around the blocks do not matter. The online form replaces both by one block of prefix
recurrences along the streamed axis ``k`` (``docs/math_streaming.md`` derives them):

    ``M_{s,k} = max(if_then_else(k-1<0,-inf,M_{s,k-1}),X)``
    ``S_{s,k} = if_then_else(M_{s,k}==-inf,0,if_then_else(k-1<0,0,S_{s,k-1}*exp(M_{s,k-1}-M_{s,k}))+exp(X-M_{s,k}))``

The ``M==-inf`` guard keeps a row whose first elements are ``-inf`` (masked scores) exact: without it the
rescale factor ``exp(-inf-(-inf))`` is NaN where the two-pass form adds ``exp(-inf-M)=0``.
Every later read of ``M``/``S`` reads the last element ``k=K-1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from leir.analysis import fresh_loop_vars, program_info, reads, writes
from leir.ast import (
    Assign,
    BinOp,
    Block,
    Body,
    Call,
    Compare,
    Expr,
    IfThenElse,
    Inf,
    Loop,
    Neg,
    Num,
    Program,
    TensorRef,
    Var,
    strip_parens,
    tensor_refs,
)
from leir.rewrite import Node, map_item_exprs, replace_refs, substitute_loops, substitute_vars, transform
from leir.semantics import StmtKind
from strategies.graph.blocks import rename_to, same_header

NEG_INF: Expr = Neg(Inf())
ZERO: Expr = Num("0")


# ------------------------------------------------------------------------------------------ matches


@dataclass(frozen=True, slots=True)
class Stats:
    """Softmax statistics over one streamed axis: a running max ``M`` and a sum of exponentials ``S``.

    ``first``/``last`` are the top-level blocks holding them (one block for the online form). ``x`` is
    the streamed value in ``loops``' variables, ``k`` the streamed loop variable, ``extent`` its extent,
    ``spatial`` the subscript ``M`` and ``S`` had before streaming (bare loop variables).
    """

    first: int
    last: int
    loops: tuple[Loop, ...]
    k: str
    extent: int
    m: str
    s: str
    dtype: str
    x: Expr
    spatial: tuple[str, ...]
    online: bool

    @property
    def after(self) -> int:
        """Index of the first top-level block after the statistics."""
        return self.last + 1


def _bare_vars(ref: TensorRef) -> tuple[str, ...] | None:
    names = tuple(i.name for i in ref.indices if isinstance(i, Var))
    return names if len(names) == len(ref.indices) and len(set(names)) == len(names) else None


def _single(block: Block) -> Assign | None:
    return block.items[0] if len(block.items) == 1 and isinstance(block.items[0], Assign) else None


def _mentions(node: Node, names: set[str]) -> bool:
    return any(r.name in names for r in tensor_refs(node))


def _reduce_axis(program: Program, index: int, stmt: Assign, block: Block, combiner: str) -> str | None:
    """The one reduce axis of ``block``'s single statement if it is a ``combiner`` reduction."""
    info = program_info(program).statements.get((index, 0))
    if info is None or info.kind is not StmtKind.REDUCE or info.combiner != combiner:
        return None
    axes = [v for v in info.reduce_vars if next(lp.extent for lp in block.loops if lp.var == v) > 1]
    if len(axes) != 1 or len(info.reduce_vars) != 1:
        return None
    return axes[0]


def _exp_term(value: Expr, acc: TensorRef) -> Expr | None:
    """``E`` when ``value`` is ``acc+exp(E)`` or ``exp(E)+acc``."""
    if not isinstance(value, BinOp) or value.op != "+":
        return None
    for mine, other in ((value.left, value.right), (value.right, value.left)):
        if mine == acc and isinstance(other, Call) and other.func == "exp":
            return other.args[0]
    return None


def two_pass_stats(program: Program) -> list[Stats]:
    """Every adjacent (max, sum-of-exp) block pair of the program, in block order."""
    found = []
    blocks = program.body.blocks
    for i in range(len(blocks) - 1):
        first, second = blocks[i], blocks[i + 1]
        mstmt, sstmt = _single(first), _single(second)
        if mstmt is None or sstmt is None or not same_header(first, second):
            continue
        m_ref, s_ref = mstmt.target, sstmt.target
        spatial = _bare_vars(m_ref)
        if spatial is None or m_ref.dtype != s_ref.dtype or m_ref.dtype not in {"f16", "bf16", "f32", "f64"}:
            continue
        k = _reduce_axis(program, i, mstmt, first, "max")
        if k is None or not (isinstance(mstmt.value, Call) and mstmt.value.func == "max"):
            continue
        left, right = mstmt.value.args
        x = right if left == m_ref else left if right == m_ref else None
        if x is None or _mentions(x, {m_ref.name, s_ref.name}):
            continue
        renamed = rename_to(first, second).items[0]
        assert isinstance(renamed, Assign)
        sstmt = renamed
        names = {b.var: a.var for a, b in zip(first.loops, second.loops, strict=True)}
        k2 = _reduce_axis(program, i + 1, sstmt, second, "+")
        if k2 is None or names[k2] != k or _bare_vars(sstmt.target) != spatial:
            continue
        arg = _exp_term(sstmt.value, sstmt.target)
        if arg != BinOp("-", x, m_ref):
            continue
        if not _private(program, i, i + 1, m_ref.name, s_ref.name):
            continue
        extent = next(lp.extent for lp in first.loops if lp.var == k)
        found.append(Stats(i, i + 1, first.loops, k, extent, m_ref.name, s_ref.name, m_ref.dtype, x,
                           spatial, online=False))
    return found


def _private(program: Program, first: int, last: int, *names: str) -> bool:
    """Whether the tensors are intermediates written only by blocks ``first..last``."""
    for name in names:
        if program.signature.get(name) is not None:
            return False
        for j, block in enumerate(program.body.blocks):
            if name in writes(block) and not first <= j <= last:
                return False
            if j < first and name in reads(block):
                return False
    return True


def _prev(ref: TensorRef, k: str, init: Expr) -> Expr:
    """``if_then_else(k-1<0,init,R_{...,k-1})``: the previous element of a prefix tensor, guarded."""
    shifted = TensorRef(ref.name, ref.dtype, ref.scope, ref.indices[:-1] + (BinOp("-", Var(k), Num("1")),))
    return IfThenElse(first_step(k), init, shifted)


def first_step(k: str) -> Compare:
    return Compare((BinOp("-", Var(k), Num("1")), ZERO), ("<",))


def shifted(ref: TensorRef, k: str) -> TensorRef:
    return TensorRef(ref.name, ref.dtype, ref.scope, ref.indices[:-1] + (BinOp("-", Var(k), Num("1")),))


def prefix_ref(name: str, dtype: str, indices: tuple[Expr, ...], k: str) -> TensorRef:
    return TensorRef(name, dtype, "g", indices + (Var(k),))


def masked(m_k: TensorRef, value: Expr) -> Expr:
    """``if_then_else(M_k==-inf,0,value)``: nothing has been seen yet while the running max is -inf."""
    return IfThenElse(Compare((m_k, NEG_INF), ("==",)), ZERO, value)


def online_items(stats: Stats) -> tuple[Assign, Assign]:
    """The running-max and rescaled running-sum recurrences (in ``stats.loops``' variables)."""
    idx = tuple(Var(v) for v in stats.spatial)
    m_k = prefix_ref(stats.m, stats.dtype, idx, stats.k)
    s_k = prefix_ref(stats.s, stats.dtype, idx, stats.k)
    m_stmt = Assign(m_k, Call("max", (_prev(m_k, stats.k, NEG_INF), stats.x)))
    carried = IfThenElse(first_step(stats.k), ZERO,
                         BinOp("*", shifted(s_k, stats.k),
                               Call("exp", (BinOp("-", shifted(m_k, stats.k), m_k),))))
    s_stmt = Assign(s_k, masked(m_k, BinOp("+", carried, Call("exp", (BinOp("-", stats.x, m_k),)))))
    return m_stmt, s_stmt


def corpus_sum(stats: Stats) -> Assign:
    """The running sum as the public reference data writes it (no ``-inf`` guard, started from 1).

    ``S_{k}=if_then_else(k-1<0,1,S_{k-1})*exp(if_then_else(k-1<0,-inf,M_{k-1})-M_{k})+exp(X-M_{k})``:
    the 1 is multiplied by ``exp(-inf-M_0)=0``, so it equals ``online_items``' sum wherever the first
    element is finite. Accepted as an online softmax so corpus states are #43/#44 sites too.
    """
    idx = tuple(Var(v) for v in stats.spatial)
    m_k = prefix_ref(stats.m, stats.dtype, idx, stats.k)
    s_k = prefix_ref(stats.s, stats.dtype, idx, stats.k)
    carried = BinOp("*", _prev(s_k, stats.k, Num("1")),
                    Call("exp", (BinOp("-", _prev(m_k, stats.k, NEG_INF), m_k),)))
    return Assign(s_k, BinOp("+", carried, Call("exp", (BinOp("-", stats.x, m_k),))))


def online_stats(program: Program) -> list[Stats]:
    """Every top-level block whose first two statements are the online recurrences (``online_items``, or
    the reference data's ``corpus_sum``)."""
    found = []
    for i, block in enumerate(program.body.blocks):
        if len(block.items) < 2 or not all(isinstance(it, Assign) for it in block.items[:2]):
            continue
        mstmt, sstmt = block.items[0], block.items[1]
        assert isinstance(mstmt, Assign) and isinstance(sstmt, Assign)
        m_ref = mstmt.target
        if not m_ref.indices or not isinstance(m_ref.indices[-1], Var):
            continue
        k = m_ref.indices[-1].name
        spatial = _bare_vars(TensorRef(m_ref.name, m_ref.dtype, m_ref.scope, m_ref.indices[:-1]))
        if spatial is None or not (isinstance(mstmt.value, Call) and mstmt.value.func == "max"):
            continue
        x = mstmt.value.args[1]
        extent = next((lp.extent for lp in block.loops if lp.var == k), 0)
        if extent < 2 or set(spatial) | {k} != {lp.var for lp in block.loops}:
            continue
        stats = Stats(i, i, block.loops, k, extent, m_ref.name, sstmt.target.name, m_ref.dtype, x, spatial,
                      online=True)
        m_want, s_want = online_items(stats)
        if (mstmt == m_want and sstmt in (s_want, corpus_sum(stats))
                and _private(program, i, i, stats.m, stats.s)):
            found.append(stats)
    return found


# --------------------------------------------------------------------------- the last-element reads


def last_element_reads(body: Body, start: int, stats: Stats) -> Body:
    """Blocks from ``start`` on read ``M``/``S`` at ``k=K-1`` (the full reduction) instead of unindexed."""
    last = Num(str(stats.extent - 1))

    def fn(ref: TensorRef) -> Node | None:
        if ref.name in (stats.m, stats.s):
            return TensorRef(ref.name, ref.dtype, ref.scope, ref.indices + (last,))
        return None

    blocks = list(body.blocks)
    for j in range(start, len(blocks)):
        blocks[j] = map_item_exprs(blocks[j], lambda n: replace_refs(n, fn))
    return Body(tuple(blocks))


def stream_block(stats: Stats, extra: tuple[Assign | Block, ...] = ()) -> Block:
    """The one-pass block: the two recurrences (and ``extra`` items) under the statistics' header."""
    return Block(stats.loops, (*online_items(stats), *extra))


# ------------------------------------------------------------------------------------ the normaliser


@dataclass(frozen=True, slots=True)
class Normaliser:
    """The statement ``P=exp(X-M)/S`` right after the statistics (block ``index``, item ``item``)."""

    index: int
    item: int
    target: TensorRef
    #: the normaliser block's loop variable for each of the statistics header's, by position
    rename: dict[str, str]


def softmax_normaliser(program: Program, stats: Stats) -> Normaliser | None:
    """The softmax output statement of the block after the statistics, if it has one."""
    if stats.after >= len(program.body.blocks):
        return None
    block = program.body.blocks[stats.after]
    if not same_header(Block(stats.loops, ()), block):
        return None
    renamed = rename_to(Block(stats.loops, ()), block)
    m_idx: tuple[Expr, ...] = tuple(Var(v) for v in stats.spatial)
    if stats.online:
        m_idx = m_idx + (Num(str(stats.extent - 1)),)
    m = TensorRef(stats.m, stats.dtype, "g", m_idx)
    s = TensorRef(stats.s, stats.dtype, "g", m_idx)
    want = BinOp("/", Call("exp", (BinOp("-", stats.x, m),)), s)
    for n, item in enumerate(renamed.items):
        if isinstance(item, Assign) and _same_value(item.value, want) and item.target.dtype == stats.dtype:
            target = block.items[n]
            assert isinstance(target, Assign)
            names = _bare_vars(item.target)
            if names is None or set(names) != {lp.var for lp in stats.loops}:
                continue
            rename = {a.var: b.var for a, b in zip(stats.loops, block.loops, strict=True)}
            return Normaliser(stats.after, n, item.target, rename)
    return None


def _same_value(a: Expr, b: Expr) -> bool:
    """Structural equality ignoring the scope annotation of references (``g`` vs ``l`` reads)."""
    def norm(n: Node) -> Node | None:
        return TensorRef(n.name, n.dtype, "g", n.indices) if isinstance(n, TensorRef) else None

    return transform(a, norm) == transform(b, norm)


# ------------------------------------------------------------------------------------- the PV matmul


@dataclass(frozen=True, slots=True)
class Consumer:
    """The matmul ``O_{o}=O_{o}+P_{p}*V_{v}`` reducing the streamed axis (top-level block ``index``)."""

    index: int
    target: TensorRef
    value: TensorRef
    loops: tuple[Loop, ...]
    #: matmul loop variable → the statistics header's variable it runs with (the streamed one included)
    to_stats: dict[str, str]
    #: matmul loop variables P does not depend on (the head dimension), in header order
    free: tuple[Loop, ...]


def pv_matmul(program: Program, stats: Stats, p: TensorRef, index: int) -> Consumer | None:
    """The block ``index`` if it is a matmul of the softmax output ``p`` reducing the streamed axis."""
    if index >= len(program.body.blocks):
        return None
    block = program.body.blocks[index]
    stmt = _single(block)
    if stmt is None or not isinstance(stmt.value, BinOp) or stmt.value.op != "+":
        return None
    info = program_info(program).statements.get((index, 0))
    if info is None or info.kind is not StmtKind.REDUCE or info.combiner != "+" or len(info.reduce_vars) != 1:
        return None
    acc = stmt.target
    term = stmt.value.right if stmt.value.left == acc else stmt.value.left if stmt.value.right == acc else None
    if not isinstance(term, BinOp) or term.op != "*":
        return None
    pair = [(term.left, term.right), (term.right, term.left)]
    for mine, other in pair:
        if not (isinstance(mine, TensorRef) and mine.name == p.name and isinstance(other, TensorRef)):
            continue
        names = _bare_vars(mine)
        if names is None:
            continue
        stats_vars = tuple(i.name for i in p.indices)  # type: ignore[union-attr]
        to_stats = dict(zip(names, stats_vars, strict=True))
        (red,) = info.reduce_vars
        if to_stats.get(red) != stats.k:
            continue
        if acc.dtype != stats.dtype or other.dtype != stats.dtype:
            continue
        if _mentions(other, {stats.m, stats.s, p.name, acc.name}) or _mentions(acc, {p.name}):
            continue
        free = tuple(lp for lp in block.loops if lp.var not in to_stats)
        if not free:
            continue
        loops = {lp.var: lp.extent for lp in block.loops}
        ext = {lp.var: lp.extent for lp in stats.loops}
        if any(loops[a] != ext[b] for a, b in to_stats.items()):
            continue
        if program.signature.get(acc.name) is None and any(
                acc.name in writes(b) for j, b in enumerate(program.body.blocks) if j != index):
            continue
        if any(acc.name in reads(b) or acc.name in writes(b) for b in program.body.blocks[:index]):
            continue
        return Consumer(index, acc, other, block.loops, to_stats, free)
    return None


def running_output(program: Program, stats: Stats, mm: Consumer, names: tuple[str, str, str], *,
                   normalised: bool) -> tuple[tuple[Assign | Block, ...], Block]:
    """The items the stream gains (rescale, weight, nested running output) and the block writing ``O``.

    ``names`` are the fresh rescale-factor, weight and running-output tensors ``A``, ``W``, ``R``.
    Deferred (``normalised=False``): ``A_k = exp(M_{k-1}-M_k)``, ``W_k = exp(X-M_k)``, then
    ``O = R_{K-1}/S_{K-1}``. Normalised: ``A_k = S_{k-1}*exp(M_{k-1}-M_k)/S_k``, ``W_k = exp(X-M_k)/S_k``,
    then ``O = R_{K-1}``. Both: ``R_k = R_{k-1}*A_k + W_k*V_k`` over the matmul's free axes (a nested
    block), so each exponential is computed once per streamed element, not once per output column.
    ``A`` and ``W`` are 0 while ``M_k=-inf``.
    """
    a_name, w_name, r_name = names
    taken = {lp.var for lp in stats.loops}
    fresh = iter(fresh_loop_vars(program, len(mm.free)))
    inner = {lp.var: (lp.var if lp.var not in taken else next(fresh)) for lp in mm.free}
    to_stream: dict[str, Expr] = {a: Var(b) for a, b in mm.to_stats.items()}
    to_stream.update({a: Var(b) for a, b in inner.items()})
    idx = tuple(Var(v) for v in stats.spatial)
    m_k = prefix_ref(stats.m, stats.dtype, idx, stats.k)
    s_k = prefix_ref(stats.s, stats.dtype, idx, stats.k)
    a_k = prefix_ref(a_name, stats.dtype, idx, stats.k)
    w_k = prefix_ref(w_name, stats.dtype, idx, stats.k)
    r_k = prefix_ref(r_name, stats.dtype, idx + tuple(Var(inner[lp.var]) for lp in mm.free), stats.k)
    v = substitute_vars(mm.value, to_stream)
    assert isinstance(v, TensorRef)
    rescale: Expr = Call("exp", (BinOp("-", shifted(m_k, stats.k), m_k),))
    weight: Expr = Call("exp", (BinOp("-", stats.x, m_k),))
    if normalised:
        rescale = BinOp("/", BinOp("*", shifted(s_k, stats.k), rescale), s_k)
        weight = BinOp("/", weight, s_k)
    a_stmt = Assign(a_k, masked(m_k, IfThenElse(first_step(stats.k), ZERO, rescale)))
    w_stmt = Assign(w_k, masked(m_k, weight))
    carried = IfThenElse(first_step(stats.k), ZERO, BinOp("*", shifted(r_k, stats.k), a_k))
    update = Assign(r_k, BinOp("+", carried, BinOp("*", w_k, v)))
    nested = Block(tuple(Loop(lp.kind, lp.extent, inner[lp.var]) for lp in mm.free), (update,))
    # the write-back, in the matmul's own variables (its header without the reduced loop)
    back = {b: a for a, b in mm.to_stats.items()}
    last = Num(str(stats.extent - 1))
    out_idx = tuple(Var(back[v]) for v in stats.spatial)
    final_r = TensorRef(r_name, stats.dtype, "g", out_idx + tuple(Var(lp.var) for lp in mm.free) + (last,))
    value: Expr = final_r
    if not normalised:
        value = BinOp("/", final_r, TensorRef(stats.s, stats.dtype, "g", out_idx + (last,)))
    red = next(a for a, b in mm.to_stats.items() if b == stats.k)
    write = Block(tuple(lp for lp in mm.loops if lp.var != red), (Assign(mm.target, value),))
    return (a_stmt, w_stmt, nested), write


def score_passes(program: Program, tensor: str) -> int:
    """How many top-level loop nests read ``tensor`` (passes over it)."""
    return sum(1 for block in program.body.blocks if tensor in reads(block))


def remove_if_unread(body: Body, index: int, name: str) -> Body:
    """Drop top-level block ``index`` when it only writes ``name`` and nothing reads ``name`` any more."""
    block = body.blocks[index]
    if writes(block) != {name} or any(name in reads(b) for b in body.blocks):
        return body
    return Body(body.blocks[:index] + body.blocks[index + 1:])


def stats_loops_renamed(item: Block, rename: dict[str, str]) -> Block:
    """``item`` with variables renamed by ``rename`` (statistics header → another block's)."""
    return substitute_loops(item, {a: Var(b) for a, b in rename.items()})  # type: ignore[return-value]


# ------------------------------------------------------------------------- the attention rewrites


@dataclass(frozen=True, slots=True)
class Attention:
    """Softmax statistics, the softmax output ``P`` right after them and the matmul ``O+=P*V`` after it."""

    stats: Stats
    norm: Normaliser
    mm: Consumer


def attention_sites(program: Program, *, online: bool) -> list[Attention]:
    """Every (statistics, ``P=exp(X-M)/S``, ``O+=P*V``) run of three adjacent parts, in block order."""
    found = []
    for stats in online_stats(program) if online else two_pass_stats(program):
        norm = softmax_normaliser(program, stats)
        if norm is None:
            continue
        mm = pv_matmul(program, stats, norm.target, norm.index + 1)
        if mm is None:
            continue
        v_name = mm.value.name
        if any(v_name in writes(program.body.blocks[j]) for j in range(stats.first, mm.index + 1)):
            continue
        found.append(Attention(stats, norm, mm))
    return found


def flash(program: Program, site: Attention, names: tuple[str, str, str], *, normalised: bool) -> Program:
    """The statistics, the softmax output and the matmul as one streaming pass plus a write-back block."""
    stats, norm, mm = site.stats, site.norm, site.mm
    added, write = running_output(program, stats, mm, names, normalised=normalised)
    blocks = program.body.blocks
    if stats.online:
        head = blocks[stats.first]
        stream = Block(head.loops, (*head.items, *added))
        tail = Body((blocks[norm.index], *blocks[mm.index + 1:]))
    else:
        stream = stream_block(stats, added)
        tail = last_element_reads(Body((blocks[norm.index], *blocks[mm.index + 1:])), 0, stats)
    norm_block, rest = tail.blocks[0], tail.blocks[1:]
    p_name = norm.target.name
    others = (*blocks[: stats.first], stream, write, *rest)
    if program.signature.get(p_name) is None and not any(p_name in reads(b) for b in others):
        kept = tuple(it for it in norm_block.items
                     if not (isinstance(it, Assign) and it.target.name == p_name))
        pieces: tuple[Block, ...] = (Block(norm_block.loops, kept),) if kept else ()
    else:
        pieces = (norm_block,)
    return Program(program.signature,
                   Body((*blocks[: stats.first], stream, *pieces, write, *rest)))


# ----------------------------------------------------------- #43's deferred form, normalised by #44


@dataclass(frozen=True, slots=True)
class Deferred:
    """#43's result: an online-statistics block (``stats.first``) whose items ``factor``, ``weight`` and
    ``nested`` are the rescale factor ``A_k=exp(M_{k-1}-M_k)``, the weight ``W_k=exp(X-M_k)`` and the
    unnormalised running output ``R_k=R_{k-1}*A_k+W_k*V_k``, and the top-level block ``epilogue`` that
    writes ``O=R_{..,K-1}/S_{..,K-1}``."""

    stats: Stats
    factor: int
    weight: int
    nested: int
    epilogue: int
    output: TensorRef
    running: str


def _commuted(node: Node) -> Node:
    """``node`` with commutative operands (``+``, ``*``, ``max``, ``min``, ``==``) in one fixed order,
    redundant parentheses dropped and scopes ignored: equal values compare equal however they are spelled."""
    from leir.ast import Paren
    from leir.printer import expr_text

    def fn(n: Node) -> Node | None:
        if isinstance(n, Paren):
            return n.inner
        if isinstance(n, TensorRef) and n.scope != "g":
            return TensorRef(n.name, n.dtype, "g", n.indices)
        if isinstance(n, BinOp) and n.op in {"+", "*"} and expr_text(n.right) < expr_text(n.left):
            return BinOp(n.op, n.right, n.left)
        if isinstance(n, Call) and n.func in {"max", "min"} and len(n.args) == 2 and \
                expr_text(n.args[1]) < expr_text(n.args[0]):
            return Call(n.func, (n.args[1], n.args[0]))
        if isinstance(n, Compare) and n.ops == ("==",) and expr_text(n.operands[1]) < expr_text(n.operands[0]):
            return Compare((n.operands[1], n.operands[0]), n.ops)
        return None

    return transform(node, fn)


def _equal(a: Expr, b: Expr) -> bool:
    return _commuted(a) == _commuted(b)


def _operands(node: Expr, op: str) -> list[tuple[Expr, Expr]]:
    """Both orders of ``node``'s operands when it is the binary ``op``."""
    node = strip_parens(node)
    if not isinstance(node, BinOp) or node.op != op:
        return []
    left, right = strip_parens(node.left), strip_parens(node.right)
    return [(left, right), (right, left)]


def _row_ref(ref: Expr, stats: Stats) -> TensorRef | None:
    """``ref`` if it is a prefix tensor of the statistics' row at ``k`` (``T_{s..,k}``) in their dtype."""
    want = tuple(Var(v) for v in stats.spatial) + (Var(stats.k),)
    if isinstance(ref, TensorRef) and ref.indices == want and ref.dtype == stats.dtype:
        return ref
    return None


def _update_parts(update: Assign, stats: Stats, nested: Block) -> tuple[str, str, Expr] | None:
    """``(A, W, V)`` when ``update`` is ``R_k = if_then_else(k-1<0,0,R_{k-1}*A_k) + W_k*V`` (any order)."""
    r_k = update.target
    n = len(stats.spatial)
    inner = {lp.var for lp in nested.loops}
    cols = r_k.indices[n:-1]
    if (r_k.dtype != stats.dtype or r_k.indices[:n] != tuple(Var(v) for v in stats.spatial)
            or not r_k.indices or r_k.indices[-1] != Var(stats.k)
            or not all(isinstance(c, Var) for c in cols)
            or {c.name for c in cols if isinstance(c, Var)} != inner or len(cols) != len(inner)
            or inner & {lp.var for lp in stats.loops}):
        return None
    for carried, product in _operands(update.value, "+"):
        if not (isinstance(carried, IfThenElse) and carried.cond == first_step(stats.k)
                and strip_parens(carried.then) == ZERO):
            continue
        a_name = next((a_ref.name for prev, a in _operands(carried.otherwise, "*")
                       if prev == shifted(r_k, stats.k) and (a_ref := _row_ref(a, stats)) is not None), None)
        if a_name is None:
            continue
        for w, v in _operands(product, "*"):
            w_ref = _row_ref(w, stats)
            if w_ref is not None and w_ref.name != a_name:
                return a_name, w_ref.name, v
    return None


def _statement_of(items: tuple[Assign | Block, ...], name: str) -> int | None:
    """The index of the one item that writes ``name`` (``None`` if none, or more than one, does)."""
    found = [j for j, it in enumerate(items) if name in writes(it)]
    return found[0] if len(found) == 1 and isinstance(items[found[0]], Assign) else None


def deferred_outputs(program: Program) -> list[Deferred]:
    """Every #43 result in the program: online statistics carrying an unnormalised running output whose
    only other reader is the division ``O=R_{..,K-1}/S_{..,K-1}`` (the epilogue), in block order."""
    found = []
    blocks = program.body.blocks
    for stats in online_stats(program):
        block = blocks[stats.first]
        idx = tuple(Var(v) for v in stats.spatial)
        m_k = prefix_ref(stats.m, stats.dtype, idx, stats.k)
        factor_value = masked(m_k, IfThenElse(first_step(stats.k), ZERO,
                                              Call("exp", (BinOp("-", shifted(m_k, stats.k), m_k),))))
        weight_value = masked(m_k, Call("exp", (BinOp("-", stats.x, m_k),)))
        for pos, nested in enumerate(block.items):
            if pos < 2 or not isinstance(nested, Block) or len(nested.items) != 1:
                continue
            update = nested.items[0]
            parts = _update_parts(update, stats, nested) if isinstance(update, Assign) else None
            if parts is None:
                continue
            a_name, w_name, v = parts
            r_name = update.target.name  # type: ignore[union-attr]
            fa, fw = _statement_of(block.items, a_name), _statement_of(block.items, w_name)
            if (fa is None or fw is None or not (2 <= fa < pos and 2 <= fw < pos)
                    or _statement_of(block.items, stats.s) != 1):
                continue
            a_stmt, w_stmt = block.items[fa], block.items[fw]
            assert isinstance(a_stmt, Assign) and isinstance(w_stmt, Assign)
            if not (_equal(a_stmt.value, factor_value) and _equal(w_stmt.value, weight_value)):
                continue
            if _mentions(v, {stats.m, stats.s, a_name, w_name, r_name}):
                continue
            epilogue = _epilogue(program, stats, r_name, update.target)  # type: ignore[union-attr]
            if epilogue is None or not _only_used_here(program, stats.first, pos, a_name, w_name, r_name,
                                                       epilogue):
                continue
            out = _single(blocks[epilogue])
            assert out is not None
            found.append(Deferred(stats, fa, fw, pos, epilogue, out.target, r_name))
    return found


def _epilogue(program: Program, stats: Stats, r_name: str, r_k: TensorRef) -> int | None:
    """The one later top-level block reading ``R``, if it is ``O = R_{o..,c..,K-1} / S_{o..,K-1}``."""
    readers = [j for j, b in enumerate(program.body.blocks) if j != stats.first and r_name in reads(b)]
    if len(readers) != 1 or readers[0] < stats.first:
        return None
    j = readers[0]
    block = program.body.blocks[j]
    stmt = _single(block)
    value = strip_parens(stmt.value) if stmt is not None else None
    if stmt is None or not isinstance(value, BinOp) or value.op != "/":
        return None
    r, s = strip_parens(value.left), strip_parens(value.right)
    if not (isinstance(r, TensorRef) and isinstance(s, TensorRef) and r.name == r_name and s.name == stats.s):
        return None
    # R'_k = R_k/S_k element by element, so dropping the division needs S read at R's own row, at K-1
    # (where the only row with S=0 is one that is -inf everywhere: docs/math_streaming.md)
    n, last = len(stats.spatial), Num(str(stats.extent - 1))
    if len(r.indices) != len(r_k.indices) or r.indices[-1] != last or s.indices != r.indices[:n] + (last,):
        return None
    return j


def _only_used_here(program: Program, first: int, nested: int, a: str, w: str, r: str, epilogue: int) -> bool:
    """``A``, ``W``, ``R`` are intermediates: only the stream writes them, only the update reads ``A``/``W``,
    and ``R`` is read only by its own recurrence and the epilogue."""
    blocks = program.body.blocks
    if any(program.signature.get(name) is not None for name in (a, w, r)):
        return False
    for j, block in enumerate(blocks):
        if j != first and (writes(block) & {a, w, r} or reads(block) & {a, w}):
            return False
        if j not in (first, epilogue) and r in reads(block):
            return False
    items = blocks[first].items
    return not any(reads(it) & {a, w, r} or r in writes(it) for p, it in enumerate(items) if p != nested)


def normalise_deferred(program: Program, site: Deferred) -> Program:
    """``A_k`` becomes ``S_{k-1}*A_k/S_k``, ``W_k`` becomes ``W_k/S_k`` (inside the same ``-inf`` guards) and
    the epilogue ``O=R_{K-1}/S_{K-1}`` the copy ``O=R_{K-1}``: the running output is kept normalised."""
    stats = site.stats
    idx = tuple(Var(v) for v in stats.spatial)
    s_k = prefix_ref(stats.s, stats.dtype, idx, stats.k)
    blocks = list(program.body.blocks)
    items = list(blocks[stats.first].items)
    a_stmt, w_stmt = items[site.factor], items[site.weight]
    assert isinstance(a_stmt, Assign) and isinstance(w_stmt, Assign)
    # the matcher checked masked(M_k, if_then_else(k-1<0, 0, E_A)) and masked(M_k, E_W)
    a_guard, w_guard = strip_parens(a_stmt.value), strip_parens(w_stmt.value)
    assert isinstance(a_guard, IfThenElse) and isinstance(w_guard, IfThenElse)
    a_first = strip_parens(a_guard.otherwise)
    assert isinstance(a_first, IfThenElse)
    rescale = BinOp("/", BinOp("*", shifted(s_k, stats.k), strip_parens(a_first.otherwise)), s_k)
    a_value = IfThenElse(a_guard.cond, a_guard.then, IfThenElse(a_first.cond, a_first.then, rescale))
    w_value = IfThenElse(w_guard.cond, w_guard.then, BinOp("/", strip_parens(w_guard.otherwise), s_k))
    items[site.factor] = Assign(a_stmt.target, a_value)
    items[site.weight] = Assign(w_stmt.target, w_value)
    blocks[stats.first] = Block(blocks[stats.first].loops, tuple(items))
    epilogue = blocks[site.epilogue]
    out = _single(epilogue)
    assert out is not None
    division = strip_parens(out.value)
    assert isinstance(division, BinOp)
    blocks[site.epilogue] = Block(epilogue.loops, (Assign(out.target, strip_parens(division.left)),))
    return Program(program.signature, Body(tuple(blocks)))
