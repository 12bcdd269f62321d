"""Review pages' server time at dataset scale: 100,000 steps in PostgreSQL.

Usage: ``python bench/ui.py [--steps 100000] [--requests 100] [--reviews 20000] [--database URL] [--reuse]``.

Seeds a fresh database (default ``postgres://postgres@127.0.0.1:5432/steptp_bench_ui``, dropped and
recreated) with ``bench/api.py``'s seeding — real states translated from built-in workloads, ``--steps``
steps spread over them — plus ``--reviews`` reviews by two reviewers (so the dashboard's agreement and
reviewer figures have work to do), then measures in-process with Django's test client, logged in (server
time, no network), p50 / p95 over ``--requests`` requests per page:

* the **baseline**: the login form, a template render without a query — every page is also a ratio to it;
* the review queue (``/review/``) and the step page (``/steps/<pk>/``, random steps) when this checkout
  has them (a page that answers 404 is skipped with a note);
* the dashboard (``/``); the steps list (``/steps/``, random pages; also filtered and searched);
* a workload page (``/workloads/<pk>/``: source, LEIR as math, the capped state tree of 12,500 steps).

Target (the review-app issue): p95 < 200 ms for each page. ``--reuse`` skips seeding (a database a previous
run left) so a rerun measures only.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.api import _prepare_database, pct, seed  # noqa: E402  (after the path is set)

TARGET_MS = 200.0


def seed_reviews(count: int, rng: random.Random) -> None:
    """Two reviewers decide ``count`` // 2 steps each way; about one pair in ten disagrees."""
    from django.contrib.auth import get_user_model

    from curation.models import Decision, Review, Step
    from curation.services.roles import Role, grant

    people = []
    for name in ("bench-ann", "bench-bob"):
        person = get_user_model().objects.create_user(name, password="bench-password")
        grant(person, Role.REVIEWER)
        people.append(person)
    steps = list(Step.objects.order_by("id").values_list("id", flat=True)[: count // 2])
    rows = []
    for step_id in steps:
        first = Decision.APPROVE if rng.random() < 0.8 else Decision.REJECT
        second = first if rng.random() < 0.9 else (Decision.REJECT if first == Decision.APPROVE
                                                     else Decision.APPROVE)
        for person, decision in zip(people, (first, second), strict=True):
            rows.append(Review(step_id=step_id, reviewer=person, decision=decision, step_version=1,
                               reason="trivial_or_shortcut" if decision == Decision.REJECT else ""))
    Review.objects.bulk_create(rows, batch_size=5000)
    Step.assigned_to.through.objects.bulk_create(
        [Step.assigned_to.through(step_id=s, user_id=people[0].pk) for s in steps[-500:]], batch_size=5000)


def timed(client, paths: list[str], count: int, rng: random.Random) -> list[float] | None:
    """Server times (ms) of ``count`` GETs of paths drawn from ``paths``; None when the page is absent."""
    first = client.get(paths[0])
    if first.status_code == 404:
        return None
    for _ in range(4):  # warm caches and the connection
        client.get(rng.choice(paths))
    times = []
    for _ in range(count):
        path = rng.choice(paths)
        start = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}: {response.content[:300]!r}")
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--reviews", type=int, default=20_000)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/steptp_bench_ui")
    parser.add_argument("--reuse", action="store_true", help="measure an already seeded database")
    args = parser.parse_args()
    if not args.reuse:
        _prepare_database(args.database)
    os.environ["DATABASE_URL"] = args.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from curation.models import Step, Workload

    rng = random.Random(0)
    if not args.reuse:
        start = time.perf_counter()
        seed(args.steps, rng)
        seed_reviews(args.reviews, rng)
        from django.db import connection

        with connection.cursor() as cursor:  # what autovacuum does soon after a bulk load: index-only scans
            cursor.execute("VACUUM ANALYZE")
        print(f"seeded {args.steps} steps and {args.reviews} reviews in {time.perf_counter() - start:.1f} s")
    print(f"database: {Step.objects.count()} steps, {Workload.objects.count()} workloads")
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench"))
    step_pks = list(Step.objects.order_by("?").values_list("pk", flat=True)[:200])
    pages = Step.objects.count() // 50
    workload = Workload.objects.order_by("name").first()
    cases: dict[str, list[str]] = {
        "baseline: login form": ["/accounts/login/"],
        "queue /review/": ["/review/"],
        "step page /steps/<pk>/": [f"/steps/{pk}/" for pk in step_pks],
        "dashboard /": ["/"],
        "steps list /steps/": ["/steps/"] + [f"/steps/?page={rng.randint(2, pages)}" for _ in range(50)],
        "steps list, filtered": ["/steps/?strategy=loop_tiling&review_status=approved",
                                 f"/steps/?workload={workload.name}&exactness=N&page=3",
                                 "/steps/?level=loop&verification_status=equal_pass&page=40"],
        "steps list, text search": ["/steps/?q=footprint+contiguous",
                                    "/steps/?q=softmax&strategy=loop_tiling"],
        "workload page (tree)": [f"/workloads/{workload.pk}/"],
    }
    results: dict[str, list[float]] = {}
    for label, paths in cases.items():
        times = timed(client, paths, args.requests, rng)
        if times is None:
            print(f"note: {label} answers 404 in this checkout; skipped")
            continue
        results[label] = times
    base = statistics.median(results["baseline: login form"])
    print(f"\n{'page':28} {'p50 ms':>8} {'p95 ms':>8} {'p50/baseline':>13} {'p95 < 200 ms':>13}")
    for label, times in results.items():
        p50, p95 = pct(times, 0.5), pct(times, 0.95)
        print(f"{label:28} {p50:8.1f} {p95:8.1f} {p50 / base:13.2f} {'yes' if p95 < TARGET_MS else 'NO':>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
