"""A client of ``viddiff serve`` in Python (httpx): upload two videos, print each verdict as it is decided,
return the finished comparison. Run it as ``python serve_client.py URL KEY A.mp4 B.mp4 ACTION STATEMENT...``.

The event stream is read by hand (a few lines), and a dropped connection is resumed with ``Last-Event-ID``,
so no event is missed or seen twice.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path
from typing import Iterator, Optional

import httpx


def events(client: httpx.Client, job_id: str, last_event_id: Optional[str] = None) -> Iterator[tuple[str, str, dict]]:
    """``(id, type, data)`` of each event from ``last_event_id`` on, until the stream ends."""
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    with client.stream("GET", f"/v1/comparisons/{job_id}/events", headers=headers, timeout=None) as response:
        response.raise_for_status()
        event_id, kind, data = "", "message", ""
        for line in response.iter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
            elif not line and data:
                yield event_id, kind, json.loads(data)
                event_id, kind, data = "", "message", ""


def compare(url: str, key: str, video_a: Path, video_b: Path, action: str, differences: list[str]) -> dict:
    """One comparison, start to end; returns ``GET /v1/comparisons/{id}`` once it is finished."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        with open(video_a, "rb") as a, open(video_b, "rb") as b:
            created = client.post(
                "/v1/comparisons",
                data={"action": action, "differences": differences},
                files={"video_a": (Path(video_a).name, a), "video_b": (Path(video_b).name, b)},
                headers={"Idempotency-Key": str(uuid.uuid4())},  # a retried POST makes no second job
            )
        if created.status_code == 429:
            raise SystemExit(f"busy: {created.json()['detail']} (Retry-After: {created.headers['Retry-After']} s)")
        created.raise_for_status()
        job_id = created.json()["id"]
        last_id = None
        for _ in range(10):  # reconnects
            try:
                for event_id, kind, data in events(client, job_id, last_id):
                    last_id = event_id or last_id
                    if kind == "verdict":
                        d = data["difference"]
                        print(f"{d['description']}: {d['prediction']}", flush=True)
                break  # the stream ended: the comparison is finished
            except httpx.TransportError:
                time.sleep(1)
        return client.get(f"/v1/comparisons/{job_id}").json()


if __name__ == "__main__":
    url, key, a, b, action, *statements = sys.argv[1:]
    done = compare(url, key, Path(a), Path(b), action, statements)
    print(done["status"], done["error"] or "")
