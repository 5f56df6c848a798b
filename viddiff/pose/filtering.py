"""Low-pass filtering of triangulated points over time, as Pose2Sim does: a zero-phase Butterworth filter.

Triangulation passes each view's frame-to-frame jitter into 3D, amplified where the rays meet at a narrow angle;
a 4th-order Butterworth at 6 Hz (Pose2Sim's default; human movement outside sprinting and impacts lies below it),
run forwards and backwards (``filtfilt``) so that no instant moves in time, removes it. Each run of consecutive
readings is filtered on its own (a gap stays a gap); a run too short for the filter's padding is left as it is.
"""

from __future__ import annotations

import numpy as np

CUTOFF_HZ = 6.0
ORDER = 4


def butterworth(values: np.ndarray, times_s: np.ndarray, cutoff_hz: float = CUTOFF_HZ, order: int = ORDER) -> np.ndarray:
    """``values`` (T, ...) low-passed along axis 0 at ``cutoff_hz`` (kept below 0.8 of the Nyquist rate of the
    median sampling interval of ``times_s``); NaN where ``values`` are."""
    from scipy.signal import butter, filtfilt

    values = np.asarray(values, dtype=np.float64)
    out = values.copy()
    if len(values) < 2:
        return out
    rate = 1.0 / float(np.median(np.diff(times_s)))
    wn = min(cutoff_hz / (rate / 2), 0.8)
    b, a = butter(order, wn)
    pad = 3 * max(len(a), len(b))
    flat = values.reshape(len(values), -1)
    result = out.reshape(len(values), -1)
    for column in range(flat.shape[1]):
        series = flat[:, column]
        ok = np.isfinite(series)
        for start, end in _runs(ok):
            if end - start > pad:
                result[start:end, column] = filtfilt(b, a, series[start:end])
    return result.reshape(values.shape)


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


__all__ = ["CUTOFF_HZ", "ORDER", "butterworth"]
