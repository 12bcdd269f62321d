"""Loop-level strategies: one module per strategy; importing this package registers them."""

from leir.strategies.loop import loop_unrolling  # noqa: F401
