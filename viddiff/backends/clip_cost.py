"""Estimated CLIP image-embedding time on a CPU, the CPU presets, and the warning that names them.

A ViT image forward costs about ``tokens × layers × width² × (4 + 2·mlp_ratio)``
multiply-adds (attention projections plus MLP), so seconds per frame are that
count scaled by one constant calibrated on ViT-L-14 (1.0 s per frame with 2
threads on this project's reference CPU; ViT-bigG-14 then comes out at 6.1 s,
measured 6.5 s; ViT-B-32 at 0.06 s, measured 0.07 s) and divided by the threads
available. Architectures without a plain ViT config (timm towers) get no
estimate and no warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from viddiff.backends.cpu import available_cores
from viddiff.config import ClipConfig, CoarseToFineConfig, LocalizerConfig
from viddiff.console import count_of

REFERENCE_THREADS = 2
SECONDS_PER_UNIT = 1.0 / (257 * 24 * 1024**2 * 12)
"""Seconds per (token · layer · width² · (4 + 2·mlp_ratio)) with 2 threads: ViT-L-14 = 1.0 s per frame."""
INT8_SPEEDUP = 2.0
"""Speed-up of ``precision: int8`` over fp32 on CPU (``bench/clip_precision.py``: 1.96–2.62x for ViT-B-32/L-14)."""
LARGE_MODEL_S = 0.5
"""Seconds per frame (on the CPU at hand) from which a model counts as large for CPU use."""
WARN_AFTER_S = 60.0
"""Estimated CLIP time of one comparison above which a large model on the CPU gets a warning."""


@dataclass(frozen=True)
class CpuPreset:
    """A CPU configuration of the localizer; the preset of the same name (``viddiff/configs/<name>.yaml``) holds the
    same values."""

    name: str
    clip: ClipConfig
    coarse_to_fine: CoarseToFineConfig
    proposer_calls: str = "separate"
    """``proposer.calls``: the fast preset, made for interactive use, asks in one call (bench/latency.py)."""


CPU_PRESETS = (
    CpuPreset(
        "cpu-balanced",
        ClipConfig(model="ViT-L-14-quickgelu", pretrained="dfn2b", precision="fp32"),
        CoarseToFineConfig(enabled=True),
    ),
    CpuPreset(
        "cpu-fast",
        ClipConfig(model="ViT-B-32", pretrained="datacomp_xl_s13b_b90k", precision="int8"),
        CoarseToFineConfig(enabled=True),
        proposer_calls="one",
    ),
)


def seconds_per_frame(clip: ClipConfig, threads: int) -> Optional[float]:
    """Estimated image-forward seconds per frame on a CPU with ``threads`` threads, or None if unknown."""
    import open_clip

    config = open_clip.get_model_config(clip.model) or {}
    vision = config.get("vision_cfg") or {}
    if not all(key in vision for key in ("image_size", "layers", "width", "patch_size")):
        return None
    size = vision["image_size"]
    size = size if isinstance(size, int) else max(size)
    tokens = (size // vision["patch_size"]) ** 2 + 1
    units = tokens * vision["layers"] * vision["width"] ** 2 * (4 + 2 * vision.get("mlp_ratio", 4.0))
    seconds = units * SECONDS_PER_UNIT * REFERENCE_THREADS / max(1, threads)
    return seconds / INT8_SPEEDUP if clip.precision == "int8" else seconds


def frames_to_embed(n_frames: int, n_stages: int, c2f: CoarseToFineConfig) -> int:
    """Frames one video of ``n_frames`` costs: all of them, or about what coarse-to-fine embeds."""
    if not c2f.enabled or c2f.coarse_stride <= 1 or n_stages >= n_frames:
        return n_frames
    coarse = math.ceil(n_frames / c2f.coarse_stride) + 1
    return min(n_frames, coarse + (n_stages - 1) * (2 * c2f.refine_radius + 2))


def cpu_time_warning(
    clip: ClipConfig, c2f: CoarseToFineConfig, video_frames: list[int], n_stages: int, threads: int
) -> Optional[str]:
    """A one-line warning when embedding these videos with a large model on this CPU takes long, else None."""
    per_frame = seconds_per_frame(clip, threads)
    if per_frame is None or per_frame < LARGE_MODEL_S:
        return None
    frames = sum(frames_to_embed(n, n_stages, c2f) for n in video_frames)
    seconds = frames * per_frame
    if seconds < WARN_AFTER_S:
        return None
    options = []
    for preset in CPU_PRESETS:
        preset_s = seconds_per_frame(preset.clip, threads) or 0.0
        preset_frames = sum(frames_to_embed(n, n_stages, preset.coarse_to_fine) for n in video_frames)
        options.append(
            f"{preset.name} ({preset.clip.model} {preset.clip.precision}, ~{_duration(preset_frames * preset_s)})"
        )
    return (
        f"CLIP {clip.model} on the CPU: about {_duration(seconds)} to embed {count_of(frames, 'frame')} "
        f"({per_frame:.1f} s per frame with {count_of(threads, 'thread')}, estimated); for CPU use a CPU preset: "
        f"--config {' or '.join(options)}; already-embedded frames come from the cache"
    )


def localizer_cpu_warning(cfg: LocalizerConfig, video_frames: list[int], n_stages: int) -> Optional[str]:
    """:func:`cpu_time_warning` for a localizer config on this machine's CPU threads."""
    c2f = cfg.coarse_to_fine if cfg.method == "viterbi" else CoarseToFineConfig()
    threads = cfg.clip.threads or available_cores()
    return cpu_time_warning(cfg.clip, c2f, video_frames, n_stages, threads)


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
