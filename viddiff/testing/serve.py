"""Serve the scripted stand-in model on 127.0.0.1 for offline demos: ``python -m viddiff.testing.serve``.

Point viddiff at it with ``--set endpoints.default.base_url=http://127.0.0.1:PORT/v1`` and any
``OPENAI_API_KEY``. Its answers are deterministic and meaningless (see ``ScriptedModel``).

``--detach`` serves from a background process and returns once it is serving, printing its URL and pid, or
fails with the reason (a port already in use): a demo script can then rely on the URL, where a server started
with ``&`` may have died unseen while another program answers on its port. ``--port 0`` picks a free port.
"""

from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
import time
from typing import Optional


PROG = "viddiff.testing.serve"
READY = "scripted model serving at"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {PROG}", description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8011, help="port on 127.0.0.1; 0 picks a free one (default: 8011)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer (default: 0)")
    parser.add_argument(
        "--detach", action="store_true",
        help="serve from a background process; print its URL and pid once it is serving, then return (default: off)",
    )
    parser.add_argument("--silent-once-serving", action="store_true", help=argparse.SUPPRESS)  # used by --detach
    args = parser.parse_args(argv)
    if args.detach:
        return _detach(args.port, args.latency)
    return _serve(args.port, args.latency, silent_once_serving=args.silent_once_serving)


def _serve(port: int, latency: float, *, silent_once_serving: bool = False) -> int:
    # Imported here, not at the top: the scripted model pulls in the evaluation (SciPy), which a ``--detach``
    # parent, only starting this process and reading its first line, would otherwise load for nothing.
    from viddiff.testing.fake_openai import FakeOpenAIServer
    from viddiff.testing.responders import ScriptedModel

    server = FakeOpenAIServer(ScriptedModel(), latency_s=latency, port=port)
    try:
        server.start()
    except OSError as exc:
        print(_cannot_serve(port, exc), file=sys.stderr, flush=True)
        return 1
    try:
        print(f"{READY} {server.base_url} (Ctrl-C to stop)", flush=True)
        if silent_once_serving:  # detached: whoever read the ready line is gone, and so are its pipes
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


def _cannot_serve(port: int, exc: OSError) -> str:
    from viddiff.report.standins import probe_endpoint

    if exc.errno != errno.EADDRINUSE:
        why = exc.strerror or str(exc)
    elif probe_endpoint(f"http://127.0.0.1:{port}/v1", timeout_s=1.0):
        why = (
            f"the port is already in use, by a scripted model server started earlier (it answers at "
            f"http://127.0.0.1:{port}/v1: use that one)"
        )
    else:
        why = "the port is already in use (by another program)"
    return f"{PROG}: cannot serve on 127.0.0.1:{port}: {why}; choose another with --port N, or --port 0 for a free one"


def _detach(port: int, latency: float) -> int:
    """Start ``_serve`` in a new session (a later Ctrl-C in the shell leaves it alone) and report how it started."""
    child = subprocess.Popen(
        [sys.executable, "-m", PROG, "--port", str(port), "--latency", str(latency), "--silent-once-serving"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    assert child.stdout is not None and child.stderr is not None
    first = child.stdout.readline()  # the ready line, or nothing when it failed to start
    if not first.startswith(READY):
        child.wait(timeout=30)
        print(child.stderr.read().strip() or f"{PROG}: the server exited with code {child.returncode}", file=sys.stderr)
        return 1
    url = first[len(READY):].split()[0]
    child.stdout.close()  # it prints nothing more; its pipes must not keep a caller's $(...) waiting
    child.stderr.close()
    print(f"{READY} {url} (pid {child.pid}; stop it with: kill {child.pid})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
