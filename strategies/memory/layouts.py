"""Layout maps shared by layout_transformation (#20, a copy) and set_storage_layout (#22, in place).

LEIR has no layout syntax: a layout *is* the shape and order of a tensor's subscript list. A layout map
takes the subscripts of a reference to a row-major tensor of shape ``shape`` and returns the subscripts
of the same element in the transformed tensor, so both strategies rewrite references the same way:

* ``transpose:i,j`` swaps dimensions ``i`` and ``j``;
* ``flatten`` linearises every dimension into one (``e0*n1*n2+e1*n2+e2``);
* ``fuse:i`` merges dimensions ``i`` and ``i+1`` (``ei*n(i+1)+e(i+1)``);
* ``split:i:f`` splits dimension ``i`` into ``ni/f`` and ``f`` (``ei//f, ei%f``), ``f`` a proper divisor;
* ``pack:i:f`` splits dimension ``i`` the same way and moves the outer part first and the inner part
  last (``ei//f, e0, …, ei%f``): panels of ``f`` along ``i``, each contiguous — the packed operand of a
  register-tiled matrix product, whose tile reads ``f`` consecutive elements per step of the reduction
  (TVM's ``transform_layout`` with ``lambda i, j: [i // f, j, i % f]``).

Every map is a bijection between the two index spaces, so reading through it gives the same element.
"""

from __future__ import annotations

from leir.ast import Expr
from leir.builders import iadd, ifloordiv, imod, imul
from leir.dtypes import numel


class LayoutError(ValueError):
    """A layout spelling that does not parse or does not fit the tensor's shape."""


def layout_choices(shape: tuple[int, ...]) -> tuple[str, ...]:
    """Every layout map that changes a tensor of ``shape``, in a stable order (transposes, fuses, flatten,
    splits, packs; a rank-1 tensor's pack would be its split)."""
    rank = len(shape)
    out: list[str] = []
    for i in range(rank):
        for j in range(i + 1, rank):
            if shape[i] > 1 or shape[j] > 1:
                out.append(f"transpose:{i},{j}")
    for i in range(rank - 1):
        out.append(f"fuse:{i}")
    if rank > 2:
        out.append("flatten")
    for i, n in enumerate(shape):
        out.extend(f"split:{i}:{f}" for f in range(2, n) if n % f == 0)
    if rank > 1:
        for i, n in enumerate(shape):
            out.extend(f"pack:{i}:{f}" for f in range(2, n) if n % f == 0)
    return tuple(out)


def _parse(spec: str, rank: int) -> tuple[str, tuple[int, ...]]:
    kind, _, rest = spec.partition(":")
    try:
        args = tuple(int(p) for p in rest.replace(":", ",").split(",")) if rest else ()
    except ValueError:
        raise LayoutError(f"layout {spec!r}: arguments must be integers") from None
    wanted = {"transpose": 2, "flatten": 0, "fuse": 1, "split": 2, "pack": 2}
    if kind not in wanted or len(args) != wanted[kind]:
        raise LayoutError(f"layout {spec!r} is not one of transpose:i,j flatten fuse:i split:i:f pack:i:f")
    dims = args[:1] if kind in ("split", "pack") else args
    if any(not 0 <= d < rank for d in dims) or (kind == "fuse" and args[0] + 1 >= rank):
        raise LayoutError(f"layout {spec!r} names a dimension a rank-{rank} tensor does not have")
    return kind, args


def layout_shape(spec: str, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the transformed tensor."""
    kind, args = _parse(spec, len(shape))
    dims = list(shape)
    if kind == "transpose":
        i, j = args
        dims[i], dims[j] = dims[j], dims[i]
    elif kind == "flatten":
        dims = [numel(shape)]
    elif kind == "fuse":
        i = args[0]
        dims[i:i + 2] = [shape[i] * shape[i + 1]]
    else:
        i, f = args
        if not 1 < f < shape[i] or shape[i] % f:
            raise LayoutError(f"{kind} factor {f} does not properly divide extent {shape[i]}")
        if kind == "split":
            dims[i:i + 1] = [shape[i] // f, f]
        else:
            dims = [shape[i] // f, *dims[:i], *dims[i + 1:], f]
    return tuple(dims)


def map_indices(spec: str, shape: tuple[int, ...], indices: tuple[Expr, ...]) -> tuple[Expr, ...]:
    """The subscripts of the same element in the transformed tensor."""
    kind, args = _parse(spec, len(shape))
    layout_shape(spec, shape)  # validates split factors
    out = list(indices)
    if kind == "transpose":
        i, j = args
        out[i], out[j] = out[j], out[i]
    elif kind == "flatten":
        flat: Expr = indices[0]
        for index, n in zip(indices[1:], shape[1:], strict=True):
            flat = iadd(imul(flat, n), index)
        out = [flat]
    elif kind == "fuse":
        i = args[0]
        out[i:i + 2] = [iadd(imul(indices[i], shape[i + 1]), indices[i + 1])]
    elif kind == "split":
        i, f = args
        out[i:i + 1] = [ifloordiv(indices[i], f), imod(indices[i], f)]
    else:
        i, f = args
        out = [ifloordiv(indices[i], f), *out[:i], *out[i + 1:], imod(indices[i], f)]
    return tuple(out)


def describe_layout(spec: str) -> str:
    """Words for a layout map, for traces (``dimensions 0 and 1 swapped``)."""
    kind, _, rest = spec.partition(":")
    if kind == "transpose":
        i, j = rest.split(",")
        return f"dimensions {i} and {j} swapped (a transpose)"
    if kind == "flatten":
        return "every dimension linearised into one (a flatten)"
    if kind == "fuse":
        first = int(rest)
        return f"dimensions {first} and {first + 1} fused into one"
    dim, factor = rest.split(":")
    if kind == "pack":
        return (f"dimension {dim} packed into panels of {factor}: the panel index first, the position "
                f"inside a panel last")
    return f"dimension {dim} split into an outer part and an inner part of extent {factor}"
