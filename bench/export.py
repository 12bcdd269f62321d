"""Export throughput, the current path against the old one, on the same PostgreSQL data in one run.

Usage: ``python bench/export.py [--steps 100000] [--export-steps 20000] [--rounds 3] [--database URL]
[--reuse]``.

Seeds the database the way ``bench/api.py`` does (``--steps`` steps over 200 real states of 8 built-in
workloads, dropped and recreated; ``--reuse`` keeps a database this script seeded before), approves
``--export-steps`` of them, then alternates ``--rounds`` times: the export as the app runs it
(``curation.services.exports.run_export``) and the pre-rewrite path kept in
``tests/backend/export_oracle.py``. Prints steps/s of each (best and median round, wall clock), the
CPU seconds this process spent (the database server's are not in it; on a shared, loaded machine the
CPU figure is the steadier one), their ratio, and whether every file of the two is byte-identical
(exit status 1 if not). The Qwen tokenizer is loaded
before timing (a once-per-process cost, ~0.5-1 s, that ``bench/api.py``'s single cold export includes).

Target (the curation-backend issue): export >= 5,000 steps/s.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--export-steps", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/steptp_bench_export")
    parser.add_argument("--reuse", action="store_true", help="keep the database if it holds --steps steps")
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = args.database
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "steptp_web.settings")
    scratch = Path(tempfile.mkdtemp(prefix="steptp-bench-export-"))
    os.environ["STEPTP_VAR_DIR"] = str(scratch / "var")
    from bench.api import _prepare_database, seed

    reuse = args.reuse and _seeded(args.database, args.steps)
    if not reuse:
        _prepare_database(args.database)
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from curation.models import ReviewStatus, Step
    from curation.services import exports
    from tests.backend.export_oracle import write_export as old_export
    from verifier.tokens import count_tokens

    if not reuse:
        start = time.perf_counter()
        seed(args.steps, random.Random(0))
        print(f"seeded {args.steps} steps in {time.perf_counter() - start:.1f} s")
    approved = list(Step.objects.filter(review_status__in=[ReviewStatus.APPROVED, ReviewStatus.IN_REVIEW])
                    .order_by("id").values_list("id", flat=True)[: args.export_steps])
    Step.objects.filter(review_status=ReviewStatus.APPROVED).exclude(id__in=approved).update(
        review_status=ReviewStatus.IN_REVIEW)  # parked, not lost: --reuse can approve them again
    Step.objects.filter(id__in=approved).update(review_status=ReviewStatus.APPROVED)
    from django.db import connection

    with connection.cursor() as cursor:  # the statuses just changed: plan the export on current statistics
        cursor.execute("ANALYZE curation_step")
    user = get_user_model().objects.get(username="bench")
    count_tokens("warm the tokenizer")
    times: dict[str, list[float]] = {"current": [], "old": []}
    cpu: dict[str, list[float]] = {"current": [], "old": []}
    identical = True
    for round_ in range(args.rounds):
        export = exports.create_export(user, name="bench", seed=0, enqueue=False)
        start, start_cpu = time.perf_counter(), time.process_time()
        export = exports.run_export(export.pk)
        times["current"].append(time.perf_counter() - start)
        cpu["current"].append(time.process_time() - start_cpu)
        old_dir = scratch / f"old-{round_}"
        start, start_cpu = time.perf_counter(), time.process_time()
        old_export(export, old_dir)
        times["old"].append(time.perf_counter() - start)
        cpu["old"].append(time.process_time() - start_cpu)
        new, old = _files(Path(export.directory)), _files(old_dir)
        differing = sorted(name for name in set(new) | set(old) if new.get(name) != old.get(name))
        identical &= not differing
        print(f"round {round_ + 1}: current {times['current'][-1]:.2f} s (cpu {cpu['current'][-1]:.2f} s), "
              f"old {times['old'][-1]:.2f} s (cpu {cpu['old'][-1]:.2f} s), "
              f"files {'byte-identical' if not differing else 'DIFFER: ' + ', '.join(differing)}")
    steps = export.lint["rows"]
    print(f"\n{steps} steps exported (all formats, lint, card, manifest)")
    print(f"{'path':8} {'best steps/s':>13} {'median steps/s':>15} {'steps/cpu-s':>12}")
    for path, seconds in times.items():
        print(f"{path:8} {steps / min(seconds):13,.0f} {steps / statistics.median(seconds):15,.0f} "
              f"{steps / statistics.median(cpu[path]):12,.0f}")
    rate = steps / min(times["current"])
    ratio = statistics.median(times["old"]) / statistics.median(times["current"])
    ratio_cpu = statistics.median(cpu["old"]) / statistics.median(cpu["current"])
    print(f"current / old (median): {ratio:.2f}x wall, {ratio_cpu:.2f}x cpu; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"target >= 5,000 steps/s: {'meets' if rate >= 5000 else 'MISSES'} (best round, wall clock)")
    print(f"all files byte-identical to the old path: {'yes' if identical else 'NO'}")
    shutil.rmtree(scratch)  # ~100 MB an export
    return 0 if identical else 1


def _seeded(url: str, steps: int) -> bool:
    """Whether the database exists and holds exactly ``steps`` steps (a previous run's seed)."""
    import subprocess

    probe = subprocess.run(["psql", url, "-tAc", "SELECT count(*) FROM curation_step"], capture_output=True,
                           text=True)
    return probe.returncode == 0 and probe.stdout.strip() == str(steps)


if __name__ == "__main__":
    sys.exit(main())
