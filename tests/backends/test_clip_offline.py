"""Offline with a valid key: CLIP weights that are not cached and a Hugging Face hub that cannot be reached fail at
once with one line saying what to do, and each warning is printed once, however many samples are in flight.
Real processes; the hub is a refused port on this machine (HF_ENDPOINT), the model a local scripted server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HUB = "http://127.0.0.1:1"
"""Nothing listens on port 1: a refused connection, which huggingface_hub retries five times per file."""

def _weights(model: str, tag: str) -> list[str]:
    """``--set`` values for real pretrained weights (after the offline ones, which set tiny random ones)."""
    return [f"localizer.clip.model={model}", "localizer.clip.arch_config=null", f"localizer.clip.pretrained={tag}"]


def _sets(items: list[str]) -> list[str]:
    return [arg for item in items for arg in ("--set", item)]


def _offline_env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HF_ENDPOINT": HUB, "HF_HOME": str(tmp_path / "hf-home"), "OPENAI_API_KEY": "sk-valid"}


def _assert_one_clear_error(stderr: str) -> None:
    assert "Retrying" not in stderr and "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, stderr
    assert errors[0].startswith("viddiff: error: cannot download the CLIP weights ViT-bigG-14 / laion2b_s39b_b160k")
    assert f"could not reach the Hugging Face hub at {HUB} (the connection was refused" in errors[0]
    assert "localizer.clip.checkpoint=DIR/open_clip_pytorch_model.bin" in errors[0]


def test_compare_fails_at_once_in_one_line(synth_dir: Path, offline_sets: list[str], tmp_path: Path) -> None:
    videos = synth_dir / "videos"
    proc = subprocess.run(
        [sys.executable, "-m", "viddiff.cli", "compare", str(videos / "pair_0001_a.mp4"), str(videos / "pair_0001_b.mp4"),
         "--action", "squat", "--difference", "the squat is deeper", *offline_sets,
         *_sets(_weights("ViT-B-32", "laion2b_s34b_b79k"))],
        capture_output=True, text=True, timeout=300, env=_offline_env(tmp_path),
    )
    assert proc.returncode == 2
    assert "Retrying" not in proc.stderr and len(proc.stderr.splitlines()) <= 2, proc.stderr  # the fps note, the error
    assert "cannot download the CLIP weights ViT-B-32 / laion2b_s34b_b79k: could not reach the Hugging Face hub" in proc.stderr


@pytest.mark.slow
def test_a_run_with_samples_in_flight_warns_once_and_fails_once(
    synth_dir: Path, offline_sets: list[str], tmp_path: Path
) -> None:
    """Three samples ask for CLIP from three threads: one CPU warning, one load attempt, one error (it was a warning
    per thread and a new round of download retries for each sample that waited)."""
    proc = subprocess.run(
        [sys.executable, "-m", "viddiff.cli", "run", "--dataset", str(synth_dir), "--mode", "closed",
         "--output", str(tmp_path / "run"), *offline_sets,
         *_sets([*_weights("ViT-bigG-14", "laion2b_s39b_b160k"), "localizer.clip.threads=1"])],
        capture_output=True, text=True, timeout=300, env=_offline_env(tmp_path),
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("CLIP ViT-bigG-14 on the CPU") == 1, proc.stderr
    assert "with 1 thread," in proc.stderr and "--config cpu-balanced" in proc.stderr
    _assert_one_clear_error(proc.stderr)
