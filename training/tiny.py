"""A tiny randomly initialised Qwen2 model: the smallest thing TRL trains, for tests and smoke runs.

Not a model anyone should use — it learns nothing useful in a few steps — but it runs every trainer's
code path (tokenisation, chat template, loss masking, generation for GRPO) offline in seconds.
"""

from __future__ import annotations

from typing import Any


def tiny_qwen2(tokenizer: Any, *, hidden: int = 32, layers: int = 2, heads: int = 2, seed: int = 0) -> Any:
    """A ``Qwen2ForCausalLM`` of ``layers`` layers of width ``hidden`` over ``tokenizer``'s vocabulary."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=1, max_position_embeddings=32768,
        tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model
