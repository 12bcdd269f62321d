"""Role checks for every endpoint: each view declares the role each HTTP method needs."""

from __future__ import annotations

from rest_framework.permissions import BasePermission

from curation.services.roles import Role, has_role

SAFE = ("GET", "HEAD", "OPTIONS")


class RolePermission(BasePermission):
    """``view.roles`` maps an action (or ``"read"``/``"write"``) to the least role allowed."""

    message = "your role does not allow this"

    def has_permission(self, request, view) -> bool:
        roles = getattr(view, "roles", {})
        action = getattr(view, "action", None)
        needed = roles.get(action) if action else None
        if needed is None:
            safe = request.method in SAFE
            needed = roles.get("read", Role.VIEWER) if safe else roles.get("write", Role.ADMIN)
        if not has_role(request.user, needed):
            self.message = f"this needs the {needed.label} role"
            return False
        return True
