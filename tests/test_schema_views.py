"""A performance filmed by several calibrated cameras (``VideoRef.views``), and one-view references unchanged.

The golden strings and hashes below were printed by the code before ``views`` existed: a one-view reference,
and a sample made of them, must serialise to the same bytes and hash to the same cache keys as then.
"""

from __future__ import annotations

import pydantic
import pytest

from viddiff.cache import hash_key
from viddiff.schema import Sample, VideoRef

_ONE_VIEW_JSON = '{"path":"/v/a.mp4","fps_original":30.0,"frames_trim":[3,null]}'
_ONE_VIEW_HASH = "a4560aba7c4577cd6593c4a6d32bc4ceb694f39739169bf745b45015a4f48ef2"
_SAMPLE_JSON = (
    '{"sample_key":"k","action":"x","action_name":"x","action_description":"x","split":"easy","domain":"fitness",'
    '"source_dataset":"","videos":[{"path":"/v/a.mp4","fps_original":30.0,"frames_trim":[3,null]},'
    '{"path":"b.mp4","fps_original":null,"frames_trim":null}],"differences":{},"labels":{},"n_differences_open":0,'
    '"retrieval_frames":null,"sample_hash":null,"task":null}'
)
_SAMPLE_HASH = "bad820c1a9bd215e91d1cd24606c99990481b57d2896ba71a3861e31bc911f1a"


def _one_view_sample() -> Sample:
    return Sample(
        sample_key="k", action="x", action_name="x", action_description="x", split="easy", domain="fitness",
        videos=(VideoRef(path="/v/a.mp4", fps_original=30.0, frames_trim=(3, None)), VideoRef(path="b.mp4")),
    )


def test_one_view_reference_serialises_and_hashes_as_before():
    ref = VideoRef(path="/v/a.mp4", fps_original=30.0, frames_trim=(3, None))
    assert ref.model_dump_json() == _ONE_VIEW_JSON
    assert set(ref.model_dump()) == {"path", "fps_original", "frames_trim"}
    assert hash_key(ref.model_dump(mode="json")) == _ONE_VIEW_HASH
    assert VideoRef.model_validate_json(_ONE_VIEW_JSON) == ref


def test_one_view_sample_serialises_and_hashes_as_before():
    sample = _one_view_sample()
    assert sample.model_dump_json() == _SAMPLE_JSON
    assert hash_key(sample.model_dump(mode="json")) == _SAMPLE_HASH
    assert Sample.model_validate_json(_SAMPLE_JSON) == sample


def test_two_view_reference_round_trips_with_its_views_and_calibration():
    ref = VideoRef(
        path="front.mp4", frames_trim=(0, 90),
        views=(VideoRef(path="side.mp4", frames_trim=(0, 90)),), calibration="setup.toml",
    )
    data = ref.model_dump(mode="json")
    assert data["views"] == [{"path": "side.mp4", "fps_original": None, "frames_trim": [0, 90]}]
    assert data["calibration"] == "setup.toml"
    assert VideoRef.model_validate_json(ref.model_dump_json()) == ref
    assert hash_key(data) != hash_key(VideoRef(path="front.mp4", frames_trim=(0, 90)).model_dump(mode="json"))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"views": [{"path": "side.mp4"}]}, "no calibration"),
        ({"calibration": "setup.toml"}, "a calibration for front.mp4 alone"),
        (
            {"views": [{"path": "side.mp4", "views": [{"path": "x.mp4"}], "calibration": "c.toml"}],
             "calibration": "setup.toml"},
            "views or a calibration of its own",
        ),
    ],
)
def test_views_and_calibration_come_together(fields, message):
    with pytest.raises(pydantic.ValidationError, match=message):
        VideoRef(path="front.mp4", **fields)
