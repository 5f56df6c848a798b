"""Two views per side over real HTTP: calibrations uploaded and judged by content, comparisons naming each
side's other views and their calibration, what is refused and why, and the files a running comparison reads
kept from deletion (the package server; its limits in ``serve_helpers.LIMITS``)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from serve_helpers import POSE2SIM_CALIBRATION, two_camera_qca, calibration_toml, wait_finished, wait_until

from viddiff.serve.executor import JobSpec, job_sample
from viddiff.serve.jobs import JobStore
from viddiff.serve.ray_files import job_on_this_node, read_files

ACTION = "a square crossing the frame"


def upload_video(client: httpx.Client, clip: Path) -> str:
    answer = client.post("/v1/videos", files={"video": (clip.name, clip.read_bytes())})
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def upload_calibration(client: httpx.Client, path: Path) -> httpx.Response:
    return client.post("/v1/calibrations", files={"calibration": (path.name, path.read_bytes())})


@pytest.fixture(scope="module")
def calibrations(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("calibrations")
    return {"qca": two_camera_qca(out / "Calib.qca.txt"), "toml": calibration_toml(out / "setup.toml")}


def two_view_form(views: dict[str, str], calibration: str, statements: list[str], **extra) -> dict:
    return {
        "action": ACTION, "differences": statements, "pose": "true", "views_a": [views["a"]], "views_b": [views["b"]],
        "calibration_a_id": calibration, "calibration_b_id": calibration, **extra,
    }


def test_a_calibration_is_judged_by_its_content_and_says_its_cameras(served, calibrations, tmp_path):
    with served.client(served.new_key("calibrations")) as client:
        qca = upload_calibration(client, calibrations["qca"])
        assert qca.status_code == 201, qca.text
        assert {k: qca.json()[k] for k in ("filename", "format", "cameras")} == {
            "filename": "Calib.qca.txt", "format": "qca", "cameras": 2,
        }
        toml = upload_calibration(client, calibrations["toml"])
        assert toml.status_code == 201, toml.text
        assert (toml.json()["format"], toml.json()["cameras"]) == ("toml", 2)
        assert client.get(f"/v1/calibrations/{qca.json()['id']}").json() == qca.json()
        stored = list((served.data_dir / "calibrations").glob(f"{qca.json()['id']}*"))
        assert [p.name for p in stored] == [f"{qca.json()['id']}.qca.txt"]  # the suffix its reader goes by

        kept = sorted((served.data_dir / "calibrations").iterdir())
        png = tmp_path / "setup.toml"
        png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
        refused = upload_calibration(client, png)
        assert refused.status_code == 415 and "not a text file" in refused.json()["detail"]
        prose = tmp_path / "notes.toml"
        prose.write_text("these are my camera notes, not a calibration\n")
        refused = upload_calibration(client, prose)
        assert refused.status_code == 422 and "is not a TOML file" in refused.json()["detail"], refused.text
        assert str(served.data_dir) not in refused.json()["detail"]
        no_camera = tmp_path / "empty.qca.txt"
        no_camera.write_text("<?xml version='1.0'?><calibration><cameras></cameras></calibration>")
        refused = upload_calibration(client, no_camera)
        assert refused.status_code == 422 and "describes no cameras" in refused.json()["detail"], refused.text
        huge = tmp_path / "huge.toml"
        huge.write_text("# padding\n" * 3000)
        refused = upload_calibration(client, huge)
        assert refused.status_code == 413 and "serve.max_calibration_bytes = 20000" in refused.json()["detail"]
        assert sorted((served.data_dir / "calibrations").iterdir()) == kept  # nothing of the refused ones
        assert not list((served.data_dir / "tmp").iterdir())
        assert client.delete(f"/v1/calibrations/{toml.json()['id']}").status_code == 204
        assert client.get(f"/v1/calibrations/{toml.json()['id']}").status_code == 404
    with served.client(served.new_key("calibrations-other")) as other:
        assert other.get(f"/v1/calibrations/{qca.json()['id']}").status_code == 404  # another key's


def test_a_two_view_comparison_runs_on_every_view_and_its_files_are_kept_while_it_runs(served, clips, calibrations):
    key = served.new_key("two-views")
    with served.client(key) as client:
        views = {"a": upload_video(client, clips["webm"]), "b": upload_video(client, clips["avi"])}
        calibration = upload_calibration(client, calibrations["toml"]).json()["id"]
        files = {"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())}
        served.model.latency_s = 3.0  # caught queued or running
        try:
            created = client.post("/v1/comparisons", data=two_view_form(views, calibration, ["the square is busier"]),
                                  files=files)
            assert created.status_code == 202, created.text
            held = created.json()["id"]
            for path in (f"/v1/videos/{views['a']}", f"/v1/videos/{views['b']}", f"/v1/calibrations/{calibration}"):
                refused = client.delete(path)
                assert refused.status_code == 409 and held in refused.json()["detail"], (path, refused.text)
            assert client.delete(f"/v1/comparisons/{held}").status_code == 204
        finally:
            served.model.latency_s = 0.0
        wait_until(lambda: served.client(None).get("/healthz").json()["running"] == 0, what="no job running")

        created = client.post("/v1/comparisons", data=two_view_form(views, calibration, ["the squat is deeper"],
                                                                    report="true"), files=files)
        assert created.status_code == 202, created.text
        job = wait_finished(client, created.json()["id"])
        assert job["status"] == "done", job["error"]
        (difference,) = job["result"]["differences"]
        # the pose wing got both views of each side (squares have no body to align the views by, so no value)
        assert difference["evidence"] is None and "video A's views" in difference["evidence_absent"]
        store = JobStore(served.data_dir / "serve.sqlite")
        try:
            spec = JobSpec.model_validate(store.job(job["id"]).spec)
        finally:
            store.close()
        assert [Path(p).stem for p in (*spec.views_a, *spec.views_b)] == [views["a"], views["b"]]
        assert Path(spec.calibration_a).stem.startswith(calibration) and spec.calibration_b == spec.calibration_a
        sample, _ = job_sample(spec)
        assert [[v.path for v in ref.views] for ref in sample.videos] == [spec.views_a, spec.views_b]
        assert all(ref.calibration == spec.calibration_a for ref in sample.videos)
        report = client.get(f"/v1/comparisons/{job['id']}/report").text
        # the user's names of the other views and the calibration, not the stored ones
        assert "and 1 more view for 3D pose: webm.webm; cameras: setup.toml" in report
        assert "and 1 more view for 3D pose: avi.avi; cameras: setup.toml" in report
        assert "vid_" not in report and "cal_" not in report
        assert client.delete(f"/v1/calibrations/{calibration}").status_code == 204  # done: no longer in use
        assert client.delete(f"/v1/videos/{views['a']}").status_code == 204


def test_a_calibration_of_other_cameras_fails_the_comparison_saying_so(served, clips, calibrations):
    """Pose2Sim's cameras were calibrated at 1088x1920; the 96x64 clips are not a rescale of that picture. The job
    said 'internal error (CalibrationError)', then (CalibrationError a ViddiffError) named no side."""
    with served.client(served.new_key("two-view-mismatch")) as client:
        views = {"a": upload_video(client, clips["webm"]), "b": upload_video(client, clips["avi"])}
        calibration = upload_calibration(client, calibrations["qca"]).json()["id"]
        files = {"video_a": ("a.mp4", clips["a"].read_bytes()), "video_b": ("b.mp4", clips["b"].read_bytes())}
        created = client.post("/v1/comparisons", data=two_view_form(views, calibration, ["the squat is deeper"]),
                              files=files)
        job = wait_finished(client, created.json()["id"])
    assert job["status"] == "failed"
    assert job["error"].startswith("video A: camera cam01 was calibrated at 1088x1920; a 96x64 video is not a rescale")
    assert str(served.data_dir) not in job["error"]


def test_what_a_two_view_request_must_hold(served, clips, calibrations):
    with served.client(served.new_key("two-view-errors")) as client:
        ids = {side: upload_video(client, clips[side]) for side in "ab"}
        view = upload_video(client, clips["webm"])
        calibration = upload_calibration(client, calibrations["qca"]).json()["id"]
        qca4 = upload_calibration(client, POSE2SIM_CALIBRATION).json()
        assert qca4["cameras"] == 4
        base = {"action": ACTION, "differences": ["the square is wider"], "video_a_id": ids["a"],
                "video_b_id": ids["b"], "pose": "true"}
        cases = [
            ({"views_a": [view]}, 422, "views_a need calibration_a_id"),
            ({"calibration_a_id": calibration}, 422, "calibration_a_id is given but no views_a"),
            ({"views_a": [view], "calibration_a_id": calibration, "pose": "false"}, 422, "set pose=true"),
            ({"views_b": [view], "calibration_b_id": qca4["id"]}, 422, "holds 4 cameras, but video B has 2 views"),
            ({"views_a": [view, view], "calibration_a_id": calibration}, 422, "names a video twice"),
            ({"views_a": [ids["a"]], "calibration_a_id": calibration}, 422, "names a video twice"),
            ({"views_a": ["v1", "v2", "v3", "v4"], "calibration_a_id": calibration}, 422,
             "at most serve.max_views_per_side = 4"),
            ({"views_a": ["vid_gone"], "calibration_a_id": calibration}, 404, "no video 'vid_gone'"),
            ({"views_a": [view], "calibration_a_id": "cal_gone"}, 404, "no calibration 'cal_gone'"),
        ]
        for fields, status, words in cases:
            answer = client.post("/v1/comparisons", data={**base, **fields})
            assert answer.status_code == status and words in answer.json()["detail"], (fields, answer.text)
        assert served.client(None).get("/healthz").json()["queued"] == 0  # none of them was queued


def test_a_job_sample_and_its_files_on_a_ray_node_keep_every_view_in_order(tmp_path):
    files = {}
    for name in ("a.mp4", "b.mp4", "a2.webm", "a3.mkv", "b2.avi"):
        files[name] = tmp_path / name
        files[name].write_bytes(name.encode())
    files["cal.toml"] = calibration_toml(tmp_path / "cal.toml", cameras=3)
    files["cal2.qca.txt"] = two_camera_qca(tmp_path / "cal2.qca.txt")
    spec = JobSpec(job_id="cmp_x", video_a=str(files["a.mp4"]), video_b=str(files["b.mp4"]), action=ACTION,
                   differences=["deeper"], views_a=[str(files["a2.webm"]), str(files["a3.mkv"])],
                   views_b=[str(files["b2.avi"])], calibration_a=str(files["cal.toml"]),
                   calibration_b=str(files["cal2.qca.txt"]))
    sample, mode = job_sample(spec)
    assert mode == "closed"
    assert [ref.path for ref in sample.videos[0].views] == spec.views_a and sample.videos[1].calibration == spec.calibration_b
    with job_on_this_node(spec, read_files(spec)) as here:
        assert [Path(p).read_bytes() for p in here.files()] == [Path(p).read_bytes() for p in spec.files()]
        assert here.calibration_a.endswith(".toml") and here.calibration_b.endswith(".qca.txt")
        assert [ref.calibration for ref in job_sample(here)[0].videos] == [here.calibration_a, here.calibration_b]
        assert all(str(tmp_path) not in p for p in here.files())
    one_view = spec.model_copy(update={"views_a": [], "views_b": [], "calibration_a": None, "calibration_b": None})
    assert "views" not in job_sample(one_view)[0].videos[0].model_dump()  # serialised as before
