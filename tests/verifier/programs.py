"""A hypothesis generator of small, random, *valid* LEIR programs for differential testing.

Each program is a few top-level "templates" (elementwise maths, the four reductions, accumulate after
write, guarded prefix recurrences, gathers, nested blocks, integer arithmetic, argmax, bool masks, padding,
partial writes, shared/local staging) over tiny shapes, with random loop kinds and loop orders. Validity is by construction (the
tests still run the checker), and inputs are drawn so every program is well defined: gather indices are in
range, denominators are literals or ``abs(x)+1``, ``log``/``sqrt`` see ``abs(x)+1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from leir import ast as A
from leir.dtypes import numpy_dtype
from leir.parser import parse_body

RESULT_NAMES = ("C", "D", "E", "F", "H", "J", "K", "N", "O", "Q", "R", "S", "W", "X", "Y", "Z")
PLAIN_VARS = ("a", "c", "d", "f", "g", "h")
GPU_VARS = ("tx", "bx", "ty", "by")


@dataclass(frozen=True)
class Generated:
    """A generated program plus how to make valid inputs for it."""

    program: A.Program
    text: str
    #: Integer inputs that index another tensor: name → exclusive upper bound of their values.
    index_bounds: dict[str, int]

    def inputs(self, seed: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        out: dict[str, np.ndarray] = {}
        for decl in self.program.signature.tensors:
            if decl.role == "output":
                continue
            dtype = numpy_dtype(decl.dtype)
            if decl.name in self.index_bounds:
                out[decl.name] = rng.integers(0, self.index_bounds[decl.name], decl.shape).astype(dtype)
            elif decl.dtype == "bool":
                out[decl.name] = rng.random(decl.shape) < 0.5
            elif dtype.kind in "iu":
                out[decl.name] = rng.integers(-6, 7, decl.shape).astype(dtype)
            else:
                out[decl.name] = rng.standard_normal(decl.shape).astype(dtype)
        return out


class _Builder:
    def __init__(self, draw, fd: str, idt: str, n0: int, n1: int) -> None:
        self.draw = draw
        self.fd = fd
        self.idt = idt
        self.n0 = n0
        self.n1 = n1
        self.blocks: list[str] = []
        self.results: list[tuple[str, str, tuple[int, ...], str]] = []  # outputs: name, dtype, shape
        self.used_inputs: set[str] = set()
        self.index_bounds: dict[str, int] = {}
        self.names_used = 0

    # ---- naming ------------------------------------------------------------------------------------
    def fresh(self) -> str:
        self.names_used += 1
        return RESULT_NAMES[self.names_used - 1]

    def ref(self, name: str, dtype: str, *idx: str) -> str:
        sub = "_{" + ",".join(idx) + "}" if idx else ""
        return f"{name}^{{{dtype},g}}{sub}"

    def a(self, i: str, j: str) -> str:
        self.used_inputs.add("A")
        return self.ref("A", self.fd, i, j)

    def loops(self, kinds_allowed: tuple[str, ...], *extents: int) -> list[tuple[str, int, str]]:
        """Loops (kind, extent, var) with fresh, distinct variable names."""
        out = []
        used: set[str] = set()
        for n in extents:
            kind = self.draw(st.sampled_from(kinds_allowed))
            pool = GPU_VARS if kind == "B" else PLAIN_VARS
            var = self.draw(st.sampled_from([v for v in pool if v not in used]))
            used.add(var)
            out.append((kind, n, var))
        return out

    @staticmethod
    def head(loops) -> str:
        return "".join(f"{k}^{{{n}}}_{{{v}=0}}" for k, n, v in loops)

    # ---- expressions -------------------------------------------------------------------------------
    def fexpr(self, i: str, j: str, depth: int = 2) -> str:
        draw = self.draw
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            leaf = draw(st.sampled_from(("A", "A", "A", "lit", "var", "int", "bool")))
            if leaf == "A":
                return self.a(i, j)
            if leaf == "lit":
                return draw(st.sampled_from(("2", "0.5", "3", "1e-05", "1.5")))
            if leaf == "var":
                return draw(st.sampled_from((i, j)))
            if leaf == "int":
                self.used_inputs.add("I")
                return self.ref("I", self.idt, i, j)
            self.used_inputs.add("M")
            return self.ref("M", "bool", i, j)
        op = draw(st.sampled_from(("+", "-", "*", "div", "neg", "exp", "abs", "sqrt", "log", "erf",
                                   "max", "min", "ite", "sq", "pow")))
        x = self.fexpr(i, j, depth - 1)
        if op in ("+", "-", "*"):
            return f"({x}{op}{self.fexpr(i, j, depth - 1)})"
        if op == "div":
            return f"{x}/(abs({self.fexpr(i, j, depth - 1)})+1)"
        if op == "neg":
            return f"-({x})"
        if op == "exp":
            return f"exp(min({x},3))"
        if op in ("sqrt", "log"):
            return f"{op}(abs({x})+1)"
        if op in ("abs", "erf"):
            return f"{op}({x})"
        if op in ("max", "min"):
            return f"{op}({x},{self.fexpr(i, j, depth - 1)})"
        if op == "ite":
            return f"if_then_else({self.cond(i, j)},{x},{self.fexpr(i, j, depth - 1)})"
        if op == "sq":
            return f"{self.a(i, j)}**2"
        return f"(abs({x})+1)**1.5"

    def cond(self, i: str, j: str) -> str:
        draw = self.draw
        kind = draw(st.sampled_from(("cmp", "var", "chain", "bool", "and", "or")))
        if kind == "cmp":
            return f"{self.a(i, j)}{draw(st.sampled_from(('<', '<=', '>', '>=', '==', '!=')))}0"
        if kind == "var":
            return f"{i}<{j}"
        if kind == "chain":
            return f"1<={j}<{max(2, self.n1 - 1)}"
        if kind == "bool":
            self.used_inputs.add("M")
            return self.ref("M", "bool", i, j)
        op = "&" if kind == "and" else "|"
        return f"{self.a(i, j)}>0{op}{i}!={j}"

    # ---- templates ---------------------------------------------------------------------------------
    def add(self, block: str, name: str, dtype: str, shape: tuple[int, ...], role: str = "output") -> None:
        self.blocks.append(block)
        self.results.append((name, dtype, shape, role))

    def t_elementwise(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "V", "U", "B"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        if self.draw(st.booleans()):  # loop order swapped: a transposed walk of the same tensors
            lp = [lp[1], lp[0]]
            lp = [(k, self.n1 if v == j else self.n0, v) for k, _, v in lp]
        self.add(f"{self.head(lp)}[{self.ref(x, self.fd, i, j)}={self.fexpr(i, j)};];", x, self.fd,
                 (self.n0, self.n1))

    def t_reduce(self) -> None:
        x = self.fresh()
        sp = self.loops(("L", "P", "V", "U", "B"), self.n0)
        red_kind = self.draw(st.sampled_from(("L", "U", "B")))
        rvar = self.draw(st.sampled_from([v for v in (GPU_VARS if red_kind == "B" else PLAIN_VARS)
                                          if v != sp[0][2]]))
        rd = [(red_kind, self.n1, rvar)]
        i, j = sp[0][2], rvar
        scalar = self.draw(st.integers(0, 4)) == 0
        lhs = self.ref(x, self.fd) if scalar else self.ref(x, self.fd, i)
        e = self.fexpr(i, j, 1)
        form = self.draw(st.sampled_from(("+", "-", "*", "max", "min")))
        rhs = {"+": f"{lhs}+{e}", "-": f"{lhs}-{e}", "*": f"{lhs}*(1+{e}*0.1)",
               "max": f"max({lhs},{e})", "min": f"min({lhs},{e})"}[form]
        loops = sp + rd if self.draw(st.booleans()) else rd + sp
        self.add(f"{self.head(loops)}[{lhs}={rhs};];", x, self.fd, () if scalar else (self.n0,))

    def t_accumulate(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "U", "B"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        lp2 = self.loops(("L", "U"), self.n0, self.n1)
        i2, j2 = lp2[0][2], lp2[1][2]
        block = (f"{self.head(lp)}[{self.ref(x, self.fd, i, j)}={self.fexpr(i, j, 1)};];"
                 f"{self.head(lp2)}[{self.ref(x, self.fd, i2, j2)}={self.ref(x, self.fd, i2, j2)}"
                 f"+{self.a(i2, j2)}*2;];")
        self.add(block, x, self.fd, (self.n0, self.n1))

    def t_recurrence(self) -> None:
        x = self.fresh()
        sp = self.loops(("L", "P", "B"), self.n0)
        rk = self.draw(st.sampled_from(("L", "U")))
        rv = self.draw(st.sampled_from([v for v in PLAIN_VARS if v != sp[0][2]]))
        i, j = sp[0][2], rv
        prev = self.ref(x, self.fd, i, f"{j}-1")
        init = self.draw(st.sampled_from(("0", "1", "-inf")))
        step = self.draw(st.sampled_from((
            f"max(if_then_else({j}-1<0,{init},{prev}),{self.a(i, j)})",
            f"if_then_else({j}-1<0,0,{prev})*0.5+{self.a(i, j)}",
            f"if_then_else({j}<1,{self.a(i, j)},{prev}+{self.a(i, j)})",
        )))
        self.add(f"{self.head(sp + [(rk, self.n1, rv)])}[{self.ref(x, self.fd, i, j)}={step};];", x,
                 self.fd, (self.n0, self.n1))

    def t_gather(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "B"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        self.used_inputs.add("G")
        self.index_bounds["G"] = self.n0
        g = self.ref("G", self.idt, i)
        self.add(f"{self.head(lp)}[{self.ref(x, self.fd, i, j)}={self.ref('A', self.fd, g, j)}*2"
                 f"+{self.a(i, j)};];", x, self.fd, (self.n0, self.n1))
        self.used_inputs.add("A")

    def t_nested(self) -> None:
        s, x = self.fresh(), self.fresh()
        outer = self.loops(("L", "P", "B"), self.n0)
        i = outer[0][2]
        j = self.draw(st.sampled_from([v for v in PLAIN_VARS if v != i]))
        kind = self.draw(st.sampled_from(("L", "U")))
        block = (f"{self.head(outer)}[{kind}^{{{self.n1}}}_{{{j}=0}}[{self.ref(s, self.fd, i)}="
                 f"{self.ref(s, self.fd, i)}+{self.a(i, j)};];L^{{{self.n1}}}_{{{j}=0}}"
                 f"[{self.ref(x, self.fd, i, j)}={self.a(i, j)}-{self.ref(s, self.fd, i)};];];")
        self.add(block, x, self.fd, (self.n0, self.n1))

    def t_int(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "V", "U"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        self.used_inputs.add("I")
        v = self.ref("I", self.idt, i, j)
        dt = self.draw(st.sampled_from(("i32", "i64")))
        e = self.draw(st.sampled_from((f"{v}//2+{v}%3-{j}", f"{v}/3*{i}+{v}", f"max({v},{i})-min({v},2)",
                                       f"{v}*{v}+{j}*2", f"abs({v})%4", f"if_then_else({v}>{j},{v},-{i})")))
        self.add(f"{self.head(lp)}[{self.ref(x, dt, i, j)}={e};];", x, dt, (self.n0, self.n1))

    def t_argmax(self) -> None:
        d, c = self.fresh(), self.fresh()
        i = self.draw(st.sampled_from(PLAIN_VARS))
        j = self.draw(st.sampled_from([v for v in PLAIN_VARS if v != i]))
        head = f"L^{{{self.n0}}}_{{{i}=0}}L^{{{self.n1}}}_{{{j}=0}}"
        block = (f"{head}[{self.ref(d, self.fd, i)}=max({self.ref(d, self.fd, i)},{self.a(i, j)});"
                 f"{self.ref(c, 'i64', i)}=0;];"
                 f"{head}[{self.ref(c, 'i64', i)}=if_then_else({self.a(i, j)}>={self.ref(d, self.fd, i)},"
                 f"{j},{self.ref(c, 'i64', i)});];")
        self.add(block, c, "i64", (self.n0,))

    def t_bool(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "U"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        self.add(f"{self.head(lp)}[{self.ref(x, 'bool', i, j)}=if_then_else({self.cond(i, j)},1,0);];",
                 x, "bool", (self.n0, self.n1))

    def t_pad(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "V", "B"), self.n0, self.n1 + 2)
        i, j = lp[0][2], lp[1][2]
        self.add(f"{self.head(lp)}[{self.ref(x, self.fd, i, j)}=if_then_else(1<={j}<{self.n1 + 1},"
                 f"{self.a(i, f'{j}-1')},-inf);];", x, self.fd, (self.n0, self.n1 + 2))

    def t_partial(self) -> None:
        x = self.fresh()
        lp = self.loops(("L", "P", "B"), self.n0)
        i = lp[0][2]
        self.add(f"{self.head(lp)}[{self.ref(x, self.fd, f'{i}*2')}={self.a(i, '0')}+1;];", x, self.fd,
                 (2 * self.n0 - 1,))

    def t_multi(self) -> None:
        x, y = self.fresh(), self.fresh()
        lp = self.loops(("L", "P", "U", "B"), self.n0, self.n1)
        i, j = lp[0][2], lp[1][2]
        block = (f"{self.head(lp)}[{self.ref(x, self.fd, i, j)}={self.fexpr(i, j, 1)};"
                 f"{self.ref(y, self.fd, i, j)}={self.ref(x, self.fd, i, j)}*{self.a(i, j)}+1;];")
        self.add(block, y, self.fd, (self.n0, self.n1))


    def t_staged(self) -> None:
        """A shared-memory staging buffer per block and a per-thread local accumulator."""
        s, r, x = self.fresh(), self.fresh(), self.fresh()
        n0, n1, fd = self.n0, self.n1, self.fd
        j = self.draw(st.sampled_from(PLAIN_VARS))
        sh = f"{s}^{{{fd},s}}"
        loc = f"{r}^{{{fd},l}}_{{bx,tx}}"
        block = (f"B^{{{n0}}}_{{bx=0}}[B^{{{n1}}}_{{tx=0}}[{sh}_{{bx,tx}}={self.a('bx', 'tx')}*2;];"
                 f"B^{{{n1}}}_{{tx=0}}[L^{{{n1}}}_{{{j}=0}}[{loc}={loc}+{sh}_{{bx,{j}}};];"
                 f"{self.ref(x, fd, 'bx', 'tx')}={loc}-{sh}_{{bx,{n1 - 1}-tx}};];];")
        self.add(block, x, fd, (n0, n1))


TEMPLATES = ("elementwise", "reduce", "accumulate", "recurrence", "gather", "nested", "int", "argmax",
             "bool", "pad", "partial", "multi", "staged")


@st.composite
def leir_programs(draw, templates: tuple[str, ...] = TEMPLATES) -> Generated:
    """A valid program of 1–3 templates over tiny shapes."""
    fd = draw(st.sampled_from(("f32", "f64")))
    idt = draw(st.sampled_from(("i32", "i64")))
    n0 = draw(st.integers(1, 4))
    n1 = draw(st.integers(2, 5))
    b = _Builder(draw, fd, idt, n0, n1)
    for name in draw(st.lists(st.sampled_from(templates), min_size=1, max_size=3)):
        getattr(b, f"t_{name}")()
    b.used_inputs.add("A")
    decls = []
    shapes = {"A": (n0, n1), "I": (n0, n1), "M": (n0, n1), "G": (n0,)}
    dtypes = {"A": fd, "I": idt, "M": "bool", "G": idt}
    for name in ("A", "G", "I", "M"):
        if name in b.used_inputs:
            decls.append(A.TensorDecl(name, "input", dtypes[name], shapes[name]))
    for name, dtype, shape, role in b.results:
        if role == "output":
            decls.append(A.TensorDecl(name, "output", dtype, shape))
    text = "".join(b.blocks)
    return Generated(A.Program(A.Signature(tuple(decls)), parse_body(text)), text, dict(b.index_bounds))
