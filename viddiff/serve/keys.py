"""API keys: made here, shown once, stored only as a SHA-256 hash (``viddiff serve keys create|list|revoke``).

A key is 32 random bytes, so a plain hash is as hard to reverse as the key is to guess (no salt or slow hash
needed, unlike passwords), and lookups stay one indexed query per request.
"""

from __future__ import annotations

import hashlib
import re
import secrets

from viddiff.errors import ViddiffError

KEY_PREFIX = "vdk_"
SCOPES = {"app": "use the comparison API (/v1/...)", "metrics": "read /metrics (for operators, not apps)"}
"""What a key may do; a key made without ``--scope`` is an app key."""
WEBHOOK_SECRET_PREFIX = "whsec_"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def new_webhook_secret() -> str:
    """The secret that signs a key's webhooks: kept as it is (the server signs with it), shown once."""
    return WEBHOOK_SECRET_PREFIX + secrets.token_urlsafe(32)


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def checked_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise ViddiffError(
            f"key name {name!r}: use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit"
        )
    return name


def checked_scopes(scopes: list[str] | None) -> tuple[str, ...]:
    """The scopes asked for (``app`` when none), each known, in :data:`SCOPES` order."""
    asked = set(scopes or ["app"])
    unknown = sorted(asked - SCOPES.keys())
    if unknown:
        raise ViddiffError(f"unknown key scope {', '.join(map(repr, unknown))}: use {' or '.join(SCOPES)}")
    return tuple(scope for scope in SCOPES if scope in asked)
