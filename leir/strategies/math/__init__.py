"""math-level strategies: one module per strategy; importing this package registers them."""

from leir.strategies.math import (
    additive_split,  # noqa: F401
    exponential_split,  # noqa: F401
    multiplicative_split,  # noqa: F401
    normal_loop_max_to_prefix_max,  # noqa: F401
    partially_equivalent_then_correct,  # noqa: F401
)
