"""math-level strategies: one module per strategy; importing this package registers them."""

from leir.strategies.math import (
    apart,  # noqa: F401
    cancellation,  # noqa: F401
    collect,  # noqa: F401
    expand_cancellation,  # noqa: F401
    expand_collect,  # noqa: F401
    expand_factorization,  # noqa: F401
    expand_log,  # noqa: F401
    expand_powsimp,  # noqa: F401
    factorization,  # noqa: F401
    logsimp,  # noqa: F401
    powsimp,  # noqa: F401
    together,  # noqa: F401
)
