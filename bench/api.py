"""API and export throughput at dataset scale: 100,000 steps in PostgreSQL.

Usage: ``python bench/api.py [--steps 100000] [--requests 200] [--export-steps 20000] [--database URL]``.

Seeds a fresh database (default ``postgres://postgres@127.0.0.1:5432/steptp_bench``, dropped and
recreated) with real states translated from built-in workloads and ``--steps`` steps spread over them,
then measures in-process (Django's test client: server time, no network):

* the step list with no filter — the **baseline** every other figure is a ratio to;
* the step list filtered by strategy + review status, by workload + exactness, and a full-text search in
  the traces (p50 / p95 over ``--requests`` requests each, random pages through the cursor);
* export throughput: approved steps rendered and written (JSONL, parquet, card, manifest, lint), steps/s.

Targets (the curation-backend issue): p95 < 150 ms for each list query; export >= 5,000 steps/s.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = ["tile", "fuse", "vectorise", "parallel", "unroll", "inline", "reorder", "split", "cache", "layout",
         "prefix", "softmax", "rescale", "reduction", "spatial", "contiguous", "stride", "footprint", "bytes",
         "passes", "exact", "equivalent"]


def _prepare_database(url: str) -> None:
    name = url.rsplit("/", 1)[-1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    subprocess.run(["psql", admin, "-q", "-c", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)',
                    "-c", f'CREATE DATABASE "{name}"'], check=True)


def seed(steps: int, rng: random.Random) -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from curation.models import ProgramState, ReviewStatus, Step, VerificationStatus, Workload
    from curation.services import workloads
    from curation.services.roles import Role, grant

    call_command("migrate", verbosity=0)
    names = ["level1/softmax", "level1/layer_norm", "level1/matmul", "level1/conv2d", "level1/relu",
             "level2/conv2d_groupnorm_silu", "level2/gemm_gelu", "level1/cumsum"]
    workloads.import_builtin(names=names)
    states = []
    for workload in Workload.objects.all():
        source = workloads.source_state(workload)
        for variant in range(25):  # 25 states per workload: real programs, only the hash made distinct
            digest = f"{variant:04d}{source.program_hash[4:]}"
            states.append(ProgramState(workload=workload, program_hash=digest, tensors=source.tensors,
                                       leir=source.leir, depth=1))
    ProgramState.objects.bulk_create(states, ignore_conflicts=True)
    by_workload: dict[int, list[ProgramState]] = {}
    for state in ProgramState.objects.all():
        by_workload.setdefault(state.workload_id, []).append(state)
    strategies = [("loop_unrolling", 14, "loop", "E"), ("loop_tiling", 11, "loop", "E"),
                  ("operator_fusion", 1, "graph", "E"), ("online_softmax", 42, "math", "N"),
                  ("cache_read_write", 19, "memory", "E"), ("reduction_factorization", 18, "loop", "N")]
    reviews = [ReviewStatus.UNREVIEWED] * 6 + [ReviewStatus.APPROVED] * 3 + [ReviewStatus.REJECTED]
    rows = []
    workload_ids = sorted(by_workload)
    for index in range(steps):
        workload_id = workload_ids[index % len(workload_ids)]
        before, after = rng.sample(by_workload[workload_id], 2)
        name, number, level, exact = strategies[index % len(strategies)]
        text = " ".join(rng.choice(WORDS) for _ in range(60))
        rows.append(Step(step_id=f"bench-{index:08d}", workload_id=workload_id, before=before, after=after,
                         strategy=name, number=number, level=level, exactness=exact,
                         site={"path": [0], "detail": {}, "where": "block 1"}, params={},
                         trace={"applicability": text}, trace_text=f"In block 1 {text}",
                         verification_status=VerificationStatus.EQUAL_PASS if exact == "E"
                         else VerificationStatus.PASS, review_status=rng.choice(reviews)))
        if len(rows) == 5000:
            Step.objects.bulk_create(rows)
            rows = []
    Step.objects.bulk_create(rows)
    user = get_user_model().objects.create_user("bench", password="bench-password")
    grant(user, Role.CURATOR)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def timed_requests(client, path: str, params: dict, count: int, rng: random.Random) -> list[float]:
    times = []
    cursors: list[str] = []
    for _ in range(count):
        query = dict(params)
        if cursors and rng.random() < 0.5:
            query["cursor"] = rng.choice(cursors)
        start = time.perf_counter()
        response = client.get(path, query)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.content[:300]
        following = response.json().get("next")
        if following and "cursor=" in following:
            cursors.append(unquote(following.split("cursor=")[1].split("&")[0]))
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--export-steps", type=int, default=20_000)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/steptp_bench")
    args = parser.parse_args()
    _prepare_database(args.database)
    os.environ["DATABASE_URL"] = args.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    rng = random.Random(0)
    start = time.perf_counter()
    seed(args.steps, rng)
    print(f"seeded {args.steps} steps in {time.perf_counter() - start:.1f} s")
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    queries = {
        "baseline: no filter": {},
        "strategy + review status": {"strategy": "loop_tiling", "review_status": "approved"},
        "workload + exactness": {"workload": "level1/matmul", "exactness": "N"},
        "full-text search": {"q": "footprint contiguous"},
    }
    results = {}
    for label, params in queries.items():
        timed_requests(client, "/api/steps/", params, 5, rng)  # warm caches and connection
        results[label] = timed_requests(client, "/api/steps/", params, args.requests, rng)
    base = statistics.median(results["baseline: no filter"])
    print(f"\n{'query':28} {'p50 ms':>8} {'p95 ms':>8} {'p50/baseline':>13} {'p95 < 150 ms':>13}")
    for label, times in results.items():
        p50, p95 = pct(times, 0.5), pct(times, 0.95)
        print(f"{label:28} {p50:8.1f} {p95:8.1f} {p50 / base:13.2f} {'yes' if p95 < 150 else 'NO':>13}")

    from curation.models import ReviewStatus, Step
    from curation.services import exports

    approved = list(Step.objects.filter(review_status=ReviewStatus.APPROVED)
                    .order_by("id").values_list("id", flat=True)[: args.export_steps])
    Step.objects.filter(review_status=ReviewStatus.APPROVED).exclude(id__in=approved).update(
        review_status=ReviewStatus.UNREVIEWED)
    from django.db import connection

    with connection.cursor() as cursor:  # the statuses just changed: plan the export on current statistics
        cursor.execute("ANALYZE curation_step")
    user = get_user_model().objects.get(username="bench")
    export = exports.create_export(user, name="bench", seed=0, enqueue=False)
    start = time.perf_counter()
    export = exports.run_export(export.pk)
    seconds = time.perf_counter() - start
    rate = len(approved) / seconds
    print(f"\nexport: {len(approved)} steps in {seconds:.1f} s = {rate:,.0f} steps/s "
          f"({'meets' if rate >= 5000 else 'MISSES'} >= 5,000); lint rows {export.lint['rows']}, "
          f"problems {export.lint['problem_count']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
