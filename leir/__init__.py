"""LEIR, the Loop-Equation IR of the Step-TP dataset.

Everything about the language lives here and nowhere else: the grammar and parser, the immutable AST,
the canonical and pretty printers, the checker (semantic analysis), the NumPy reference interpreter,
the strategies, reasoning traces, filtering, and the PyTorch frontend. This package must import without
TVM and without Django: the verifier and the web app build on it, never the other way round.
"""

# Registers how a ``Program`` pickles (as text when its expressions are too deep for pickle's recursion);
# imported here so that it is in force wherever any part of the language is.
import leir.program  # noqa: F401
