"""The report's 3D skeleton view: each pose in its body's own frame whatever the setup's world, and the data the
page embeds for its script (the drawing itself: test_browser_3d.py)."""

from __future__ import annotations

import html
import json
import re

import numpy as np
import pytest
from pose3d_helpers import body_pose, in_world

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


def test_the_page_embeds_the_poses_as_escaped_json_for_its_script():
    from viddiff.report.render import render_page
    from viddiff.report.views import DifferenceView, KeyframeRow, ReportPage, CostView

    a, up = in_world(body_pose(), up=(0.0, 0.0, 1.0), turn_deg=10, at=(0.0, 0.0, 0.9))
    view = skeleton_3d_view(a, up, a, up, time_a=0.5, time_b=0.75)
    view.label = "A <b>&'\" at 0.50 s"  # whatever text it holds stays text
    page = ReportPage(
        title="t", action="", mode="closed", videos=[], any_player=False, timeline=None, missed=[], description=None,
        task=None, models=[], cost=CostView(calls=0, cache_hits=0, images=0, prompt_tokens=0, completion_tokens=0, cost="$0"),
        stand_ins=[], notes=[], sample=None, nav=[], version="test",
        differences=[DifferenceView(number=1, key="0", anchor="diff-1", name="n", statement="s", verdict_class="a",
                                    verdict_text="A", rationale="r", rows=[KeyframeRow(position=1, skeleton3d=view)])],
    )
    page_html = render_page(page)
    (attribute,) = re.findall(r'<svg class="skeleton3d"[^>]*data-skeleton="([^"]*)"', page_html)
    assert "<b>" not in attribute and "'" not in attribute
    assert json.loads(html.unescape(attribute)) == json.loads(view.model_dump_json())
