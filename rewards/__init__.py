"""``rewards`` — the verifier as a reward (the issue's ``steptp.rewards``; packages here are top-level).

``from rewards import VerifierReward`` gives a callable TRL takes as ``reward_funcs`` (``GRPOTrainer``):
``reward(prompts, completions, **kwargs) -> list[float]`` for prompts of the Step-TP format
(``dataset.rendering``), scored by format, valid LEIR, a legal step of the named strategy, the
verification against the parent and, with ``time=True``, the measured speedup (``rewards.scoring``).
``steptp reward-server`` serves the same over HTTP (``rewards.server``) for trainers in another process.
"""

from rewards.prompts import PromptError, parse_prompt
from rewards.scoring import REWARDS, Score, VerifierReward, screen

__all__ = ["REWARDS", "PromptError", "Score", "VerifierReward", "parse_prompt", "screen"]
