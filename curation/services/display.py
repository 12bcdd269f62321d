"""LEIR for people: a stored state as pretty text (raw) and as one LaTeX formula per block (KaTeX)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from curation.models import ProgramState


@dataclass(frozen=True)
class LeirDisplay:
    canonical: str
    pretty: str
    latex: list[str]
    tensors: list[dict[str, Any]]


def leir_display(state: ProgramState) -> LeirDisplay:
    """The state's program in its canonical text, indented pretty form and typeset blocks."""
    from leir.latex import program_latex
    from leir.printer import pretty

    program = state.as_program()
    return LeirDisplay(state.leir, pretty(program), program_latex(program), list(state.tensors))
