"""The audit trail: every change to a step is one ``AuditEvent`` (who, when, field, from → to)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from curation.models import AuditEvent, Step


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def record_change(step: Step, user: AbstractBaseUser | AnonymousUser | None, field: str, old: Any,
                  new: Any) -> AuditEvent | None:
    """Write one event when ``old`` and ``new`` differ (an unchanged field writes nothing)."""
    if _text(old) == _text(new):
        return None
    event: AuditEvent = AuditEvent.objects.create(step=step, user=user if getattr(user, "is_authenticated",
                                                                     False) else None,
                                     field=field, old=_text(old), new=_text(new), step_version=step.version)
    return event


def history(step: Step) -> list[AuditEvent]:
    return list(step.audit_events.select_related("user"))
