"""Roles: viewer < reviewer < curator < admin, each allowed what the ones below it are.

Every door (page, API endpoint, task started by a user) asks ``require(user, role)`` before acting, so the
rule lives in one place. Superusers hold every role.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeAlias

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group

#: Whoever asks (signed in or not); Django is untyped here, so to mypy this is ``Any``.
AnyUser: TypeAlias = "AbstractBaseUser | AnonymousUser | None"


class Role(IntEnum):
    NONE = 0
    VIEWER = 1
    REVIEWER = 2
    CURATOR = 3
    ADMIN = 4

    @property
    def label(self) -> str:
        return self.name.lower()


class PermissionDenied(Exception):
    """The user lacks the role an action needs; the message names both."""


def role_of(user: AbstractBaseUser | AnonymousUser | None) -> Role:
    """The highest role the user holds (``NONE`` for anonymous users)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return Role.NONE
    if user.is_superuser:
        return Role.ADMIN
    names = set(user.groups.values_list("name", flat=True))
    held = [role for role in Role if role is not Role.NONE and role.label in names]
    return max(held, default=Role.NONE)


def has_role(user: AbstractBaseUser | AnonymousUser | None, role: Role) -> bool:
    return role_of(user) >= role


def require(user: AbstractBaseUser | AnonymousUser | None, role: Role, action: str) -> None:
    """Raise ``PermissionDenied`` unless the user holds ``role`` (or higher)."""
    if not has_role(user, role):
        raise PermissionDenied(f"{action} needs the {role.label} role; you have {role_of(user).label}")


def grant(user: AbstractBaseUser, role: Role) -> None:
    """Give the user exactly ``role`` (replacing any other role group)."""
    groups = Group.objects.filter(name__in=[r.label for r in Role if r is not Role.NONE])
    user.groups.remove(*groups)
    if role is not Role.NONE:
        user.groups.add(Group.objects.get_or_create(name=role.label)[0])
