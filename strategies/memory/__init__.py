"""memory-level strategies: one module per strategy; importing this package registers them."""

from strategies.memory import (  # noqa: F401
    cache_read_write,
    layout_transformation,
    precompute_indices,
    set_storage_layout,
    set_storage_scope,
)
