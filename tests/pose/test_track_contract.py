"""A pose estimator plug-in that breaks the output contract gets a named error, not an internal one."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.errors import PoseUnavailableError
from viddiff.pose.track import estimate_track
from viddiff.video import read_video
from viddiff.video.write import write_video


class SwappedAxes:
    """Returns (joints, frames) arrays: the mistake the shape check exists for."""

    name = "swapped-axes"

    def settings(self) -> dict:
        return {}

    def estimate(self, frames, times_s):
        return np.zeros((17, len(frames), 2)), np.zeros((17, len(frames)))


def test_wrong_shapes_name_the_estimator_and_what_it_must_return(tmp_path):
    path = write_video(tmp_path / "clip.mp4", [np.full((32, 32, 3), i * 20, np.uint8) for i in range(6)], 6)
    video = read_video(path, target_fps=6)
    with pytest.raises(PoseUnavailableError, match=r"pose estimator swapped-axes returned keypoints \(17, 6, 2\)"):
        estimate_track(video, SwappedAxes(), None)
