"""When the videos of one take line up in time: the offset of each extra view against the main view, from the
body's motion seen through the calibration (epipolar geometry) or from the sound (audio envelopes), with its
uncertainty, and a clear refusal when they cannot tell.

Two phones started by hand are seconds apart. An offset ``offset_s`` means: the instant the main video shows at
its time ``t`` is shown by the extra view at its time ``t + offset_s`` (an extra view started later has a
negative offset).

From the motion: at the right offset, each joint the main view sees lies on the epipolar line of the same joint
in the extra view (the calibration says where); at a wrong one, a moving joint is elsewhere. Each candidate
offset (every main-view sample step, then a tenth of one around the best) is scored by the median distance of
the keypoints from their epipolar lines (main-view pixels; of a joint and its other side's, the nearer, since an
estimator may swap sides in one view), over the frames both views see. The best must stand out: its score at
least ``min_margin`` (a share) below the best offset more than :data:`LOBE_S` away, else the movement does not
tell (a still person; a repeated movement) and the offset is refused, since a wrong one would triangulate one
instant of one view with another instant of the other. Its uncertainty is the leave-one-part-out (jackknife)
spread over five consecutive parts of the take, with a floor of :data:`FLOOR_STEPS` sample steps. (Cross-correlating 2D
keypoint speeds, tried first, found the right offset in 20 of 33 cuts of the Pose2Sim views and confidently
wrong ones in the others: speeds seen from different directions differ too much on a 1.7 s take.)

From the sound: both envelopes (log RMS in 1 ms bins) are cross-correlated (Pearson's r per lag over the
overlap), the best lag refined by a parabola; it must reach r ``MIN_CORRELATION`` and stand ``MIN_MARGIN`` above
any lag outside its lobe.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict

from viddiff.errors import ViddiffError
from viddiff.pose.calibration import Camera
from viddiff.pose.resample import resample_track
from viddiff.pose.skeleton import SWAP

if TYPE_CHECKING:
    from viddiff.pose.track import PoseTrack

MIN_CORRELATION = 0.5
MIN_MARGIN = 0.1
"""Audio: r of the peak over the best lag outside its lobe."""
MIN_EPIPOLAR_MARGIN = 0.2
"""Motion: the best offset's epipolar distance at least this share below the best one more than LOBE_S away."""
LOBE_S = 0.1
"""Offsets nearer than this to the best belong to its own minimum."""
MIN_CONFIDENCE = 0.5
BLOCKS = 5
FLOOR_STEPS = 1.5
"""The least uncertainty of a motion offset, in main-view sample steps: on cuts of the Pose2Sim views the offsets
accepted were off by up to 3.3 steps where the jackknife said less (the estimator's own smoothing lags one view
behind another by a sample or more), so ±1.5 steps is the floor (docs/pose.md)."""
MIN_OVERLAP = 0.5
"""A lag is scored only where the two signals overlap over at least this share of the shorter one."""
AUDIO_RATE_HZ = 1000.0
"""Envelope samples per second (1 ms: far below a video frame)."""


class SyncError(ViddiffError):
    """The views' offset could not be told (one clear message saying why and what to do)."""


class ViewOffset(BaseModel):
    """How one extra view lines up with the main view."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    view: int
    """The extra view's position among the performance's videos (1 = the first extra view)."""
    offset_s: float
    """The extra view's time of an instant minus the main view's time of it (see the module docstring)."""
    uncertainty_s: float
    """± one standard deviation of ``offset_s``."""
    method: Literal["motion", "audio", "given"]
    score: Optional[float] = None
    """How well the views matched there: audio, Pearson's r of the envelopes; motion, the keypoints' median
    distance from their epipolar lines (main-view pixels); ``None`` for a given offset."""
    margin: float = 0.0
    """How far the best offset stood out: audio, r above the best lag outside its lobe; motion, the share by which
    its distance was below the best offset's more than ``LOBE_S`` away."""


class SyncInfo(BaseModel):
    """Every extra view's offset against the main view."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    offsets: tuple[ViewOffset, ...] = ()

    def describe(self) -> str:
        """"view 2: -0.200 ± 0.004 s (motion, 7.4 px from the epipolar lines)"; one part per extra view."""
        how = {"motion": lambda o: f"motion, {o.score:.1f} px from the epipolar lines",
               "audio": lambda o: f"audio, r {o.score:.2f}", "given": lambda o: "given"}
        return "; ".join(f"view {o.view + 1}: {o.offset_s:+.3f} ± {o.uncertainty_s:.3f} s ({how[o.method](o)})"
                         for o in self.offsets)


def audio_offset(
    main: Union[str, Path], extra: Union[str, Path], *, view: int = 1, max_offset_s: Optional[float] = None,
    min_correlation: float = MIN_CORRELATION, min_margin: float = MIN_MARGIN,
) -> ViewOffset:
    """The offset of the video file ``extra`` against ``main`` from their sound (both need an audio track)."""
    a, b = audio_envelope(main), audio_envelope(extra)
    step = 1.0 / AUDIO_RATE_HZ
    lags = _lags(len(a), len(b), step, max_offset_s)
    score = _correlations(a, b, lags)
    offset, r, margin = _peak(lags, score, step, min_correlation, min_margin, "audio")
    return ViewOffset(view=view, offset_s=round(offset, 6), uncertainty_s=round(step / np.sqrt(12), 6), method="audio",
                      score=round(r, 4), margin=round(margin, 4))


def has_audio(path: Union[str, Path]) -> bool:
    import av

    try:
        with av.open(str(path)) as container:
            return bool(container.streams.audio)
    except (av.error.FFmpegError, OSError):
        return False


def audio_envelope(path: Union[str, Path]) -> np.ndarray:
    """The sound's loudness over time, from the stream's start: RMS of the first channel in 1 ms bins, in log
    scale (a clap and speech then weigh alike), at :data:`AUDIO_RATE_HZ`."""
    import av

    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, OSError) as exc:
        raise SyncError(f"cannot read the sound of {path}: {exc}") from None
    with container:
        if not container.streams.audio:
            raise SyncError(f"{path} has no audio track: align the views by their motion instead")
        stream = container.streams.audio[0]
        rate = stream.rate or stream.codec_context.sample_rate
        chunks, start = [], None
        for frame in container.decode(stream):
            if start is None:
                start = float(frame.time or 0.0)
            chunks.append(_first_channel(frame))
    if not chunks:
        raise SyncError(f"{path}: its audio track holds no sound")
    samples = np.concatenate(chunks)
    per_bin = max(1, int(round(rate / AUDIO_RATE_HZ)))
    n = len(samples) // per_bin
    rms = np.sqrt(np.mean(samples[: n * per_bin].reshape(n, per_bin) ** 2, axis=1))
    envelope = np.log10(rms + 1e-6 * (np.max(np.abs(samples)) + 1e-12))
    lead = int(round((start or 0.0) * AUDIO_RATE_HZ))
    return np.concatenate([np.full(max(lead, 0), np.nan), envelope])


def _first_channel(frame: "object") -> np.ndarray:
    """(n,) the first channel of a decoded audio frame (planar: one row per channel; packed: interleaved)."""
    data = np.asarray(frame.to_ndarray(), dtype=np.float64)  # type: ignore[attr-defined]
    if frame.format.is_planar:  # type: ignore[attr-defined]
        return data[0]
    return data.reshape(-1)[:: len(frame.layout.channels)]  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- the motion


def epipolar_distances(main: Camera, extra: Camera, main_px: np.ndarray, extra_px: np.ndarray) -> np.ndarray:
    """(...) the symmetric distance, in main-view pixels, of each pair of corresponding keypoints ((..., 2) each,
    pixels of their own views) from each other's epipolar lines; NaN where either is missing."""
    rotation = extra.rotation @ main.rotation.T
    translation = extra.translation - rotation @ main.translation
    tx, ty, tz = translation
    essential = np.array([[0.0, -tz, ty], [tz, 0.0, -tx], [-ty, tx, 0.0]]) @ rotation
    ones = np.ones(np.shape(main_px)[:-1] + (1,))
    a = np.concatenate([main.normalised(main_px), ones], axis=-1)
    b = np.concatenate([extra.normalised(extra_px), ones], axis=-1)
    line_b, line_a = a @ essential.T, b @ essential  # in the extra view, in the main view
    residual = np.abs(np.sum(b * line_b, axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        in_a = residual / np.hypot(line_a[..., 0], line_a[..., 1])
        in_b = residual / np.hypot(line_b[..., 0], line_b[..., 1]) * extra.matrix[0, 0] / main.matrix[0, 0]
    return (in_a + in_b) / 2 * main.matrix[0, 0]


def motion_offset(
    main: "PoseTrack", extra: "PoseTrack", main_camera: Camera, extra_camera: Camera, *, view: int = 1,
    max_offset_s: Optional[float] = None, min_margin: float = MIN_EPIPOLAR_MARGIN,
) -> ViewOffset:
    """The offset of ``extra`` against ``main`` from their keypoints and cameras (see the module docstring)."""
    times = main.times_s
    step = float(np.median(np.diff(times)))
    seen_main = main.confidence >= MIN_CONFIDENCE

    def distances(offset: float) -> np.ndarray:
        xy, confidence = resample_track(extra, times + offset)
        straight = epipolar_distances(main_camera, extra_camera, main.xy, xy)
        swapped = epipolar_distances(main_camera, extra_camera, main.xy, xy[:, list(SWAP)])
        straight = np.where(seen_main & (confidence >= MIN_CONFIDENCE), straight, np.nan)
        swapped = np.where(seen_main & (confidence[:, list(SWAP)] >= MIN_CONFIDENCE), swapped, np.nan)
        return np.fmin(straight, swapped)

    def score(offset: float, rows: Optional[np.ndarray] = None) -> float:
        """The median distance over ``rows`` (default: all frames); NaN where the views share too few keypoints."""
        d = distances(offset) if rows is None else distances(offset)[rows]
        need = MIN_OVERLAP * (seen_main if rows is None else seen_main[rows]).sum()
        finite = np.isfinite(d)
        return float(np.median(d[finite])) if finite.sum() >= max(need, 3) else np.nan

    lo, hi = extra.times_s[0] - times[-1], extra.times_s[-1] - times[0]  # any overlap at all
    if max_offset_s is not None:
        lo, hi = max(lo, -max_offset_s), min(hi, max_offset_s)
    coarse = np.arange(np.ceil(lo / step), np.floor(hi / step) + 1) * step
    scores = np.array([score(o) for o in coarse])
    if not np.isfinite(scores).any():
        raise SyncError("the views could not be aligned by the motion: the body is not seen in both views at once "
                        "long enough; give the offset")
    k = int(np.nanargmin(scores))
    best = float(scores[k])
    far = np.abs(coarse - coarse[k]) > LOBE_S
    other = float(np.nanmin(scores[far])) if np.isfinite(scores[far]).any() else np.inf
    margin = 1 - best / other if np.isfinite(other) and other > 0 else 1.0
    if margin < min_margin:
        at = coarse[far][int(np.nanargmin(scores[far]))]
        raise SyncError(
            f"the views could not be aligned by the motion: the best offset ({coarse[k]:+.3f} s, keypoints "
            f"{best:.1f} px from their epipolar lines) is not distinct ({at:+.3f} s scores {other:.1f} px); film a "
            "distinct movement seen by both phones (or a clap both hear), or give the offset"
        )
    fine = coarse[k] + np.linspace(-1, 1, 21) * step
    offset = float(fine[int(np.nanargmin([score(o) for o in fine]))])
    blocks = np.array_split(np.arange(len(times)), BLOCKS)
    estimates = []
    for b in range(BLOCKS):
        rows = np.concatenate([blocks[i] for i in range(BLOCKS) if i != b])
        local = [score(o, rows) for o in fine]
        if np.isfinite(local).any():
            estimates.append(float(fine[int(np.nanargmin(local))]))
    n = len(estimates)
    jackknife = float(np.sqrt((n - 1) / n * np.sum((np.array(estimates) - np.mean(estimates)) ** 2))) if n > 1 else step
    uncertainty = float(np.hypot(jackknife, FLOOR_STEPS * step))
    return ViewOffset(view=view, offset_s=round(offset, 6), uncertainty_s=round(uncertainty, 6), method="motion",
                      score=round(best, 3), margin=round(margin, 4))


# --------------------------------------------------------------------------- the correlation


def _lags(n_main: int, n_extra: int, step: float, max_offset_s: Optional[float]) -> np.ndarray:
    """Integer lags (extra index − main index of one instant) whose overlap is at least :data:`MIN_OVERLAP`."""
    shortest = min(n_main, n_extra)
    need = int(np.ceil(MIN_OVERLAP * shortest))
    lo, hi = -(n_main - need), n_extra - need
    if max_offset_s is not None:
        bound = int(np.ceil(max_offset_s / step))
        lo, hi = max(lo, -bound), min(hi, bound)
    if hi < lo:
        raise SyncError("the videos are too short to align (they would overlap by less than half)")
    return np.arange(lo, hi + 1)


def _correlations(a: np.ndarray, b: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Pearson's r between ``a[i]`` and ``b[i + lag]`` over the overlap, per lag (NaN where too little overlaps)."""
    out = np.full(len(lags), np.nan)
    for k, lag in enumerate(lags):
        lo, hi = max(0, -lag), min(len(a), len(b) - lag)
        if hi - lo < 3:
            continue
        x, y = a[lo:hi], b[lo + lag : hi + lag]
        ok = np.isfinite(x) & np.isfinite(y)
        if ok.sum() < max(3, MIN_OVERLAP * min(len(a), len(b)) * 0.5):
            continue
        x, y = x[ok] - x[ok].mean(), y[ok] - y[ok].mean()
        norm = np.sqrt((x * x).sum() * (y * y).sum())
        if norm > 0:
            out[k] = float((x * y).sum() / norm)
    return out


def _refined(lags: np.ndarray, score: np.ndarray, step: float) -> float:
    """The best lag in seconds, refined below one step by a parabola through the peak and its neighbours."""
    k = int(np.nanargmax(score))
    shift = 0.0
    if 0 < k < len(score) - 1 and np.isfinite(score[k - 1]) and np.isfinite(score[k + 1]):
        denominator = score[k - 1] - 2 * score[k] + score[k + 1]
        if denominator < 0:
            shift = float(np.clip(0.5 * (score[k - 1] - score[k + 1]) / denominator, -0.5, 0.5))
    return (float(lags[k]) + shift) * step


def _peak(
    lags: np.ndarray, score: np.ndarray, step: float, min_correlation: float, min_margin: float, what: str,
) -> tuple[float, float, float]:
    """(offset s, r at the peak, margin over the best lag outside the peak's lobe), or :class:`SyncError`."""
    if not np.isfinite(score).any():
        raise SyncError(f"the views could not be aligned by {what}: the signals do not overlap enough")
    k = int(np.nanargmax(score))
    best = float(score[k])
    # the peak's lobe: the lags around it until the correlation falls below half the peak's
    lo = k
    while lo > 0 and np.isfinite(score[lo - 1]) and score[lo - 1] > best / 2:
        lo -= 1
    hi = k
    while hi < len(score) - 1 and np.isfinite(score[hi + 1]) and score[hi + 1] > best / 2:
        hi += 1
    outside = np.concatenate([score[:lo], score[hi + 1 :]])
    second = float(np.nanmax(outside)) if np.isfinite(outside).any() else -1.0
    margin = best - second
    if best < min_correlation or margin < min_margin:
        raise SyncError(
            f"the views could not be aligned by {what}: the best match (r {best:.2f} at {lags[k] * step:+.3f} s) "
            + (f"is weaker than r {min_correlation:g}" if best < min_correlation
               else f"is not distinct (another offset, {lags[int(np.nanargmax(np.where(np.isin(np.arange(len(score)), range(lo, hi + 1)), np.nan, score)))] * step:+.3f} s, scores r {second:.2f})")
            + "; film a distinct movement in both views (or a clap both phones hear), or give the offset"
        )
    return _refined(lags, score, step), best, margin


__all__ = [
    "SyncError", "SyncInfo", "ViewOffset", "audio_envelope", "audio_offset", "epipolar_distances", "has_audio",
    "motion_offset",
]
