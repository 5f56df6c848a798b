"""Short-lived signed report URLs, so the web page opens a report at its own URL rather than as a ``blob:``.

A browser tab cannot send ``Authorization: Bearer``, and a ``blob:`` made by the page is a document of the
page's origin, able to read the key in its ``localStorage``. So the page asks (with its key) for a link that
names the comparison and its owner, expires, and is signed with a secret of this server process; opened in a
tab, the report is served with its sandboxing policy (:data:`viddiff.serve.security.REPORT_CSP`). Links die
with the process that signed them.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from typing import Optional

from viddiff.serve.errors import ApiError

TTL_S = 3600
"""How long a report link opens the report: long enough for the page to be left open a while."""


class ReportLinks:
    """Signs and checks ``?link=`` tokens of ``GET /v1/comparisons/{id}/report``."""

    def __init__(self, secret: Optional[bytes] = None, ttl_s: int = TTL_S):
        self._secret = secret or secrets.token_bytes(32)
        self.ttl_s = ttl_s

    def sign(self, job_id: str, owner: str, now: Optional[float] = None) -> tuple[str, int]:
        """A token for ``job_id`` of ``owner``, and when it expires (Unix seconds)."""
        expires = int((now if now is not None else time.time()) + self.ttl_s)
        payload = f"{expires}.{_b64(owner.encode())}"
        return f"{payload}.{self._mac(job_id, payload)}", expires

    def owner(self, job_id: str, token: str) -> str:
        """The owner a valid token for ``job_id`` was signed for; 401 for a forged, altered or expired one."""
        expires, _, rest = token.partition(".")
        owner_b64, _, mac = rest.partition(".")
        payload = f"{expires}.{owner_b64}"
        if not mac or not hmac.compare_digest(mac, self._mac(job_id, payload)):
            raise ApiError(401, "this report link is not valid (links work only with the server that made them); "
                           "open the report again from the page")
        if not expires.isdigit() or int(expires) < time.time():
            raise ApiError(401, "this report link has expired; open the report again from the page")
        return base64.urlsafe_b64decode(owner_b64 + "=" * (-len(owner_b64) % 4)).decode()

    def _mac(self, job_id: str, payload: str) -> str:
        digest = hmac.new(self._secret, f"{job_id}.{payload}".encode(), hashlib.sha256).digest()
        return _b64(digest)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")
