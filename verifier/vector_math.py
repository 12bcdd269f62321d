"""Math functions as TIR arithmetic, so a vectorised loop stays in vector registers on the CPU.

LLVM has no ``erf`` intrinsic: ``T.erf`` becomes a call of libm's scalar ``erff`` per element, even under
a ``V`` loop (5 ns an element here, against 0.1 ns for the load and store around it: a GELU epilogue of
3.7M elements took 15-19 ms, more than the convolution before it). Written as a clamp and a rational
function of plain multiplies, adds and one divide (the quotient first, then times ``x``: ``x`` times the
numerator first would go subnormal for |x| < 1e-36 and lose the last digits), it vectorises like any other
arithmetic, and since the llvm targets contract no multiply-add (``verifier.targets``) a lane computes
exactly what the scalar loop computes: vectorising stays an exact step.

The rational approximation is the one Eigen and TVM's ``fast_erf`` use for float32. Measured against
float64 ``math.erf`` on 2.1M points of [-5, 5] (the test, ``tests/verifier/test_vector_math.py``, sweeps
400k of them and tiny values): at most 7.1 u absolute (u = 2^-24), under 8 u relative near 0, inside the 16 u
``verifier.error_bound.LIBRARY_ULPS`` grants ``erf``. Edge values follow docs/leir.md §6: NaN stays NaN
(the clamp alone would turn it into ±1), ±inf give ±1, -0 gives -0.
"""

from __future__ import annotations

import math

from verifier.edge_ops import Let, isnan, lit

#: Beyond |x| = 4 float32 ``erf`` is ±1 (1 - erf(4) = 1.5e-8, under half an ulp of 1).
ERF_CLAMP = 4.0
#: Numerator: x times a polynomial in x^2, coefficients of x^1, x^3, ... x^13.
ERF_NUMERATOR = (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                 -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                 -2.72614225801306e-10)
#: Denominator: a polynomial in x^2, coefficients of x^0, x^2, ... x^8.
ERF_DENOMINATOR = (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                   -2.13374055278905e-04, -1.45660718464996e-05)


def horner(coefficients: tuple[float, ...], x: str, tdt: str) -> str:
    """``c0 + x*(c1 + x*(c2 + ...))`` as TVMScript, highest power innermost (one multiply-add per term)."""
    text = lit(coefficients[-1], tdt)
    for c in reversed(coefficients[:-1]):
        text = f"({text} * {x} + {lit(c, tdt)})"
    return text


def erf_f32(x: str, let: Let) -> str:
    """float32 ``erf(x)`` without a libm call (see the module docstring for its accuracy)."""
    tdt = "float32"
    bound = lit(ERF_CLAMP, tdt)
    one = lit(1.0, tdt)

    def of_clamped(c: str) -> str:
        return let(f"{c} * {c}", tdt, lambda c2: let(
            f"{c} * ({horner(ERF_NUMERATOR, c2, tdt)} / {horner(ERF_DENOMINATOR, c2, tdt)})", tdt,
            lambda r: f"T.max(T.min({r}, {one}), -{one})"))

    return let(x, tdt, lambda v: let(f"T.max(T.min({v}, {bound}), -{bound})", tdt, lambda c: (
        f"T.Select({isnan(v, tdt)}, {v}, {of_clamped(c)})")))


# ---- exp and log ---------------------------------------------------------------------------------
# LLVM turns ``T.exp``/``T.log`` under a ``V`` loop into ``llvm.exp.v<N>f32``, which the x86 backend
# expands into one libm ``expf`` call per lane (1-1.5 ns an element here, against 0.1 ns for ``sqrt``): a
# sigmoid, softmax or mish epilogue ran at a quarter of memory bandwidth. Cephes' float32 algorithms below
# are plain arithmetic and bit operations, so they vectorise (``bench/math_calls.py``); measured error
# 1.4 u, inside the 8 u ``LIBRARY_ULPS`` grants exp and log.

#: ln 2 in two parts (Cody and Waite): ``n * LN2_HI`` is exact for |n| < 2^15, so ``x - n*ln2`` keeps
#: the digits of ``x`` that the single float32 ln 2 would round away.
LN2_HI = 0.693359375
LN2_LO = -2.12194440e-4
LOG2E = 1.44269504088896341
#: Inputs are clamped into [EXP_LOW, EXP_HIGH] before the reduction: below, exp is 0 even as a
#: subnormal (e^-103.97 is half the least subnormal); above, it overflows to inf (ln FLT_MAX = 88.72).
#: The clamp keeps the exponent ``n`` in [-150, 129], which ``_scale`` can build.
EXP_LOW, EXP_HIGH = -104.0, 89.0
#: e^r on |r| <= ln2/2: 1 + r + r^2 * P(r), P's coefficients from r^0 up (Cephes expf).
EXP_POLY = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3,
            1.9875691500e-4)
#: log(1+f) - f + f^2/2 on sqrt(1/2)-1 <= f < sqrt(2)-1 is f^3 * P(f), P's coefficients from f^0 up
#: (Cephes logf).
LOG_POLY = (3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
            -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2)
#: The mantissa m in [1, 2) is halved above sqrt(2), so f = m - 1 stays in [sqrt(1/2) - 1, sqrt(2) - 1).
SQRT_TWO = 1.4142135623730951
#: float32's least normal: a subnormal input to log is scaled by 2^25 first (its exponent field is 0).
FLT_MIN_NORMAL = 1.17549435e-38


def _pow2(n: str) -> str:
    """2^n as float32 for an integral float32 ``n`` in [-126, 127], built in the exponent field."""
    return f"T.reinterpret(\"float32\", (T.Cast(\"int32\", {n}) + 127) * 8388608)"


def _scale(p: str, n: str, let: Let) -> str:
    """``p * 2^n`` for n in [-150, 129] in two exact power-of-two factors, so an overflow gives inf
    and a result below the normal range is rounded once, as a subnormal, like libm does. Bound, so the
    edge-value ``Select`` around it chooses between loads (inline, ``bench/math_calls.py`` read 0-9 %
    slower)."""
    f32 = "float32"
    return let(f"T.floor({n} * {lit(0.5, f32)})", f32, lambda half: let(
        f"{p} * {_pow2(half)} * {_pow2(f'({n} - {half})')}", f32, lambda scaled: scaled))


def exp_f32(x: str, let: Let) -> str:
    """float32 ``exp(x)`` without a libm call: NaN stays NaN, -inf gives 0, +inf and x > 88.72 give inf."""
    f32 = "float32"

    def reduced(c: str) -> str:
        return let(f"T.floor({c} * {lit(LOG2E, f32)} + {lit(0.5, f32)})", f32, lambda n: let(
            f"{c} - {n} * {lit(LN2_HI, f32)} - {n} * {lit(LN2_LO, f32)}", f32, lambda r: let(
                f"{horner(EXP_POLY, r, f32)} * ({r} * {r}) + {r} + {lit(1.0, f32)}", f32,
                lambda p: _scale(p, n, let))))

    return let(x, f32, lambda v: let(
        f"T.max(T.min({v}, {lit(EXP_HIGH, f32)}), {lit(EXP_LOW, f32)})", f32, lambda c: (
            f"T.Select({isnan(v, f32)}, {v}, {reduced(c)})")))


def log_f32(x: str, let: Let) -> str:
    """float32 ``log(x)`` without a libm call: log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN
    stays NaN, subnormal inputs exact to the same 2 ulps."""
    f32, i32 = "float32", "int32"

    def of_normal(v: str, shift: str) -> str:
        # v = m * 2^e with m in [1, 2) from the bits; then m in [sqrt(1/2), sqrt(2)) and f = m - 1
        return let(f"T.reinterpret(\"{i32}\", {v})", i32, lambda bits: let(
            f"T.reinterpret(\"{f32}\", T.bitwise_or(T.bitwise_and({bits}, {lit(0x7FFFFF, i32)}), "
            f"{lit(0x3F800000, i32)}))", f32, lambda m1: let(
                f"T.Cast(\"{f32}\", T.shift_right({bits}, 23) - 127) - {shift}", f32, lambda e1: let(
                    f"T.Select({m1} > {lit(SQRT_TWO, f32)}, {m1} * {lit(0.5, f32)}, {m1}) - "
                    f"{lit(1.0, f32)}", f32, lambda f: let(
                        f"T.Select({m1} > {lit(SQRT_TWO, f32)}, {e1} + {lit(1.0, f32)}, {e1})", f32,
                        lambda e: let(f"{f} * {f}", f32, lambda z: let(
                            f"{f} + ({f} * ({z} * {horner(LOG_POLY, f, f32)}) + {e} * {lit(LN2_LO, f32)} - "
                            f"{lit(0.5, f32)} * {z}) + {e} * {lit(LN2_HI, f32)}", f32, lambda r: r)))))))

    def finite_positive(v: str) -> str:
        small = f"{v} < {lit(FLT_MIN_NORMAL, f32)}"
        return let(f"T.Select({small}, {v} * {lit(2.0**25, f32)}, {v})", f32, lambda w: of_normal(
            w, f"T.Select({small}, {lit(25.0, f32)}, {lit(0.0, f32)})"))

    return let(x, f32, lambda v: (
        f"T.Select(T.Or({isnan(v, f32)}, {v} < {lit(0.0, f32)}), {lit(math.nan, f32)}, "
        f"T.Select({v} == {lit(0.0, f32)}, {lit(float('-inf'), f32)}, "
        f"T.Select({v} == {lit(float('inf'), f32)}, {v}, {finite_positive(v)})))"))


#: The calls the CPU lowering writes as float32 arithmetic (f32, and f16 through f32).
ARITHMETIC = {"erf": erf_f32, "exp": exp_f32, "log": log_f32}
