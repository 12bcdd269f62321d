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
