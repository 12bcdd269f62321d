"""LLMPolicy against a real local OpenAI-compatible server (http.server in a thread, scripted replies).

The server answers ``POST /v1/chat/completions`` from a script: well-formed answers, malformed JSON,
truncated output, off-format text, unknown strategies, IR no legal step produces, slow replies (to hit
the request timeout) and 5xx errors. Every failure must come back as a recorded failed proposal with the
raw response, never an exception; retries must recover from transient errors.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dataset.rendering import SYSTEM, prompt_text
from leir.program import program_to_json
from strategies.engine import apply_strategy
from tuner.policies import LLMPolicy
from tuner.proposals import SearchContext
from tuner.run import tune
from tuner.search import Budget


class ScriptedServer:
    """Replies in order from ``script``: ``("ok", content, finish_reason)``, ``("status", code)``,
    ``("sleep", seconds, content)`` or ``("raw", bytes)``; records every request body."""

    def __init__(self):
        self.script: list[tuple] = []
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append({"path": self.path, "body": json.loads(self.rfile.read(length)),
                                        "auth": self.headers.get("Authorization")})
                item = server.script.pop(0) if server.script else ("status", 500)
                if item[0] == "status":
                    self._send(item[1], b'{"error": "scripted"}')
                    return
                if item[0] == "raw":
                    self._send(200, item[1])
                    return
                if item[0] == "sleep":
                    time.sleep(item[1])
                    item = ("ok", item[2], "stop")
                reply = {"id": "x", "object": "chat.completion", "model": "test",
                         "choices": [{"index": 0, "message": {"role": "assistant", "content": item[1]},
                                      "finish_reason": item[2]}]}
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._send(200, json.dumps(reply).encode())

            def _send(self, code, body):
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = ScriptedServer()
    yield s
    s.close()


def _policy(server, **kw) -> LLMPolicy:
    options = {"api_key": "k", "program_name": "layer_norm", "timeout": 2.0, "retries": 2, "backoff": 0.01}
    options.update(kw)
    return LLMPolicy(server.url, "test-model", **options)


def _answer(ir: str, strategy: str = "loop_unrolling") -> str:
    return ("<think>unroll the short loop</think><answer>"
            + json.dumps({"transformed_IR": ir, "applied_strategy": strategy}) + "</answer>")


@pytest.fixture(scope="module")
def good_step(layer_norm):
    return apply_strategy(layer_norm.program, "loop_unrolling", 0)


def test_prompt_is_the_sft_prompt_plus_search_context(server, layer_norm, good_step):
    server.script.append(("ok", _answer(program_to_json(good_step.after)["leir"]), "stop"))
    context = SearchContext(speedup=1.25, path=["loop_unrolling at [0] loop=a"],
                            failed=[("loop_unrolling at [1] loop=b", "fail: outputs differ")])
    proposals = _policy(server).propose(layer_norm.program, context)
    body = server.requests[0]["body"]
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["auth"] == "Bearer k"
    assert body["model"] == "test-model"
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}
    record = {"source": {"id": "layer_norm", "workload": "layer_norm"},
              "parent": {"program": program_to_json(layer_norm.program)}}
    user = body["messages"][1]["content"]
    assert user.startswith(prompt_text(record) + "\n")
    assert "current speedup over the source program: 1.250x" in user
    assert "loop_unrolling at [1] loop=b: fail: outputs differ" in user
    assert len(proposals) == 1 and proposals[0].ok
    assert proposals[0].step.after == good_step.after


@pytest.mark.parametrize("content, finish, kind", [
    ('<think>x</think><answer>{"transformed_IR": "B^{4}', "length", "truncated"),
    ("<think>x</think><answer>{not json}</answer>", "stop", "malformed"),
    ('<answer>{"transformed_IR": 3, "applied_strategy": "loop_unrolling"}</answer>', "stop", "malformed"),
    ("I would unroll the loop.", "stop", "off_format"),
    ('<answer>{"transformed_IR": "x", "applied_strategy": "teleport"}</answer>', "stop", "unknown_strategy"),
    ('<answer>{"transformed_IR": "B^{4}_{a=0}[", "applied_strategy": "loop_unrolling"}</answer>', "stop",
     "invalid_ir"),
])
def test_bad_answers_are_recorded_failures(server, layer_norm, content, finish, kind):
    server.script.append(("ok", content, finish))
    policy = _policy(server)
    proposals = policy.propose(layer_norm.program, SearchContext())
    assert len(proposals) == 1 and not proposals[0].ok
    assert proposals[0].failure["kind"] == kind, proposals[0].failure
    assert proposals[0].raw == content
    assert policy.transcript[0]["responses"] == [content]


def test_ir_that_no_legal_step_produces_is_refused(server, layer_norm):
    # The source itself, with every serial loop unrolled at once: valid LEIR, but not ONE step.
    text = program_to_json(layer_norm.program)["leir"]
    everything = text.replace("L^{", "U^{")
    assert everything != text
    server.script.append(("ok", _answer(everything), "stop"))
    proposals = _policy(server).propose(layer_norm.program, SearchContext())
    assert proposals[0].failure["kind"] in ("not_a_legal_step", "invalid_ir"), proposals[0].failure


def test_5xx_then_success_is_retried(server, layer_norm, good_step):
    server.script += [("status", 503), ("status", 502), ("ok", _answer(program_to_json(good_step.after)["leir"]),
                                                          "stop")]
    policy = _policy(server)
    proposals = policy.propose(layer_norm.program, SearchContext())
    assert proposals[0].ok
    attempts = policy.transcript[0]["attempts"]
    assert [a.get("error", "ok")[:8] for a in attempts] == ["HTTP 503", "HTTP 502", "ok"]


def test_timeout_is_retried_then_reported(server, layer_norm, good_step):
    good = _answer(program_to_json(good_step.after)["leir"])
    server.script += [("sleep", 1.5, good), ("ok", good, "stop")]
    policy = _policy(server, timeout=0.5, retries=1)
    proposals = policy.propose(layer_norm.program, SearchContext())
    assert proposals[0].ok
    assert "timed out" in policy.transcript[0]["attempts"][0]["error"].lower()
    server.script += [("sleep", 1.0, good), ("sleep", 1.0, good)]
    proposals = _policy(server, timeout=0.3, retries=1).propose(layer_norm.program, SearchContext())
    assert proposals[0].failure["kind"] == "endpoint_error"


def test_client_error_is_not_retried(server, layer_norm):
    server.script += [("status", 400), ("ok", "never reached", "stop")]
    policy = _policy(server)
    proposals = policy.propose(layer_norm.program, SearchContext())
    assert proposals[0].failure["kind"] == "endpoint_error"
    assert "HTTP 400" in proposals[0].failure["reason"]
    assert len(server.requests) == 1


def test_non_json_reply_is_a_failed_proposal(server, layer_norm):
    server.script += [("raw", b"<html>gateway</html>")] * 3
    proposals = _policy(server).propose(layer_norm.program, SearchContext())
    assert proposals[0].failure["kind"] == "endpoint_error"


def test_search_with_llm_policy_records_failures_and_verified_steps(server, layer_norm, good_step, measurer):
    server.script += [("ok", "no tags at all", "stop"),
                      ("ok", _answer(program_to_json(good_step.after)["leir"]), "stop")]
    policy = _policy(server)
    search = tune(layer_norm, policy, measurer, Budget(verifications=1, policy_calls=2), algo="chain")
    assert search.usage.policy_failures == 1
    assert search.policy_failures[0]["failure"]["kind"] == "off_format"
    # The second call saw the first failure in its search context.
    assert "off_format" in server.requests[1]["body"]["messages"][1]["content"]
    assert search.usage.accepted == 1
    assert search.records[0]["status"] == "verified"
