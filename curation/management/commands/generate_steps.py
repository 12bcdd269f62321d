"""``manage.py generate_steps [--name ID ...] [--depth D] [--seed S] [--queue]`` — resumable."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from curation.management.commands._progress import bar
from curation.models import Workload
from curation.services import dispatch
from curation.services.generation import NothingToGenerate, generate_for_workload


class Command(BaseCommand):
    help = "Generate and verify steps for stored workloads (here, or queued on the `generate` queue)."

    def add_arguments(self, parser):
        parser.add_argument("--name", action="append", default=[])
        parser.add_argument("--level", type=int)
        parser.add_argument("--depth", type=int, default=1)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--max-steps-per-state", type=int, default=None)
        parser.add_argument("--queue", action="store_true", help="enqueue one task per workload instead")

    def handle(self, *args, **options):
        chosen = Workload.objects.filter(states__depth=0).distinct().order_by("level", "name")
        if options["name"]:
            chosen = chosen.filter(name__in=options["name"])
        if options["level"]:
            chosen = chosen.filter(level=options["level"])
        if options["queue"]:
            for workload in chosen:
                dispatch.queue_generation(
                    workload.pk,
                    depth=options["depth"],
                    seed=options["seed"],
                    max_steps_per_state=options["max_steps_per_state"],
                )
            self.stdout.write(f"queued {chosen.count()} workload(s) on `generate`")
            return
        created = 0
        with bar(chosen.count(), "workloads") as progress:
            for workload in chosen:
                try:
                    created += generate_for_workload(
                        workload.pk,
                        depth=options["depth"],
                        seed=options["seed"],
                        max_steps_per_state=options["max_steps_per_state"],
                    ).created
                except NothingToGenerate as exc:
                    self.stderr.write(str(exc))
                progress.update()
        self.stdout.write(f"{created} new step(s)")
