"""Loop-level strategies: one module per strategy; importing this package registers them."""

from strategies.loop import (  # noqa: F401
    loop_binding,
    loop_fusion,
    loop_parallelization,
    loop_reorder,
    loop_split,
    loop_tiling,
    loop_unrolling,
    loop_vectorization,
    reduction_factorization,
)
