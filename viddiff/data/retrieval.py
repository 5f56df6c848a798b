"""Ground-truth keyframe annotations (``retrieval_frames``) in the shapes VidDiffBench has published.

The oracle localizer needs, per difference, the frames of A and of B where
the annotators saw it. The benchmark has stored them in three shapes:

* the published column: a JSON string holding one map per video, A then B,
  ``[{"3": [41, 44], ...}, {"3": [60], ...}]`` (difference key -> frame
  indices in the source video); an object keyed by the video
  (``{"0": {...}, "1": {...}}``, or ``a``/``b``) is read the same way;
* the authors' earlier loader: the same map inside each entry of ``videos``
  (``videos[i]["retrieval_frames"]``);
* viddiff's own ``RetrievalFrames`` JSON (``{"stages": ..., "keyframes": ...}``),
  which the synthetic benchmark writes.

A difference annotated in only one of the two videos is left out (the
oracle then falls back for it, as for any unannotated difference). A
value in none of these shapes is ignored and reported, never guessed at.
"""

from __future__ import annotations

import json
from typing import Any, Optional, Sequence

from pydantic import ValidationError

from viddiff.schema import RetrievalFrames

_VIDEO_KEYS = (("0", "1"), ("a", "b"), ("A", "B"))
_OWN_KEYS = {"stages", "keyframes"}


class UnknownFormat(ValueError):
    """The annotation is present but in no shape this module reads; the message says why."""


def parse_retrieval_frames(value: Any, videos: Sequence[Any] = ()) -> Optional[RetrievalFrames]:
    """The keyframe annotations of one row, from its ``retrieval_frames`` value or its ``videos`` entries.

    ``value`` may be a JSON string or already decoded; ``videos`` are the
    row's decoded video entries (dicts). Returns ``None`` when the row
    carries no annotation (an empty value, ``{}`` or ``[]`` is none either);
    raises ``UnknownFormat`` when it carries one that cannot be read.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else None
        except json.JSONDecodeError as exc:
            raise UnknownFormat(f"not valid JSON ({exc.msg} at char {exc.pos})") from None
    if isinstance(value, (dict, list, tuple)) and not value:
        value = None
    if value is not None:
        return _none_if_empty(_from_value(value))
    per_video = [v.get("retrieval_frames") if isinstance(v, dict) else None for v in videos]
    if len(per_video) == 2 and all(m is not None for m in per_video):
        return _none_if_empty(_from_maps(per_video[0], per_video[1], "videos[i].retrieval_frames"))
    return None


def _from_value(value: Any) -> RetrievalFrames:
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise UnknownFormat(f"expected one map per video (A, B), got a list of {len(value)}")
        return _from_maps(value[0], value[1], "retrieval_frames")
    if not isinstance(value, dict):
        raise UnknownFormat(f"expected a list of two maps or an object, got {type(value).__name__}")
    if value and set(value) <= _OWN_KEYS:
        try:
            return RetrievalFrames.model_validate(value)
        except ValidationError as exc:
            raise UnknownFormat(f"not a valid RetrievalFrames object: {exc.errors()[0]['msg']}") from None
    for key_a, key_b in _VIDEO_KEYS:
        if set(value) == {key_a, key_b}:
            return _from_maps(value[key_a], value[key_b], "retrieval_frames")
    raise UnknownFormat(f"an object with keys {sorted(map(str, value))[:5]} is not keyed by video (A, B)")


def _from_maps(map_a: Any, map_b: Any, where: str) -> RetrievalFrames:
    frames_a, frames_b = _frames_by_key(map_a, f"{where} of video A"), _frames_by_key(map_b, f"{where} of video B")
    both = [key for key in frames_a if key in frames_b]
    return RetrievalFrames(keyframes={key: (frames_a[key], frames_b[key]) for key in both})


def _none_if_empty(frames: RetrievalFrames) -> Optional[RetrievalFrames]:
    return None if not frames.keyframes and frames.stages is None else frames


def _frames_by_key(mapping: Any, where: str) -> dict[str, list[int]]:
    """Difference key -> non-empty list of frame indices; a null or empty entry means "not annotated"."""
    if not isinstance(mapping, dict):
        raise UnknownFormat(f"{where}: expected a map of difference key -> frame indices, got {type(mapping).__name__}")
    out: dict[str, list[int]] = {}
    for key, frames in mapping.items():
        if frames is None:
            continue
        indices = [frames] if isinstance(frames, (int, float)) and not isinstance(frames, bool) else frames
        if not isinstance(indices, (list, tuple)):
            raise UnknownFormat(f"{where}[{key!r}]: expected frame indices, got {type(frames).__name__}")
        parsed = [_frame_index(f, f"{where}[{key!r}]") for f in indices]
        if parsed:
            out[str(key)] = parsed
    return out


def _frame_index(value: Any, where: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnknownFormat(f"{where}: frame indices must be integers >= 0, got {value!r}")
    return value
