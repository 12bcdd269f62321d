"""Typed readers for the environment variables the settings module consumes.

Kept apart from ``settings`` so the parsing rules (what counts as true, how lists are split) are
written once and can be tested without booting Django.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def env_bool(name: str, default: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Read a boolean; unknown spellings are an error so a typo never silently flips a safety switch."""
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, environ: Mapping[str, str] = os.environ) -> int:
    raw = environ.get(name)
    return default if raw is None or raw.strip() == "" else int(raw)


def env_list(name: str, default: list[str], environ: Mapping[str, str] = os.environ) -> list[str]:
    """Comma-separated list; blanks are dropped so ``"a, b,"`` reads as ``["a", "b"]``."""
    raw = environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def security_settings(debug: bool, environ: Mapping[str, str] = os.environ) -> dict[str, object]:
    """HTTPS/cookie hardening: production defaults when DEBUG is off, relaxed for the local demo.

    Each value can still be overridden from the environment (e.g. ``SECURE_SSL_REDIRECT=0`` behind a
    proxy that already redirects). Returned as a dict so tests can apply exactly what production gets.
    """
    prod = not debug
    hsts_default = 31_536_000 if prod else 0
    values: dict[str, object] = {
        "SECURE_SSL_REDIRECT": env_bool("SECURE_SSL_REDIRECT", prod, environ),
        "SECURE_HSTS_SECONDS": env_int("SECURE_HSTS_SECONDS", hsts_default, environ),
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", prod, environ),
        "SECURE_HSTS_PRELOAD": env_bool("SECURE_HSTS_PRELOAD", prod, environ),
        "SESSION_COOKIE_SECURE": env_bool("SESSION_COOKIE_SECURE", prod, environ),
        "CSRF_COOKIE_SECURE": env_bool("CSRF_COOKIE_SECURE", prod, environ),
    }
    if env_bool("SECURE_PROXY_SSL_HEADER", False, environ):
        # Only behind a proxy that strips and sets this header itself; otherwise clients could spoof HTTPS.
        values["SECURE_PROXY_SSL_HEADER"] = ("HTTP_X_FORWARDED_PROTO", "https")
    return values
