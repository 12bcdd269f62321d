"""math-level strategies: one module per strategy; importing this package registers them."""

from leir.strategies.math import (  # noqa: F401
    apart,
    cancellation,
    collect,
    expand_cancellation,
    expand_collect,
    expand_factorization,
    expand_log,
    expand_powsimp,
    factorization,
    flashattention_wo_tiling,
    logsimp,
    normal_loop_summation_on_exp_to_prefix_summation_on_exp,
    normal_matmul_to_prefix_matmul_based_on_online_softmax,
    online_softmax,
    powsimp,
    together,
)
