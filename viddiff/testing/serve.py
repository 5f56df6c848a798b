"""Serve the scripted stand-in model on 127.0.0.1 for offline demos: ``python -m viddiff.testing.serve``.

Point viddiff at it with ``--set endpoints.default.base_url=http://127.0.0.1:PORT/v1`` and any
``OPENAI_API_KEY``. Its answers are deterministic and meaningless (see ``ScriptedModel``).
"""

from __future__ import annotations

import argparse
import time

from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    args = parser.parse_args()
    with FakeOpenAIServer(ScriptedModel(), latency_s=args.latency, port=args.port) as server:
        print(f"scripted model serving at {server.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
