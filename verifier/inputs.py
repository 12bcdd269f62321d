"""Seeded input arrays for running a LEIR program: same program + seed → the same bytes, always.

What makes inputs useful for verification, beyond "random":

* gathers must get valid indices: a tensor used inside another tensor's subscript (``H_{C_{tx}}``) gets
  values bounded so that the whole index expression stays inside the indexed dimension (interval
  arithmetic over the loop ranges, so ``H_{C_{i}*2+1}`` is bounded too);
* a tensor fed to ``log``/``sqrt`` (or a fractional power) gets positive values and an integer tensor used
  as a divisor never holds 0, so a pass means the programs agreed on numbers, not on a wall of NaNs;
* ``special_values=True`` feeds the edge values docs/leir.md §6 defines a result for, wherever the program
  can meet them: about one position in eight gets a zero, a negative or a large magnitude (zeros also in
  integer divisors, so ``//`` and ``%`` by zero happen; -1 and the type's extremes in signed integers);
  a float tensor that a statement converts to an integer type gets values outside that type's range
  (±inf and NaN included); and every float tensor of 8 or more elements gets a NaN, then (from 16 and 24
  elements) a +inf and a -inf (a ``log``/``sqrt`` argument a NaN, a 0, a -1 and a +inf, so log meets
  -inf, NaN and inf) at seeded positions — kept *sparse* so most outputs stay finite and the numbers are
  still compared. The program meets more infinities itself: zero divisors, ``log(0)``, ``exp`` of the
  large magnitudes. ``infinities=False`` keeps the ±inf out (NaN only), for a caller whose reference
  has no single answer for them (docs/verification.md, "Special values");
* parameters and constants come from the source program when the caller passes them (``params``);
* ``large_offset=True`` draws every float *input* as ``offset + N(0, 1)`` (``LARGE_OFFSETS``: 1000 in
  f32/f64, smaller in f16/bf16 so sums and squares stay finite): values that agree in their leading
  digits, where a rewrite that subtracts large nearly-equal quantities (a variance expanded into
  ``E[x^2] - E[x]^2``) loses its accuracy — scattered special values seldom show that. Integer, bool
  and index tensors, parameters and constants are drawn as usual;
* ``domains`` (``InputDomain`` by tensor name, what the translation observed of the source's
  ``get_inputs()``: integer ranges, masks, value ranges) replace the default distribution of the tensors
  they name, so an index tensor the source draws from ``randint(0, 1024)`` never holds -1 — special
  values included, which stay inside an integer domain (its ends, and 0 where it lies inside).

Each tensor draws from its own generator seeded by ``(seed, crc32(name))`` so adding a tensor to a
program never changes the values of the others.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from leir.ast import (
    FLOAT_DTYPES,
    BinOp,
    Call,
    Compare,
    Cond,
    Expr,
    IfThenElse,
    Logical,
    Loop,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
    statements,
    walk_expr,
)
from leir.dtypes import FP8_MAX
from leir.dtypes import cast_to as leir_cast_to
from leir.dtypes import exchange_dtype as leir_exchange_dtype

INPUT_ROLES = ("input", "param", "const")

_SPECIAL_FRACTION = 8  # one position in this many gets a special value

#: ``large_offset`` inputs are ``offset + N(0, 1)``; the offset per dtype keeps f16/bf16 sums of a few
#: thousand such values (and bf16's coarse spacing) usable: 1000 in f16 would overflow a sum of 66;
#: fp8 (computed in f32, stored with 2-3 mantissa bits) keeps a small one.
LARGE_OFFSETS = {"f64": 1000.0, "f32": 1000.0, "bf16": 64.0, "f16": 32.0, "f8e4m3": 8.0, "f8e5m2": 8.0}

DOMAIN_KINDS = ("int", "bool", "float")


@dataclass(frozen=True)
class InputDomain:
    """The values a source program's ``get_inputs()`` gives one input (both ends included).

    ``int``: integers in ``[low, high]`` (an index drawn by ``randint(0, n)`` is ``[0, n-1]``) — also a
    float tensor whose values were all whole numbers; ``bool``: a mask; ``float``: reals in
    ``[low, high]`` (``rand()`` is ``[0, 1]``; a ``None`` end is unbounded, drawn as today's normal).
    """

    kind: str
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in DOMAIN_KINDS:
            raise ValueError(f"unknown input domain kind {self.kind!r} (known: {', '.join(DOMAIN_KINDS)})")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"input domain [{self.low}, {self.high}] is empty")
        if self.kind == "int" and (self.low is None or self.high is None):
            raise ValueError("an int input domain needs both ends")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "low": self.low, "high": self.high}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InputDomain:
        if not isinstance(data, Mapping) or "kind" not in data:
            raise ValueError(f"an input domain is an object with a 'kind', got {data!r}")
        low, high = data.get("low"), data.get("high")
        for end in (low, high):
            if end is not None and (isinstance(end, bool) or not isinstance(end, int | float)):
                raise ValueError(f"input domain ends must be numbers or null, got {end!r}")
        return cls(str(data["kind"]), low, high)


def domains_from_json(data: Mapping[str, Any]) -> dict[str, InputDomain]:
    """``{name: InputDomain}`` from the JSON object ``steptp translate`` writes beside the program."""
    if not isinstance(data, Mapping):
        raise ValueError("input domains must be a JSON object keyed by tensor name")
    return {str(name): InputDomain.from_json(value) for name, value in data.items()}


def domains_digest(domains: Mapping[str, InputDomain] | None) -> str:
    """A stable text of ``domains`` (part of the result cache key); empty when there are none."""
    if not domains:
        return ""
    import json

    return json.dumps({k: domains[k].to_json() for k in sorted(domains)}, sort_keys=True)


def exchange_dtype(dtype: str) -> np.dtype:
    """The numpy dtype arrays of a LEIR dtype are exchanged with TVM in.

    Same as ``leir.dtypes.numpy_dtype`` except ``bf16`` and the fp8 types, which TVM takes as ``ml_dtypes``
    arrays rather than the interpreter's float32 stand-in (fp8 ones as their bytes: ``verifier.build``).
    """
    return leir_exchange_dtype(dtype)


def _rng(seed: int, name: str, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(name.encode()), salt])


# ------------------------------------------------------------------------------ what the body tells us


def _loop_ranges(loops: Iterable[Loop]) -> dict[str, tuple[int, int]]:
    return {loop.var: (0, loop.extent - 1) for loop in loops}


def _interval(node: Expr, ranges: dict[str, tuple[int, int]], index_bounds: dict[str, int],
              focus: str) -> tuple[int, int] | None:
    """Integer interval of an index expression; ``focus`` ranges over [0, index_bounds[focus]-1]."""
    if isinstance(node, Paren):
        return _interval(node.inner, ranges, index_bounds, focus)
    if isinstance(node, Num):
        return (int(node.value), int(node.value)) if node.is_int else None
    if isinstance(node, Var):
        return ranges.get(node.name)
    if isinstance(node, TensorRef):
        upper = index_bounds.get(node.name, 1) if node.name == focus else 1
        return (0, upper - 1)
    if isinstance(node, Neg):
        inner = _interval(node.operand, ranges, index_bounds, focus)
        return None if inner is None else (-inner[1], -inner[0])
    if isinstance(node, BinOp):
        left = _interval(node.left, ranges, index_bounds, focus)
        right = _interval(node.right, ranges, index_bounds, focus)
        if left is None or right is None:
            return None
        if node.op == "+":
            return left[0] + right[0], left[1] + right[1]
        if node.op == "-":
            return left[0] - right[1], left[1] - right[0]
        if node.op == "*":
            products = [a * b for a in left for b in right]
            return min(products), max(products)
        if node.op in ("//", "/") and right[0] == right[1] and right[0] > 0:
            return left[0] // right[0], left[1] // right[0]
        if node.op == "%" and right[0] == right[1] and right[0] > 0:
            return 0, right[0] - 1
    return None


def _largest_bound(expr: Expr, name: str, ranges: dict[str, tuple[int, int]], dim: int) -> int:
    """Largest m such that ``expr`` stays in [0, dim) when tensor ``name`` holds values in [0, m)."""
    def fits(m: int) -> bool:
        interval = _interval(expr, ranges, {name: m}, name)
        return interval is not None and interval[0] >= 0 and interval[1] <= dim - 1

    if not fits(1):
        return 1
    low, high = 1, max(dim, 1)
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def _all_refs(program: Program) -> Iterable[tuple[TensorRef, tuple[Loop, ...]]]:
    for _path, assign, loops in statements(program.body):
        for root in (assign.target, assign.value):
            for node in walk_expr(root):
                if isinstance(node, TensorRef):
                    yield node, loops


def index_bounds(program: Program, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
    """For every tensor used inside a subscript: the exclusive upper bound its values must respect."""
    bounds: dict[str, int] = {}
    for ref, loops in _all_refs(program):
        shape = shapes.get(ref.name)
        for position, index in enumerate(ref.indices):
            nested = {n.name for n in walk_expr(index) if isinstance(n, TensorRef)}
            for name in nested:
                if shape is None or position >= len(shape):
                    bounds[name] = min(bounds.get(name, 1), 1)
                    continue
                bound = _largest_bound(index, name, _loop_ranges(loops), shape[position])
                bounds[name] = min(bounds.get(name, bound), bound)
    return bounds


def _positive_and_divisor_tensors(program: Program) -> tuple[set[str], set[str]]:
    positive: set[str] = set()
    divisors: set[str] = set()
    for _path, assign, _loops in statements(program.body):
        for node in walk_expr(assign.value):
            if isinstance(node, Call) and node.func in ("log", "sqrt"):
                positive.update(r.name for r in walk_expr(node.args[0]) if isinstance(r, TensorRef))
            elif isinstance(node, BinOp) and node.op == "**":
                positive.update(r.name for r in walk_expr(node.left) if isinstance(r, TensorRef))
            elif isinstance(node, BinOp) and node.op in ("/", "//", "%"):
                divisors.update(r.name for r in walk_expr(node.right) if isinstance(r, TensorRef))
    return positive, divisors


def converted_tensors(program: Program) -> set[str]:
    """Float tensors whose values some statement converts to an integer type (float → int conversion).

    That is a float tensor read as a value of a statement whose LHS is an integer or bool (arithmetic
    runs in the LHS dtype), or read with an integer annotation. Operands of a condition are compared in
    their own promoted type, so they are not conversions (argmax compares floats in an i64 statement).
    """
    declared = {d.name: d.dtype for d in program.signature.tensors}
    found: set[str] = set()

    def visit(node: Cond, into_int: bool) -> None:
        if isinstance(node, TensorRef):
            if declared.get(node.name) in FLOAT_DTYPES and (into_int or node.dtype not in FLOAT_DTYPES):
                found.add(node.name)
        elif isinstance(node, IfThenElse):
            visit(node.then, into_int)
            visit(node.otherwise, into_int)
        elif isinstance(node, Compare | Logical):
            return
        elif isinstance(node, Paren):
            visit(node.inner, into_int)
        elif isinstance(node, Neg):
            visit(node.operand, into_int)
        elif isinstance(node, BinOp):
            visit(node.left, into_int)
            visit(node.right, into_int)
        elif isinstance(node, Call):
            for arg in node.args:
                visit(arg, into_int)

    for _path, assign, _loops in statements(program.body):
        visit(assign.value, assign.target.dtype not in FLOAT_DTYPES)
    return found


# ----------------------------------------------------------------------------------------- generation


#: Floats outside the range of some integer type (u8/i8, i16/u16, i32/u32, every type), in both signs.
_OUT_OF_RANGE = (300.5, -129.5, 7.0e4, -4.0e4, 5.0e9, -3.0e9, 1.0e20, -1.0e20, np.inf, -np.inf, np.nan)
_OUT_OF_RANGE_F16 = (300.5, -129.5, 4.0e4, -4.0e4, 6.0e4, -6.0e4, np.inf, -np.inf, np.nan)


def _special_float(shape: tuple[int, ...], rng: np.random.Generator, dtype: str,
                   converted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    large = {"f16": 3.0e3, "bf16": 1.0e6, "f8e4m3": 300.0, "f8e5m2": 3.0e4}.get(dtype, 1.0e6)
    palette = [0.0, -0.0, -1.0, -large, large, -2.5, 1.0e-3, -1.0e-3]
    if converted:
        palette += _OUT_OF_RANGE_F16 if dtype == "f16" else _OUT_OF_RANGE
    mask = rng.integers(0, _SPECIAL_FRACTION, size=shape) == 0
    values = np.array(palette, dtype=np.float64)[rng.integers(0, len(palette), size=shape)]
    return mask, values


def _with_nonfinite(values: np.ndarray, rng: np.random.Generator, positive: bool,
                    infinities: bool = True) -> np.ndarray:
    """NaN, +inf, -inf (a log/sqrt argument: NaN, 0, -1, +inf) at seeded positions, one per 8 elements.

    The order of ``edges`` is the order they appear in as a tensor grows, so a small tensor gets the NaN
    first and stays mostly finite. Without ``infinities`` only the NaN (and the 0 and -1) are fed.
    """
    if positive:
        edges: tuple[float, ...] = (np.nan, 0.0, -1.0, np.inf) if infinities else (np.nan, 0.0, -1.0)
    else:
        edges = (np.nan, np.inf, -np.inf) if infinities else (np.nan,)
    count = min(len(edges), values.size // _SPECIAL_FRACTION)
    if count == 0:
        return values
    out = values.copy().reshape(-1)
    out[rng.choice(out.size, size=count, replace=False)] = edges[:count]
    return out.reshape(values.shape)


def _special_int(values: np.ndarray, rng: np.random.Generator, target: np.dtype, low: int, high: int,
                 positive: bool) -> np.ndarray:
    """Zeros (divisors included), larger magnitudes, and for signed types -1 and the extremes."""
    info = np.iinfo(target)
    palette = [0, high * 8, low * 8 if low < 0 else 1, high - 1]
    if info.min < 0:
        palette.append(-1)
    if not positive:
        palette += [int(info.max)] + ([int(info.min)] if info.min < 0 else [])
    mask = rng.integers(0, _SPECIAL_FRACTION, size=values.shape) == 0
    chosen = np.array(palette, dtype=object)[rng.integers(0, len(palette), size=values.shape)]
    out = values.astype(target)
    out[mask] = chosen[mask].astype(target) if mask.any() else out[mask]
    return out


def _int_domain(domain: InputDomain, index_bound: int | None) -> tuple[int, int] | None:
    """The integer range ``[low, high]`` to draw from: the domain, inside the program's index bound."""
    assert domain.low is not None and domain.high is not None
    low, high = int(np.ceil(domain.low)), int(np.floor(domain.high))
    if index_bound is not None:
        low, high = max(low, 0), min(high, max(int(index_bound), 1) - 1)
    return (low, high) if low <= high else None


def _from_domain(name: str, dtype: str, shape: tuple[int, ...], domain: InputDomain, *, seed: int,
                 special_values: bool, index_bound: int | None, positive: bool,
                 infinities: bool) -> np.ndarray | None:
    """Values inside ``domain`` (``None``: the domain gives nothing to draw from, use the default rule).

    Special values stay inside an integer or bool domain (its ends, and 0 where it lies inside): an
    index is never out of range. A float domain gets its ends, then the NaN/±inf of the default rule.
    """
    rng = _rng(seed, name)
    target = exchange_dtype(dtype)
    if domain.kind == "bool" or dtype == "bool":
        return np.asarray(rng.random(size=shape) < 0.5).astype(target)
    if domain.kind == "int":
        bounds = _int_domain(domain, index_bound)
        if bounds is None:
            return None
        low, high = bounds
        values: np.ndarray = rng.integers(low, high + 1, size=shape, dtype=np.int64)
        if special_values:
            srng = _rng(seed, name, 1)
            palette = np.array(sorted({low, high} | ({0} if low <= 0 <= high else set())), dtype=np.int64)
            mask = srng.integers(0, _SPECIAL_FRACTION, size=shape) == 0
            values = np.where(mask, palette[srng.integers(0, len(palette), size=shape)], values)
        return values.astype(target)
    if domain.low is None or domain.high is None or dtype not in FLOAT_DTYPES:
        return None
    floats = domain.low + (domain.high - domain.low) * rng.random(size=shape)
    if special_values:
        srng = _rng(seed, name, 1)
        mask = srng.integers(0, _SPECIAL_FRACTION, size=shape) == 0
        ends = np.where(srng.integers(0, 2, size=shape) == 0, domain.low, domain.high)
        floats = _with_nonfinite(np.where(mask, ends, floats), _rng(seed, name, 2), positive, infinities)
    with np.errstate(over="ignore"):
        return floats.astype(target)


def generate_tensor(name: str, dtype: str, shape: tuple[int, ...], *, seed: int, special_values: bool = False,
                    index_bound: int | None = None, positive: bool = False,
                    nonzero: bool = False, converted: bool = False, infinities: bool = True,
                    large_offset: bool = False, domain: InputDomain | None = None) -> np.ndarray:
    """One seeded array; see the module docstring for what each flag guarantees."""
    rng = _rng(seed, name)
    shape = tuple(int(d) for d in shape)
    target = exchange_dtype(dtype)
    if domain is not None:
        drawn = _from_domain(name, dtype, shape, domain, seed=seed, special_values=special_values,
                             index_bound=index_bound, positive=positive, infinities=infinities)
        if drawn is not None:
            return drawn
    if index_bound is not None:
        bound = max(int(index_bound), 1)
        values: np.ndarray = rng.integers(0, bound, size=shape, dtype=np.int64)
        if special_values:
            srng = _rng(seed, name, 1)
            mask = srng.integers(0, _SPECIAL_FRACTION, size=shape) == 0
            edges = np.where(srng.integers(0, 2, size=shape) == 0, 0, bound - 1)
            values = np.where(mask, edges, values)
        return values.astype(target)
    if dtype == "bool":
        return np.asarray(rng.random(size=shape) < 0.5)
    if dtype in FLOAT_DTYPES:
        values = rng.standard_normal(size=shape)
        if large_offset:
            values = values + LARGE_OFFSETS[dtype]  # positive already: a log/sqrt argument stays defined
        elif positive:
            values = np.abs(values) + 0.1
        if special_values:
            mask, special = _special_float(shape, _rng(seed, name, 1), dtype, converted)
            if positive:
                special = np.abs(special) + 1e-3
            values = _with_nonfinite(np.where(mask, special, values), _rng(seed, name, 2), positive,
                                     infinities)
        if dtype in FP8_MAX:  # the language's (PyTorch's) rounding: e4m3fn saturates, ml_dtypes would not
            return leir_cast_to(values, dtype).astype(target)
        with np.errstate(over="ignore"):
            return values.astype(target)
    info = np.iinfo(target)
    low, high = (0, 8) if info.min == 0 else (-4, 5)
    values = rng.integers(low, high, size=shape, dtype=np.int64)
    if positive:
        values = np.where(values <= 0, 1 - values, values)
    if special_values:
        # zero divisors stay: integer // and % by zero are defined (0), and the point is to meet them
        return _special_int(values, _rng(seed, name, 1), target, low, high, positive)
    if nonzero:
        values = np.where(values == 0, 1, values)
    return values.astype(target)


def make_inputs(program: Program, *, seed: int = 0, special_values: bool = False,
                params: Mapping[str, np.ndarray] | None = None,
                shapes: Mapping[str, tuple[int, ...]] | None = None,
                infinities: bool = True, large_offset: bool = False,
                domains: Mapping[str, InputDomain] | None = None) -> dict[str, np.ndarray]:
    """Arrays for every input/param/const of the signature, in signature order.

    ``large_offset`` shifts the float *inputs* (not parameters or constants) by ``LARGE_OFFSETS``;
    ``domains`` draws the tensors they name from the source's own distribution (module docstring).

    ``params`` (e.g. a ``.npz`` of the source module's weights, keyed by LEIR names) override the
    generated values of the tensors they name; they are cast to the declared dtype and must have the
    declared shape. ``shapes`` adds intermediate shapes (from the checker's ``ProgramInfo``) so a
    gather from an intermediate is bounded too.
    """
    all_shapes: dict[str, tuple[int, ...]] = dict(shapes or {})
    all_shapes.update({d.name: tuple(d.shape) for d in program.signature.tensors})
    bounds = index_bounds(program, all_shapes)
    positive, divisors = _positive_and_divisor_tensors(program)
    converted = converted_tensors(program) if special_values else set()
    params = dict(params or {})
    arrays: dict[str, np.ndarray] = {}
    for decl in program.signature.tensors:
        if decl.role not in INPUT_ROLES:
            continue
        if decl.name in params:
            value = np.asarray(params[decl.name])
            if tuple(value.shape) != tuple(decl.shape):
                raise ValueError(f"parameter {decl.name}: shape {tuple(value.shape)} given, "
                                 f"{tuple(decl.shape)} declared")
            # np.require, not np.ascontiguousarray: the latter makes a 0-d parameter shape (1,)
            arrays[decl.name] = np.require(value.astype(exchange_dtype(decl.dtype)), requirements="C")
            continue
        arrays[decl.name] = generate_tensor(
            decl.name, decl.dtype, tuple(decl.shape), seed=seed, special_values=special_values,
            index_bound=bounds.get(decl.name), positive=decl.name in positive,
            nonzero=decl.name in divisors, converted=decl.name in converted, infinities=infinities,
            large_offset=large_offset and decl.role == "input", domain=(domains or {}).get(decl.name))
    return arrays


def fresh_seed(seed: int) -> int:
    """The seed of the *fresh* inputs used for timing: different from the checked ones, still determined."""
    return (int(seed) * 1_000_003 + 0x5EED) & 0x7FFFFFFF
