"""Aligning two phones' videos by their sound: clips written with PyAV, sharing one noise burst (a clap)."""

from __future__ import annotations

from pathlib import Path

import pytest

from viddiff.pose.sync import SyncError, audio_offset, has_audio


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory, audio_clip) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("audio_sync")
    return {
        "main": audio_clip(folder / "main.mp4", 3.0, 1.0, seed=1),
        "later": audio_clip(folder / "later.mp4", 3.0, 1.3, seed=2),  # started 0.3 s earlier: hears the clap at 1.3 s
        "quiet": audio_clip(folder / "quiet.mp4", 3.0, None, seed=3),
        "silent": audio_clip(folder / "silent.mp4", 1.0, None, seed=4, with_audio=False),
    }


def test_the_offset_is_found_from_a_shared_clap(clips) -> None:
    found = audio_offset(clips["main"], clips["later"])
    assert found.method == "audio" and found.score > 0.5
    assert abs(found.offset_s - 0.3) < 0.005  # the AAC encoder's priming delay is the same in both files
    assert abs(audio_offset(clips["later"], clips["main"]).offset_s + 0.3) < 0.005


def test_sound_without_a_distinct_event_is_refused(clips) -> None:
    with pytest.raises(SyncError, match="could not be aligned by audio"):
        audio_offset(clips["main"], clips["quiet"])


def test_a_video_without_sound_says_so(clips) -> None:
    assert has_audio(clips["main"]) and not has_audio(clips["silent"])
    with pytest.raises(SyncError, match="has no audio track"):
        audio_offset(clips["main"], clips["silent"])


def test_a_performance_is_aligned_by_its_sound_on_the_clips_own_clocks(clips) -> None:
    """With the main clip trimmed to start 0.5 s into its file, the same clap puts the extra view 0.8 s ahead on the
    clips' clocks (the sound's offset is between the files)."""
    from viddiff.pose.multiview import synchronise
    from viddiff.video import read_video

    views = [read_video(clips["main"], frames_trim=(15, None)), read_video(clips["later"])]
    (offset,) = synchronise([], [], views, sources=[clips["main"], clips["later"]]).offsets
    assert offset.method == "audio" and abs(offset.offset_s - 0.8) < 0.005
