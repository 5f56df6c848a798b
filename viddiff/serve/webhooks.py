"""Webhooks: an app is told that its comparison ended (done, failed or cancelled) by a POST of the comparison
to its ``callback_url``, signed with its key's secret, retried with backoff, each try recorded on the job.

A key must not make the server call into its own network, so loopback, private, link-local and other
non-public addresses are refused unless ``serve.webhook_allow`` names them. The host is resolved once, every
address it resolves to is checked, and the request goes to the checked address (the ``Host`` header and the
TLS server name keep the host's name): a second DNS answer cannot send it elsewhere. Redirects are not followed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import logging
import socket
import time
from dataclasses import dataclass
from typing import Optional, Union
from urllib.parse import urlsplit, urlunsplit

import httpx

from viddiff import __version__
from viddiff.config import ServeConfig
from viddiff.serve.states import Webhook, WebhookAttempt
from viddiff.serve.store_thread import AsyncJobStore

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "Viddiff-Signature"
"""``t=UNIX_SECONDS,v1=HEX``: HMAC-SHA256 of ``f"{t}.".encode() + body`` with the key's webhook secret."""
EVENT_HEADER = "Viddiff-Event"
"""``comparison.done``, ``comparison.failed`` or ``comparison.cancelled``."""
MAX_URL_CHARS = 2000

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]


class RefusedTarget(Exception):
    """A callback URL the server will not call; the message says why and what to do."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The value of :data:`SIGNATURE_HEADER` for ``body`` sent at ``timestamp``; the time is signed too, so a
    receiver can refuse an old delivery replayed."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def networks(allow: list[str]) -> list[IPNetwork]:
    return [ipaddress.ip_network(item, strict=False) for item in allow]


def check_url(url: str, allow: list[IPNetwork]) -> None:
    """Refuse a malformed URL, and a host given as an address that may not be called (a host name is
    resolved and checked when the webhook is sent)."""
    host = check_syntax(url)
    with contextlib.suppress(ValueError):
        check_address(ipaddress.ip_address(host), allow)


def check_syntax(url: str) -> str:
    """Refuse what is not an http(s) URL with a host, or holds credentials; the host."""
    if len(url) > MAX_URL_CHARS:
        raise RefusedTarget(f"is {len(url)} characters long; at most {MAX_URL_CHARS}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RefusedTarget(f"{url!r} is not an http:// or https:// URL with a host")
    if parts.username is not None or parts.password is not None:
        raise RefusedTarget("holds credentials; leave them out: the signature tells the receiver the call is ours")
    try:
        _ = parts.port
    except ValueError:
        raise RefusedTarget(f"{url!r} has an invalid port") from None
    return parts.hostname


def check_address(address: IPAddress, allow: list[IPNetwork]) -> None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allow):
        return
    for kind, yes in (("loopback", address.is_loopback), ("link-local", address.is_link_local),
                      ("private", address.is_private), ("non-public", not address.is_global)):
        if yes:
            raise RefusedTarget(
                f"{address} is a {kind} address, which webhooks may not call unless serve.webhook_allow names it"
            )


@dataclass(frozen=True)
class Target:
    """Where one try goes: the URL with the checked address for its host, and the name to present."""

    url: str
    host_header: str
    server_name: Optional[str]
    """The TLS server name (SNI, and the name the certificate is checked against); ``None`` for http."""


def resolve(url: str, allow: list[IPNetwork]) -> Target:
    """Resolve the URL's host once and check every address; raises :class:`RefusedTarget`, or ``OSError``
    when the name does not resolve (a failed try, retried)."""
    check_url(url, allow)
    parts = urlsplit(url)
    host = parts.hostname
    assert host is not None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = [ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos]
    for address in addresses:
        check_address(address, allow)
    chosen = addresses[0]
    literal = f"[{chosen}]" if chosen.version == 6 else str(chosen)
    netloc = f"{literal}:{parts.port}" if parts.port else literal
    shown = f"[{host}]" if ":" in host else host
    return Target(
        url=urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")),
        host_header=f"{shown}:{parts.port}" if parts.port else shown,
        server_name=host if parts.scheme == "https" else None,
    )


class WebhookSender:
    """Sends each finished job's webhook in a task of its own; a stop leaves unsent ones ``pending`` in the
    store, for the next start to send."""

    def __init__(self, store: AsyncJobStore, settings: ServeConfig):
        self._store = store
        self._settings = settings
        self._allow = networks(settings.webhook_allow)
        self._client: Optional[httpx.AsyncClient] = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def allow(self) -> list[IPNetwork]:
        return self._allow

    async def start(self) -> None:
        self._client = httpx.AsyncClient(
            timeout=self._settings.webhook_timeout_s, follow_redirects=False, trust_env=False
        )

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def deliver_later(self, job_id: str, webhook: Webhook, secret: str, status: str, body: bytes) -> None:
        """Send ``body`` (the comparison as it ended) to a pending ``webhook``; its tries are recorded on the
        job while the job exists (a comparison cancelled by DELETE is gone, but its webhook is still sent)."""
        task = asyncio.create_task(
            self._deliver(job_id, webhook, secret, status, body), name=f"viddiff-webhook-{job_id}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, job_id: str, webhook: Webhook, secret: str, status: str, body: bytes) -> None:
        try:
            while len(webhook.attempts) < self._settings.webhook_attempts:
                done = len(webhook.attempts)
                if done:
                    await asyncio.sleep(self._settings.webhook_backoff_s * 2 ** (done - 1))
                try:
                    target = await asyncio.to_thread(resolve, webhook.url, self._allow)
                except RefusedTarget as exc:
                    webhook = webhook.model_copy(update={"state": "refused", "error": f"callback_url: {exc}"})
                    return
                except OSError as exc:
                    attempt = WebhookAttempt(at=time.time(), error=f"could not resolve the host: {exc}")
                else:
                    attempt = await self._post(target, secret, status, body)
                webhook = webhook.model_copy(update={"attempts": [*webhook.attempts, attempt]})
                if attempt.status_code is not None and 200 <= attempt.status_code < 300:
                    webhook = webhook.model_copy(update={"state": "delivered"})
                    return
                await self._store.update_webhook(job_id, webhook)
            webhook = webhook.model_copy(update={"state": "failed", "error": f"no 2xx answer in {len(webhook.attempts)} tries"})
        finally:
            await self._store.update_webhook(job_id, webhook)

    async def _post(self, target: Target, secret: str, status: str, body: bytes) -> WebhookAttempt:
        assert self._client is not None, "start() first"
        headers = {
            "Host": target.host_header,
            "Content-Type": "application/json",
            "User-Agent": f"viddiff/{__version__}",
            EVENT_HEADER: f"comparison.{status}",
            SIGNATURE_HEADER: signature(secret, int(time.time()), body),
        }
        extensions = {"sni_hostname": target.server_name} if target.server_name else {}
        at = time.time()
        try:  # the whole try is bounded, and the answer's body never read: a receiver cannot hold the server
            async with asyncio.timeout(self._settings.webhook_timeout_s):
                async with self._client.stream(
                    "POST", target.url, content=body, headers=headers, extensions=extensions
                ) as response:
                    return WebhookAttempt(at=at, status_code=response.status_code)
        except TimeoutError:
            return WebhookAttempt(at=at, error=f"no answer in serve.webhook_timeout_s = {self._settings.webhook_timeout_s:g} s")
        except httpx.HTTPError as exc:
            return WebhookAttempt(at=at, error=f"{type(exc).__name__}: {exc}".rstrip(": "))
