"""``LearnedPolicy``: the rule policy's candidate steps, ranked by a model learned from step records.

Candidates are exactly ``RulePolicy``'s (every legal step, its always-tried parameters, the register-tile
recipe's planned chains), so the two policies differ only in their ranking and a comparison at equal
budgets measures the ranking. The rule's first ``rerank`` proposals are scored by the model
(``tuner.learned.predict``: predicted log speedup from the parent's and the child's cost-model features
and the strategy); a proposal with planned steps (``Proposal.then``) is scored by the state its chain ends
in, and one the rule's lookahead found *enabling* keeps at least the log of the rule's own modelled gain,
since the model sees one step and cannot know what it enables. Measured states still rank first, by
measurement, as in the rule policy; the rest follow by predicted speedup (ties: the rule's order), then
the proposals beyond ``rerank`` in the rule's order. The list is then spread by (strategy, block) as the
rule's is (``rule.spread``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

from leir.ast import Program
from leir.program import program_hash
from tuner import learned
from tuner.effect import program_features
from tuner.policies.rule import RulePolicy, spread
from tuner.proposals import Proposal, SearchContext

#: How many of the rule's proposals the model re-scores per call (each needs the child's features).
DEFAULT_RERANK = 64


class LearnedPolicy:
    name = "learned"

    def __init__(self, model: Mapping[str, Any] | str | Path, *, seed: int = 0, params_per_site: int = 4,
                 strategies: tuple[str, ...] | None = None,
                 measured: MutableMapping[str, float] | None = None,
                 target: str = "llvm", rerank: int = DEFAULT_RERANK,
                 lookahead_seconds: float | None = None) -> None:
        self.model_path = str(model) if isinstance(model, str | Path) else None
        self.model = learned.load(model) if isinstance(model, str | Path) else dict(model)
        self.rule = RulePolicy(seed=seed, params_per_site=params_per_site, strategies=strategies,
                               measured=measured, target=target, lookahead_seconds=lookahead_seconds)
        self.target = target
        self.rerank = rerank
        self._features: dict[str, dict[str, Any]] = {}

    @property
    def measured(self) -> MutableMapping[str, float] | None:
        """The rule policy's measured-seconds cache (the search fills it)."""
        return self.rule.measured

    def describe(self) -> dict[str, object]:
        training = self.model.get("training", {})
        return {"name": self.name, "model": self.model_path, "model_sha256": training.get("sha256"),
                "model_examples": training.get("examples"), "rerank": self.rerank,
                "rule": self.rule.describe()}

    def _of(self, program: Program) -> dict[str, Any]:
        key = program_hash(program)
        if key not in self._features:
            self._features[key] = program_features(program, self.target)
        return self._features[key]

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        ranked = self.rule.propose(program, context)
        head, tail = ranked[:self.rerank], ranked[self.rerank:]
        parent = self._of(program)
        keyed = []
        for index, proposal in enumerate(head):
            step = proposal.step
            if step is None:
                keyed.append(((2, 0.0, index), proposal))
                continue
            if proposal.rationale.startswith("measured"):
                keyed.append(((0, -proposal.score, index), proposal))
                continue
            end = proposal.then[-1].after if proposal.then else step.after
            score = learned.predict(self.model, parent, self._of(end), step.strategy)
            if proposal.enables and 0.0 < proposal.score < 1.0:
                score = max(score, -math.log(1.0 - proposal.score))
            rescored = Proposal(proposal.strategy, step, score,
                                f"learned log-speedup {score:.3g}; {proposal.rationale}", origin=self.name,
                                enables=proposal.enables, then=proposal.then)
            keyed.append(((1, -score, index), rescored))
        keyed.sort(key=lambda pair: pair[0])
        return spread([proposal for _key, proposal in keyed] + tail)
