"""``manage.py import_workloads [--level N] [--name ID ...] [--file F.py --name N]`` — idempotent."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from curation.management.commands._progress import bar
from curation.services import workloads


class Command(BaseCommand):
    help = "Import the built-in workload suite (or one uploaded file) with its translated source state."

    def add_arguments(self, parser):
        parser.add_argument("--level", type=int, choices=[1, 2, 3])
        parser.add_argument("--name", action="append", default=[], help="workload id (repeatable)")
        parser.add_argument("--file", help="a PyTorch file to upload instead (translated in the sandbox)")
        parser.add_argument("--user", help="the curator uploading --file")
        parser.add_argument("--dtype", default="f32", choices=["f32", "f64", "f16"])

    def handle(self, *args, **options):
        if options["file"]:
            if not options["user"] or len(options["name"]) != 1:
                raise CommandError("--file needs --user CURATOR and one --name")
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user {options['user']}")
            source = Path(options["file"]).read_text(encoding="utf-8")
            workload, report = workloads.upload_workload(
                user, name=options["name"][0], source=source, dtype=options["dtype"]
            )
        else:
            from workloads.registry import list_workloads

            total = len(
                [
                    w
                    for w in list_workloads(options["level"])
                    if not options["name"] or w.id in options["name"] or w.name in options["name"]
                ]
            )
            with bar(total, "workloads") as progress:
                report = workloads.import_builtin(
                    level=options["level"],
                    names=options["name"] or None,
                    dtype=options["dtype"],
                    progress=lambda _: progress.update(),
                )
        self.stdout.write(
            f"created {len(report.created)}, updated {len(report.updated)}, "
            f"unchanged {len(report.unchanged)}, failed {len(report.failed)}"
        )
        for name, reason in report.failed.items():
            self.stderr.write(f"  {name}: {reason}")
