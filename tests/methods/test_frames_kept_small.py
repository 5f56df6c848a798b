"""The VidDiff method keeps every sampled frame only at CLIP's size and decodes the keyframes again at full size
(issue 32, item 5): same keyframes, same images sent, same verdicts as keeping every frame whole."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from viddiff.config import DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.methods.viddiff import PairRun, VidDiffMethod
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import read_video_ref


class WholeFrames(VidDiffMethod):
    """The method as it was: every sampled frame kept at ``data.max_side`` (the reference)."""

    _clip_shrink = None


def run_all(method_class: type[VidDiffMethod], synth_dir: Path, tmp_path: Path, mode: str):
    samples = list(load_dataset(DataConfig(dataset=str(synth_dir))))
    with FakeOpenAIServer(ScriptedModel()) as server:
        cfg = load_config(None, offline_overrides(server.base_url, str(tmp_path / "cache.sqlite")))

        async def go() -> list[PairRun]:
            method = method_class(cfg)
            try:
                return [await method.arun_pair(sample, mode) for sample in samples]
            finally:
                await method.aclose()

        runs = asyncio.run(go())
    images = sorted(tuple(part.image.tobytes() for part in request.images) for request in server.requests)
    return runs, images  # the verdicts are asked concurrently: in no fixed order


@pytest.mark.parametrize("mode", ["closed", "open"])
def test_results_are_those_of_whole_frames(synth_dir: Path, tmp_path: Path, monkeypatch, mode: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    small, sent_small = run_all(VidDiffMethod, synth_dir, tmp_path / "small", mode)
    whole, sent_whole = run_all(WholeFrames, synth_dir, tmp_path / "whole", mode)
    for kept, reference in zip(small, whole):
        assert kept.result.keyframes == reference.result.keyframes
        assert kept.result.segmentations == reference.result.segmentations
        assert kept.result.predictions == reference.result.predictions
        for video, ref_video in zip(kept.videos, reference.videos):
            assert video.size == ref_video.size and video.frames.shape[1:3] == (64, 64)  # the tiny CLIP's crop
            assert ref_video.frames.nbytes > 3 * video.frames.nbytes
            shown = [f for k in kept.result.keyframes for f in (k.a if video is kept.videos[0] else k.b).frame_indices]
            for frame, ref_frame in zip(video.at(shown), ref_video.at(shown)):
                assert np.array_equal(frame, ref_frame)
    assert sent_small == sent_whole and any(sent_small)


def test_keyframes_are_the_frames_of_a_whole_read(synth_dir: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    (run, *_), _ = run_all(VidDiffMethod, synth_dir, tmp_path, "closed")
    for ref, video, side in zip(run.sample.videos, run.videos, ("a", "b")):
        whole = read_video_ref(ref, None, max_side=1920)  # every frame, whole
        indices = [f for k in run.result.keyframes for f in getattr(k, side).frame_indices]
        assert indices and all(np.array_equal(x, y) for x, y in zip(video.at(indices), whole.at(indices)))
        with pytest.raises(ValueError, match="kept only shrunk"):
            video.at([int(f) for f in video.frame_indices if int(f) not in video.stills][:1])
