"""How long an export's rows are in tokens, per split, and the ``max_length`` a trainer needs for them.

TRL's ``SFTTrainer`` truncates at ``max_length`` (1,024 by default): a row longer than that loses the end
of its answer, or all of it. So the card states, per split, the distribution of every row's length and
the smallest ``max_length`` (a multiple of 64) that keeps every row whole. A row's length is counted as a
chat-tuned Qwen2.5 sees it: the system, user and assistant turns in ChatML (``CHATML_TOKENS`` of markup
around the three contents) with Qwen2.5's tokenizer (``verifier.tokens``; exact, one prefix per prompt).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

#: ``<|im_start|>`` + role + newline before, ``<|im_end|>`` + newline after, for each of three turns.
CHATML_TOKENS = 15
#: The budgets the card counts rows over (TRL's default first).
BUDGETS = (1024, 2048, 4096, 8192)


def row_tokens(texts: Sequence[tuple[str, str]], count: Callable[[str, str], int]) -> list[int]:
    """Tokens of each (prompt, answer) row as a ChatML conversation (``count``: a ``PrefixTokenCounter``)."""
    from dataset.rendering import SYSTEM

    return [count(f"{SYSTEM}\n{prompt}\n", answer) + CHATML_TOKENS for prompt, answer in texts]


def _percentile(ordered: Sequence[int], share: float) -> int:
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def length_stats(tokens: Sequence[int]) -> dict[str, Any]:
    """``rows``, ``min``/``p50``/``p90``/``p99``/``max``, rows over each of ``BUDGETS``, ``max_length``."""
    if not tokens:
        return {"rows": 0}
    ordered = sorted(tokens)
    return {
        "rows": len(ordered),
        "min": ordered[0],
        "p50": _percentile(ordered, 0.5),
        "p90": _percentile(ordered, 0.9),
        "p99": _percentile(ordered, 0.99),
        "max": ordered[-1],
        "over": {str(budget): sum(1 for t in ordered if t > budget) for budget in BUDGETS},
        "max_length": 64 * math.ceil(ordered[-1] / 64),
    }
