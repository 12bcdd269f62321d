"""Policies propose the next one-step strategies for a LEIR state, ranked best first.

* ``RulePolicy`` — the engine's candidates ranked by a static cost model (``tuner.cost``);
* ``LLMPolicy`` — a model behind any OpenAI-compatible chat-completions endpoint, prompted in the SFT format;
* ``ReplayPolicy`` — the steps of a recorded run, for tests and reproductions.
"""

from tuner.policies.base import Policy
from tuner.policies.llm import LLMPolicy
from tuner.policies.replay import ReplayPolicy
from tuner.policies.rule import RulePolicy

__all__ = ["LLMPolicy", "Policy", "ReplayPolicy", "RulePolicy"]
