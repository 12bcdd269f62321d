"""``manage.py seed_demo`` — demo accounts for each role and a few workloads, so the app has something."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from curation.services import workloads
from curation.services.roles import Role, grant

DEMO_WORKLOADS = ["level1/softmax", "level1/layer_norm", "level1/matmul", "level2/conv2d_groupnorm_silu"]


class Command(BaseCommand):
    help = (
        "Create demo users (viewer, reviewer, curator, admin, and reviewer2… up to the reviews a step "
        "needs — password = name) and import a few workloads."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all-workloads", action="store_true")

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("seed_demo creates accounts whose password is their name: only with DEBUG=1")
        users = get_user_model().objects
        accounts = [(role.label, role) for role in (Role.VIEWER, Role.REVIEWER, Role.CURATOR, Role.ADMIN)]
        # as many reviewers as the overlap policy needs, so the demo can approve a step without a curator
        accounts += [(f"reviewer{n}", Role.REVIEWER) for n in range(2, settings.STEPTP_REVIEWS_REQUIRED + 1)]
        for name, role in accounts:
            account = users.filter(username=name).first()
            if account is None:
                account = users.create_user(name, password=name, is_staff=role is Role.ADMIN)
            grant(account, role)
        report = workloads.import_builtin(names=None if options["all_workloads"] else DEMO_WORKLOADS)
        self.stdout.write(
            f"users: {', '.join(name for name, _ in accounts)} (password = name); workloads: "
            f"{len(report.created)} created, {len(report.unchanged)} unchanged"
        )
