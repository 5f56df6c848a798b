"""``viddiff serve keys create|list|revoke``: one row of the store, so nothing heavier than SQLite is imported
(not the Python API, the models or the web framework)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from viddiff.errors import ViddiffError
from viddiff.serve.jobs import JobStore
from viddiff.serve.keys import checked_name, checked_scopes, key_hash, new_key, new_webhook_secret

STORE_FILE = "serve.sqlite"


def cli_keys(args: argparse.Namespace) -> int:
    store = JobStore(Path(args.data_dir).expanduser() / STORE_FILE)
    try:
        if args.keys_command == "create":
            name, scopes = checked_name(args.name), checked_scopes(args.scope)
            callback_url = _checked_callback_url(getattr(args, "callback_url", None))
            key, secret = new_key(), new_webhook_secret()
            if not store.add_key(name, key_hash(key), scopes, secret, callback_url):
                raise ViddiffError(f"a key named {name!r} exists already; choose another name (names are never reused)")
            print(key)
            print(secret)
            print(f"key {name!r} ({', '.join(scopes)}) created (first line) with its webhook signing secret (second "
                  "line); both are shown only this once: store them now", file=sys.stderr)
        elif args.keys_command == "list":
            for row in store.keys():
                state = "revoked" if row.revoked_at is not None else "active"
                print(f"{row.name}\t{state}\t{','.join(row.scopes)}")
        else:
            if not store.revoke_key(args.name):
                raise ViddiffError(f"no active key named {args.name!r} (viddiff serve keys list shows them)")
            print(f"key {args.name!r} revoked")
    finally:
        store.close()
    return 0


def _checked_callback_url(url: str | None) -> str | None:
    """``--callback-url``'s syntax; its address is checked by the server, against its ``serve.webhook_allow``."""
    if not url:
        return None
    from viddiff.serve.webhooks import RefusedTarget, check_syntax  # the HTTP client only when a URL is given

    try:
        check_syntax(url)
    except RefusedTarget as exc:
        raise ViddiffError(f"--callback-url: {exc}") from None
    return url
