"""The core expression builders (``leir.builders``) as the emitters use them.

A NaN constant is refused here as an unsupported operator, so that a PyTorch program needing one gets
the frontend's usual error naming the operator instead of a bare ``ValueError``.
"""

from __future__ import annotations

from leir import builders as _core
from leir.builders import *  # noqa: F403 - the emitters' whole vocabulary

from .errors import UnsupportedOperatorError


def lit(value: float | int | bool) -> _core.Expr:
    """``leir.builders.lit`` with a NaN refused as the frontend's error."""
    try:
        return _core.lit(value)
    except _core.NoNanLiteralError:
        raise UnsupportedOperatorError("nan literal", detail="LEIR has no NaN literal") from None


def as_expr(value) -> _core.Expr:
    return lit(value) if isinstance(value, int | float | bool) else value
