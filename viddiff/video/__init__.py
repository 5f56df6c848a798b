"""Video in and out: frames at a target fps, upright, with their true times; and the one encoder path.

- :mod:`~viddiff.video.read`: sampled frames of a file or image folder (:func:`read_video`, :func:`read_pair`;
  several samplings from one decode: :func:`read_video_sampled`);
- :mod:`~viddiff.video.sources`: the PyAV probe and the three readers, and which decoder reads which file;
- :mod:`~viddiff.video.orientation`: display matrices and EXIF orientation, as 2x2 matrices;
- :mod:`~viddiff.video.timing`: stride or presentation-time sampling;
- :mod:`~viddiff.video.write`: frames to H.264/VP9/AV1 files (synthetic data, baselines, tests, benches).

The names below are the wing's public surface; everything else is imported from its module.
"""

from __future__ import annotations

from viddiff.video.read import (
    BACKENDS,
    IMAGE_SUFFIXES,
    Sampling,
    VideoFrames,
    VideoInfo,
    compute_stride,
    probe_video,
    read_pair,
    read_video,
    read_video_ref,
    read_video_ref_sampled,
    read_video_sampled,
    read_videos,
    read_videos_sampled,
    resolve_trim,
    scaled_size,
    thumbnail,
    unshrunk,
    with_stills,
)

__all__ = [
    "BACKENDS", "IMAGE_SUFFIXES", "Sampling", "VideoFrames", "VideoInfo", "compute_stride", "probe_video", "read_pair",
    "read_video", "read_video_ref", "read_video_ref_sampled", "read_video_sampled", "read_videos", "read_videos_sampled",
    "resolve_trim", "scaled_size", "thumbnail", "unshrunk", "with_stills",
]
