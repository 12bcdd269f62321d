"""``manage.py tune --name ID [--algo beam] [--policy rule|llm] [--budget verifications=N] [--queue]``."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from curation.models import Workload
from curation.services import dispatch
from curation.services.tuning import POLICIES, TARGET_LABELS, TUNING_TARGET, create_trajectory, run_trajectory


class Command(BaseCommand):
    help = "Run the tuner on stored workloads and store each run as a Trajectory (here or on `tune`)."

    def add_arguments(self, parser):
        parser.add_argument("--name", action="append", default=[], required=True)
        parser.add_argument("--algo", default="beam")
        parser.add_argument("--policy", default="rule", choices=list(POLICIES))
        parser.add_argument("--budget", default="verifications=40")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--target", default=TUNING_TARGET, choices=list(TARGET_LABELS))
        parser.add_argument("--queue", action="store_true", help="enqueue on the `tune` queue instead")

    def handle(self, *args, **options):
        from tuner.search import Budget

        try:
            budget = Budget.parse(options["budget"]).to_json()
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        for name in options["name"]:
            workload = Workload.objects.filter(name=name).first()
            if workload is None:
                raise CommandError(f"no stored workload {name!r} "
                                   "(import it first: manage.py import_workloads)")
            try:
                trajectory = create_trajectory(workload, algorithm=options["algo"], policy=options["policy"],
                                               budget={k: v for k, v in budget.items() if v is not None},
                                               seed=options["seed"], target=options["target"])
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            if options["queue"]:
                dispatch.queue_tuning(trajectory.pk)
                self.stdout.write(f"queued trajectory {trajectory.pk} ({name}) on `tune`")
                continue
            trajectory = run_trajectory(trajectory.pk)
            self.stdout.write(f"trajectory {trajectory.pk} ({name}): {trajectory.status}, best "
                              f"{trajectory.best_speedup or 0:.3f}x in {len(trajectory.steps)} step(s)"
                              + (f" — {trajectory.error}" if trajectory.error else ""))
