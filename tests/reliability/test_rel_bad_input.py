"""Bad input to `viddiff compare` and `viddiff run`: one clear error line, non-zero exit, no traceback
(unless --debug), no model call wasted on input that was already known to be wrong, and nothing that an
earlier run wrote is damaged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import viddiff
from viddiff.video import read as video_module
from viddiff.api import MAX_DIFFERENCES
from viddiff.backends.clip import ClipEmbedder
from viddiff.cli import main
from viddiff.config import Config, ProposerConfig, load_config
from viddiff.errors import ViddiffError
from viddiff.testing.fake_openai import FaultPlan

ACTION = ("--action", "barbell back squat")
CHECK = ("--difference", "the squat is deeper")


def _error_line(code: int, err: str) -> str:
    """The single ``viddiff: error:`` line of a failed command (anything else on stderr is progress bars)."""
    assert code == 2
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("viddiff:")]
    assert len(errors) == 1, err
    assert err.rstrip().endswith(errors[0]), "the error must be the last thing printed"
    return errors[0]


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def unreadable(media: dict[str, Path], tmp_path: Path) -> Path:
    """A video that exists but cannot be read: no read permission, or (as root, who reads anything) a symlink loop."""
    if os.geteuid() == 0:
        return media["loop"]
    path = tmp_path / "locked.mp4"
    path.write_bytes(media["ok"].read_bytes())
    path.chmod(0)
    return path


# --------------------------------------------------------------------------- compare: videos


@pytest.mark.parametrize(
    "name, needle",
    [
        ("missing", "no such video file"),
        ("garbage", "not a readable video"),
        ("empty", "not a readable video"),
        ("truncated", "not a readable video"),
        ("zero_frames", "has no frames"),
        ("audio_only", "no video stream"),
    ],
)
def test_compare_bad_video_is_one_line(name, needle, media, fake_server, capsys):
    with fake_server() as (server, sets):
        code = main(["compare", str(media["ok"]), str(media[name]), *ACTION, *CHECK, *sets])
    line = _error_line(code, capsys.readouterr().err)
    assert str(media[name]) in line and needle in line
    assert not server.requests, "a broken video must be refused before any model is paid for"


def test_compare_unreadable_video_is_one_line(unreadable, media, fake_server, capsys):
    with fake_server() as (server, sets):
        code = main(["compare", str(unreadable), str(media["ok"]), *ACTION, *CHECK, *sets])
    line = _error_line(code, capsys.readouterr().err)
    assert str(unreadable) in line
    assert not server.requests


def test_debug_shows_the_traceback(media, fake_server, capsys):
    with fake_server() as (_, sets):
        code = main(["--debug", "compare", str(media["ok"]), str(media["truncated"]), *ACTION, *CHECK, *sets])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" in err and "VideoError" in err
    assert err.rstrip().splitlines()[-1].startswith("viddiff: error:")


# --------------------------------------------------------------------------- compare: odd but valid videos


@pytest.fixture
def offline_cfg(fake_server):
    """A config pointing at a private scripted server; yields (server, config)."""
    with fake_server() as (server, sets):
        yield server, load_config(None, sets[1::2])


def test_huge_video_is_downscaled_before_clip_and_vlm(huge_video, media, offline_cfg, monkeypatch):
    server, cfg = offline_cfg
    max_side = Config().data.max_side
    assert max_side is not None and max_side <= 1920, "the default must bound decoded frames"
    decoded, clip_inputs = [], []
    read = video_module.read_video_ref_sampled  # every read of a sample's video goes through it

    def spy_read(ref, samplings, *args, **kwargs):
        frames = read(ref, samplings, *args, **kwargs)
        decoded.append((ref.path, frames[0]))
        return frames

    embed = ClipEmbedder.embed_images

    def spy_embed(self, frames):
        clip_inputs.extend(np.asarray(f).shape for f in frames)
        return embed(self, frames)

    monkeypatch.setattr(video_module, "read_video_ref_sampled", spy_read)
    monkeypatch.setattr(ClipEmbedder, "embed_images", spy_embed)
    result = viddiff.compare(huge_video, media["ok"], action="squat", differences=["the squat is deeper"], config=cfg)
    assert result.differences[0].prediction in ("a", "b", "c")
    (frames,) = [f for path, f in decoded if Path(path).name == huge_video.name]
    assert frames.size == (1920, 1080)  # 7680x4320 read scaled to fit max_side, aspect kept
    # Memory: the decoded 8K video keeps its 2 frames at CLIP's input size, not 2 UHD ones (~200 MB); the
    # keyframes are decoded again at the size read (the images the differencer got, below).
    assert len(frames.frames) == 2 and frames.frames.nbytes < 2 * 1080 * 1920 * 3
    assert clip_inputs and max(max(shape[:2]) for shape in clip_inputs) <= max_side
    images = [image for request in server.requests for image in request.images]
    assert images and max(max(image.size) for image in images) <= max_side
    assert (1920, 1080) in {image.size for image in images}


def test_one_frame_video_works(media, offline_cfg):
    _, cfg = offline_cfg
    result = viddiff.compare(
        media["one_frame"], media["ok"], action="squat", differences=["the squat is deeper"], config=cfg
    )
    (diff,) = result.differences
    assert diff.prediction in ("a", "b", "c")
    assert diff.keyframes_a and set(diff.keyframes_a) == {0}
    assert diff.keyframes_b and all(0 <= f < 24 for f in diff.keyframes_b)


def test_different_fps_pair_works_and_is_noted(media, offline_cfg):
    _, cfg = offline_cfg
    result = viddiff.compare(media["ok"], media["fps30"], action="squat", n_differences=2, config=cfg)
    assert result.differences and all(d.prediction in ("a", "b", "c", None) for d in result.differences)
    (note,) = [n for n in result.notes if "different frame rates" in n]
    assert "A 12 fps" in note and "B 30 fps" in note
    # Keyframe times are in each video's own seconds: B is 2 s long (at A's 12 fps its 60 frames would span 5 s).
    assert max(t for d in result.differences for t in d.times_b) <= 60 / 30
    same = viddiff.compare(media["ok"], media["ok_b"], action="squat", n_differences=2, config=cfg)
    assert not any("frame rates" in n for n in same.notes)


# --------------------------------------------------------------------------- compare: arguments


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--action", "", *CHECK], "--action is required"),
        (["--action", "squat " * 1000, *CHECK], "characters"),
        ([*ACTION], "give --difference TEXT"),
        ([*ACTION, "--difference", "  "], "difference 0 is empty"),
        ([*ACTION, *[x for i in range(MAX_DIFFERENCES + 1) for x in ("--difference", f"statement {i}")]], "at most 50"),
        ([*ACTION, "--n-differences", str(MAX_DIFFERENCES + 1)], "at most 50"),
        ([*ACTION, "--n-differences", "0"], "at least 1"),
        ([*ACTION, *CHECK, "--n-differences", "2"], "not both"),
    ],
    ids=["empty-action", "long-action", "no-differences", "blank-difference", "too-many", "too-many-open", "zero-open",
         "both-modes"],
)
def test_compare_bad_arguments_cost_nothing(argv, needle, media, fake_server, capsys):
    with fake_server() as (server, sets):
        code = main(["compare", str(media["ok"]), str(media["ok_b"]), *argv, *sets])
    assert needle in _error_line(code, capsys.readouterr().err)
    assert not server.requests


def test_api_limits_differences(media, offline_cfg):
    _, cfg = offline_cfg
    with pytest.raises(ViddiffError, match="at most 50"):
        viddiff.compare(media["ok"], media["ok_b"], action="squat", differences=["x"] * 51, config=cfg)
    with pytest.raises(ViddiffError, match="differences list is empty"):
        viddiff.compare(media["ok"], media["ok_b"], action="squat", differences=[], config=cfg)


# --------------------------------------------------------------------------- compare: endpoints


@pytest.mark.parametrize(
    "fault, needles",
    # the first request is the proposer's, so a 404 names the proposer's model
    [("401", ("OPENAI_API_KEY", "HTTP 401")), ("404", (ProposerConfig().model, "HTTP 404", "http://127.0.0.1:"))],
)
def test_compare_refused_by_endpoint_stops_at_once(fault, needles, media, fake_server, capsys):
    with fake_server(faults=FaultPlan(rate=1.0, kinds=(fault,))) as (server, sets):
        code = main(["compare", str(media["ok"]), str(media["ok_b"]), *ACTION, *CHECK, *sets])
        line = _error_line(code, capsys.readouterr().err)
        assert all(n in line for n in needles), line
        if fault == "404":
            assert server.base_url in line
    # Permanent errors are not retried: the first refusal ends the comparison.
    assert len(server.requests) == 1


def test_compare_missing_key_names_the_env_var(media, fake_server, monkeypatch, capsys):
    with fake_server(extra=("endpoints.default.api_key_env=VIDDIFF_TEST_KEY",)) as (server, sets):
        monkeypatch.delenv("VIDDIFF_TEST_KEY", raising=False)
        code = main(["compare", str(media["ok"]), str(media["ok_b"]), *ACTION, *CHECK, *sets])
    line = _error_line(code, capsys.readouterr().err)
    assert "VIDDIFF_TEST_KEY" in line and "not set" in line
    assert not server.requests


def test_compare_against_a_server_not_started_stops_at_once(media, fake_server, caplog, capsys):
    """The server was stopped: its port on this machine refuses connections. The first refusal ends the
    comparison (it used to be retried six times, about 42 s, before the same error)."""
    with fake_server(extra=("endpoints.backoff_base_s=30", "endpoints.backoff_max_s=30")) as (server, sets):
        pass
    with caplog.at_level("INFO", logger="viddiff.backends.llm"):
        code = main(["compare", str(media["ok"]), str(media["ok_b"]), *ACTION, *CHECK, *sets])
    line = _error_line(code, capsys.readouterr().err)
    assert line.startswith(f"viddiff: error: cannot reach {server.base_url}: nothing is listening there (")
    assert not [r for r in caplog.records if "retry" in r.getMessage()]


# --------------------------------------------------------------------------- run


def _run(dataset: Path, out: Path, sets: list[str], *extra: str) -> int:
    return main(["-q", "run", "--dataset", str(dataset), "--mode", "closed", "--output", str(out), *sets, *extra])


def test_run_bad_videos_fail_only_their_samples(media, dataset_with, fake_server, tmp_path, caplog, capsys):
    dataset = dataset_with({0: (media["truncated"], media["ok"]), 1: (media["ok"], media["audio_only"])})
    out = tmp_path / "run"
    with fake_server() as (_, sets):  # the rows point at videos outside the dataset folder
        assert _run(dataset, out, sets, "--set", "data.allow_paths_outside_root=true") == 1
    assert "Traceback" not in capsys.readouterr().err
    errors = {e["index"]: e["error"] for e in json.loads((out / "errors.json").read_text())}
    assert set(errors) == {0, 1}
    assert "truncated.mp4" in errors[0] and "audio_only.mp4" in errors[1] and "no video stream" in errors[1]
    failures = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(failures) == 2 and all("\n" not in m for m in failures)
    lines = (out / "samples.jsonl").read_bytes().splitlines()
    assert len(lines) == 1
    predictions = json.loads((out / "predictions.json").read_text())
    assert set(predictions[0].values()) == set(predictions[1].values()) == {None}  # failed: null, counted wrong
    assert None not in predictions[2].values()


@pytest.mark.parametrize("fault", ["401", "404"])
def test_run_refused_by_endpoint_writes_no_results(fault, synth_dir, fake_server, tmp_path, capsys):
    out = tmp_path / "run"
    with fake_server(faults=FaultPlan(rate=1.0, kinds=(fault,))) as (server, sets):
        line = _error_line(_run(synth_dir, out, sets), capsys.readouterr().err)
    assert ("OPENAI_API_KEY" if fault == "401" else "not found") in line
    assert not (out / "samples.jsonl").exists() or not (out / "samples.jsonl").read_bytes()
    assert not (out / "predictions.json").exists() and not (out / "metrics.json").exists()
    # The run stopped instead of grinding through every sample: no retries of a permanent refusal.
    assert len(server.requests) <= 3


def test_failed_resume_damages_nothing(synth_dir, fake_server, tmp_path, monkeypatch, capsys):
    """A killed run is resumed with a missing key, then a rejected key; both stop with one clear line,
    leave every byte of the directory as it was, and a later good resume finishes it normally."""
    out = tmp_path / "run"
    with fake_server() as (server, sets):
        assert _run(synth_dir, out, sets) == 0
        reference = json.loads((out / "predictions.json").read_text())
        lines = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
        (out / "samples.jsonl").write_bytes(b"".join(lines[:2]))  # the last sample never got written
        (tmp_path / "cache.sqlite").unlink()  # and nothing is cached: the resume must call the model
        before = _snapshot(out)
        capsys.readouterr()

        with monkeypatch.context() as env:
            env.delenv("OPENAI_API_KEY")
            line = _error_line(_run(synth_dir, out, sets, "--resume"), capsys.readouterr().err)
        assert "OPENAI_API_KEY" in line and "not set" in line
        assert _snapshot(out) == before

        server.faults = FaultPlan(rate=1.0, kinds=("401",))
        line = _error_line(_run(synth_dir, out, sets, "--resume"), capsys.readouterr().err)
        assert "OPENAI_API_KEY" in line and "HTTP 401" in line
        assert _snapshot(out) == before

        server.faults = FaultPlan()
        assert _run(synth_dir, out, sets, "--resume") == 0
    assert json.loads((out / "predictions.json").read_text()) == reference
    assert len((out / "samples.jsonl").read_bytes().splitlines()) == len(reference)


@pytest.mark.parametrize("kind", ["under-a-file", "is-a-file"])
def test_run_unusable_output_path(kind, synth_dir, fake_server, tmp_path, capsys):
    blocker = tmp_path / "results.txt"
    blocker.write_text("my notes\n")
    output = blocker / "sub" if kind == "under-a-file" else blocker
    with fake_server() as (server, sets):
        line = _error_line(_run(synth_dir, output, sets), capsys.readouterr().err)
    assert str(output) in line and "--output" in line
    assert blocker.read_text() == "my notes\n"
    assert not server.requests
