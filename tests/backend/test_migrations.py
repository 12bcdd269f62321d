"""The migrations describe the models exactly: no model change waits for a migration nobody wrote."""

from __future__ import annotations

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration():
    # --check exits non-zero (SystemExit) when makemigrations would write anything
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
