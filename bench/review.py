"""Review-core page times at dataset scale: the queue, the step screen and "next step", 100,000 steps.

Usage: ``python bench/review.py [--steps 100000] [--requests 100] [--reviews 5000] [--database URL]``.

Seeds a fresh PostgreSQL database (default ``postgres://postgres@127.0.0.1:5432/steptp_bench_review``,
dropped and recreated) the way ``bench/api.py`` does (real translated states, ``--steps`` steps), gives the
reviewer ``--reviews`` earlier decisions (so the queue's "not decided by me" anti-join has work), then
measures server time in-process with Django's test client (no network), p50 / p95 over ``--requests``:

* ``GET /review/`` (the queue page), plain and filtered by strategy;
* ``GET /steps/<id>/`` (the step screen: diff, math, verification, history) on random steps;
* ``POST /review/next/`` (assignment under the overlap policy).

Figures are printed with their ratio to the login page's p95 in the same run (the machine is shared).
Target (the review-app issue): p95 < 200 ms for each page.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--reviews", type=int, default=5_000)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/steptp_bench_review")
    args = parser.parse_args()
    from bench.api import _prepare_database, pct, seed

    _prepare_database(args.database)
    os.environ["DATABASE_URL"] = args.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from curation.models import Review, Step

    rng = random.Random(0)
    start = time.perf_counter()
    seed(args.steps, rng)
    reviewer = get_user_model().objects.get(username="bench")
    decided = list(Step.objects.order_by("id").values_list("pk", flat=True)[:args.reviews])
    Review.objects.bulk_create([Review(step_id=pk, reviewer=reviewer, decision="approve", step_version=1)
                                for pk in decided])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    print(f"seeded {args.steps} steps and {len(decided)} reviews in {time.perf_counter() - start:.1f} s")
    client = Client()
    client.force_login(reviewer)
    pks = list(Step.objects.values_list("pk", flat=True))

    def measure(label: str, request, baseline: float | None = None) -> float:
        request()  # warm the caches (templates, the strategy registry) once
        times = []
        for _ in range(args.requests):
            began = time.perf_counter()
            response = request()
            times.append((time.perf_counter() - began) * 1000)
            assert response.status_code in (200, 302), (label, response.status_code)
        p95 = pct(times, 0.95)
        ratio = f"   {p95 / baseline:5.1f}x baseline" if baseline else "   (baseline)"
        print(f"{label:<28} p50 {pct(times, 0.5):7.1f} ms   p95 {p95:7.1f} ms{ratio}")
        return p95

    # the baseline: the login page, base.html rendered with no data (the machine's speed in this run)
    anonymous = Client()
    baseline = measure("GET /accounts/login/", lambda: anonymous.get(reverse("login")))
    measure("GET /review/", lambda: client.get(reverse("queue")), baseline)
    measure("GET /review/?strategy=", lambda: client.get(reverse("queue"), {"strategy": "loop_tiling"}),
            baseline)
    measure("GET /steps/<id>/", lambda: client.get(reverse("step", args=[rng.choice(pks)])), baseline)
    measure("POST /review/next/", lambda: client.post(reverse("review-next")), baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
