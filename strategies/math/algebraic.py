"""The shared machinery of the SymPy-backed algebraic rewrites (catalogue #24–35).

Each strategy says only what SymPy does to one region (``transform``), which opaque operand it is
about when it needs one (``operands``), and why the result helps (``rationale``). This class finds
the sites (every float statement where the rewrite changes the SymPy form, not just its order, and
``safety_problem`` proves every divisor and logarithm it touches), applies them through the bridge,
and writes the grounded four-part trace.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from leir.ast import Assign, Program
from leir.printer import canonical, expr_text
from leir.rewrite import item_at, replace_at, with_body
from strategies.base import Exactness, Level, Params, Site, Strategy
from strategies.common import describe_block
from strategies.math.sympy_bridge import (
    Region,
    Rewrite,
    SymExpr,
    Translation,
    region_of,
    regions,
    rewrite_region,
)
from strategies.traces import Trace, TraceBuilder

_CACHE: dict[tuple[str, Region, str], Rewrite | str] = {}
_CACHE_LIMIT = 20000


class AlgebraicRewrite(Strategy):
    """A rewrite of one statement's region by a computer-algebra identity (all are N)."""

    level = Level.MATH
    exactness = Exactness.N
    #: The identity in words, for the trace's exactness part.
    identity: ClassVar[str] = ""
    refusals = {
        "no-statement": "the site's path names no statement",
        "not-a-region": "the statement is not a float statement whose right-hand side SymPy can read",
        "not-an-operand": "the site's operand is not one the rewrite is about in this statement",
        "no-rewrite": "SymPy's rewrite does not change the form here, or cannot prove every divisor and "
                      "logarithm it touches safe",
    }

    # ---- what a subclass provides -----------------------------------------------------------------
    @abstractmethod
    def transform(self, tr: Translation, operand: str) -> SymExpr | None:
        """The rewritten SymPy form (``None``: no such site); ``operand`` is "" or an opaque operand."""

    def operands(self, tr: Translation) -> list[str]:
        """Opaque operands (LEIR text) the rewrite is about; ``[""]`` for rewrites without one."""
        return [""]

    @abstractmethod
    def rationale(self, rw: Rewrite, operand: str) -> str:
        """Why the rewritten form may help on the target (or what it enables), in one or two sentences."""

    # ---- the primitive ----------------------------------------------------------------------------
    def _rewrite(self, region: Region, operand: str) -> Rewrite | str:
        key = (self.name, region, operand)
        if key not in _CACHE:
            if len(_CACHE) > _CACHE_LIMIT:
                _CACHE.clear()
            _CACHE[key] = rewrite_region(region, lambda tr: self.transform(tr, operand))
        return _CACHE[key]

    def _operands(self, region: Region) -> list[str]:
        from strategies.math.sympy_bridge import translate_or_none

        tr = translate_or_none(region.expr, region.stmt.target.dtype)
        return self.operands(tr) if tr is not None else []

    def candidates(self, program: Program) -> list[Site]:
        sites = []
        for region in regions(program):
            for operand in self._operands(region):
                if isinstance(self._rewrite(region, operand), Rewrite):
                    sites.append(self._site(region, operand))
        return sites

    def _site(self, region: Region, operand: str) -> Site:
        detail = (("operand", operand),) if operand else ()
        about = f" around {operand}" if operand else ""
        where = f"the statement writing {region.stmt.target.name}{about} in {describe_block(region.path[:-1])}"
        return Site(region.path, detail, where=where)

    def check(self, program: Program, site: Site, params: Params | None = None) -> Rewrite:
        """The rewrite of the site's region (``candidates`` keeps the regions ``_rewrite`` rewrites)."""
        try:
            stmt = item_at(program.body, site.path)
        except LookupError as exc:
            raise self.refuse("no-statement", f"no statement at {site.key}", site) from exc
        if not isinstance(stmt, Assign):
            raise self.refuse("no-statement", f"no statement at {site.key}", site)
        region = region_of(program, site.path, stmt)
        if isinstance(region, str):
            raise self.refuse("not-a-region", region, site)
        operand = str(site.get("operand", ""))
        if operand not in self._operands(region):
            raise self.refuse("not-an-operand", f"{operand or 'the statement'} is not an operand this rewrite "
                              "applies to", site)
        rw = self._rewrite(region, operand)
        if isinstance(rw, str):
            raise self.refuse("no-rewrite", rw, site)
        return rw

    def apply(self, program: Program, site: Site, params: Params) -> Program:
        rw = self.check(program, site)
        return with_body(program, replace_at(program.body, site.path, rw.new_stmt))

    def explain(self, before: Program, site: Site, params: Params, after: Program) -> Trace:
        rw = self.check(before, site)
        operand = str(site.get("operand", ""))
        t = TraceBuilder()
        stmt, region = rw.region.stmt, rw.region
        old, new = expr_text(region.expr), expr_text(rw.new_expr)
        if region.prefix:
            kept = canonical(stmt)[: canonical(stmt).find(old)] if old in canonical(stmt) else ""
            prefix = (f" after the accumulation prefix {t.before(kept)}, which stays outside the rewrite"
                      if kept and kept != canonical(stmt) else ", the accumulation prefix staying outside")
        else:
            prefix = ""
        if operand:
            shown = t.before(operand) if operand in canonical(before.body) else operand
            about = f" around the operand {shown}"
        else:
            about = ""
        proofs = ("; ".join(rw.proofs) + ".") if rw.proofs else ""
        safety = (f" Every divisor or logarithm argument the rewrite adds or removes is provably positive: "
                  f"{proofs}" if proofs else " It adds or removes no divisor and no logarithm.")
        return t.build(
            applicability=(f"In {describe_block(site.path[:-1])} the statement {t.before(canonical(stmt))} "
                           f"computes in {stmt.target.dtype}, a float dtype, so its right-hand side{prefix} "
                           f"is a real-valued expression: {t.before(old)}. {self.applies_because(rw, operand)}"
                           f"{about}.{safety}"),
            change=(f"The {self.name} rewrite turns {t.before(old)} into {t.after(new)}; tensor reads and "
                    f"opaque calls are kept as they are, and the statement becomes "
                    f"{t.after(canonical(rw.new_stmt))}."
                    + (f" Operand: {operand}." if operand else " No parameters.")),
            rationale=self.rationale(rw, operand),
            exactness=(f"Numerically equivalent only (N): {self.identity} holds in real arithmetic, but the "
                       "operations and their rounding differ, so the verifier holds the step to the "
                       f"{stmt.target.dtype} tolerance."),
        )

    def applies_because(self, rw: Rewrite, operand: str) -> str:
        """The precondition as met at this site (one sentence, no quotes)."""
        return f"SymPy's {self.name} changes its form (not only the order of its terms)"
