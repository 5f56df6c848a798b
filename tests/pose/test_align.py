"""Stage-normalised time, resampling with gaps, and DTW."""

from __future__ import annotations

import numpy as np

from viddiff.pose.align import dtw_path, resample, stage_grid, stage_time, stage_windows, warp_onto


def test_windows_tile_the_clip_and_end_where_it_ends() -> None:
    times = np.arange(10) / 5.0  # 5 fps, 10 frames: 0.0 .. 1.8 s
    spans = [(0, 3), (3, 7), (7, 10)]
    np.testing.assert_allclose(stage_windows(spans, times), [[0.0, 0.6], [0.6, 1.4], [1.4, 2.0]])
    np.testing.assert_allclose(stage_windows(spans, times, end_s=1.9), [[0.0, 0.6], [0.6, 1.4], [1.4, 1.9]])
    np.testing.assert_allclose(np.diff(stage_windows(spans, times), axis=1).ravel(), [0.6, 0.8, 0.6])


def test_stage_time_maps_every_stage_onto_a_unit_interval() -> None:
    windows = np.array([[0.0, 1.0], [1.0, 3.0], [3.0, 3.5]])
    u = stage_time(np.array([0.0, 0.5, 1.0, 2.0, 3.25, 3.5, 4.0, -1.0]), windows)
    np.testing.assert_allclose(u[:6], [0.0, 0.5, 1.0, 1.5, 2.5, 3.0])
    assert np.isnan(u[6:]).all()


def test_a_slower_performance_has_the_same_stage_aligned_curve() -> None:
    # B is A at 2/3 speed (every time ×1.5), sampled at its own times: on stage time the curves coincide.
    def motion(t, scale=1.0):
        return 90 + 60 * np.sin(t / scale * 2.0)

    times_a, times_b = np.linspace(0, 3, 31), np.linspace(0, 4.5, 31 * 4 // 3)  # both sampled up to the end
    windows_a = np.array([[0.0, 1.2], [1.2, 3.0]])
    curve_a = resample(times_a, motion(times_a), windows_a, 25)
    curve_b = resample(times_b, motion(times_b, 1.5), windows_a * 1.5, 25)
    np.testing.assert_allclose(curve_a, curve_b, atol=0.6)  # linear interpolation of two samplings
    assert len(curve_a) == 50 and np.isfinite(curve_a).all()
    np.testing.assert_allclose(stage_grid(2, 25)[[0, 24, 25, 49]], [0, 1, 1, 2])


def test_resampling_keeps_gaps_and_never_bridges_them() -> None:
    times = np.arange(6.0)
    values = np.array([0.0, 1.0, np.nan, 3.0, 4.0, 5.0])
    out = resample(times, values, np.array([[0.0, 6.0]]), 13)  # every half second from 0 to 6
    assert np.isnan(out[[3, 4, 5]]).all()  # 1.5, 2.0, 2.5 s touch the missing sample
    np.testing.assert_allclose(out[[0, 1, 2, 6, 7, 10, 12]], [0.0, 0.5, 1.0, 3.0, 3.5, 5.0, 5.0])


def test_dtw_recovers_a_time_warp() -> None:
    t = np.linspace(0, 1, 60)
    reference = np.sin(2 * np.pi * t)
    warped_time = t**1.6  # B dwells early, hurries late
    other = np.sin(2 * np.pi * warped_time)
    path = dtw_path(reference, other)
    assert path[0] == (0, 0) and path[-1] == (59, 59)
    assert all(b[0] - a[0] in (0, 1) and b[1] - a[1] in (0, 1) for a, b in zip(path, path[1:]))
    aligned = warp_onto(reference, other)
    assert np.abs(aligned - reference).max() < 0.15
    assert np.abs(other - reference).max() > 0.5  # without warping they disagree
    np.testing.assert_allclose(warp_onto(reference, reference), reference)
