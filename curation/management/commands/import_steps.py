"""``manage.py import_steps FILE.jsonl ...`` — records from ``steptp generate``; idempotent."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from curation.management.commands._progress import bar
from curation.services.steps import import_records


class Command(BaseCommand):
    help = "Import step records written by `steptp generate` (validated first; re-importing changes nothing)."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+")

    def handle(self, *args, **options):
        from dataset.records import RecordError, load_records

        for path in options["files"]:
            try:
                records = list(load_records(path))
            except (RecordError, OSError) as exc:
                raise CommandError(str(exc)) from None
            with bar(len(records), path, unit="step") as progress:
                report = import_records(records, progress=lambda _: progress.update())
            self.stdout.write(
                f"{path}: created {report.created}, unchanged {report.unchanged}, "
                f"without after-state {report.without_child}, "
                f"failed verification {report.failed_verification}"
            )
