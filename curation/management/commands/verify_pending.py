"""``manage.py verify_pending [--target llvm|cuda] [--queue]`` — steps whose current version is unverified."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from curation.management.commands._progress import bar
from curation.models import Step, VerificationStatus
from curation.services import dispatch
from curation.services.verification import verify_step


class Command(BaseCommand):
    help = "Verify every pending or queued step (here, or on the verify queue of its target)."

    def add_arguments(self, parser):
        parser.add_argument("--target", default="llvm", choices=["llvm", "cuda"])
        parser.add_argument("--queue", action="store_true")

    def handle(self, *args, **options):
        pending = Step.objects.filter(
            verification_status__in=[VerificationStatus.PENDING, VerificationStatus.QUEUED]
        ).order_by("id")
        if options["queue"]:
            for step in pending:
                dispatch.queue_verification(step.pk, target=options["target"])
            self.stdout.write(f"queued {pending.count()} verification(s)")
            return
        outcomes: dict[str, int] = {}
        with bar(pending.count(), "verify", unit="step") as progress:
            for step in pending:
                outcome = verify_step(step.pk, target=options["target"]).outcome
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                progress.update()
        self.stdout.write(", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())) or "nothing pending")
