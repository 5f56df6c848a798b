"""``--save-visuals``: stage segmentation over time and keyframe strips, as PNG.

Drawn with Pillow only, so no plotting stack is needed to inspect a run.
"""

from __future__ import annotations

import colorsys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from viddiff.schema import Sample, SampleResult
from viddiff.video import VideoFrames

BAR_HEIGHT = 24
THUMB_HEIGHT = 96


def _stage_colour(i: int, n: int) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(i / max(n, 1), 0.65, 0.95)
    return int(r * 255), int(g * 255), int(b * 255)


def segmentation_image(result: SampleResult, width: int = 800) -> Image.Image:
    """Two bars (A above B): each stage's span over the sampled frames, one colour per stage."""
    stage_names = [s.name for s in result.proposal.stages]
    n = len(stage_names)
    legend_h = 16 * n
    img = Image.new("RGB", (width, 2 * BAR_HEIGHT + 30 + legend_h), "white")
    draw = ImageDraw.Draw(img)
    for row, seg in enumerate(result.segmentations or ()):
        total = max(len(seg.frame_indices), 1)
        y0 = 10 + row * (BAR_HEIGHT + 6)
        draw.text((2, y0 + 6), "AB"[row], fill="black")
        for k, (start, end) in enumerate(seg.spans):
            x0 = 20 + (width - 30) * start / total
            x1 = 20 + (width - 30) * max(end, start + 1) / total
            draw.rectangle([x0, y0, x1, y0 + BAR_HEIGHT], fill=_stage_colour(k, n))
    for k, name in enumerate(stage_names):
        y = 2 * BAR_HEIGHT + 24 + 16 * k
        draw.rectangle([20, y, 32, y + 12], fill=_stage_colour(k, n))
        draw.text((38, y), name, fill="black")
    return img


def keyframe_strip(frames_a: list[np.ndarray], frames_b: list[np.ndarray], title: str) -> Image.Image:
    """Keyframes of A then B in one row, as the differencer saw them (in order)."""
    thumbs = []
    for frame in [*frames_a, *frames_b]:
        im = Image.fromarray(frame)
        w = max(1, round(im.width * THUMB_HEIGHT / im.height))
        thumbs.append(im.resize((w, THUMB_HEIGHT)))
    gap = 12
    width = sum(t.width for t in thumbs) + gap * (len(thumbs) + 1)
    img = Image.new("RGB", (max(width, 300), THUMB_HEIGHT + 40), "white")
    draw = ImageDraw.Draw(img)
    draw.text((gap, 4), title[:120], fill="black")
    x = gap
    for i, thumb in enumerate(thumbs):
        img.paste(thumb, (x, 24))
        draw.text((x, 24 + THUMB_HEIGHT + 2), "A" if i < len(frames_a) else "B", fill="black")
        x += thumb.width + gap
    return img


def save_sample_visuals(out_dir: Path, sample: Sample, result: SampleResult, videos: tuple[VideoFrames, VideoFrames]) -> None:
    out = Path(out_dir) / sample.sample_key
    out.mkdir(parents=True, exist_ok=True)
    segmentation_image(result).save(out / "segmentation.png")
    preds = {p.key: p for p in result.predictions}
    for kf in result.keyframes:
        pred = preds.get(kf.key)
        title = f"[{kf.key}] {pred.description if pred else ''} -> {pred.prediction if pred else '?'}"
        strip = keyframe_strip(videos[0].at(kf.a.frame_indices), videos[1].at(kf.b.frame_indices), title)
        strip.save(out / f"keyframes_{kf.key}.png")
