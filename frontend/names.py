"""Fresh names for emitted programs: the core's ``leir.names``, re-exported for the emitters."""

from leir.names import LOOP_LETTERS, TENSOR_LETTERS, NameSource, loop_var_names, tensor_names

__all__ = ["LOOP_LETTERS", "TENSOR_LETTERS", "NameSource", "loop_var_names", "tensor_names"]
