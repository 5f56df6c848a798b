"""The 3D skeleton view of the HTML report on the real Pose2Sim take (cam01 and cam02, calibrated), through the
command line: ``viddiff compare --a --a --b --b --calibration --pose --report``. Both sides are the same take, so
the two skeletons the page embeds at each keyframe must be one body (the drawing: tests/report/test_browser_3d.py)."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import numpy as np
import pytest

from viddiff.cli import main
from viddiff.pose.skeleton import INDEX, JOINTS
from viddiff.testing import offline_overrides


@pytest.mark.slow
def test_a_report_of_two_3d_sides_embeds_both_bodies_at_each_keyframe(
    tmp_path: Path, scripted_server, clip_h264: Path, clip_vp9: Path, two_camera_calibration: Path, monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    items = offline_overrides(scripted_server.base_url, str(tmp_path / "cache.sqlite"))
    items += ["localizer.method=uniform", "pose.fps=20", "pose.native_up_to_frames=40"]
    report = tmp_path / "report.html"
    take = ["--a", str(clip_h264), "--a", str(clip_vp9), "--b", str(clip_h264), "--b", str(clip_vp9)]
    assert main(["-q", "compare", *take, "--calibration", str(two_camera_calibration), "--action",
                 "a person moving in a lab", "--pose", "--difference", "the knees are straighter", "--report", str(report),
                 *[x for item in items for x in ("--set", item)]]) == 0
    page = report.read_text()
    views = [json.loads(html.unescape(v)) for v in re.findall(r'<svg class="skeleton3d"[^>]*data-skeleton="([^"]*)"', page)]
    keyframes = re.findall(r'<div class="kf-row"', page)
    assert views and len(views) == len(keyframes)  # one 3D view beside each pair of keyframes
    for view in views:
        a = np.array([p if p is not None else [np.nan] * 3 for p in view["a"]], dtype=float)
        b = np.array([p if p is not None else [np.nan] * 3 for p in view["b"]], dtype=float)
        assert a.shape == (len(JOINTS), 3) and np.isfinite(a).all(axis=1).sum() >= 12  # a body, triangulated
        assert np.allclose(a, b, equal_nan=True)  # the same take on both sides: one body
        hips = a[[INDEX["left_hip"], INDEX["right_hip"]]]
        assert np.allclose(hips.mean(axis=0), 0, atol=0.002)  # centred on the hips
        assert a[INDEX["nose"], 1] > 0.3 > -0.3 > a[INDEX["left_ankle"], 1]  # y up, in metres: head high, feet low
        assert 1.0 < a[INDEX["nose"], 1] - a[INDEX["left_ankle"], 1] < 2.2  # a person's height, roughly
    assert "and 1 more view for 3D pose: " + clip_vp9.name in page
