"""The report's 3D skeleton view: each pose in its body's own frame whatever the setup's world, and the data the
page embeds for its script (the drawing itself: test_browser_3d.py)."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from pose3d_helpers import body_pose, in_world, page_with_3d_evidence

from viddiff.pose.skeleton import INDEX, JOINTS
from viddiff.report.skeleton3d import skeleton_3d_view


def test_two_setups_with_other_worlds_give_the_same_body_frame():
    pose = body_pose()
    a, up_a = in_world(pose, up=(0.0, 0.0, 1.0), turn_deg=35, at=(2.0, -1.0, 0.9))  # a Qualisys world: z up
    b, up_b = in_world(pose, up=(0.0, -1.0, 0.0), turn_deg=-120, at=(0.3, 0.2, 4.0))  # an OpenCV camera's: y down
    view = skeleton_3d_view(a, up_a, b, up_b, time_a=1.234, time_b=2.5)
    assert view is not None and view.label == "A at 1.23 s, B at 2.50 s"
    assert np.allclose(np.array(view.a), pose, atol=0.0015) and np.allclose(np.array(view.b), pose, atol=0.0015)
    assert view.joints == list(JOINTS) and (INDEX["left_hip"], INDEX["left_knee"]) in view.bones
    assert view.radius >= max(np.linalg.norm(pose, axis=1))  # every point shows, however it is turned


def test_a_deeper_squat_shows_as_one_and_joints_not_triangulated_stay_out():
    deep, shallow = body_pose(), body_pose(knee_drop=0.15)
    a, up = in_world(deep, up=(0.0, 0.0, 1.0), turn_deg=0, at=(0.0, 0.0, 0.9))
    b, _ = in_world(shallow, up=(0.0, 0.0, 1.0), turn_deg=0, at=(0.0, 0.0, 1.0))
    b[INDEX["left_wrist"]] = None
    view = skeleton_3d_view(a, up, b, up, time_a=0.0, time_b=0.0)
    knee = INDEX["left_knee"]
    assert view.b[knee][1] == pytest.approx(view.a[knee][1] - 0.15, abs=0.002)  # metres kept: B's knees lower
    assert view.b[INDEX["left_wrist"]] is None


def test_no_view_without_both_hips_and_a_clear_error_for_a_wrong_joint_count():
    a, up = in_world(body_pose(), up=(0.0, 0.0, 1.0), turn_deg=0, at=(0.0, 0.0, 0.0))
    no_hip = list(a)
    no_hip[INDEX["right_hip"]] = None
    assert skeleton_3d_view(a, up, no_hip, up, time_a=0.0, time_b=0.0) is None
    with pytest.raises(ValueError, match="expected one per joint"):
        skeleton_3d_view(a[:12], up, a, up, time_a=0.0, time_b=0.0)


def test_a_page_with_3d_evidence_embeds_both_skeletons_of_each_keyframe_as_escaped_json(tmp_path):
    from viddiff.report.render import render_page

    page, skeletons = page_with_3d_evidence(tmp_path)
    (row,) = page.differences[0].rows
    view = row.skeleton3d
    assert view is not None and view.label == "A at 1.20 s, B at 1.50 s"
    for drawn, skeleton in zip((view.a, view.b), skeletons):  # each turned to face along z, nothing else changed
        assert np.allclose(drawn, body_pose(knee_drop=0.0 if skeleton is skeletons[0] else 0.15), atol=0.0015)
    view.label = "A <b>&'\" at 1.20 s"  # whatever text it holds stays text
    page_html = render_page(page)
    (attribute,) = re.findall(r'<svg class="skeleton3d"[^>]*data-skeleton="([^"]*)"', page_html)
    assert "<b>" not in attribute and "'" not in attribute
    embedded = json.loads(html.unescape(attribute))
    assert embedded == json.loads(view.model_dump_json())
    assert len(embedded["a"]) == len(JOINTS) and embedded["b"][INDEX["left_knee"]][1] < embedded["a"][INDEX["left_knee"]][1]


def test_one_view_evidence_has_no_3d_view_and_serialises_as_before(tmp_path):
    from viddiff.schema import EvidencePoint

    page, _ = page_with_3d_evidence(tmp_path)
    point = EvidencePoint(frame_index=3, time_s=0.3, keypoints=[(0.5, 0.5, 0.9)])
    assert "skeleton" not in point.model_dump() and "skeleton" not in point.model_dump_json()
    from viddiff.report.skeleton3d import keyframe_skeletons

    assert keyframe_skeletons(point, point) is None and keyframe_skeletons(None, point) is None
