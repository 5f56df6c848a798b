"""A second server, in ``--dev`` mode, with a retention of seconds and a small request rate: keyless local
requests, expiry and the rate limit."""

from __future__ import annotations

from typing import Iterator

import pytest
from serve_helpers import POSE2SIM_CALIBRATION, Served, read_events, serve_config, wait_until

from viddiff.cli import main as viddiff_main
from viddiff.testing.service import ServerThread

RETENTION_S = 6.0
RATE = 20


@pytest.fixture(scope="module")
def short_lived(tmp_path_factory: pytest.TempPathFactory, serve_model) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("serve-retention")
    limits = [f"serve.retention_hours={RETENTION_S / 3600}", f"serve.requests_per_minute={RATE}", "serve.workers=1"]
    with ServerThread(data_dir, serve_config(serve_model, data_dir, limits), dev=True) as server:
        yield Served(server, serve_model)


def test_uploads_results_and_reports_expire_after_the_retention(short_lived, clips):
    with short_lived.client(short_lived.new_key("expiring")) as client:
        video = client.post("/v1/videos", files={"video": ("a.mp4", clips["a"].read_bytes())}).json()
        calibration = client.post("/v1/calibrations", files={"calibration": (
            "Calib.qca.txt", POSE2SIM_CALIBRATION.read_bytes())}).json()
        job_id = client.post(
            "/v1/comparisons", data={"action": "squat", "differences": ["deeper"], "report": "true"},
            files={"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())},
        ).json()["id"]
        assert [kind for _, kind, _ in read_events(client, job_id)][-1] == "result"
        stored = [*(short_lived.data_dir / "videos").iterdir(), *(short_lived.data_dir / "reports").iterdir(),
                  *(short_lived.data_dir / "calibrations").iterdir()]
        assert len(stored) == 5  # the uploaded video, the comparison's two, its report, the calibration
        assert client.get(f"/v1/comparisons/{job_id}").json()["status"] == "done"
        wait_until(lambda: client.get(f"/v1/comparisons/{job_id}").status_code == 404, 3 * RETENTION_S,
                   "the comparison to expire", interval_s=1.0)
        assert client.get(f"/v1/videos/{video['id']}").status_code == 404
        assert client.get(f"/v1/calibrations/{calibration['id']}").status_code == 404
        assert not any(p.exists() for p in stored)


def test_requests_beyond_the_rate_of_a_key_get_429_with_retry_after(short_lived):
    limited, other = short_lived.new_key("chatty"), short_lived.new_key("quiet")
    with short_lived.client(limited) as client:
        answers = [client.get("/v1/comparisons") for _ in range(RATE + 1)]
        assert [a.status_code for a in answers] == [200] * RATE + [429]
        assert f"serve.requests_per_minute = {RATE}" in answers[-1].json()["detail"]
        assert 1 <= int(answers[-1].headers["retry-after"]) <= 60 / RATE
    with short_lived.client(other) as client:  # the limit is per key
        assert client.get("/v1/comparisons").status_code == 200


def test_dev_mode_takes_local_requests_without_a_key_and_keys_still_isolate(short_lived, clips):
    with short_lived.client(None) as anonymous, short_lived.client(short_lived.new_key("dev-keyed")) as keyed:
        video = anonymous.post("/v1/videos", files={"video": ("a.mp4", clips["a"].read_bytes())})
        assert video.status_code == 201, video.text
        assert keyed.get(f"/v1/videos/{video.json()['id']}").status_code == 404  # the keyless owner is its own
        assert anonymous.get(f"/v1/videos/{video.json()['id']}").status_code == 200
        assert 'data-dev="true"' in anonymous.get("/").text  # the page hides its key field


def test_dev_mode_refuses_to_listen_beyond_this_machine(capsys):
    assert viddiff_main(["serve", "--dev", "--host", "0.0.0.0", "--data-dir", "unused"]) == 2
    assert "--dev serves without keys, so only on 127.0.0.1" in capsys.readouterr().err
