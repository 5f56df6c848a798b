"""Estimated API cost per sample of the paper configuration, and what each cost lever changes.

Runs ``viddiff run`` (``configs/paper.yaml``) over the synthetic benchmark against
the local fake server, which reports no token usage; the chat client then
estimates every call's tokens from the request it sent (``viddiff.backends.tokens``:
o200k_base text tokens, OpenAI's image tile rule for the detail and size sent) and
prices them with ``endpoints.prices``. So the numbers are what the same requests
would cost at OpenAI's list prices, not what a real model would answer: answer
lengths come from the scripted model and are short.

The synthetic videos are 160x120; they are upscaled to ``--height`` (default 1080,
i.e. 1440x1080) before the runs so that the paper's full-resolution, high-detail
frames are priced at a realistic size. Each lever is one run per mode with a
fresh cache (every call is made); ratios are against the paper configuration in
the same mode. The paper reports about $0.20 per sample.

Usage: python bench/cost.py [--pairs 6] [--height 1080]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

from viddiff.backends.tokens import completion_tokens, prompt_tokens, tokenizer_description
from viddiff.backends.usage import call_cost
from viddiff.cli import main as viddiff_main
from viddiff.config import ModelPrice, load_config
from viddiff.data.synthetic import write_synthetic_benchmark
from viddiff.testing import offline_overrides
from viddiff.eval.prompts import FlipAnswer, MatchAnswer
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video.write import write_video
from viddiff.video import read_video

PAPER_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "paper.yaml"
PAPER_REPORTED_USD = 0.20
JUDGE_SCHEMAS = {MatchAnswer.__name__, FlipAnswer.__name__}
LEVERS: list[tuple[str, list[str]]] = [
    ("paper configuration", []),
    ("differencer.image.detail=low", ["differencer.image.detail=low"]),
    ("differencer.image.max_side=768", ["differencer.image.max_side=768"]),
    ("differencer.image.max_side=512", ["differencer.image.max_side=512"]),
    ("localizer.n_frames_multi=1 (1 frame per video and difference)", ["localizer.n_frames_multi=1"]),
    ("proposer.reuse_per_action=true", ["proposer.reuse_per_action=true"]),
    ("differencer.model=gpt-4o-2024-08-06 (the later, cheaper snapshot)", ["differencer.model=gpt-4o-2024-08-06"]),
    (
        "max_side=512 + reuse_per_action + gpt-4o-2024-08-06 differencer",
        ["differencer.image.max_side=512", "proposer.reuse_per_action=true", "differencer.model=gpt-4o-2024-08-06"],
    ),
]


def upscale_dataset(src: Path, dst: Path, height: int) -> None:
    """Copy a synthetic benchmark with every video resized to ``height`` rows (same frames, fps and trims)."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("videos"))
    for row in map(json.loads, (src / "dataset.jsonl").read_text().splitlines()):
        for video in json.loads(row["videos"]):
            source = read_video(src / video["path"], fps_original=video["fps_original"])
            width = round(source.frames.shape[2] * height / source.frames.shape[1] / 2) * 2
            frames = (np.asarray(Image.fromarray(f).resize((width, height), Image.BICUBIC)) for f in source.frames)
            target = dst / video["path"]
            if (src / video["path"]).is_dir():
                target.mkdir(parents=True, exist_ok=True)
                for i, frame in enumerate(frames):
                    Image.fromarray(frame).save(target / f"{i:05d}.png", compress_level=1)
            else:
                write_video(target, frames, video["fps_original"], options={"crf": "18", "preset": "veryfast"})


def run_cost(dataset: Path, out: Path, server: FakeOpenAIServer, mode: str, extra: list[str]) -> tuple[dict, float]:
    """One fresh-cache run; returns (usage.json, the evaluation judge's total $, 0 in closed mode)."""
    sets = [*offline_overrides(server.base_url, str(out / "cache.sqlite")), *extra]
    args = ["-q", "run", "--config", str(PAPER_CONFIG), "--dataset", str(dataset), "--mode", mode,
            "--output", str(out / "run")]
    for item in sets:
        args += ["--set", item]
    server.reset_log()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = viddiff_main(args)
    if code != 0:
        raise SystemExit(f"run failed with exit code {code}: {' '.join(args)}")
    usage = json.loads((out / "run" / "usage.json").read_text())
    return usage, judge_cost(server.requests, load_config(PAPER_CONFIG, sets).endpoints.prices)


def judge_cost(requests: list[ChatRequest], prices: dict[str, ModelPrice]) -> float:
    """$ of the open-mode judge's requests (run files record only the method's usage), estimated the same way:
    tokens of each request as the server received it and of the answer the scripted model gives to it."""
    total = 0.0
    for request in requests:
        if ScriptedModel().kind(request) in JUDGE_SCHEMAS:  # paper.yaml asks json_object: told by wording
            answer = ScriptedModel()(request)
            cost = call_cost(prices, request.model, prompt_tokens(request.model, request.messages),
                             completion_tokens(request.model, answer))
            total += cost or 0.0
    return total


def per_sample(by_stage: dict, n_samples: int) -> tuple[float, dict[str, float], int, int]:
    """(total $, $ by stage, calls, calls whose tokens were estimated) per sample."""
    costs = {stage: (u["cost_usd"] or 0.0) / n_samples for stage, u in by_stage.items()}
    calls = sum(u["calls"] for u in by_stage.values())
    estimated = sum(u.get("estimated_calls", 0) for u in by_stage.values())
    return sum(costs.values()), costs, calls, estimated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--height", type=int, default=1080, help="video height the synthetic frames are scaled to")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "dummy")

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(ScriptedModel(), report_usage=False) as server:
        root = Path(tmp)
        write_synthetic_benchmark(root / "small", pairs=args.pairs, seed=0)
        upscale_dataset(root / "small", root / "data", args.height)
        n_samples = sum(1 for _ in (root / "data" / "dataset.jsonl").read_text().splitlines())
        print(f"synthetic benchmark: {n_samples} samples, videos upscaled to {args.height} px high; "
              f"text tokens: {tokenizer_description('gpt-4o-2024-08-06')}; paper reports ~${PAPER_REPORTED_USD:.2f}/sample\n")

        print(f"{'lever (one run per mode, fresh cache)':<62} {'closed $/sample':>16} {'open $/sample':>14}")
        baseline: dict[str, float] = {}
        paper: dict[str, tuple[dict, float]] = {}
        for index, (label, sets) in enumerate(LEVERS):
            cells = []
            for mode in ("closed", "open"):
                usage, judge = run_cost(root / "data", root / f"lever-{index}-{mode}", server, mode, sets)
                if index == 0:
                    paper[mode] = (usage, judge)
                cost = per_sample(usage["by_stage"], n_samples)[0]
                baseline.setdefault(mode, cost)
                cells.append(f"{cost:.4f} ({cost / baseline[mode]:.2f}x)")
            print(f"{label:<62} {cells[0]:>16} {cells[1]:>14}", flush=True)

        for mode, (usage, judge) in paper.items():
            total, by_stage, calls, estimated = per_sample(usage["by_stage"], n_samples)
            print(f"\npaper configuration, {mode} mode: ${total:.4f} per sample, {calls / n_samples:.1f} calls per "
                  f"sample ({estimated} of {calls} calls with tokens estimated from the request)")
            for stage, u in sorted(usage["by_stage"].items()):
                print(f"  {stage:<12} ${by_stage[stage]:.4f}  {u['calls'] / n_samples:>5.1f} calls  "
                      f"{u['images'] / n_samples:>5.1f} images  {u['prompt_tokens'] / n_samples:>7.0f} in / "
                      f"{u['completion_tokens'] / n_samples:.0f} out tokens per sample")
            if judge:
                print(f"  + the evaluation's judge (match and flip calls): ${judge / n_samples:.4f} per sample")


if __name__ == "__main__":
    main()
