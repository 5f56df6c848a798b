"""The oracle's input: annotated keyframes per difference, nearest sampled frames, closed mode only."""

from __future__ import annotations

import numpy as np
import pytest

from viddiff.localizer.oracle import annotated_keyframes, annotations_for_mode, nearest_positions
from viddiff.schema import RetrievalFrames, StageBoundaries

RF = RetrievalFrames(
    stages=(StageBoundaries(starts=[0, 10], end=20), StageBoundaries(starts=[0, 12], end=24)),
    keyframes={"0": ([5], [7, 9]), "1": ([], [3]), "2": ([4], [])},
)


def test_annotations_need_frames_in_both_videos() -> None:
    assert annotated_keyframes(RF, "0") == ([5], [7, 9])
    assert annotated_keyframes(RF, "1") is None and annotated_keyframes(RF, "2") is None
    assert annotated_keyframes(RF, "9") is None and annotated_keyframes(None, "0") is None


@pytest.mark.parametrize("mode", ["open", "describe"])
def test_keyframe_annotations_are_withheld_outside_closed_mode(mode) -> None:
    # open-mode difference keys are the proposer's numbering, unrelated to the benchmark's keys
    withheld = annotations_for_mode(RF, mode)
    assert withheld.keyframes == {} and withheld.stages == RF.stages
    assert annotations_for_mode(RF, "closed") is RF
    assert annotations_for_mode(None, "open") is None


def test_nearest_positions_map_source_frames_to_sampled_ones() -> None:
    sampled = np.array([10, 14, 18, 22, 26])  # every 4th source frame from 10
    assert nearest_positions(sampled, [11]) == [0]
    assert nearest_positions(sampled, [12]) == [0]  # a tie goes to the earlier frame
    assert nearest_positions(sampled, [0, 13, 14, 99]) == [0, 1, 4]  # outside the trim: the nearest end
    assert nearest_positions(sampled, [17, 18, 19]) == [2]  # several annotations, one sampled frame
    with pytest.raises(ValueError, match="non-empty"):
        nearest_positions(np.array([], dtype=int), [1])
