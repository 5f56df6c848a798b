"""``viddiff serve keys create|list|revoke``: one row of the store, so nothing heavier than SQLite is imported
(not the Python API, the models or the web framework)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from viddiff.errors import ViddiffError
from viddiff.serve.jobs import JobStore
from viddiff.serve.keys import checked_name, checked_scopes, key_hash, new_key

STORE_FILE = "serve.sqlite"


def cli_keys(args: argparse.Namespace) -> int:
    store = JobStore(Path(args.data_dir).expanduser() / STORE_FILE)
    try:
        if args.keys_command == "create":
            name, scopes = checked_name(args.name), checked_scopes(args.scope)
            key = new_key()
            if not store.add_key(name, key_hash(key), scopes):
                raise ViddiffError(f"a key named {name!r} exists already; choose another name (names are never reused)")
            print(key)
            print(f"key {name!r} ({', '.join(scopes)}) created; it is shown only this once: store it now", file=sys.stderr)
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
