"""The admin lists every curation model for an administrator (a smoke test over real rows)."""

from __future__ import annotations

import pytest

from curation.services.roles import Role

from .fixtures import builtin, engine_step, user

pytestmark = pytest.mark.django_db

PAGES = ["workload", "programstate", "step", "verification", "review", "auditevent", "trajectory", "export"]


@pytest.mark.parametrize("model", PAGES)
def test_admin_changelists_render(client, model):
    engine_step(builtin())
    admin = user("root", Role.ADMIN)
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    response = client.get(f"/admin/curation/{model}/")
    assert response.status_code == 200 and b"curation" in response.content.lower()
