"""``LLMPolicy``: a model behind any OpenAI-compatible chat-completions endpoint (vLLM, SGLang,
llama.cpp server, ollama) proposes the next step.

The prompt is exactly the exported SFT prompt (``dataset.rendering.prompt_text`` with its system
turn) followed by the search context — the current speedup, the path so far, and the candidates from
this state that failed and why — so a model fine-tuned on our exports sees what it was trained on. Each
choice's ``<answer>`` is parsed by ``tuner.policies.answers``; malformed, truncated or off-format answers
and endpoint errors become failed proposals with the raw response kept, never exceptions. Requests
retry with exponential backoff on timeouts, connection errors, 429 and 5xx; every request and raw
response is appended to ``transcript`` (the run writes it next to its records).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from dataset.rendering import SYSTEM, prompt_text
from leir.ast import Program
from leir.program import program_hash, program_to_json
from tuner.policies.answers import AnswerFailure, answer_objects, match_step
from tuner.proposals import Proposal, SearchContext

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: One completion: its text (``None`` when the choice had none) and whether it hit the token limit.
Choice = tuple[str | None, bool]


class EndpointError(Exception):
    """The endpoint gave no usable completion after all retries (the message says what happened)."""


def search_context_text(context: SearchContext) -> str:
    lines = ["", "Search context:",
             f"- current speedup over the source program: {context.speedup:.3f}x"]
    steps = "; ".join(context.path) if context.path else "none (this is the source)"
    lines.append("- steps so far: " + steps)
    if context.failed:
        lines.append("- candidates from this program that failed (do not repeat them):")
        lines.extend(f"  - {what}: {why}" for what, why in context.failed)
    return "\n".join(lines)


def state_prompt(program: Program, name: str, context: SearchContext) -> str:
    """The SFT prompt for ``program`` plus the search context."""
    record = {"source": {"id": name, "workload": name}, "parent": {"program": program_to_json(program)}}
    return prompt_text(record) + "\n" + search_context_text(context)


class LLMPolicy:
    name = "llm"

    def __init__(self, url: str, model: str, *, api_key: str | None = None, program_name: str = "program",
                 temperature: float = 0.0, max_tokens: int = 4096, samples: int = 1, timeout: float = 120.0,
                 retries: int = 3, backoff: float = 1.0, seed: int = 0):
        self.url = url.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url += "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.program_name = program_name
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.samples = samples
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.seed = seed
        self.transcript: list[dict[str, Any]] = []

    def describe(self) -> dict[str, object]:
        return {"name": self.name, "url": self.url, "model": self.model, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "samples": self.samples, "timeout": self.timeout,
                "retries": self.retries, "seed": self.seed}

    # ------------------------------------------------------------------------------------ transport

    def _post(self, payload: dict[str, Any], log: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    text = response.read().decode("utf-8", errors="replace")
            except urllib.error.HTTPError as exc:
                body = exc.read().decode("utf-8", errors="replace")[:2000]
                last = f"HTTP {exc.code}: {body}"
                log["attempts"].append({"error": last})
                if exc.code not in RETRY_STATUSES:
                    break
                continue
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
                last = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
                log["attempts"].append({"error": last})
                continue
            log["attempts"].append({"ok": True})
            log["raw_http"] = text
            try:
                reply: dict[str, Any] = json.loads(text)  # the endpoint's contract: a JSON object
                return reply
            except json.JSONDecodeError as exc:
                last = f"the endpoint did not return JSON: {exc}"
                log["attempts"][-1] = {"error": last}
        raise EndpointError(last)

    # ------------------------------------------------------------------------------------- proposals

    def complete(self, prompt: str, state: str = "") -> tuple[list[Choice] | None, str | None]:
        """``([(content, truncated) per choice], None)``, or ``(None, why)`` when no usable reply came.

        The request and every attempt and raw response are appended to ``transcript``.
        """
        payload = {"model": self.model, "temperature": self.temperature, "max_tokens": self.max_tokens,
                   "n": self.samples, "seed": self.seed,
                   "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]}
        log: dict[str, Any] = {"state": state, "prompt": prompt, "attempts": [], "responses": []}
        self.transcript.append(log)
        try:
            reply = self._post(payload, log)
        except EndpointError as exc:
            return None, f"endpoint_error: {exc}"
        choices = reply.get("choices") if isinstance(reply, dict) else None
        if not isinstance(choices, list) or not choices:
            return None, "off_format: the reply has no choices"
        out: list[Choice] = []
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if not isinstance(content, str):
                content = choice.get("text") if isinstance(choice, dict) else None
            content = content if isinstance(content, str) else None
            log["responses"].append(content)
            out.append((content, isinstance(choice, dict) and choice.get("finish_reason") == "length"))
        return out, None

    def propose(self, program: Program, context: SearchContext) -> list[Proposal]:
        prompt = state_prompt(program, self.program_name, context)
        choices, error = self.complete(prompt, program_hash(program))
        if choices is None:
            kind, _sep, reason = (error or "endpoint_error: unknown").partition(": ")
            return [Proposal("", failure={"kind": kind, "reason": reason},
                             raw=self.transcript[-1].get("raw_http"), origin=self.name)]
        proposals: list[Proposal] = []
        for rank, (content, truncated) in enumerate(choices):
            if content is None:
                failure = {"kind": "off_format", "reason": "a choice without text"}
                proposals.append(Proposal("", failure=failure, origin=self.name))
                continue
            proposals.extend(self._parse(program, content, truncated, rank))
        return proposals

    def _parse(self, program: Program, content: str, truncated: bool, rank: int) -> list[Proposal]:
        parsed = answer_objects(content, truncated=truncated)
        if isinstance(parsed, AnswerFailure):
            return [Proposal("", failure={"kind": parsed.kind, "reason": parsed.reason}, raw=content,
                             origin=self.name)]
        out = []
        for order, answer in enumerate(parsed):
            name = answer["applied_strategy"].strip()
            matched = match_step(program, name, answer["transformed_IR"])
            score = -float(rank * 100 + order)
            if isinstance(matched, AnswerFailure):
                failure = {"kind": matched.kind, "reason": matched.reason}
                out.append(Proposal(name, score=score, failure=failure, raw=content, origin=self.name))
            else:
                out.append(Proposal(name, matched, score, "model answer", raw=content, origin=self.name))
        return out
