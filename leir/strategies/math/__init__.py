"""math-level strategies: one module per strategy; importing this package registers them."""

from leir.strategies.math import additive_split  # noqa: F401
from leir.strategies.math import exponential_split  # noqa: F401
from leir.strategies.math import multiplicative_split  # noqa: F401
from leir.strategies.math import normal_loop_max_to_prefix_max  # noqa: F401
from leir.strategies.math import partially_equivalent_then_correct  # noqa: F401
