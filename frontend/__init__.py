"""PyTorch → LEIR frontend.

``translate_file(path, sets=..., dtype=..., target_neutral=...)`` loads a KernelBench-style file
(``Model``, ``get_inputs()``, ``get_init_inputs()``, module-level shape constants), traces the model with
``torch.fx``, walks the graph with every node's concrete value, emits one or a few LEIR blocks per
operator (``frontend.ops``, looked up in ``frontend.registry``), and returns a ``Translation``
whose program has passed ``leir.checker.check``. Operators without a translation raise
``UnsupportedOperatorError`` naming the operator and the user's ``file:line``.

``TorchReference`` (``frontend.reference``) runs the same source eagerly for the verifier.
"""

from .errors import FrontendError, UnsupportedOperatorError
from .loading import SourceError, load_source, parse_input_shape, parse_set
from .translate import Translation, translate_file, translate_module

__all__ = [
    "FrontendError",
    "SourceError",
    "Translation",
    "UnsupportedOperatorError",
    "load_source",
    "parse_input_shape",
    "parse_set",
    "translate_file",
    "translate_module",
]
