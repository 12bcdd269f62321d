"""Graph-level strategies (catalogue #1–#9): one module per strategy; importing this package registers them."""

from leir.strategies.graph import (  # noqa: F401
    common_subexpression_elimination,
    expression_splitting,
)
