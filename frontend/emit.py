"""The emission context: tensors, fresh names, loop nests, and the helpers every operator family shares.

Emitters never build loop headers or broadcasting subscripts by hand: ``block``, ``elementwise``,
``reduce`` and ``bref`` do it one way for all of them, so the whole frontend follows the public data's
conventions (first output dimension bound by one ``B^{n}_{tx=0}`` loop, the rest ``L``; fresh loop
variables per block; one block per operator step) and a change of convention is a change here only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from leir.ast import Assign, Block, Expr, Loop, Num, TensorRef, Var
from leir.dtypes import numel

from . import expr as E
from .errors import UnsupportedOperatorError
from .names import NameSource, loop_var_names

#: Combining operations of a reduction statement and their LEIR spelling.
COMBINERS = ("+", "*", "max", "min")


def reduced_index(vs, dims, keepdim):
    """Subscripts of a reduced tensor (``dims`` removed, or 0 when kept) from full-shape loop vars."""
    out = []
    for i, v in enumerate(vs):
        if i in dims:
            if keepdim:
                out.append(E.ZERO)
        else:
            out.append(v)
    return out

@dataclass(frozen=True)
class Tensor:
    """A tensor of the program being built: a known one (input/param/const) or an intermediate."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    role: str = "intermediate"

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return numel(self.shape)

    def ref(self, *indices) -> TensorRef:
        if len(indices) != len(self.shape):
            raise ValueError(f"{self.name}: {len(indices)} indices for shape {self.shape}")
        return TensorRef(self.name, self.dtype, "g", tuple(E.as_expr(i) for i in indices))


@dataclass
class KnownTensor:
    tensor: Tensor
    value: np.ndarray | None
    #: The framework tensor the value came from (so a reference can load new values into it).
    source: object = None


class Emitter:
    """Accumulates the blocks and known tensors of one translation."""

    def __init__(self, *, bind_first: bool = True) -> None:
        self.bind_first = bind_first
        self.names = NameSource()
        self.blocks: list[Block] = []
        self.inputs: list[Tensor] = []
        self.params: dict[object, KnownTensor] = {}
        #: fx nodes of plain writes whose result depends on write order where their indices repeat
        #: (``x[idx] = v``, ``index_put_``, ``scatter`` without reduce): the translation says so.
        self.order_dependent: list[object] = []

    # -------------------------------------------------------------------------------------- tensors

    def fresh(self, shape: Sequence[int], dtype: str) -> Tensor:
        return Tensor(self.names.take(), dtype, tuple(int(s) for s in shape))

    def add_input(self, shape: Sequence[int], dtype: str) -> Tensor:
        t = Tensor(self.names.take(), dtype, tuple(int(s) for s in shape), "input")
        self.inputs.append(t)
        return t

    def add_known(self, key: object, value: np.ndarray, dtype: str, role: str,
                  source: object = None) -> Tensor:
        """A parameter/buffer (``param``) or constant (``const``), once per key however often it is used."""
        if key in self.params:
            return self.params[key].tensor
        t = Tensor(self.names.take(), dtype, tuple(int(s) for s in value.shape), role)
        self.params[key] = KnownTensor(t, value, source)
        return t

    # ---------------------------------------------------------------------------------------- loops

    def loops(self, extents: Sequence[int], *, bind: bool = True) -> tuple[tuple[Loop, ...], list[Var]]:
        """Loop header for ``extents`` and its variables; a unit loop when there are no extents."""
        names = loop_var_names()
        loops: list[Loop] = []
        variables: list[Var] = []
        for i, extent in enumerate(extents):
            if i == 0 and bind and self.bind_first:
                loops.append(Loop("B", int(extent), "tx"))
                variables.append(Var("tx"))
            else:
                name = next(names)
                loops.append(Loop("L", int(extent), name))
                variables.append(Var(name))
        if not loops:
            loops.append(Loop("B", 1, "tx") if self.bind_first else Loop("L", 1, next(names)))
        return tuple(loops), variables

    def block(self, extents: Sequence[int], body: Callable[..., Assign | Sequence[Assign]],
              *, bind: bool = True) -> None:
        """Append one block over ``extents``; ``body`` gets the loop variables and returns its statements."""
        loops, variables = self.loops(extents, bind=bind)
        items = body(*variables)
        if isinstance(items, Assign):
            items = [items]
        self.blocks.append(Block(loops, tuple(items)))

    # ------------------------------------------------------------------------------------ references

    @staticmethod
    def bref(t: Tensor | float | int | bool, out_vars: Sequence[Expr], out_shape: Sequence[int]) -> Expr:
        """Read ``t`` broadcast (numpy rules) to an output indexed by ``out_vars``; scalars are literals."""
        if not isinstance(t, Tensor):
            return E.lit(t)
        offset = len(out_shape) - t.ndim
        if offset < 0:
            raise ValueError(f"cannot broadcast {t.shape} to {tuple(out_shape)}")
        idx = []
        for j, size in enumerate(t.shape):
            k = j + offset
            idx.append(E.ZERO if size == 1 and out_shape[k] != 1 else out_vars[k])
        return t.ref(*idx)

    # -------------------------------------------------------------------------------------- patterns

    def elementwise(self, out_shape: Sequence[int], dtype: str, operands: Sequence,
                    fn: Callable[..., Expr], *, out: Tensor | None = None) -> Tensor:
        """One block computing ``fn(*operands)`` at every output element (operands broadcast)."""
        out_shape = tuple(out_shape)
        out = out or self.fresh(out_shape, dtype)

        def body(*vs):
            args = [self.bref(o, vs, out_shape) for o in operands]
            return Assign(out.ref(*vs), fn(*args))

        self.block(out_shape, body)
        return out

    def fill(self, shape: Sequence[int], dtype: str, value) -> Tensor:
        return self.elementwise(shape, dtype, [], lambda: E.lit(value))

    def reduce(self, src: Tensor | None, dims: Sequence[int], keepdim: bool, combiner: str,
               dtype: str, *, value: Callable[..., Expr] | None = None,
               shape: Sequence[int] | None = None, out: Tensor | None = None) -> Tensor:
        """``out = combine(out, value)`` over the loops of ``src``'s shape; ``dims`` are reduced away.

        The statement is a LEIR reduction (implicit init from ``combiner``) because ``out`` is fresh.
        ``value`` gets the loop variables (default: ``src`` at them).
        """
        shape = tuple(src.shape if shape is None else shape)
        dims = sorted({d % len(shape) for d in dims}) if shape else []
        out_shape = []
        for i, s in enumerate(shape):
            if i in dims:
                if keepdim:
                    out_shape.append(1)
            else:
                out_shape.append(s)
        out = out or self.fresh(out_shape, dtype)

        def body(*vs):
            lhs = out.ref(*reduced_index(vs, dims, keepdim))
            val = value(*vs) if value is not None else src.ref(*vs)
            return Assign(lhs, combine(combiner, lhs, val))

        self.block(shape, body)
        return out


def combine(combiner: str, acc: Expr, value: Expr) -> Expr:
    if combiner == "+":
        return E.add(acc, value)
    if combiner == "*":
        return E.mul(acc, value)
    if combiner == "max":
        return E.maximum(acc, value)
    if combiner == "min":
        return E.minimum(acc, value)
    raise ValueError(combiner)


def unsupported(op: str, detail: str = "", supported: str = "") -> UnsupportedOperatorError:
    return UnsupportedOperatorError(op, detail=detail, supported=supported)


def is_num(x) -> bool:
    return isinstance(x, int | float | bool) and not isinstance(x, Num)
