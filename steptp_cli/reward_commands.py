"""``steptp reward-server [--host H] [--port P] [--workers N] [--time] [--timeout S]`` — the verifier
reward (``rewards``) over HTTP: ``POST /score`` with prompts and completions, rewards back."""

from __future__ import annotations

import argparse
import sys

from steptp_cli.main import EXIT_OK


def register(subparsers) -> None:
    srv = subparsers.add_parser("reward-server", help="serve the verifier-backed reward over HTTP",
                                description="POST /score {prompts, completions} -> {rewards, scores}: "
                                            "format, valid LEIR, legal step, verification (and speedup "
                                            "with --time) of each answer; GET /health.")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8808)
    srv.add_argument("--workers", type=int, default=1, help="sandbox workers verifying at once (default 1)")
    srv.add_argument("--time", action="store_true", help="time accepted answers; reward the speedup")
    srv.add_argument("--timeout", type=float, default=60.0, help="seconds per answer's verification")
    srv.add_argument("--no-cache", action="store_true")
    srv.set_defaults(handler=run_reward_server)


def run_reward_server(args: argparse.Namespace) -> int:
    from rewards.scoring import VerifierReward
    from rewards.server import make_server

    with VerifierReward(workers=args.workers, time=args.time, timeout=args.timeout,
                        cache=not args.no_cache) as reward:
        server = make_server(reward, args.host, args.port)
        host, port = server.server_address[:2]
        print(f"steptp reward-server: POST http://{host}:{port}/score", file=sys.stderr)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return EXIT_OK
