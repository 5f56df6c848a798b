"""The report's evidence numbers come from the values, whatever the model named the stage."""

from viddiff.report.evidence import evidence_view
from viddiff.schema import Evidence, MeasurementSpec

SPEC = MeasurementSpec(quantity="knee_angle", statistic="min", stage=0, direction="smaller")


def test_a_stage_name_with_commas_and_colons_leaves_the_values_whole():
    stage = "phase 2: bend, then rise"
    evidence = Evidence(
        key="0", measurement=SPEC, label=f"minimum knee angle during '{stage}'", unit="°", status="measured",
        value_a=92.14, value_b=104.0, stage=stage,
    )
    view = evidence_view(evidence, [stage])
    assert (view.value_a, view.value_b) == ("92.1°", "104°")


def test_an_uncertain_measurement_shows_no_values():
    evidence = Evidence(key="0", measurement=SPEC, label="minimum knee angle", unit="°", status="uncertain", reason="too few frames")
    view = evidence_view(evidence, ["descent"])
    assert (view.value_a, view.value_b, view.measured) == ("", "", False)


def _measured(a_shift: float = 0.0):
    """A real measurement of two squat-like tracks (30 fps, 1.2 s) whose minimum knee angles differ by ``a_shift``."""
    import numpy as np

    from viddiff.pose.align import stage_windows
    from viddiff.pose.kinematics import compute_kinematics
    from viddiff.pose.measure import Settings, VideoMeasures, measure
    from viddiff.testing.pose_figures import Figure, track_of

    def video(knees):
        times = np.arange(len(knees)) / 30
        kin = compute_kinematics(track_of([Figure(knee=k) for k in knees]), np.ones((len(knees), 17)), times,
                                 np.arange(len(knees)) * 2, width=1000, height=1000, smoothing_frames=1)
        seg = np.arange(12) / 10
        return VideoMeasures(windows=stage_windows([(0, 4), (4, 8), (8, 12)], seg, end_s=1.2), frame_indices=np.arange(12) * 6,
                             times_s=seg, kinematics=kin)

    knees = np.interp(np.arange(36) / 30, np.arange(12) / 10, [175, 175, 174, 174, 160, 140, 120, 100, 90, 88, 90, 95])
    spec = MeasurementSpec(quantity="knee_angle", side="both", statistic="min", stage=2, direction="smaller")
    return measure("0", spec, video(knees + a_shift), video(knees), ["up", "down", "bottom"], estimator="f",
                   settings=Settings(smoothing_frames=1))


def test_the_quoted_extreme_is_a_point_of_its_curve_and_is_marked_with_its_interval():
    evidence = _measured(a_shift=-12.0)
    plot = evidence_view(evidence, ["up", "down", "bottom"]).plot
    assert plot.y_label == "knee angle (°)" and "stage-normalised time" in plot.x_label
    reading_a = next(r for r in plot.readings if r.video == "A")
    curve_a = [tuple(map(float, xy.split(","))) for segment in next(l for l in plot.lines if l.video == "A").segments for xy in segment.split()]
    assert (reading_a.x0, reading_a.y) in curve_a  # the marked value lies on the drawn curve
    assert min(y for _, y in curve_a) <= reading_a.y and max(y for _, y in curve_a) >= reading_a.y
    assert reading_a.y_low > reading_a.y > reading_a.y_high  # an error bar around it (SVG y grows downwards)
    assert reading_a.label.startswith("A 7") and "±" in reading_a.label and reading_a.label.endswith("°")


def test_labels_of_close_values_are_moved_apart():
    evidence = _measured(a_shift=0.2)
    readings = evidence_view(evidence, ["up", "down", "bottom"]).plot.readings
    assert len(readings) == 2 and abs(readings[0].label_y - readings[1].label_y) >= 15


def test_a_statement_without_a_measurement_gets_a_line_saying_why():
    from viddiff.report.evidence import absent_view

    view = absent_view("no measurement fits this difference")
    assert view.status == "absent" and view.reason == "no measurement fits this difference" and view.plot is None


def test_no_skeleton_is_claimed_where_none_was_found():
    import numpy as np

    from viddiff.report.evidence import skeleton_frame
    from viddiff.schema import EvidencePoint

    pixels = np.zeros((40, 30, 3), np.uint8)
    nobody = EvidencePoint(frame_index=0, time_s=0.0, pose_frame_index=0, keypoints=[None] * 17)
    assert skeleton_frame(pixels, nobody) == (pixels, False)
    someone = nobody.model_copy(update={"keypoints": [(0.5, 0.2 + 0.03 * i, 0.9) for i in range(17)]})
    drawn, was_drawn = skeleton_frame(pixels, someone)
    assert was_drawn and drawn.any()
