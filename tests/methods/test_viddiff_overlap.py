"""The VidDiff method overlaps what does not depend on the proposal, and its results do not change.

With ``run.overlap_stages`` the videos are decoded and the frames CLIP needs whatever the proposal says are
embedded while the proposer's calls are in flight. Pinned here: the results (proposal, frames, embeddings,
segmentations, keyframes, predictions, usage) and CLIP's work are the same as one step after another, and
the frames really are embedded before the proposal arrives.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

import pytest

from viddiff.backends.clip import ClipEmbedder
from viddiff.cache import open_cache
from viddiff.config import Config, DataConfig, load_config
from viddiff.data.viddiffbench import load_dataset
from viddiff.errors import VideoError
from viddiff.localizer.localize import Localizer
from viddiff.methods.viddiff import VidDiffMethod
from viddiff.schema import Sample, VideoRef
from viddiff.testing import offline_overrides
from viddiff.testing.fake_openai import FakeOpenAIServer
from viddiff.testing.recording import RecordingEmbedder
from viddiff.testing.responders import Gate, ScriptedModel, schema_name

PROPOSER_SCHEMAS = {"DifferencesAnswer", "StagesAnswer", "LinksAnswer", "ProposalAnswer"}
LOCALIZERS = {
    "viterbi": [],
    "coarse-to-fine": ["localizer.coarse_to_fine.enabled=true", "localizer.coarse_to_fine.coarse_stride=3"],
    "no_viterbi": ["localizer.method=no_viterbi"],
    "uniform": ["localizer.method=uniform"],
    # configs/paper.yaml's behaviours: the release's prompts, links by name, wholesale refinement, its Viterbi
    "as released": [
        "endpoints.response_format=json_object", "endpoints.max_reasks=0", "proposer.prompt_style=release",
        "proposer.enforce_counts=false", "proposer.refinement=wholesale", "proposer.link_by=name",
        "differencer.prompt_style=release", "localizer.viterbi_ties=latest", "localizer.score_floor=replace_zeros",
        "localizer.burst_step=as_released",
    ],
}


@pytest.fixture(scope="module")
def sample(synth_dir: Path) -> Sample:
    """The plain synthetic pair (two video files), with labelled differences."""
    return load_dataset(DataConfig(dataset=str(synth_dir)))[2]


def config(server: FakeOpenAIServer, cache: Path, *sets: str) -> Config:
    return load_config(None, [*offline_overrides(server.base_url, str(cache)), *sets])


def is_proposer(request) -> bool:
    return schema_name(request) in PROPOSER_SCHEMAS


async def process(cfg: Config, sample: Sample, mode: str):
    """One sample on fresh models and a fresh cache, CLIP's requests recorded; (result, embedder, videos)."""
    cache = open_cache(cfg.cache)
    embedder = RecordingEmbedder(ClipEmbedder(cfg.localizer.clip, cache))
    method = VidDiffMethod(cfg, cache=cache, embedder=embedder)
    try:
        result = await method.aprocess(sample, mode)
        videos = await method.load_videos(sample)
    finally:
        await method.aclose()
        cache.close()
    return result, embedder, videos


@pytest.mark.parametrize("mode", ["closed", "open"])
@pytest.mark.parametrize("localizer", list(LOCALIZERS))
def test_overlapping_changes_no_result_and_no_clip_work(sample, tmp_path, monkeypatch, localizer, mode):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    with FakeOpenAIServer(ScriptedModel()) as server:
        sets = LOCALIZERS[localizer]
        overlapped, early, videos = asyncio.run(process(config(server, tmp_path / "a.sqlite", *sets), sample, mode))
        in_order, plain, _ = asyncio.run(
            process(config(server, tmp_path / "b.sqlite", *sets, "run.overlap_stages=false"), sample, mode)
        )
    assert overlapped.model_dump() == in_order.model_dump()
    assert overlapped.predictions and all(p.prediction in ("a", "b") for p in overlapped.predictions)
    # CLIP was asked for the same batches of the same frames and gave the same embeddings, no more
    assert Counter((r.kind, r.items, r.output) for r in early.requests) == Counter(
        (r.kind, r.items, r.output) for r in plain.requests
    )
    assert early.stats == plain.stats
    if localizer == "uniform":
        assert not early.requests  # segmenters without CLIP embed nothing early either
        return
    # and the localizer on its own (no frames embedded early) finds the same segmentation and keyframes
    cfg = config(server, tmp_path / "c.sqlite", *sets)
    alone = Localizer(cfg.localizer, ClipEmbedder(cfg.localizer.clip)).localize(
        overlapped.proposal, *videos, seed=cfg.run.seed, sample_key=sample.sample_key
    )
    assert (alone.segmentations, alone.keyframes) == (overlapped.segmentations, overlapped.keyframes)


async def held_proposal(cfg: Config, sample: Sample, gate: Gate, server: FakeOpenAIServer, expected_frames: int):
    """Process ``sample`` while the proposer's first answer is held; what was done when it is released."""
    embedder = RecordingEmbedder(ClipEmbedder(cfg.localizer.clip))
    method = VidDiffMethod(cfg, embedder=embedder)
    try:
        task = asyncio.ensure_future(method.aprocess(sample, "closed"))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not task.done():
            if gate.arrived and (embedder.frames_requested() >= expected_frames or not cfg.run.overlap_stages):
                break
            await asyncio.sleep(0.02)
        seen = {
            "frames": embedder.frames_requested(),
            "texts": sum(r.kind == "text" for r in embedder.requests),
            "requests": len(server.requests),
        }
        gate.open()
        result = await task
    finally:
        await method.aclose()
    return seen, result


@pytest.mark.parametrize("overlap", [True, False])
def test_frames_are_embedded_while_the_proposers_answer_is_held(sample, tmp_path, monkeypatch, overlap):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    gate = Gate(ScriptedModel(), matches=is_proposer)
    with FakeOpenAIServer(gate) as server:
        cfg = config(server, tmp_path / "c.sqlite", f"run.overlap_stages={str(overlap).lower()}")

        async def frames() -> int:
            method = VidDiffMethod(cfg)
            a, b = await method.load_videos(sample)
            await method.aclose()
            return len(a.frame_indices) + len(b.frame_indices)

        n_frames = asyncio.run(frames())
        seen, result = asyncio.run(held_proposal(cfg, sample, gate, server, n_frames))
    assert seen["requests"] == 1 and not gate.timed_out  # the proposer's first call, unanswered
    if overlap:
        assert seen == {"frames": n_frames, "texts": 0, "requests": 1}  # every frame; the stage texts wait
    else:
        assert seen["frames"] == 0  # one step after another: CLIP waits for the proposal
    assert [p.key for p in result.predictions] == [d.key for d in result.proposal.differences]


def test_an_unreadable_video_fails_before_any_model_call(sample, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all")
    bad = sample.model_copy(update={"videos": (sample.videos[0], VideoRef(path=str(broken)))})
    with FakeOpenAIServer(ScriptedModel()) as server:
        method = VidDiffMethod(config(server, tmp_path / "c.sqlite"))

        async def go():
            try:
                await method.aprocess(bad, "closed")
            finally:
                await method.aclose()

        with pytest.raises(VideoError, match="broken.mp4"):
            asyncio.run(go())
    assert server.requests == []  # probed before the proposal is asked for


def test_a_video_failing_while_decoding_cancels_the_proposal(sample, tmp_path, monkeypatch):
    """Past the probe, a decoding failure (here: a trim beyond the video) fails the sample at once, while
    the proposer's first answer is still held, and no other proposer call follows."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    a, b = sample.videos
    bad = sample.model_copy(update={"videos": (a, b.model_copy(update={"frames_trim": (10**6, None)}))})
    gate = Gate(ScriptedModel(), matches=is_proposer, timeout_s=20)
    with FakeOpenAIServer(gate) as server:
        method = VidDiffMethod(config(server, tmp_path / "c.sqlite"))

        async def go():
            try:
                await method.aprocess(bad, "closed")
            finally:
                await method.aclose()

        try:
            with pytest.raises(VideoError, match="frames_trim"):
                asyncio.run(go())
            held = gate.timed_out == 0
        finally:
            gate.open()
    assert held
    assert len(server.requests) <= 1


def test_videos_are_segmented_while_the_links_are_awaited(sample, tmp_path, monkeypatch):
    """Segmenting needs the stages, not the links: all of CLIP's work (stage texts and coarse-to-fine
    refinement included) is done while the linking call is held."""
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    c2f = ["localizer.coarse_to_fine.enabled=true", "localizer.coarse_to_fine.coarse_stride=3"]
    with FakeOpenAIServer(ScriptedModel()) as server:
        _, plain, _ = asyncio.run(
            process(config(server, tmp_path / "a.sqlite", *c2f, "run.overlap_stages=false"), sample, "closed")
        )
    gate = Gate(ScriptedModel(), matches=lambda r: schema_name(r) == "LinksAnswer")
    with FakeOpenAIServer(gate) as server:
        cfg = config(server, tmp_path / "b.sqlite", *c2f)
        cache = open_cache(cfg.cache)  # as in process(): a frame seen before is a cache hit, not a batch member
        embedder = RecordingEmbedder(ClipEmbedder(cfg.localizer.clip, cache))
        method = VidDiffMethod(cfg, cache=cache, embedder=embedder)

        async def go():
            task = asyncio.ensure_future(method.aprocess(sample, "closed"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(embedder.requests) < len(plain.requests):
                await asyncio.sleep(0.02)
            seen = (len(embedder.requests), gate.arrived, gate.timed_out)
            gate.open()
            try:
                return seen, await task
            finally:
                await method.aclose()
                cache.close()

        (done, arrived, timed_out), result = asyncio.run(go())
    assert (done, arrived, timed_out) == (len(plain.requests), 1, 0)
    assert any(r.kind == "text" for r in embedder.requests)
    assert Counter((r.kind, r.items, r.output) for r in embedder.requests) == Counter(
        (r.kind, r.items, r.output) for r in plain.requests
    )
    assert result.predictions
