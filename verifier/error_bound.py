"""A per-element bound on the rounding error of a LEIR program, from one float64 evaluation of it.

Why: a fixed tolerance (``1e-4`` relative for f32) rejects correct programs whose outputs come out of long
reductions (a 32,768-long prefix sum, a mean over half a million squares) and lets wrong programs
through on small inputs, where a correct result is good to a few ulps. The error a correct program may
make grows with what was combined to make each element, so the bound is computed from that.

How: the program runs once through the NumPy interpreter's machinery (``leir.interpreter``: the same loop
plan, indices, conditions and operator semantics), with every float tensor held in float64 and two
shadow arrays beside it:

* ``M`` — the *magnitude* of the element: the value the same computation would have if every input were
  replaced by its absolute value and every subtraction by an addition (``Σ|terms|`` for a sum);
* ``E`` — an *absolute error bound*: how far a float evaluation of the program in its own dtypes
  (unit roundoff ``u``: f16 2^-11, bf16 2^-8, f32 2^-24, f64 2^-53) can be from the exact result.

``E`` follows the standard first-order rules of rounding-error analysis (Higham, *Accuracy and Stability
of Numerical Algorithms*, ch. 2–4), each operation adding its own rounding ``u·|result|``:

* ``a ± b``: ``Ea + Eb + u·|r|``;   ``a·b``: ``|a|Eb + |b|Ea + EaEb + u·|r|``;
* ``a / b``: ``(Ea + |r|Eb) / (|b| − Eb) + u·|r|`` (unbounded when ``Eb ≥ |b|``);
* ``exp a``: ``|r|·expm1(Ea)``; ``log a``: ``−log1p(−Ea/|a|)``; ``sqrt a``: ``Ea / (√a + √(a−Ea))``;
  ``erf a``: its slope on ``[a−Ea, a+Ea]`` times ``Ea``; each plus the library's error (``LIBRARY_ULPS``);
* ``max``/``min``/``abs``/negation add no rounding: ``max(Ea, Eb)``/``Ea``;
* **underflow**: below the dtype's smallest normal number a rounding's error is no longer relative —
  the result lands on the fixed grid of subnormals, off by up to half its spacing, ``η = u·tiny``
  (f32 2^-150) — so each product, quotient, power, library call and narrowing cast also adds ``η``
  (Higham §2.1: ``fl(x op y) = (x op y)(1 + δ) + η``). Sums and differences need no ``η``: where theirs
  is subnormal it is exact. Without it a correct running product that shrinks into subnormals (a
  ``cumprod`` over 256 values) failed by five subnormal steps against a bound of three;
* a **reduction** ``X = X + t`` is a chain of such additions in the order the program is written:
  after ``n`` terms ``E = Σ Et + u·Σ_k |S_k|`` over its partial sums ``S_k`` — Wilkinson's running
  error bound, at most the classic ``γ_n·Σ|terms|`` (reached when all terms have one sign) and about
  ``√n`` times smaller than it for terms of mixed signs. The order matters, and it is the kernel's:
  the lowering keeps the program's loop order and LLVM does not reassociate floating-point additions.
  A rewrite that tiles or splits a reduction is held to the bound of its own order;
* prefix recurrences (``C_a = C_{a-1} + A_a``) are the same rule, element by element along the scan.

``verifier.compare`` turns ``E`` into the tolerance of each element (see docs/verification.md for the
constants, the NaN/inf rule and what the bound does not cover).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from leir.ast import (
    Assign,
    BinOp,
    Call,
    Expr,
    IfThenElse,
    Inf,
    Neg,
    Num,
    Paren,
    Program,
    TensorRef,
    Var,
)
from leir.checker import require_valid
from leir.dtypes import cast_to, is_float
from leir.interpreter import (
    MAX_ELEMENTS,
    InterpreterError,
    _binop,
    _call,
    _fast_reductions,
    _Lanes,
    _Machine,
    _statement_loops,
)
from leir.rewrite import statement_at
from leir.semantics import ProgramInfo

__all__ = ["UNIT_ROUNDOFF", "LIBRARY_ULPS", "UNDERFLOW", "ProgramBound", "OutputBound", "bound_bytes",
           "kernel_bytes", "program_bound", "unit_roundoff"]

#: Unit roundoff ``u`` (half an ulp of 1) of each float dtype: a correctly rounded operation's relative error.
UNIT_ROUNDOFF: dict[str, float] = {"f8e5m2": 2.0**-3, "f8e4m3": 2.0**-4, "f16": 2.0**-11, "bf16": 2.0**-8,
                                   "f32": 2.0**-24, "f64": 2.0**-53}
#: Error of one call of a math function, in units of ``u`` of the result (``erf``: absolute, its range
#: being [-1, 1]). libm's ``expf``/``logf`` are within 1 ulp (2u); the vectorised implementations PyTorch
#: and LLVM use are specified within 4 ulps; ``erf`` gets twice that for the polynomial TVM lowers it to.
LIBRARY_ULPS: dict[str, float] = {"exp": 8.0, "log": 8.0, "sqrt": 1.0, "erf": 16.0, "pow": 16.0}
#: Absolute error of one rounding whose result falls below the normal range (gradual underflow): half
#: the spacing of the dtype's subnormals, ``u·tiny`` (f64's, 2^-1075, is below what float64 holds: its
#: whole spacing 2^-1074 stands in). Neither LLVM's CPU code nor PyTorch's CPU kernels flush subnormals
#: to zero (no FTZ/DAZ), nor does nvrtc by default (``-ftz=false``); a flushing target would need ``tiny``.
UNDERFLOW: dict[str, float] = {"f8e5m2": 2.0**-17, "f8e4m3": 2.0**-10, "f16": 2.0**-25, "bf16": 2.0**-134,
                               "f32": 2.0**-150, "f64": 2.0**-1074}
_SQRT_PI_HALF_INV = 2.0 / math.sqrt(math.pi)  # largest slope of erf
_MANTISSA_BITS = {"f8e5m2": 3, "f8e4m3": 4, "f16": 11, "bf16": 8, "f32": 24, "f64": 53}
_UNDERFLOW_BY_UNIT = {UNIT_ROUNDOFF[d]: eta for d, eta in UNDERFLOW.items()}


#: Bytes the evaluation holds per element of a float tensor: its value in float64 and the two float64
#: shadows ``M`` and ``E``. Integer and bool tensors are held in their own dtype (their arithmetic is exact).
FLOAT_ELEMENT_BYTES = 24


def kernel_bytes(program: Program, info: ProgramInfo | None = None) -> int:
    """Bytes of the program's own tensors in their dtypes: the buffers its kernel reads and writes."""
    info = info or require_valid(program)
    return sum(math.prod(t.shape) * cast_to(np.zeros(1), t.dtype).dtype.itemsize
               for t in info.tensors.values())


def bound_bytes(program: Program, info: ProgramInfo | None = None) -> int:
    """Bytes ``program_bound`` holds for the program's tensors (without the batch of lanes it evaluates at
    once, ``leir.interpreter.MAX_LANES`` iterations): 24 per float element, the dtype's size otherwise —
    a fixed multiple of ``kernel_bytes`` (6× for f32, 12× for f16 and bf16, 3× for f64, 1× for the rest)."""
    info = info or require_valid(program)
    return sum(math.prod(t.shape) * (FLOAT_ELEMENT_BYTES if is_float(t.dtype)
                                     else cast_to(np.zeros(1), t.dtype).dtype.itemsize)
               for t in info.tensors.values())


def _require_memory(program: Program, info: ProgramInfo) -> None:
    """Refuse at once, naming the size, a bound whose tensors cannot fit in what the sandbox has left.

    Without this the evaluation allocates until one array fails, and the ``MemoryError`` names that
    array, not what the whole bound needed.
    """
    from verifier.sandbox import memory_left

    left = memory_left()
    need = bound_bytes(program, info)
    if left is not None and need > left:
        raise MemoryError(f"the error bound needs {need / 2**20:,.0f} MiB for its tensors (float64 value, "
                          f"magnitude and error per float element; the kernel's own buffers are "
                          f"{kernel_bytes(program, info) / 2**20:,.0f} MiB) and the job has "
                          f"{max(left, 0) / 2**20:,.0f} MiB left")


def unit_roundoff(dtype: str) -> float:
    """``u`` of a float dtype; ``0`` for integer and bool dtypes (their arithmetic is exact)."""
    return UNIT_ROUNDOFF.get(dtype, 0.0)


def _underflow(u: float) -> float:
    """``η`` of the dtype whose unit roundoff is ``u`` (0 for exact arithmetic)."""
    return _UNDERFLOW_BY_UNIT.get(u, 0.0)


@dataclass
class OutputBound:
    """One output: its float64 value, the error bound of a float evaluation, and its magnitude."""

    value: np.ndarray
    #: Absolute error bound per element (``inf`` where none could be derived; 0 for exact elements).
    error: np.ndarray
    #: ``Σ|terms|`` per element (the value of the absolute-value computation).
    magnitude: np.ndarray
    #: Unit roundoff of the output's dtype.
    unit: float

    def count(self) -> np.ndarray:
        """The effective number of roundings per element, ``E / (u·M)`` (what the bound scales with)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.magnitude > 0, self.error / (self.unit * self.magnitude), 0.0)


@dataclass
class ProgramBound:
    """Bounds of every float output of one program on one set of inputs."""

    outputs: dict[str, OutputBound]


# ------------------------------------------------------------------------------------------ machine


Triple = tuple[np.ndarray, np.ndarray, np.ndarray]


def _clean(v: np.ndarray, m: np.ndarray, e: np.ndarray) -> Triple:
    """Where the value is not finite it is compared by pattern, not by size: no magnitude, no error.

    An error or magnitude that overflowed or became NaN for a finite value means no bound: ``inf``.
    """
    finite = np.isfinite(v)
    m = np.where(finite, np.nan_to_num(m, nan=np.inf), 0.0)
    e = np.where(finite, np.nan_to_num(e, nan=np.inf), 0.0)
    return v, m, e


class _BoundMachine(_Machine):
    """The interpreter's machine, with float tensors in float64 and shadow magnitude/error arrays."""

    def __init__(self, program: Program, info: ProgramInfo, store: dict[str, np.ndarray],
                 mags: dict[str, np.ndarray], errs: dict[str, np.ndarray]) -> None:
        super().__init__(program, info, store, vectorise=True)
        self.mags = mags
        self.errs = errs

    def run(self) -> None:
        for b_index, block in enumerate(self.program.body.blocks):
            # product reductions run the general path (their error is relative, not additive)
            self.fast = {k: v for k, v in _fast_reductions(block).items() if v[0] != "*"}
            self.loops = _statement_loops(block)  # the interpreter's per-statement loop plan
            self._init_reductions(b_index)
            self._block(block, _Lanes({}, 1))
            self._flush_scatters()

    def _init_reductions(self, b_index: int) -> None:
        super()._init_reductions(b_index)
        for path, _st in self.reductions.get(b_index, ()):
            name = statement_at(self.program.body, path).target.name
            if name in self.mags:
                init, mag = self.store[name], self.mags[name]
                np.abs(init, out=mag)  # in place: no tensor-sized float64 temporaries
                mag[~np.isfinite(init)] = 0.0
                self.errs[name][...] = 0.0

    # -- statements ---------------------------------------------------------------------------------
    def _assign(self, stmt: Assign, lanes: _Lanes) -> None:
        target = stmt.target
        name = target.name
        if name not in self.mags:  # integer and bool statements are exact: the interpreter's own path
            super()._assign(stmt, lanes)
            return
        u = unit_roundoff(target.dtype)
        idx = self._indices(target, lanes)
        fast = self.fast.get(id(stmt))
        if fast is None:
            self._store(name, idx, self._eval(stmt.value, lanes, u))
            return
        comb, rest = fast
        v, m, e = self._eval(rest, lanes, u)
        arr = self.store[name]
        lin = np.ravel_multi_index(idx, arr.shape) if idx else np.zeros(lanes.n, dtype=np.int64)
        flat_v, flat_m, flat_e = arr.reshape(-1), self.mags[name].reshape(-1), self.errs[name].reshape(-1)
        if comb in ("+", "-"):
            _scatter_sum(flat_v, flat_m, flat_e, lin, v if comb == "+" else -v, m, e, u)
        else:  # max / min: exact, the error of the chosen operand
            (np.maximum if comb == "max" else np.minimum).at(flat_v, lin, v)
            np.maximum.at(flat_m, lin, m)
            np.maximum.at(flat_e, lin, e)
        # only the elements this batch updated can have changed (the rest were clean already): cleaning
        # the whole tensor after every batch cost five tensor-sized temporaries and O(tensor) time each
        touched = np.unique(lin)
        _, flat_m[touched], flat_e[touched] = _clean(flat_v[touched], flat_m[touched], flat_e[touched])

    def _store(self, name: str, idx: tuple[np.ndarray, ...], triple: Triple) -> None:
        v, m, e = triple
        for array, values in ((self.store[name], v), (self.mags[name], m), (self.errs[name], e)):
            if idx:
                array[idx] = values
            else:
                array[()] = values[-1]

    # -- expressions --------------------------------------------------------------------------------
    def _eval(self, expr: Expr, lanes: _Lanes, u: float) -> Triple:
        """(value, magnitude, error bound) of a float expression, one entry per lane."""
        n = lanes.n
        if isinstance(expr, Paren):
            return self._eval(expr.inner, lanes, u)
        if isinstance(expr, TensorRef):
            return self._eval_read(expr, lanes, u)
        if isinstance(expr, Num):
            value = float(expr.text)
            # a literal that the dtype cannot hold is rounded once when the kernel is compiled
            exact = value == _round_to(value, u)
            v = np.full(n, value)
            return v, np.abs(v), (np.zeros(n) if exact else u * np.abs(v))
        if isinstance(expr, Inf):
            return np.full(n, np.inf), np.zeros(n), np.zeros(n)
        if isinstance(expr, Var):
            v = lanes.env[expr.name].astype(np.float64)
            large = np.abs(v) > 2.0 ** _mantissa(u)
            return v, np.abs(v), np.where(large, u * np.abs(v), 0.0)
        if isinstance(expr, Neg):
            v, m, e = self._eval(expr.operand, lanes, u)
            return -v, m, e
        if isinstance(expr, BinOp):
            a = self._eval(expr.left, lanes, u)
            b = self._eval(expr.right, lanes, u)
            return _clean(*_binary(expr.op, a, b, u))
        if isinstance(expr, Call):
            args = [self._eval(arg, lanes, u) for arg in expr.args]
            return _clean(*_function(expr.func, args, u))
        if isinstance(expr, IfThenElse):
            mask = self._cond(expr.cond, lanes)
            if mask.all():
                return self._eval(expr.then, lanes, u)
            if not mask.any():
                return self._eval(expr.otherwise, lanes, u)
            where_t, where_f = np.nonzero(mask)[0], np.nonzero(~mask)[0]
            out: Triple = (np.empty(n), np.empty(n), np.empty(n))
            for where, branch in ((where_t, expr.then), (where_f, expr.otherwise)):
                for target, part in zip(out, self._eval(branch, lanes.subset(where), u), strict=True):
                    target[where] = part
            return out
        raise InterpreterError(f"cannot bound {type(expr).__name__}")

    def _eval_read(self, ref: TensorRef, lanes: _Lanes, u: float) -> Triple:
        name = ref.name
        if name not in self.mags:  # an integer or bool tensor read in a float statement: exact
            v = self._read(ref, lanes).astype(np.float64)
            return v, np.abs(v), np.zeros(lanes.n)
        idx = self._indices(ref, lanes)
        if idx:
            v, m, e = self.store[name][idx], self.mags[name][idx], self.errs[name][idx]
        else:
            v, m, e = (np.repeat(a.reshape(1), lanes.n) for a in (self.store[name], self.mags[name],
                                                                   self.errs[name]))
        stored = self.info.tensors[name].dtype
        if ref.dtype != stored:  # a cast read: rounded to (or truncated into) the annotated type
            if is_float(ref.dtype):
                ur = unit_roundoff(ref.dtype)
                if ur > unit_roundoff(stored):
                    e = e + ur * np.abs(v) + UNDERFLOW.get(ref.dtype, 0.0)
            else:
                v = cast_to(v, ref.dtype).astype(np.float64)
                return v, np.abs(v), np.zeros(lanes.n)
        if u > unit_roundoff(ref.dtype):  # read into a narrower statement (f32 into fp8): rounded once
            e = e + u * np.abs(v) + _underflow(u)
        return v, m, e


def _scatter_sum(flat_v: np.ndarray, flat_m: np.ndarray, flat_e: np.ndarray, lin: np.ndarray, v: np.ndarray,
                 m: np.ndarray, e: np.ndarray, u: float) -> None:
    """``X[lin[k]] += v[k]`` in lane order, with the running error rule of every single addition.

    Each addition ``S_k = S_{k-1} + t_k`` rounds once, by at most ``u·|S_k|``: the error of the partial
    sum grows by ``E_t + u·(|S_k| + E_t)``. The partial sums are those of the order the program is
    written in (the kernel's order: the lowering keeps it and LLVM does not reassociate floats), computed
    per element with a segmented cumulative sum — lanes that update the same element, in lane order.
    """
    order = np.argsort(lin, kind="stable")
    keys = lin[order]
    terms = v[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, keys.size]))
    running = np.cumsum(terms)
    offset = running[starts] - terms[starts]  # what cumsum had accumulated before each group
    with np.errstate(all="ignore"):
        partial = flat_v[keys] + (running - offset[group])
        grow = e[order] * (1 + u) + u * np.abs(partial)
    np.add.at(flat_e, keys, grow)
    np.add.at(flat_m, keys, m[order])
    np.add.at(flat_v, keys, terms)


def _mantissa(u: float) -> int:
    return {v: _MANTISSA_BITS[k] for k, v in UNIT_ROUNDOFF.items()}.get(u, 53)


def _round_to(value: float, u: float) -> float:
    """``value`` rounded to the precision whose unit roundoff is ``u`` (for literals)."""
    if u == 0.0 or not math.isfinite(value) or value == 0.0:
        return value
    if u == UNIT_ROUNDOFF["f32"]:
        return float(np.float32(value))
    if u == UNIT_ROUNDOFF["f16"]:
        return float(np.float16(value))
    mantissa, exponent = math.frexp(value)
    scale = 2.0 ** _mantissa(u)
    return math.ldexp(round(mantissa * scale) / scale, exponent)


def _binary(op: str, a: Triple, b: Triple, u: float) -> Triple:
    va, ma, ea = a
    vb, mb, eb = b
    eta = _underflow(u)
    with np.errstate(all="ignore"):
        if op in ("+", "-"):
            v = va + vb if op == "+" else va - vb
            e = ea + eb
            return v, ma + mb, e + u * (np.abs(v) + e)
        if op == "*":
            v = va * vb
            e = np.abs(va) * eb + np.abs(vb) * ea + ea * eb
            return v, ma * mb, e + u * (np.abs(v) + e) + eta
        float64 = np.dtype(np.float64)
        v = _binop(op, va, vb, float64)
        if op == "/":
            margin = np.abs(vb) - eb
            e = np.where(margin > 0, (ea + np.abs(v) * eb) / margin, np.inf)
            return v, np.where(vb != 0, ma / np.abs(vb), np.inf), e + u * (np.abs(v) + e) + eta
        if op in ("//", "%"):
            # floor is a step function: where the quotient's error interval crosses an integer the kernel
            # may land on the other step (one whole step, |b| for ``%``)
            margin = np.abs(vb) - eb
            q = va / vb
            eq = np.where(margin > 0, (ea + np.abs(q) * eb) / margin, np.inf) + u * np.abs(q)
            crosses = np.floor(q - eq) != np.floor(q + eq)
            if op == "//":
                return v, np.abs(v), np.where(crosses, 1.0 + u * np.abs(v), 0.0)
            e = ea + np.abs(np.floor(q)) * eb + np.where(crosses, np.abs(vb), 0.0)
            return v, np.abs(v) + np.abs(vb), e + u * np.abs(v)
        if op == "**":
            rel = np.where(va != 0, ea / np.abs(va), np.where(ea > 0, np.inf, 0.0))
            power = np.abs(vb)
            grow = np.where(rel < 1, (1 - rel) ** (-power) - 1, np.inf)
            e = np.abs(v) * grow + np.abs(v) * np.abs(np.log(np.abs(va))) * eb
            e = np.where(eb > 0, e, np.abs(v) * grow)
            m = np.where(vb > 0, ma ** vb, np.abs(v))
            return v, np.maximum(m, np.abs(v)), e + LIBRARY_ULPS["pow"] * u * (np.abs(v) + e) + eta
    raise InterpreterError(f"cannot bound operator {op}")


def _function(func: str, args: list[Triple], u: float) -> Triple:
    float64 = np.dtype(np.float64)
    with np.errstate(all="ignore"):
        if func in ("max", "min"):
            (va, ma, ea), (vb, mb, eb) = args
            v = _call(func, [va, vb], float64)
            return v, np.maximum(ma, mb), np.maximum(ea, eb)
        ((va, ma, ea),) = args
        if func == "abs":
            return np.abs(va), ma, ea
        v = _call(func, [va], float64)
        r = np.abs(v)
        lib = LIBRARY_ULPS.get(func, 0.0) * u
        eta = _underflow(u)
        if func == "exp":
            e = r * np.expm1(ea)
            return v, r, e + lib * (r + e) + eta
        if func == "log":
            rel = np.where(va != 0, ea / np.abs(va), np.where(ea > 0, np.inf, 0.0))
            e = np.where(rel < 1, -np.log1p(-rel), np.inf)
            return v, r, e + lib * r + eta
        if func == "sqrt":
            low = va - ea
            e = np.where(low > 0, ea / (np.sqrt(np.maximum(va, 0)) + np.sqrt(np.maximum(low, 0))),
                         np.sqrt(np.maximum(va, 0) + ea))
            return v, r, e + lib * (r + e) + eta
        if func == "erf":
            nearest = np.maximum(np.abs(va) - ea, 0.0)
            e = np.minimum(_SQRT_PI_HALF_INV * np.exp(-nearest * nearest) * ea, 2.0)
            return v, r, e + lib + u * r + eta
    raise InterpreterError(f"cannot bound function {func}")


# --------------------------------------------------------------------------------------- entry point


def program_bound(program: Program, inputs: Mapping[str, np.ndarray], *,
                  info: ProgramInfo | None = None) -> ProgramBound:
    """Evaluate ``program`` in float64 on ``inputs`` and bound the rounding error of each float output.

    ``inputs`` hold every input, param and const (as ``leir.interpreter.run`` takes them). Raises
    ``InterpreterError`` when the program cannot be evaluated here (too large, a gather out of range), and
    ``MemoryError`` naming the size needed when its tensors (``bound_bytes``) cannot fit in the memory
    the sandbox job has left.
    """
    info = info or require_valid(program)
    _require_memory(program, info)
    store: dict[str, np.ndarray] = {}
    mags: dict[str, np.ndarray] = {}
    errs: dict[str, np.ndarray] = {}
    for decl in program.signature.tensors:
        if decl.role == "output":
            continue
        if decl.name not in inputs:
            raise InterpreterError(f"missing input {decl.name} ({decl.role}, shape {tuple(decl.shape)})")
        value = np.asarray(inputs[decl.name])
        if tuple(value.shape) != tuple(decl.shape):
            raise InterpreterError(f"input {decl.name} has shape {tuple(value.shape)}, the signature "
                                   f"declares {tuple(decl.shape)}")
        stored = np.ascontiguousarray(cast_to(value, decl.dtype))
        if is_float(decl.dtype):
            stored = stored.astype(np.float64)  # a new array: the caller's stays untouched
            mags[decl.name] = np.abs(stored)
            mags[decl.name][~np.isfinite(stored)] = 0.0
            errs[decl.name] = np.zeros(stored.shape)
            store[decl.name] = stored
        else:
            store[decl.name] = stored.copy()
    for name, tinfo in info.tensors.items():
        if name in store:
            continue
        if math.prod(tinfo.shape) > MAX_ELEMENTS:
            raise InterpreterError(f"{name} would have {math.prod(tinfo.shape)} elements")
        if is_float(tinfo.dtype):
            store[name] = np.zeros(tinfo.shape)
            mags[name] = np.zeros(tinfo.shape)
            errs[name] = np.zeros(tinfo.shape)
        else:
            store[name] = np.zeros(tinfo.shape, dtype=cast_to(np.zeros(1), tinfo.dtype).dtype)
    with np.errstate(all="ignore"):
        try:
            _BoundMachine(program, info, store, mags, errs).run()
        except RecursionError:
            raise InterpreterError("expressions are nested too deeply to evaluate") from None
    outputs = {}
    for decl in program.signature.by_role("output"):
        if decl.name in mags:
            outputs[decl.name] = OutputBound(store[decl.name], errs[decl.name], mags[decl.name],
                                             unit_roundoff(decl.dtype))
    return ProgramBound(outputs)
