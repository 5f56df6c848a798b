"""Reading a view's keypoints at another view's sample times (:func:`viddiff.pose.resample.resample_track`)."""

from __future__ import annotations

import numpy as np

from viddiff.pose.resample import resample_track
from viddiff.pose.skeleton import JOINTS
from viddiff.pose.track import PoseTrack


def track() -> PoseTrack:
    """Six samples at 30 fps; sample 2 missing altogether, sample 4 unsure (confidence 0.2 where the rest are 0.9)."""
    n = 6
    xy = np.arange(n, dtype=np.float64)[:, None, None] * np.ones((1, len(JOINTS), 2)) * 10
    confidence = np.full((n, len(JOINTS)), 0.9)
    xy[2], confidence[2] = np.nan, 0.0
    confidence[4] = 0.2
    return PoseTrack(xy=xy, confidence=confidence, frame_indices=np.arange(n), times_s=np.arange(n) / 30, width=100,
                     height=100, estimator="test", estimated=np.ones(len(JOINTS), dtype=bool))


def test_a_view_read_at_its_own_sample_times_is_the_view_as_estimated() -> None:
    """Before, each sample took the lower confidence of itself and the sample before, and a sample after a missing
    one was lost: the same two videos triangulated differently with the other one as the main view."""
    t = track()
    xy, confidence = resample_track(t, t.times_s)
    np.testing.assert_array_equal(np.isfinite(xy), np.isfinite(t.xy))
    np.testing.assert_allclose(xy[np.isfinite(xy)], t.xy[np.isfinite(t.xy)])
    np.testing.assert_allclose(confidence, t.confidence)


def test_between_samples_the_lower_confidence_and_no_value_next_to_a_missing_sample() -> None:
    t = track()
    xy, confidence = resample_track(t, np.array([3.5, 2.5, 1.5, 0.5]) / 30)
    np.testing.assert_allclose(xy[0, 0], [35.0, 35.0])
    np.testing.assert_allclose(confidence[0], 0.2)  # between sample 3 (0.9) and the unsure sample 4
    assert np.isnan(xy[1:3]).all() and (confidence[1:3] == 0).all()  # next to the missing sample 2
    np.testing.assert_allclose(xy[3, 0], [5.0, 5.0])
