"""Failure records: what errors.json says about a sample, and which errors stop a run."""

from __future__ import annotations

from viddiff.errors import (
    CostLimitError,
    EndpointError,
    InvalidAnswerError,
    ModelLoadError,
    OutputError,
    RequestTooLargeError,
    VideoError,
)
from viddiff.runs.failures import describe_failure, is_fatal
from viddiff.runs.sample_runner import error_entries, latest_failures
from viddiff.schema import StageUsage

USAGE = {"proposer": StageUsage(calls=2, cost_usd=0.01)}


def _describe(exc: BaseException, stage: str = "video"):
    return describe_failure(exc, sample_key="s1", index=1, stage=stage, usage=USAGE)


def test_endpoint_refusal_keeps_status_server_message_and_the_stage_it_came_from():
    exc = EndpointError("rejected (HTTP 400): too long", status=400, server_message="too long", stage="differencer")
    failure = _describe(exc, stage="proposer")
    assert (failure.stage, failure.kind, failure.status, failure.server_message) == ("differencer", "endpoint", 400, "too long")
    assert failure.usage == USAGE


def test_invalid_answers_keep_the_start_of_the_last_answer():
    failure = _describe(InvalidAnswerError("no valid answer", raw="x" * 5000, stage="proposer"))
    assert (failure.kind, failure.stage, len(failure.last_answer)) == ("invalid_answer", "proposer", 500)


def test_the_stage_tracker_names_where_errors_without_a_stage_happened():
    assert (_describe(VideoError("a.mp4: unreadable")).kind, _describe(VideoError("x")).stage) == ("video", "video")
    assert _describe(RequestTooLargeError("too big", stage="proposer")).kind == "input"
    bug = _describe(KeyError("frames"), stage="localizer")
    assert (bug.kind, bug.stage) == ("internal", "localizer")
    assert bug.error.startswith("internal error KeyError: 'frames' (a bug: please report it")


def test_only_errors_every_sample_would_hit_are_fatal():
    assert is_fatal(EndpointError("no key", fatal=True)) and not is_fatal(EndpointError("HTTP 400"))
    assert all(is_fatal(e) for e in (ModelLoadError("x"), OutputError("x"), CostLimitError("x")))
    assert not any(is_fatal(e) for e in (VideoError("x"), InvalidAnswerError("x", raw=""), KeyError("x")))


def test_errors_json_lists_the_last_failure_of_each_unfinished_sample():
    first = _describe(VideoError("old"))
    again = _describe(VideoError("new"))
    other = describe_failure(VideoError("b"), sample_key="s0", index=0, stage="video", usage={})
    done = describe_failure(VideoError("c"), sample_key="s2", index=2, stage="video", usage={})
    kept = latest_failures([first, other, again, done], unfinished={"s0", "s1"})
    assert [(f.sample_key, f.error) for f in kept] == [("s0", "b"), ("s1", "new")]
    assert error_entries(kept)[1] == {"sample_key": "s1", "index": 1, "stage": "video", "kind": "video", "error": "new"}
