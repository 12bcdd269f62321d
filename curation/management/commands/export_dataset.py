"""``manage.py export_dataset NAME --user CURATOR [--all-verified] [--policy default] [--seed S] ...``."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from curation.management.commands._progress import bar
from curation.services import exports
from curation.services.roles import PermissionDenied


class Command(BaseCommand):
    help = "Export curated steps as SFT JSONL, parquet and a dataset card (runs here, with a progress bar)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--user", required=True, help="a curator")
        parser.add_argument("--all-verified", action="store_true", help="include unreviewed verified steps")
        parser.add_argument("--policy", help="filtering policy applied at export time (e.g. default)")
        parser.add_argument("--strategy", action="append", default=[])
        parser.add_argument("--level", action="append", default=[])
        parser.add_argument("--exactness", action="append", default=[], choices=["E", "N"])
        parser.add_argument("--format", action="append", default=[], choices=list(exports.FORMATS))
        parser.add_argument(
            "--split", action="append", default=[], help="NAME=FRACTION (default 0.8/0.1/0.1)"
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--max-length", type=int, default=exports.DEFAULT_MAX_LENGTH)
        parser.add_argument("--drop-over-length", action="store_true",
                            help="leave out rows over --max-length tokens (counted in the card)")

    def handle(self, *args, **options):
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user {options['user']}")
        filters = {
            "all_verified": options["all_verified"],
            "strategies": options["strategy"],
            "levels": options["level"],
            "exactness": options["exactness"],
            "max_length": options["max_length"],
        }
        if options["policy"]:
            filters["policy"] = options["policy"]
        if options["drop_over_length"]:
            filters["over_length"] = "drop"
        try:
            fractions = {k: float(v) for k, v in (item.split("=", 1) for item in options["split"])}
        except ValueError:
            raise CommandError("--split takes NAME=FRACTION") from None
        try:
            export = exports.create_export(
                user,
                name=options["name"],
                filters=filters,
                split_policy={"fractions": fractions} if fractions else {},
                formats=options["format"] or list(exports.DEFAULT_FORMATS),
                seed=options["seed"],
                enqueue=False,
            )
        except (exports.ExportRefused, PermissionDenied) as exc:
            raise CommandError(str(exc)) from None
        try:
            with bar(100, "export", unit="%") as progress:
                export = exports.run_export(
                    export.pk, progress=lambda f: progress.update(round(100 * f) - progress.n)
                )
        except exports.ExportRefused as exc:  # the selection emptied (a policy kept nothing)
            raise CommandError(str(exc)) from None
        self.stdout.write(f"export {export.pk}: {export.directory}")
        self.stdout.write(f"splits {export.manifest['splits']}; lint problems {export.lint['problem_count']}")
