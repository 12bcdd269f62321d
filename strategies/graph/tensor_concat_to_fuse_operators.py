"""tensor_concat_to_fuse_operators (catalogue #5): two same-shaped independent blocks run as one."""

from __future__ import annotations

from collections.abc import Callable

from leir.analysis import fresh_tensor_names, independent, iterations, program_info, tensor_bytes
from leir.ast import (
    Assign,
    BinOp,
    Block,
    Call,
    Compare,
    Cond,
    Expr,
    Logical,
    Loop,
    Num,
    Program,
    TensorRef,
    Var,
    expr_children,
    strip_parens,
    tensor_refs,
    walk_expr,
)
from leir.builders import iadd, imod
from leir.printer import canonical, expr_text, loop_text
from leir.rewrite import replace_at, substitute_vars, with_body
from leir.semantics import StmtKind
from strategies.base import Exactness, Level, NotApplicableError, Params, Site, Strategy
from strategies.graph.blocks import rename_to, same_header
from strategies.registry import register
from strategies.traces import Trace, TraceBuilder


def _match(one: Expr | Cond, two: Expr | Cond, pairs: dict[str, str]) -> bool:
    """Structural equality of two expressions up to a consistent renaming of tensors (``pairs``)."""
    one, two = strip_parens(one), strip_parens(two)
    if type(one) is not type(two):
        return False
    if isinstance(one, TensorRef) and isinstance(two, TensorRef):  # same type, checked above
        if (one.dtype, one.scope, len(one.indices)) != (two.dtype, two.scope, len(two.indices)):
            return False
        if pairs.setdefault(one.name, two.name) != two.name:
            return False
    elif one != two and isinstance(one, Num | Var) or _operator(one) != _operator(two):
        return False
    kids1, kids2 = expr_children(one), expr_children(two)
    return len(kids1) == len(kids2) and all(_match(a, b, pairs) for a, b in zip(kids1, kids2, strict=True))


def _operator(node: Expr | Cond) -> object:
    """What distinguishes two nodes of one type apart from their children."""
    if isinstance(node, BinOp | Logical):
        return node.op
    if isinstance(node, Call):
        return node.func
    if isinstance(node, Compare):
        return node.ops
    return None


def _mentions(index: Expr, var: str) -> bool:
    return any(isinstance(v, Var) and v.name == var for v in walk_expr(index))


def _bare_position(indices: tuple[Expr, ...], var: str) -> int | None:
    """The one dimension that is exactly ``var``, when ``var`` appears nowhere else in the subscript."""
    hits = [d for d, i in enumerate(indices) if _mentions(i, var)]
    if len(hits) == 1 and isinstance(indices[hits[0]], Var):
        return hits[0]
    return None


@register
class TensorConcatToFuseOperators(Strategy):
    """Run two independent look-alike blocks as one block over a doubled axis of concatenated tensors.

    Before: ``B^{16}_{tx=0}L^{32}_{a=0}L^{64}_{c=0}[D^{f32,g}_{tx,a}=D^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*C^{f32,g}_{a,c};];B^{16}_{tx=0}L^{32}_{a=0}L^{64}_{c=0}[F^{f32,g}_{tx,a}=F^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*E^{f32,g}_{a,c};];``
    After:  ``L^{32}_{a=0}L^{64}_{c=0}[G^{f32,g}_{a,c}=C^{f32,g}_{a,c};];L^{32}_{a=0}L^{64}_{c=0}[G^{f32,g}_{a+32,c}=E^{f32,g}_{a,c};];B^{16}_{tx=0}L^{64}_{a=0}L^{64}_{c=0}[H^{f32,g}_{tx,a}=H^{f32,g}_{tx,a}+A^{f32,g}_{tx,c}*G^{f32,g}_{a,c};];B^{16}_{tx=0}L^{32}_{a=0}[D^{f32,g}_{tx,a}=H^{f32,g}_{tx,a};];B^{16}_{tx=0}L^{32}_{a=0}[F^{f32,g}_{tx,a}=H^{f32,g}_{tx,a+32};];``

    Precondition: two adjacent, independent, single-statement blocks whose headers run the same
    iterations and whose statements are the same expression up to a consistent renaming of tensors
    (plain writes, or reductions with the same combiner). The axis is a spatial loop that every tensor
    differing between the two uses as one bare subscript and nowhere else; tensors both read keep their
    subscript (the axis read modulo its extent). Inputs are copied into concatenated buffers, one block
    runs over the doubled extent, and the two results are copied back out.
    Exact (E): every output element is computed by the same operations on the same values.
    """

    number = 5
    name = "tensor_concat_to_fuse_operators"
    level = Level.GRAPH
    exactness = Exactness.E
    refusals = {
        "no-next-block": "the site's block is the last one",
        "not-single-statements": "one of the two blocks does not hold exactly one statement",
        "different-iterations": "the two headers run different iterations",
        "dependent-blocks": "one block reads what the other writes",
        "different-statement-kinds": "the statements are not both plain writes or both reductions of one kind",
        "gathered-subscript": "a subscript reads a tensor (a gather)",
        "different-expressions": "the two statements are not one expression up to renaming their tensors",
        "tensors-not-matched": "the renaming does not pair the tensors one to one",
        "no-such-loop": "the header has no loop over the axis",
        "reduction-axis": "the axis is reduced, not in the target's subscript",
        "not-bare-subscript": "a tensor that differs between the two does not use the axis as one bare subscript",
        "read-at-two-subscripts": "an input that differs is read at more than one subscript",
    }

    def _pairs(self, program: Program, index: int) -> tuple[Block, Assign, Assign, dict[str, str]]:
        blocks = program.body.blocks
        if not 0 <= index < len(blocks) - 1:
            raise self.refuse("no-next-block", f"block {index + 1} has no next block")
        first, second = blocks[index], blocks[index + 1]
        if any(len(b.items) != 1 or not isinstance(b.items[0], Assign) for b in (first, second)):
            raise self.refuse("not-single-statements",
                              f"blocks {index + 1} and {index + 2} are not single statements")
        if not same_header(first, second):
            raise self.refuse("different-iterations", "the two headers run different iterations")
        if not independent(first, second):
            raise self.refuse("dependent-blocks", "the blocks depend on each other")
        info = program_info(program)
        kinds = {info.statements[(i, 0)].kind for i in (index, index + 1)}
        combiners = {info.statements[(i, 0)].combiner for i in (index, index + 1)}
        if len(kinds) != 1 or not kinds <= {StmtKind.ASSIGN, StmtKind.REDUCE} or len(combiners) != 1:
            raise self.refuse("different-statement-kinds",
                              "the statements are not both plain writes or both reductions of one kind")
        one = first.items[0]
        two = rename_to(first, second).items[0]
        if any(True for stmt in (one, two) for ref in (stmt.target, *tensor_refs(stmt.value))  # type: ignore
               for i in ref.indices for _ in tensor_refs(i)):
            raise self.refuse("gathered-subscript", "a subscript gathers through a tensor")
        assert isinstance(one, Assign) and isinstance(two, Assign)
        pairs: dict[str, str] = {}
        if not (_match(one.target, two.target, pairs) and _match(one.value, two.value, pairs)):
            raise self.refuse("different-expressions", "the statements are different expressions")
        if len(set(pairs.values())) != len(pairs):
            raise self.refuse("tensors-not-matched", "the tensors do not correspond one to one")
        return first, one, two, pairs

    def _check_axis(self, block: Block, one: Assign, pairs: dict[str, str], var: str) -> Loop:
        loop = next((lp for lp in block.loops if lp.var == var), None)
        if loop is None:
            raise self.refuse("no-such-loop", f"there is no loop over {var}")
        if var not in {v.name for i in one.target.indices for v in walk_expr(i) if isinstance(v, Var)}:
            raise self.refuse("reduction-axis", f"{var} is a reduction axis")
        differing = {a for a, b in pairs.items() if a != b}
        for ref in (one.target, *tensor_refs(one.value)):
            if ref.name in differing and _bare_position(ref.indices, var) is None:
                raise self.refuse("not-bare-subscript",
                                  f"{expr_text(ref)} does not use {var} as one bare subscript")
        for name in differing - {one.target.name}:
            subscripts = {tuple(expr_text(i) for i in r.indices)
                          for r in tensor_refs(one.value) if r.name == name}
            if len(subscripts) > 1:
                raise self.refuse("read-at-two-subscripts", f"{name} is read at more than one subscript")
        return loop

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for index in range(len(program.body.blocks) - 1):
            try:
                block, *_ = self._pairs(program, index)
            except NotApplicableError:  # no pair here: no axis of it is a site
                continue
            for lp in block.loops:
                site = Site((index,), (("axis", lp.var),), where=f"blocks {index + 1} and {index + 2} along {lp.var}")
                if self.legal(program, site):
                    sites.append(site)
        return sites

    def check(self, program: Program, site: Site,
              params: Params | None = None) -> tuple[Block, Assign, dict[str, str], Loop]:
        """The first block, its statement, the tensor correspondence and the loop to concatenate along."""
        (index,) = site.path
        block, one, _, pairs = self._pairs(program, index)
        return block, one, pairs, self._check_axis(block, one, pairs, str(site.get("axis")))

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        block, one, pairs, loop = self.check(program, site, params)
        (index,), var = site.path, loop.var
        n = loop.extent
        differing = sorted(a for a, b in pairs.items() if a != b)
        fresh = dict(zip(differing, fresh_tensor_names(program, len(differing)), strict=True))
        inputs = [a for a in differing if a != one.target.name]

        def rewrite(node: Expr | Cond) -> Expr | None:
            # concatenated tensors keep the bare axis; shared tensors and values read it modulo n
            if isinstance(node, TensorRef) and node.name in fresh:
                return TensorRef(fresh[node.name], node.dtype, "g", node.indices)
            if isinstance(node, Var) and node.name == var:
                return imod(Var(var), n)
            return None

        value = _top_down(one.value, rewrite)
        assert not isinstance(value, (Compare, Logical)), "rewriting a value keeps it a value"
        target = TensorRef(fresh[one.target.name], one.target.dtype, "g", one.target.indices)
        loops = tuple(Loop(lp.kind, 2 * n, lp.var) if lp.var == var else lp for lp in block.loops)
        fused = Block(loops, (Assign(target, value),))
        shift = {var: iadd(Var(var), n)}

        def copy_loops(indices: tuple[Expr, ...]) -> tuple[Loop, ...]:
            used = {v.name for i in indices for v in walk_expr(i) if isinstance(v, Var)}
            return tuple(lp for lp in block.loops if lp.var in used)

        copies_in: list[Block] = []
        for name in inputs:
            ref = next(r for r in tensor_refs(one.value) if r.name == name)
            other = TensorRef(pairs[name], ref.dtype, ref.scope, ref.indices)
            buf = TensorRef(fresh[name], ref.dtype, "g", ref.indices)
            moved = TensorRef(fresh[name], ref.dtype, "g",
                              tuple(substitute_vars(i, shift) for i in ref.indices))  # type: ignore[misc]
            copies_in += [Block(copy_loops(ref.indices), (Assign(buf, ref),)),
                          Block(copy_loops(ref.indices), (Assign(moved, other),))]
        out = one.target
        buf = TensorRef(fresh[out.name], out.dtype, "g", out.indices)
        moved = TensorRef(fresh[out.name], out.dtype, "g",
                          tuple(substitute_vars(i, shift) for i in out.indices))  # type: ignore[misc]
        second_out = TensorRef(pairs[out.name], out.dtype, out.scope, out.indices)
        copies_out = [Block(copy_loops(out.indices), (Assign(out, buf),)),
                      Block(copy_loops(out.indices), (Assign(second_out, moved),))]
        new = (*copies_in, fused, *copies_out)
        body = replace_at(program.body, (index,), new)
        return with_body(program, replace_at(body, (index + len(new),), ()))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        (index,) = site.path
        block, one, two, pairs = self._pairs(before, index)
        var = str(site.get("axis"))
        loop = self._check_axis(block, one, pairs, var)
        differing = sorted(a for a, b in pairs.items() if a != b)
        inputs = [a for a in differing if a != one.target.name]
        copied = sum(tensor_bytes(before, a) + tensor_bytes(before, pairs[a]) for a in inputs)
        results = tensor_bytes(before, one.target.name) + tensor_bytes(before, pairs[one.target.name])
        fused = after.body.blocks[index + 2 * len(inputs)]
        shared = sorted(a for a, b in pairs.items() if a == b)
        share = f", with the shared input {', '.join(shared)} read by one nest" if shared else ""
        t = TraceBuilder()
        return t.build(
            applicability=(f"Blocks {index + 1} {t.before(canonical(before.body.blocks[index]))} and "
                           f"{index + 2} {t.before(canonical(before.body.blocks[index + 1]))} are "
                           f"independent and compute the same expression on different tensors "
                           f"({', '.join(f'{a}/{pairs[a]}' for a in differing)}); each uses the spatial loop "
                           f"{t.before(loop_text(loop))} as a bare subscript."),
            change=(f"{', '.join(inputs) or 'No input'} and their counterparts are copied into concatenated "
                    f"buffers, one block {t.after(canonical(fused))} runs {var} over {2 * loop.extent}, and "
                    f"the results are copied back to {one.target.name} and {pairs[one.target.name]}; "
                    "no parameters."),
            rationale=(f"One loop nest of {iterations(fused.loops)} iterations replaces two of "
                       f"{iterations(block.loops)}: one kernel launch instead of two and a wider parallel "
                       f"axis{share}; the price is {copied} bytes of input copies and {results} bytes of "
                       "result copies."),
            exactness="Exact (E): every output element is computed by the same operations on the same "
                      "values.",
        )


def _top_down(node: Expr | Cond, fn: Callable[[Expr | Cond], Expr | Cond | None]) -> Expr | Cond:
    """Rewrite ``node`` top-down: where ``fn`` returns a node, it is used as is (not descended into)."""
    replaced = fn(node)
    if replaced is not None:
        return replaced
    kids = expr_children(node)
    if not kids:
        return node
    from leir.rewrite import _rebuild

    return _rebuild(node, tuple(_top_down(k, fn) for k in kids))
