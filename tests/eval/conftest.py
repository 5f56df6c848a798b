"""Fixtures for the evaluation tests: samples built directly from the schema."""

from __future__ import annotations

from typing import Callable, Optional

import pytest

from viddiff.schema import Difference, Sample, VideoRef

SampleFactory = Callable[..., Sample]


def build_sample(
    sample_key: str,
    labels: dict[str, Optional[str]],
    *,
    split: str = "easy",
    action: str = "fitness_0",
    action_name: str = "squat",
    n_open: Optional[int] = None,
    descriptions: Optional[dict[str, str]] = None,
) -> Sample:
    """A sample whose differences are exactly ``labels``' keys (descriptions default to 'difference K of ACTION')."""
    descriptions = descriptions or {}
    diffs = {
        k: Difference(key=k, name=f"diff{k}", description=descriptions.get(k, f"difference {k} of {action}"))
        for k in labels
    }
    return Sample(
        sample_key=sample_key,
        action=action,
        action_name=action_name,
        action_description=f"a person performs a {action_name}",
        split=split,
        domain="fitness",
        videos=(VideoRef(path="a.mp4"), VideoRef(path="b.mp4")),
        differences=diffs,
        labels=labels,
        n_differences_open=n_open if n_open is not None else len(labels),
    )


@pytest.fixture
def make_sample() -> SampleFactory:
    return build_sample
