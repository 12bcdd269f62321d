"""math-level strategies: one module per strategy; importing this package registers them."""
from leir.strategies.math import normal_loop_summation_on_exp_to_prefix_summation_on_exp  # noqa: F401
