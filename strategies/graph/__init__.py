"""Graph-level strategies (catalogue #1–#9), one module each; importing this package registers them."""

from strategies.graph import (  # noqa: F401
    common_subexpression_elimination,
    compute_inline,
    dead_code_elimination,
    expression_reorder,
    expression_splitting,
    operator_fission,
    operator_fusion,
    tensor_concat_to_fuse_operators,
    tensor_split_to_decouple_operators,
)
