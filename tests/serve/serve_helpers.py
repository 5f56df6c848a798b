"""Helpers of the ``viddiff serve`` tests: the server handle, waiting, reading SSE, hostile files."""

from __future__ import annotations

import json
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

import httpx

from viddiff.config import Config
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer, HTTPFault
from viddiff.testing.responders import ScriptedModel
from viddiff.testing.service import ServerThread, create_key

BROKEN = "BROKEN"
"""A statement holding this word makes its differencer call fail (after the other verdicts came)."""
HELD = "HELD"
"""A statement holding this word has its differencer call answered only after :data:`HELD_S` (its job is caught
running, the other verdicts decided)."""
HELD_S = 20.0
LIMITS = [
    "serve.workers=1",
    "serve.max_upload_bytes=1000000",
    "serve.max_duration_s=30",
    "serve.max_pixels=500000",
    "serve.max_frames=600",
    "serve.max_statements=4",
    "serve.max_calibration_bytes=20000",
    "serve.max_queued_per_key=2",
    "serve.max_queued_total=3",
    "serve.requests_per_minute=100000",
    "serve.store_busy_timeout_s=1",
    "serve.metrics_token_env=VIDDIFF_SERVE_TEST_METRICS_TOKEN",
]
"""The package server's limits: small, so each can be passed with tiny files."""


class StandInModel:
    """The scripted model, except that the differencer call of a statement holding ``BROKEN`` fails with the
    400 of an over-long prompt, a second after it arrives, and one holding ``HELD`` is answered late."""

    def __init__(self) -> None:
        self.scripted = ScriptedModel()

    def __call__(self, req: ChatRequest) -> str:
        if req.images and BROKEN in req.text:
            time.sleep(1.0)
            raise HTTPFault(400, "This model's maximum context length is 128000 tokens; your messages resulted in 200000 tokens")
        if req.images and HELD in req.text:
            time.sleep(HELD_S)
        return self.scripted(req)


@dataclass
class Served:
    """A running server, and how to reach it as a given key."""

    server: ServerThread
    model: FakeOpenAIServer

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def data_dir(self) -> Path:
        return self.server.data_dir

    def client(self, key: str | None, **kwargs) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60, **kwargs)

    def new_key(self, name: str, scopes: tuple[str, ...] = ("app",)) -> str:
        return create_key(self.data_dir, name, scopes)


METRICS_TOKEN_ENV = "VIDDIFF_SERVE_TEST_METRICS_TOKEN"
METRICS_TOKEN = "test-metrics-token-0123456789"
MODEL_KEY_ENV = "VIDDIFF_SERVE_TEST_MODEL_KEY"
"""The variable holding the model key the servers send to the stand-in (its own name, so that setting it for
the session changes nothing for other tests)."""


def serve_config(model: FakeOpenAIServer, data_dir: Path, extra: list[str]) -> Config:
    os.environ[MODEL_KEY_ENV] = "dummy-model-key"
    os.environ[METRICS_TOKEN_ENV] = METRICS_TOKEN
    overrides = offline_overrides(model.base_url, str(data_dir / "cache.sqlite"))
    return Config().with_overrides([*overrides, f"endpoints.default.api_key_env={MODEL_KEY_ENV}", *extra])


def wait_until(predicate, timeout_s: float = 60.0, what: str = "the condition", interval_s: float = 0.05):
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval_s)


def wait_finished(client: httpx.Client, job_id: str, timeout_s: float = 90.0) -> dict:
    def finished():
        answer = client.get(f"/v1/comparisons/{job_id}")
        assert answer.status_code == 200, f"GET {job_id}: {answer.status_code} {answer.text}"
        body = answer.json()
        return body if body["status"] in ("done", "failed", "cancelled") else None

    return wait_until(finished, timeout_s, f"comparison {job_id} to finish")


# ---- hostile files: real clips with their headers edited, and things that are no video


def _patch(data: bytearray, at: int, value: int, size: int) -> None:
    data[at:at + size] = value.to_bytes(size, "big")


def claims_hours(clip: Path, out: Path, hours: float = 10) -> Path:
    """The MP4 with its movie and track headers claiming ``hours`` of video."""
    data = bytearray(clip.read_bytes())
    for box in (b"mvhd", b"mdhd"):
        start = 0
        while (at := data.find(box, start)) >= 0:
            payload = at + 4
            timescale = int.from_bytes(data[payload + 12: payload + 16], "big")
            _patch(data, payload + 16, int(timescale * 3600 * hours), 4)
            start = at + 4
    out.write_bytes(data)
    return out


def claims_pixels(clip: Path, out: Path, side: int = 60000) -> Path:
    """The MP4 with its track header and sample entry claiming ``side`` x ``side`` pixels."""
    data = bytearray(clip.read_bytes())
    tkhd = data.find(b"tkhd") + 4
    _patch(data, tkhd + 76, side << 16, 4)
    _patch(data, tkhd + 80, side << 16, 4)
    avc1 = data.find(b"avc1")
    _patch(data, avc1 + 28, min(side, 65535), 2)
    _patch(data, avc1 + 30, min(side, 65535), 2)
    out.write_bytes(data)
    return out


def claims_frames(clip: Path, out: Path, frames: int = 10_000_000) -> Path:
    data = bytearray(clip.read_bytes())
    _patch(data, data.find(b"stsz") + 4 + 8, frames, 4)
    out.write_bytes(data)
    return out


def avi_claiming(clip: Path, out: Path, width: int, height: int) -> Path:
    data = bytearray(clip.read_bytes())
    avih = data.find(b"avih") + 8
    data[avih + 32: avih + 40] = width.to_bytes(4, "little") + height.to_bytes(4, "little")
    out.write_bytes(data)
    return out


def truncated(clip: Path, out: Path) -> Path:
    data = clip.read_bytes()
    out.write_bytes(data[: len(data) * 2 // 3])
    return out


def text_as_mp4(out: Path) -> Path:
    out.write_text("this is a text file with a video's name\n" * 20)
    return out


def zip_as_mp4(clip: Path, out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as archive:
        archive.write(clip, "inside.mp4")
    return out


# ---- calibrations of two cameras (the first two of the Pose2Sim demo's four)

POSE2SIM_CALIBRATION = Path(__file__).resolve().parents[1] / "data" / "pose2sim" / "Calib.qca.txt"


def two_camera_qca(out: Path) -> Path:
    """The Pose2Sim demo's Qualisys calibration with its first two cameras only."""
    import xml.etree.ElementTree as ElementTree

    tree = ElementTree.parse(POSE2SIM_CALIBRATION)
    cameras = tree.getroot().find("cameras")
    for camera in list(cameras)[2:]:
        cameras.remove(camera)
    tree.write(out, encoding="utf-8", xml_declaration=True)
    return out


def calibration_toml(out: Path, cameras: int = 2, size: tuple[int, int] = (96, 64)) -> Path:
    """``cameras`` cameras as Pose2Sim's ``toml_write`` lays them out (rotation as a Rodrigues vector, metres),
    calibrated at ``size`` (the test clips' own, so a comparison's pose wing can fit them to its videos)."""
    focal = 1.55 * size[0]
    cameras = "".join(
        f'[{name}]\nname = "{name}"\nsize = [ {size[0]:.1f}, {size[1]:.1f}]\n'
        f"matrix = [ [ {focal}, 0.0, {size[0] / 2 - 0.5}], [ 0.0, {focal}, {size[1] / 2 - 0.5}], [ 0.0, 0.0, 1.0]]\n"
        "distortions = [ -0.046, 0.14, 0.0006, 0.0007]\n"
        f"rotation = [ {rotation}]\ntranslation = [ {translation}]\nfisheye = false\n\n"
        for name, rotation, translation in (
            ("cam_01", "1.2, -0.9, 1.1", "0.4, 0.9, 3.1"), ("cam_02", "1.6, 0.3, 0.2", "-0.2, 0.8, 3.4"),
            ("cam_03", "0.9, 1.2, -0.4", "0.1, 0.7, 3.6"), ("cam_04", "2.0, 0.1, 0.5", "-0.5, 0.9, 2.9"),
        )[:cameras]
    )
    out.write_text(cameras + "[metadata]\nadjusted = false\nerror = 0.0\n")
    return out


# ---- Server-Sent Events


def iter_events(response: httpx.Response) -> Iterator[tuple[Optional[int], str, dict]]:
    event_id, kind, data = None, "message", ""
    for line in response.iter_lines():
        if not line:
            if data:
                yield event_id, kind, json.loads(data)
            event_id, kind, data = None, "message", ""
        elif line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data += line[6:]


def read_events(
    client: httpx.Client, job_id: str, last_event_id: Optional[int] = None, stop_after: Optional[int] = None
) -> list[tuple[Optional[int], str, dict]]:
    """The events of a comparison from the server (after ``last_event_id``), until the stream ends or
    ``stop_after`` events were read (then the connection is dropped)."""
    headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
    got = []
    with client.stream("GET", f"/v1/comparisons/{job_id}/events", headers=headers, timeout=90) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        for event in iter_events(response):
            got.append(event)
            if stop_after is not None and len(got) == stop_after:
                break
    return got
