"""Operator families; importing this package registers every emitter with ``frontend.registry``."""

from . import (  # noqa: F401
    activations,
    attention,
    conv,
    elementwise,
    linalg,
    losses,
    norms,
    pooling,
    recurrent,
    reductions,
    sampling,
    scatter,
    shape,
    sorting,
    transformer,
    windows,
)
