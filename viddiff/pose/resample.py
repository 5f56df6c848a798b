"""A view's keypoints read at other instants than its own samples: how an extra view's 2D keypoints meet the main
view's sample times once their offset is known (:mod:`viddiff.pose.sync`, :mod:`viddiff.pose.multiview`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from viddiff.pose.track import PoseTrack


def resample_track(track: "PoseTrack", at_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(len(at_s), J, 2) pixels and (len(at_s), J) confidence of ``track`` at the times ``at_s`` on its clock:
    linear between its two nearest samples (the lower confidence of the two); nothing outside its span or next
    to a missing sample. A time on a sample takes that sample alone, so a view read at its own sample times is
    the view as estimated (before, it took the lower confidence of the sample and the one before it: the same
    two videos triangulated differently with the other one as the main view)."""
    times = track.times_s
    right = np.clip(np.searchsorted(times, at_s), 1, len(times) - 1)
    left = right - 1
    span = times[right] - times[left]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(span > 0, (at_s - times[left]) / span, 0.0)
    inside = (at_s >= times[0] - 1e-9) & (at_s <= times[-1] + 1e-9)
    w = np.clip(w, 0.0, 1.0)[:, None, None]
    xy = (1 - w) * track.xy[left] + w * track.xy[right]
    confidence = np.minimum(track.confidence[left], track.confidence[right])
    for index in (left, right):  # on a sample: that sample alone, whatever its neighbour
        on = np.abs(at_s - times[index]) <= 1e-9
        xy[on], confidence[on] = track.xy[index[on]], track.confidence[index[on]]
    ok = inside[:, None] & np.isfinite(xy).all(-1)
    return np.where(ok[..., None], xy, np.nan), np.where(ok, confidence, 0.0)


__all__ = ["resample_track"]
