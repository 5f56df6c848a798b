"""Coarse-to-fine decoding inside the Localizer, with the real (tiny, random-weight) CLIP embedder."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from viddiff.backends.clip import ClipEmbedder
from viddiff.cache import Cache
from viddiff.config import ClipConfig, Config, LocalizerConfig
from viddiff.localizer.coarse_to_fine import coarse_to_fine_segment
from viddiff.localizer.localize import Localizer
from viddiff.localizer.scores import stage_similarities
from viddiff.schema import Difference, Proposal, Stage
from viddiff.testing import TINY_CLIP_CONFIG, TINY_CLIP_MODEL
from viddiff.video import VideoFrames

N_FRAMES = 48


def clip_config() -> ClipConfig:
    return ClipConfig(model=TINY_CLIP_MODEL, arch_config=str(TINY_CLIP_CONFIG), pretrained=None, device="cpu")


def video(seed: int) -> VideoFrames:
    """Distinct frames (each embedded once) that drift slowly, so the similarities are temporally coherent."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=(2, 32, 32, 3)).astype(float)
    mix = np.linspace(0.0, 1.0, N_FRAMES)[:, None, None, None]
    frames = (1 - mix) * base[0] + mix * base[1] + rng.normal(0, 3, size=(N_FRAMES, 32, 32, 3))
    indices = np.arange(N_FRAMES, dtype=np.int64)
    return VideoFrames(
        frames=np.clip(frames, 0, 255).astype(np.uint8), frame_indices=indices, fps=4.0, fps_original=4.0,
        stride=1, start=0, end=N_FRAMES, n_frames_source=N_FRAMES, backend="test",
    )


def proposal() -> Proposal:
    stages = [Stage(name=n, retrieval_strings=[f"A photo of a person {n}", f"someone {n}"]) for n in ("up", "mid", "down")]
    diffs = [
        Difference(key="0", name="depth", description="deeper", num_frames="1"),
        Difference(key="1", name="speed", description="faster", num_frames="gt_1"),
    ]
    return Proposal(differences=diffs, stages=stages, links={"0": [1], "1": [0, 2]})


def localizer_config(**c2f) -> LocalizerConfig:
    return LocalizerConfig(clip=clip_config(), coarse_to_fine={"enabled": bool(c2f), **c2f})


def test_stride_one_equals_full_rate_localization():
    a, b = video(1), video(2)
    full = Localizer(localizer_config(), ClipEmbedder(clip_config())).localize(proposal(), a, b)
    exact = Localizer(localizer_config(coarse_stride=1), ClipEmbedder(clip_config())).localize(proposal(), a, b)
    assert exact.segmentations == full.segmentations
    assert exact.keyframes == full.keyframes


def test_forwards_are_the_frames_coarse_to_fine_asks_for(tmp_path: Path):
    """The embedder is asked for exactly the positions the algorithm embeds (pinned through the cache:
    a first embedder fills it, so both decodes below see identical embeddings)."""
    a, b = video(3), video(4)
    with Cache(tmp_path / "c.sqlite") as cache:
        filler = ClipEmbedder(clip_config(), cache)
        prop = proposal()
        text_embs = [filler.embed_texts(s.retrieval_strings) for s in prop.stages]
        expected = []
        for v in (a, b):
            raw = stage_similarities(filler.embed_images(v.frames), text_embs)
            result = coarse_to_fine_segment(
                N_FRAMES, 3, lambda p: raw[:, p], coarse_stride=6, refine_radius=1,
                stay_logp=np.log(0.5), advance_logp=np.log(0.5), eps=1e-6,
            )
            expected.append(result.embedded.size)

        embedder = ClipEmbedder(clip_config(), cache)
        Localizer(localizer_config(coarse_stride=6, refine_radius=1), embedder).localize(prop, a, b)
    assert embedder.stats.image_cache_hits == sum(expected)
    assert embedder.stats.image_forward == 0
    assert sum(expected) < 2 * N_FRAMES


def test_coarse_to_fine_embeds_fewer_frames_than_full_rate():
    a, b = video(5), video(6)
    full, c2f = ClipEmbedder(clip_config()), ClipEmbedder(clip_config())
    Localizer(localizer_config(), full).localize(proposal(), a, b)
    Localizer(localizer_config(coarse_stride=8, refine_radius=1), c2f).localize(proposal(), a, b)
    assert full.stats.image_forward == 2 * N_FRAMES
    assert c2f.stats.image_forward < full.stats.image_forward


def test_off_by_default_and_in_the_paper_config():
    assert Config().localizer.coarse_to_fine.enabled is False
    paper = Config.from_yaml(Path(__file__).parents[2] / "configs" / "paper.yaml")
    assert paper.localizer.coarse_to_fine.enabled is False
