"""partially_equivalent_then_correct (catalogue #36): two padded stencils over one concatenated input."""

from __future__ import annotations

from dataclasses import dataclass

from leir.analysis import affine_bounds, affine_form, fresh_tensor_names, independent, program_info
from leir.ast import (
    Assign,
    BinOp,
    Block,
    Compare,
    Cond,
    Expr,
    IfThenElse,
    Logical,
    Loop,
    Neg,
    Num,
    Program,
    TensorRef,
    Var,
    strip_parens,
    tensor_refs,
    walk_expr,
)
from leir.builders import iadd
from leir.printer import canonical, loop_text
from leir.rewrite import rename_tensor, replace_at, substitute_vars, with_body
from leir.semantics import StmtKind
from strategies.base import Exactness, Level, NotApplicableError, Params, Site, Strategy
from strategies.graph.blocks import rename_to, same_header
from strategies.graph.tensor_concat_to_fuse_operators import _match
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


@dataclass(frozen=True, slots=True)
class _Pad:
    """A padding block ``F_{…,w,…}=if_then_else(…lo<=w<hi…, X, 0)``: along ``w`` only [lo, hi) is data."""

    index: int
    block: Block
    var: str
    lo: int
    hi: int
    extent: int


@dataclass(frozen=True, slots=True)
class _Pair:
    first: int
    second: int
    block: Block
    stmt: Assign
    #: The second statement renamed to the first block's loop variables.
    other: Assign
    padded: tuple[str, str]
    outputs: tuple[str, str]
    pads: tuple[_Pad, _Pad]
    #: The concatenation axis (a spatial loop of the stencil) and the padded tensor's dimension it reads.
    axis: Loop
    dim: int
    #: Smallest and largest offset ``index - axis`` of the padded read over the window loops.
    offsets: tuple[int, int]


def _is_factor(term: Expr, name: str) -> bool:
    """Whether the read of ``name`` is a factor of the product ``term`` (so a zero read adds nothing)."""
    term = strip_parens(term)
    if isinstance(term, TensorRef):
        return term.name == name
    if isinstance(term, Neg):
        return _is_factor(term.operand, name)
    if isinstance(term, BinOp) and term.op == "*":
        return _is_factor(term.left, name) or _is_factor(term.right, name)
    if isinstance(term, BinOp) and term.op == "/":
        return _is_factor(term.left, name)
    return False


def _term(stmt: Assign) -> Expr:
    """``T`` of a sum reduction ``C=C+T`` (or ``C=T+C``)."""
    value = stmt.value
    assert isinstance(value, BinOp) and value.op == "+"
    return value.right if value.left == stmt.target else value.left


def _guard_range(cond: Cond, var: str) -> tuple[int, int] | None:
    """``(lo, hi)`` of the conjunct ``lo<=var<hi`` of a condition made of ``&``, if that is its only use of var."""
    parts: list[Cond] = []
    stack = [cond]
    while stack:
        node = stack.pop()
        if isinstance(node, Logical):
            if node.op != "&":
                return None
            stack += [node.left, node.right]
        else:
            parts.append(node)
    found = None
    for part in parts:
        if not any(isinstance(v, Var) and v.name == var for v in walk_expr(part)):
            continue
        if found is not None or not isinstance(part, Compare) or part.ops != ("<=", "<"):
            return None
        lo, mid, hi = part.operands
        if not (isinstance(lo, Num) and lo.is_int and mid == Var(var) and isinstance(hi, Num) and hi.is_int):
            return None
        found = (int(lo.text), int(hi.text))
    return found


@register
class PartiallyEquivalentThenCorrect(Strategy):
    """Run two look-alike padded stencils as one over concatenated inputs, then correct the seam.

    Before: ``L^{2}_{i=0}L^{12}_{c=0}[F^{f32,g}_{i,c}=if_then_else(2<=c<10,A^{f32,g}_{i,c-2},0);];L^{2}_{i=0}L^{8}_{c=0}L^{5}_{f=0}[C^{f32,g}_{i,c}=C^{f32,g}_{i,c}+F^{f32,g}_{i,c+f}*W^{f32,g}_{f};];L^{2}_{i=0}L^{12}_{c=0}[G^{f32,g}_{i,c}=if_then_else(2<=c<10,Q^{f32,g}_{i,c-2},0);];L^{2}_{i=0}L^{8}_{c=0}L^{5}_{f=0}[D^{f32,g}_{i,c}=D^{f32,g}_{i,c}+G^{f32,g}_{i,c+f}*W^{f32,g}_{f};];``
    After:  ``L^{2}_{i=0}L^{12}_{c=0}[F^{f32,g}_{i,c}=if_then_else(2<=c<10,A^{f32,g}_{i,c-2},0);];L^{2}_{i=0}L^{12}_{c=0}[G^{f32,g}_{i,c}=if_then_else(2<=c<10,Q^{f32,g}_{i,c-2},0);];L^{2}_{i=0}L^{10}_{c=0}[E^{f32,g}_{i,c}=F^{f32,g}_{i,c};];L^{2}_{i=0}L^{10}_{c=0}[E^{f32,g}_{i,c+10}=G^{f32,g}_{i,c+2};];L^{2}_{i=0}L^{16}_{c=0}L^{5}_{f=0}[H^{f32,g}_{i,c}=H^{f32,g}_{i,c}+E^{f32,g}_{i,c+f}*W^{f32,g}_{f};];L^{2}_{i=0}L^{8}_{c=0}[C^{f32,g}_{i,c}=H^{f32,g}_{i,c};];L^{2}_{i=0}L^{8}_{c=0}[D^{f32,g}_{i,c}=H^{f32,g}_{i,c+8};];L^{2}_{i=0}L^{2}_{c=0}L^{5}_{f=0}[C^{f32,g}_{i,c+6}=C^{f32,g}_{i,c+6}-if_then_else(10<=c+6+f,E^{f32,g}_{i,c+6+f}*W^{f32,g}_{f},0);];L^{2}_{i=0}L^{2}_{c=0}L^{5}_{f=0}[D^{f32,g}_{i,c}=D^{f32,g}_{i,c}-if_then_else(c+8+f<10,E^{f32,g}_{i,c+8+f}*W^{f32,g}_{f},0);];``

    Precondition: two independent single-statement sum reductions (a convolution, a pooling sum)
    that are the same expression up to renaming, except that they read two padded tensors
    (``F``/``G`` above, each written by a padding block ``if_then_else(lo<=c<hi, X, 0)`` with the same
    ``lo``, ``hi`` and extent along the axis) and write two outputs; the padded tensor is a factor of
    the summed term, read along the axis at ``c+offset`` (``c`` a spatial loop, coefficient 1, used
    by no shared tensor), and padding exists on that axis. The data parts are concatenated with one
    padding between them, one reduction runs over the concatenated axis, the outputs
    are split back, and the positions whose window crossed the seam subtract the terms they read
    from the other input (``E`` is the concatenation, ``H`` the fused reduction above). Every block
    between the two reductions must be independent of the first.
    Numerically equivalent (N): away from the seam each output is computed exactly as before; at the
    seam spurious terms are added and subtracted again, which rounds.
    """

    number = 36
    name = "partially_equivalent_then_correct"
    level = Level.MATH
    exactness = Exactness.N
    refusals = {
        "not-written-once": "a padded input is not written once by a top-level block",
        "padding-not-single": "a padding block is not a single statement before its reader",
        "not-padded-select": "a padded input is not written as if_then_else(guard, value, 0)",
        "subscript-not-plain": "a padded input's subscript is not plain loop variables",
        "no-guard-range": "a padding guard has no single range lo<=v<hi",
        "no-such-pair": "the site names no pair of blocks",
        "not-single-statements": "one of the two blocks does not hold exactly one statement",
        "different-iterations": "the two headers run different iterations",
        "not-sum-reduction": "one of the two statements is not a sum reduction",
        "dependent-blocks": "one reduction reads what the other writes",
        "dependent-block-between": "a block between the two depends on the first reduction",
        "different-expressions": "the two statements are not one expression up to renaming their tensors",
        "not-one-input-apart": "the statements do not differ in exactly their output and one input",
        "padded-not-factor": "the padded input is not read once as a factor of the summed term",
        "gathered-subscript": "a subscript reads a tensor (a gather)",
        "axis-not-spatial": "the axis is not a bare spatial subscript of the output",
        "not-offset-read": "the padded input is not read at axis+offset in one dimension",
        "offset-uses-spatial": "the offset uses a spatial loop",
        "shared-read-along-axis": "a tensor both statements read is read along the axis",
        "padded-differently": "the two inputs are padded differently",
        "no-padding": "there is no padding along the axis: nothing to correct",
        "window-reads-before": "the window reads before its position",
    }

    # ---- matching ---------------------------------------------------------------------------------
    def _pad(self, program: Program, name: str, dim: int, before: int) -> _Pad:
        writers = [(p, s) for p, s, _ in _statements(program) if s.target.name == name]
        if len(writers) != 1 or len(writers[0][0]) != 2:
            raise self.refuse("not-written-once", f"{name} is not written once by a top-level block")
        (index, _), stmt = writers[0]
        block = program.body.blocks[index]
        if index >= before or len(block.items) != 1:
            raise self.refuse("padding-not-single", f"{name}'s padding block is not a single statement before its reader")
        value = stmt.value
        if not (isinstance(value, IfThenElse) and isinstance(value.otherwise, Num) and value.otherwise.text == "0"):
            raise self.refuse("not-padded-select", f"{name} is not written as if_then_else(guard, value, 0)")
        ref = stmt.target
        if not (0 <= dim < len(ref.indices)) or not all(isinstance(i, Var) for i in ref.indices):
            raise self.refuse("subscript-not-plain", f"{name}'s subscript is not plain loop variables")
        var = ref.indices[dim]
        assert isinstance(var, Var)
        found = _guard_range(value.cond, var.name)
        if found is None:
            raise self.refuse("no-guard-range", f"{name}'s guard has no single range lo<={var.name}<hi")
        loop = next(lp for lp in block.loops if lp.var == var.name)
        return _Pad(index, block, var.name, found[0], found[1], loop.extent)

    def _pair(self, program: Program, first: int, second: int, axis_var: str) -> _Pair:
        blocks = program.body.blocks
        if not 0 <= first < second < len(blocks):
            raise self.refuse("no-such-pair", "no such pair of blocks")
        one, two = blocks[first], blocks[second]
        if any(len(b.items) != 1 or not isinstance(b.items[0], Assign) for b in (one, two)):
            raise self.refuse("not-single-statements", "the blocks are not single statements")
        if not same_header(one, two):
            raise self.refuse("different-iterations", "the two headers run different iterations")
        info = program_info(program)
        for k in (first, second):
            stmt_info = info.statements[(k, 0)]
            if stmt_info.kind is not StmtKind.REDUCE or stmt_info.combiner != "+":
                raise self.refuse("not-sum-reduction", f"block {k + 1} is not a sum reduction")
        if not independent(one, two):
            raise self.refuse("dependent-blocks", "the two reductions depend on each other")
        for k in range(first + 1, second):
            if not independent(one, blocks[k]):
                raise self.refuse("dependent-block-between", f"block {k + 1} between them depends on the first reduction")
        stmt = one.items[0]
        other = rename_to(one, two).items[0]
        assert isinstance(stmt, Assign) and isinstance(other, Assign)
        pairs: dict[str, str] = {}
        if not (_match(stmt.target, other.target, pairs) and _match(stmt.value, other.value, pairs)):
            raise self.refuse("different-expressions", "the statements are different expressions")
        differing = sorted((a, b) for a, b in pairs.items() if a != b)
        if len(set(pairs.values())) != len(pairs) or len(differing) != 2:
            raise self.refuse("not-one-input-apart", "the statements do not differ in exactly their output and one input")
        padded = next(((a, b) for a, b in differing if a != stmt.target.name), None)
        assert padded is not None
        reads = [r for r in tensor_refs(stmt.value) if r.name == padded[0]]
        if len(reads) != 1 or not _is_factor(_term(stmt), padded[0]):
            raise self.refuse("padded-not-factor", f"{padded[0]} is not read once as a factor of the summed term")
        if any(isinstance(r, TensorRef) for i in reads[0].indices for r in walk_expr(i)):
            raise self.refuse("gathered-subscript", "a subscript gathers through a tensor")
        axis = next((lp for lp in one.loops if lp.var == axis_var), None)
        if axis is None or stmt.target.indices.count(Var(axis_var)) != 1:
            raise self.refuse("axis-not-spatial", f"{axis_var} is not a bare spatial subscript of the output")
        dims = [d for d, i in enumerate(reads[0].indices) if _uses(i, axis_var)]
        form = affine_form(reads[0].indices[dims[0]]) if len(dims) == 1 else None
        if form is None or form.coeff(axis_var) != 1:
            raise self.refuse("not-offset-read", f"{padded[0]} is not read at {axis_var}+offset in one dimension")
        window = {lp.var: lp.extent for lp in one.loops if lp.var in form.vars and lp.var != axis_var}
        if set(window) & {v.name for i in stmt.target.indices for v in walk_expr(i) if isinstance(v, Var)}:
            raise self.refuse("offset-uses-spatial", "the offset uses a spatial loop")
        for ref in tensor_refs(stmt.value):
            if ref.name not in (padded[0], stmt.target.name) and any(_uses(i, axis_var) for i in ref.indices):
                raise self.refuse("shared-read-along-axis", f"the shared tensor {ref.name} is read along {axis_var}")
        rest = form.__class__(tuple((v, c) for v, c in form.coeffs if v != axis_var), form.const)
        offsets = affine_bounds(rest, window)
        pads = (self._pad(program, padded[0], dims[0], first), self._pad(program, padded[1], dims[0], second))
        if (pads[0].lo, pads[0].hi, pads[0].extent) != (pads[1].lo, pads[1].hi, pads[1].extent):
            raise self.refuse("padded-differently", "the two inputs are padded differently")
        pad = pads[0]
        if pad.lo == 0 and pad.hi == pad.extent:
            raise self.refuse("no-padding", f"no padding along {axis_var}: nothing to correct (tensor_concat_to_fuse_operators)")
        if offsets[0] < 0:
            raise self.refuse("window-reads-before", "the window reads before its position")
        return _Pair(first, second, one, stmt, other, padded, (stmt.target.name, pairs[stmt.target.name]),
                     pads, axis, dims[0], offsets)

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        blocks = program.body.blocks
        for first in range(len(blocks)):
            for second in range(first + 1, len(blocks)):
                for lp in blocks[first].loops:
                    site = Site((first,), (("axis", lp.var), ("with", second)))
                    try:
                        pair = self.check(program, site)
                    except NotApplicableError:
                        continue
                    sites.append(Site(site.path, site.detail,
                                      where=f"blocks {first + 1} and {second + 1} ({pair.outputs[0]} and "
                                            f"{pair.outputs[1]}) along {lp.var}"))
        return sites

    # ---- rewriting --------------------------------------------------------------------------------
    def _build(self, program: Program, pair: _Pair) -> tuple[tuple[Block, ...], dict[str, Item]]:
        cat, out = fresh_tensor_names(program, 2)
        pad1, pad2 = pair.pads
        width = pad1.hi - pad1.lo
        c = pair.axis.var
        n = pair.axis.extent

        def header(block: Block, var: str, extent: int) -> tuple[Loop, ...]:
            return tuple(Loop(lp.kind, extent, lp.var) if lp.var == var else lp for lp in block.loops)

        def padded_ref(pad: _Pad, name: str, shift: int) -> tuple[TensorRef, TensorRef]:
            stmt = pad.block.items[0]
            assert isinstance(stmt, Assign)
            idx = stmt.target.indices
            src = TensorRef(name, stmt.target.dtype, stmt.target.scope,
                            tuple(iadd(i, pad.lo) if i == Var(pad.var) and shift else i for i in idx))
            dst = TensorRef(cat, stmt.target.dtype, "g",
                            tuple(iadd(i, shift) if i == Var(pad.var) else i for i in idx))
            return dst, src

        d1, s1 = padded_ref(pad1, pair.padded[0], 0)
        d2, s2 = padded_ref(pad2, pair.padded[1], pad1.hi)
        copy1 = Block(header(pad1.block, pad1.var, pad1.hi), (Assign(d1, s1),))
        copy2 = Block(header(pad2.block, pad2.var, pad2.extent - pad2.lo), (Assign(d2, s2),))
        fused_value = rename_tensor(pair.stmt.value, pair.padded[0], cat, scope="g")
        fused_value = rename_tensor(fused_value, pair.outputs[0], out, scope="g")
        fused_target = TensorRef(out, pair.stmt.target.dtype, "g", pair.stmt.target.indices)
        fused_stmt = Assign(fused_target, fused_value)  # type: ignore[arg-type]
        fused = Block(header(pair.block, c, width + n), (fused_stmt,))
        target = pair.stmt.target
        spatial = tuple(lp for lp in pair.block.loops
                        if any(_uses(i, lp.var) for i in target.indices))
        out_ref = TensorRef(out, target.dtype, "g", target.indices)
        split1 = Block(spatial, (Assign(target, out_ref),))
        second_target = TensorRef(pair.outputs[1], target.dtype, pair.other.target.scope, target.indices)
        shifted = substitute_vars(out_ref, {c: iadd(Var(c), width)})
        assert isinstance(shifted, TensorRef)
        split2 = Block(spatial, (Assign(second_target, shifted),))
        blocks = [copy1, copy2, fused, split1, split2]
        term = _term(fused_stmt)
        read = next(r for r in tensor_refs(term) if r.name == cat)
        named: dict[str, Item] = {"fused": fused, "copy": copy2}
        low = max(0, pad1.hi - pair.offsets[1])
        if pad1.hi < pad1.extent and low < n:  # C1's windows that reach past its data into the other input
            move = {c: iadd(Var(c), low)}
            fix_target = substitute_vars(target, move)
            fix_read = substitute_vars(read.indices[pair.dim], move)
            guard = Compare((Num(str(pad1.hi)), fix_read), ("<=",))  # type: ignore[arg-type]
            value = BinOp("-", fix_target, IfThenElse(guard, substitute_vars(term, move), Num("0")))  # type: ignore
            fix = Assign(fix_target, value)  # type: ignore[arg-type]
            blocks.append(Block(header(pair.block, c, n - low), (fix,)))
            named["fix1"] = fix
        high = min(n, pad1.lo - pair.offsets[0])
        if high > 0:  # C2's windows that start in its left padding read the first input's tail
            move = {c: iadd(Var(c), width)}
            fix_read = substitute_vars(read.indices[pair.dim], move)
            guard = Compare((fix_read, Num(str(pad1.hi))), ("<",))  # type: ignore[arg-type]
            spur = substitute_vars(term, move)
            fix = Assign(second_target, BinOp("-", second_target, IfThenElse(guard, spur, Num("0"))))  # type: ignore
            blocks.append(Block(header(pair.block, c, high), (fix,)))
            named["fix2"] = fix
        return tuple(blocks), named

    def check(self, program: Program, site: Site, params: Params | None = None) -> _Pair:
        """The two padded reductions, their pads and the axis to concatenate along, or a refusal."""
        try:
            return self._pair(program, site.path[0], int(site.get("with", -1)), str(site.get("axis")))
        except NotApplicableError as refusal:
            refusal.site = site
            raise

    def _site_pair(self, program: Program, site: Site) -> _Pair:
        return self.check(program, site)

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        pair = self.check(program, site, params)
        new, _ = self._build(program, pair)
        body = replace_at(program.body, (pair.second,), new)
        return with_body(program, replace_at(body, (pair.first,), ()))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        pair = self._site_pair(before, site)
        blocks, named = self._build(before, pair)
        pad1 = pair.pads[0]
        c1, c2 = pair.outputs
        t = TraceBuilder()
        fixes = [t.after(canonical(named[k])) for k in ("fix1", "fix2") if k in named]
        seam = sum(b.loops[[lp.var for lp in b.loops].index(pair.axis.var)].extent
                   for b in blocks[5:])
        n = pair.axis.extent
        return t.build(
            applicability=(f"Blocks {pair.first + 1} {t.before(canonical(before.body.blocks[pair.first]))} and "
                           f"{pair.second + 1} {t.before(canonical(before.body.blocks[pair.second]))} are the "
                           f"same sum over the padded inputs {pair.padded[0]} and {pair.padded[1]} (data in "
                           f"[{pad1.lo}, {pad1.hi}) of {pad1.extent} along {pad1.var}, the rest zero padding), "
                           f"read at {pair.axis.var}+offset along {t.before(loop_text(pair.axis))}."),
            change=(f"The data parts are concatenated with one padding between them "
                    f"({t.after(canonical(named['copy']))} places the second), one reduction "
                    f"{t.after(canonical(named['fused']))} covers both, {c1} and {c2} are split back, and "
                    f"the seam is corrected by {' and '.join(fixes)}; no parameters."),
            rationale=(f"One reduction of {pair.axis.var} over {(pad1.hi - pad1.lo) + n} positions replaces "
                       f"two of {n} (one launch, one wider parallel axis, the shared operands read by one "
                       f"nest); only the {seam} seam position(s) per row need the fix-up, instead of "
                       f"keeping each input's own padding."),
            exactness=("Numerically equivalent (N): away from the seam every output is computed by the "
                       "same operations as before; at the seam the terms read across it are added and "
                       "subtracted again, which rounds."),
        )


Item = Block | Assign


def _uses(index: Expr, var: str) -> bool:
    return any(isinstance(v, Var) and v.name == var for v in walk_expr(index))


def _statements(program: Program):  # type: ignore[no-untyped-def]
    from leir.ast import statements

    return statements(program.body)
