"""The verifier reward over HTTP (``steptp reward-server``), for a trainer in another process or machine.

``POST /score`` with ``{"prompts": [...], "completions": [...]}`` (strings or message lists, as TRL passes
them) answers ``{"rewards": [float], "scores": [Score.to_json()]}``; ``GET /health`` answers ``{"ok": true}``.
A trainer's reward function is then a short ``requests.post`` (docs/training.md). One ``VerifierReward``
serves every request, so its cache and its warm sandbox pool are shared; requests are handled on threads
and the pool bounds how many verifications run at once. A malformed request gets a 400 with the reason.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rewards.scoring import VerifierReward

#: Largest request body accepted (bytes): a batch of long completions fits, a runaway client does not.
MAX_BODY = 64 << 20


def make_server(reward: VerifierReward, host: str = "127.0.0.1", port: int = 8808) -> ThreadingHTTPServer:
    """A server scoring with ``reward`` (``port=0`` picks a free port: ``server.server_address``)."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, status: int, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path == "/health":
                self._reply(200, {"ok": True})
            else:
                self._reply(404, {"error": f"no such path {self.path}; POST /score, GET /health"})

        def do_POST(self) -> None:
            if self.path != "/score":
                self._reply(404, {"error": f"no such path {self.path}; POST /score"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length <= 0 or length > MAX_BODY:
                self._reply(400, {"error": f"a JSON body of 1 to {MAX_BODY} bytes is required"})
                return
            try:
                data = json.loads(self.rfile.read(length))
                prompts, completions = data["prompts"], data["completions"]
                if not isinstance(prompts, list) or not isinstance(completions, list):
                    raise TypeError("prompts and completions must be lists")
                scores = reward.score_batch(prompts, completions)
            except (ValueError, KeyError, TypeError) as exc:
                self._reply(400, {"error": f"{type(exc).__name__}: {exc}"})
                return
            self._reply(200, {"rewards": [s.reward for s in scores], "scores": [s.to_json() for s in scores]})

        def log_message(self, format: str, *args: Any) -> None:  # quiet: a trainer calls it per batch
            return

    return ThreadingHTTPServer((host, port), Handler)
