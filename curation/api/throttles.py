"""Throttling for scripts: token-authenticated requests share a per-user rate (``STEPTP_API_TOKEN_RATE``)."""

from rest_framework.authentication import TokenAuthentication
from rest_framework.throttling import UserRateThrottle


class TokenClientThrottle(UserRateThrottle):
    scope = "token"

    def allow_request(self, request, view) -> bool:
        if not isinstance(request.successful_authenticator, TokenAuthentication):
            return True
        return super().allow_request(request, view)
