"""Can a coach take the pose evidence at face value? The trust benchmark on real video (issue 30, docs/pose.md).

Everything runs through the public path at the project's default settings: the ``pose`` method (proposer →
localizer → mapping → measurement → verdict) on a one-off sample built as ``viddiff.compare`` builds it, with a
local scripted OpenAI-compatible server answering the proposer (3 stages) and mapping each statement to a fixed
measurement (the seven angle/width statements below, and two tempo statements). Each pair is run twice: with
equal-length stages (``localizer.method=uniform``) and with the localizer's own stages (its default method, on
random-weight CLIP: the stages are real Viterbi output, not a trained model's).

It reports:

- false differences: a/b answers to angle/width statements on identical-movement pairs (a clip against each copy
  of viddiff/testing/clip_variants.py: re-encode, half size, pad, rotation metadata both ways, slow motion CFR and
  VFR, time-reversed, mirrored; on the mirrored pair the one-sided statement is asked of both sides, since a
  mirror exchanges the person's sides). Target: at most 5%;
- different views of one take (all pairs of the four synchronised cameras): a/b should never happen; not
  comparable or within noise is right;
- tempo on the slowed copies: the duration ratio read (target 1.5 ± 2%) and the "slower"/"faster" verdicts;
- people: detection, the frames without the measured person by reason, people seen, who was measured, identity
  gaps and abrupt jumps of the measured body, on the four cameras of the two-person take (the athlete on the force
  plates is the target in each), the Sports2D demo and a wide frame of two 884x498 halves side by side
  (1768x498, target: the measured person in 80% of frames), as a share of all frames and of the frames the
  person is in the picture (checked by eye, ``IN_VIEW_S``), the frames missed in view and out of view by reason;
- cost: pose milliseconds per frame, pose frames per video at the defaults, seconds per comparison.

Clips: the Pose2Sim (BSD-3) and Sports2D (BSD-3) demo videos, unpacked from their PyPI wheels into --clips-dir
(see bench/pose_noise.py). Pose results, copies and CLIP embeddings are cached under --work.

Usage: python bench/pose_trust.py [--clips-dir DIR] [--quick] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import os
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from viddiff.api import build_sample
from viddiff.cache import Cache
from viddiff.config import Config, PoseConfig, load_config
from viddiff.methods import get_method
from viddiff.pose.estimators import build_pose_estimator
from viddiff.pose.people import describe_subject
from viddiff.pose.sampling import pose_rate
from viddiff.pose.track import estimate_track
from viddiff.schema import SampleResult
from viddiff.testing import offline_overrides
from viddiff.testing.clip_variants import VARIANTS, build_variant, resized_copy, side_by_side
from viddiff.testing.fake_openai import ChatRequest, FakeOpenAIServer
from viddiff.testing.responders import ScriptedModel
from viddiff.video import read_video

ROOT = Path(__file__).resolve().parents[1]
ACTION = "a person moving in a motion-capture lab"
ANGLE_STATEMENTS: dict[str, dict] = {
    "the knees bend more": {"quantity": "knee_angle", "statistic": "min", "direction": "smaller", "side": "both"},
    "the knees are straighter": {"quantity": "knee_angle", "statistic": "mean", "direction": "greater", "side": "both"},
    "the right arm is straighter": {"quantity": "elbow_angle", "statistic": "mean", "direction": "greater", "side": "right"},
    "the person leans further": {"quantity": "trunk_lean", "statistic": "max", "direction": "greater", "side": "none"},
    "the hips fold more": {"quantity": "hip_angle", "statistic": "min", "direction": "smaller", "side": "both"},
    "the stance is wider": {"quantity": "stance_width", "statistic": "mean", "direction": "greater", "side": "none"},
    "the hands are further apart": {"quantity": "grip_width", "statistic": "mean", "direction": "greater", "side": "none"},
}
"""The seven angle/width statements (whole action), mapped to fixed measurements."""
MIRROR_SAFE = {"the right arm is straighter": "the arms are straighter"}
"""On a mirrored copy the person's right is labelled left: a one-sided statement is asked of both sides."""
TEMPO_STATEMENTS: dict[str, dict] = {
    "the person is slower": {"quantity": "duration", "statistic": "mean", "direction": "greater", "side": "none"},
    "the person is faster": {"quantity": "duration", "statistic": "mean", "direction": "smaller", "side": "none"},
}
SPECS = {
    **ANGLE_STATEMENTS,
    "the arms are straighter": {**ANGLE_STATEMENTS["the right arm is straighter"], "side": "both"},
    **TEMPO_STATEMENTS,
}
STAGE_SUFFIX = " in stage 1"
"""The same statements over the middle of the three stages (which a reversed copy also has in the middle)."""
STAGE_MODES = {"equal stages": ["localizer.method=uniform"], "localizer stages": []}

SINGLE = [f"Pose2Sim/Demo_SinglePerson/videos/cam0{i}.mp4" for i in range(1, 5)]
MULTI = [f"Pose2Sim/Demo_MultiPerson/videos/cam0{i}.mp4" for i in range(1, 5)]
CROWD = "Sports2D/Demo/demo.mp4"
IN_VIEW_S: dict[str, tuple[float, float]] = {
    MULTI[0]: (0.0, float("inf")), MULTI[1]: (0.0, float("inf")), MULTI[2]: (0.0, float("inf")),
    MULTI[3]: (0.0, float("inf")), CROWD: (36.5 / 30, 198.5 / 30),
}
"""When the person the target names is in the picture, checked by eye on contact sheets of the frames: the athlete
of the two-person take in all 100 frames of each camera (on cam01 partly behind the bystander, head, shoulders and
legs visible); the walker of the Sports2D demo (30 fps) from frame 37, when half her body has come out from behind
the tree, to frame 198, when half of it is left at the frame's left edge (frame 196 shows all of her). The copies
of the demo (half size, side by side) keep its frames and times."""


def _noise_module():
    spec = importlib.util.spec_from_file_location("bench_pose_noise", ROOT / "bench" / "pose_noise.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


class FixedMapping(ScriptedModel):
    """The scripted server, with every statement mapped to its fixed measurement from :data:`SPECS` (the stage
    it names, else the whole action)."""

    def _answer_PoseMeasurementsAnswer(self, req: ChatRequest) -> dict:
        plan = req.text.split("Its stages, in order:", 1)[1].split("\n\n", 1)[0]
        stages = re.findall(r"^(\d+)\. ([^:\n]+)", plan, re.M)
        block = req.text.split("Differences (id: statement):", 1)[1].split("\n\nAnswer as JSON", 1)[0]
        items = []
        for key, statement in re.findall(r"^(\S+): (.*)$", block.strip(), flags=re.M):
            base = statement.removesuffix(STAGE_SUFFIX)
            spec = SPECS.get(base)
            if spec is None:
                items.append({"id": key, "measurable": False})
                continue
            stage = next((int(n) for n, name in stages if statement.endswith(f"in {name}")), None)
            items.append({"id": key, "measurable": True, "body_part": None, **spec, "stage": stage})
        return {"differences": items}


# --------------------------------------------------------------------------- running pairs


@dataclass
class Outcome:
    """Per statement: the verdict letter (None = no answer) and the evidence behind it."""

    letters: dict[str, Optional[str]]
    status: dict[str, str]
    values: dict[str, tuple[Optional[float], Optional[float]]]
    frames: list[int]
    subjects: list
    seconds: float


async def run_pair(method, a: Path, b: Path, statements: list[str]) -> Outcome:
    """One comparison of ``a`` with ``b`` through ``method`` (a ``pose`` method instance, reused across pairs so
    its models load once), with the verdict and evidence of every statement."""
    sample, mode = build_sample(a, b, ACTION, differences=statements)
    start = time.perf_counter()
    result: SampleResult = await method.aprocess(sample, mode)
    seconds = time.perf_counter() - start
    evidence = {e.key: e for e in result.evidence}
    letters, status, values, frames, subjects = {}, {}, {}, [], []
    for p in result.predictions:
        e = evidence.get(p.key)
        letters[p.description] = p.prediction
        status[p.description] = "no measurement" if e is None else e.status
        values[p.description] = (None, None) if e is None else (e.value_a, e.value_b)
        if e is not None and e.estimator is not None:
            frames += [len(e.frames_a), len(e.frames_b)]
            subjects += [getattr(e, "subject_a", None), getattr(e, "subject_b", None)]
    return Outcome(letters, status, values, frames, subjects, seconds)


def angle_statements(mirrored: bool) -> list[str]:
    base = [MIRROR_SAFE.get(s, s) if mirrored else s for s in ANGLE_STATEMENTS]
    return base + [s + STAGE_SUFFIX for s in base]


@dataclass
class Tally:
    """Answers to angle/width statements: how many a/b, c, and without an answer (by evidence status)."""

    counts: Counter = field(default_factory=Counter)

    def add(self, outcome: Outcome, statements: list[str]) -> None:
        for s in statements:
            letter = outcome.letters[s]
            self.counts["a/b" if letter in ("a", "b") else "c" if letter == "c" else f"none: {outcome.status[s]}"] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def shown(self, key: str) -> str:
        return f"{self.counts[key]}/{self.total}" if self.total else "–"

    def others(self) -> str:
        parts = [f"{k.removeprefix('none: ')} {v}" for k, v in sorted(self.counts.items()) if k.startswith("none")]
        return ", ".join(parts) or "0"


# --------------------------------------------------------------------------- people


def jumps(xy: np.ndarray) -> int:
    """Frames where the body's hip centre moves more than one torso length, or its torso length changes by more
    than half, from the previous frame that has one: another body, not motion."""
    from viddiff.pose.kinematics import torso_length
    from viddiff.pose.skeleton import INDEX

    hips = (xy[:, INDEX["left_hip"]] + xy[:, INDEX["right_hip"]]) / 2
    shoulders = (xy[:, INDEX["left_shoulder"]] + xy[:, INDEX["right_shoulder"]]) / 2
    torso = np.linalg.norm(shoulders - hips, axis=-1)
    scale = torso_length(xy)
    seen = np.flatnonzero(np.isfinite(hips).all(axis=1) & np.isfinite(torso))
    count = 0
    for prev, cur in zip(seen[:-1], seen[1:]):
        moved = np.linalg.norm(hips[cur] - hips[prev]) / scale
        ratio = max(torso[cur], torso[prev]) / max(min(torso[cur], torso[prev]), 1e-9)
        count += int(moved > 1.0 or ratio > 1.5)
    return count


def people_counts(people) -> np.ndarray:
    """People per frame from a track's ``people``: counts per frame, or one sequence of people per frame."""
    if isinstance(people, np.ndarray) and people.ndim == 1 and people.dtype.kind in "iu":
        return people
    return np.array([len(p) if hasattr(p, "__len__") else int(p) for p in people], dtype=np.int64)


def people_row(
    label: str, path: Path, estimator, cache: Cache, in_view_s: tuple[float, float], pose: Optional[PoseConfig] = None
) -> list[str]:
    """One clip's row: the measured person found, as a share of all frames and of the frames they are in view
    (``in_view_s``, by eye), and the frames without them by reason, in view and out of it. Every frame at the
    size of the file; with ``pose``, at the rate and size the pose evidence reads it at (:func:`pose_rate`,
    ``pose.max_side``)."""
    video = read_video(path)
    if pose is not None:
        rate = pose_rate(len(video.frames), video.fps_original, pose.fps, pose.native_up_to_frames)
        video = read_video(path, target_fps=rate, max_side=pose.max_side)
    track = estimate_track(video, estimator, cache)
    detected = track.detected
    people = getattr(track, "people", None)
    subject = track.subject
    seen = "not reported by this version"
    if people is not None:
        counts = people_counts(people)
        seen = f"max {int(np.max(counts))}, ≥2 in {int(np.sum(counts >= 2))} frames" if len(counts) else "0"
    who = describe_subject(subject) + (f" (hips at x = {subject.position[0]:.2f})" if subject.position else "")
    times = np.asarray(video.times_s, dtype=np.float64)
    in_view = (times >= in_view_s[0]) & (times <= in_view_s[1])
    reasons = frame_reasons(video, estimator, cache)
    span = np.flatnonzero(in_view)
    shown = "all" if in_view.all() else f"{len(span)} (frames {span[0]}–{span[-1]})" if len(span) else "none"
    return [label, f"{video.frames.shape[2]}x{video.frames.shape[1]}", str(len(detected)), shown,
            f"{int(detected.sum())} ({detected.mean():.0%})",
            f"{int(detected[in_view].sum())} ({detected[in_view].mean():.0%})" if len(span) else "–",
            by_reason([r for r, v in zip(reasons, in_view) if v and r]),
            by_reason([r for r, v in zip(reasons, in_view) if not v and r]),
            found_between(detected), seen, who, str(jumps(track.xy))]


def frame_reasons(video, estimator, cache: Cache) -> list[str]:
    """Each frame's reason the measured person is missing (``""`` where measured), as ``viddiff pose`` counts them
    (:mod:`viddiff.pose.absence`), from the cached people."""
    from viddiff.pose.absence import absence_reasons
    from viddiff.pose.people import choose_subject
    from viddiff.pose.track import estimate_people

    people = estimate_people(video, estimator, cache)
    times = np.asarray(video.times_s, dtype=np.float64)
    chosen = choose_subject(people, times, video.frames.shape[2], video.frames.shape[1])
    return absence_reasons(chosen, people, times)


def by_reason(reasons: list[str]) -> str:
    """"5: 2 before they were first found, 3 after they were last found"."""
    from viddiff.pose.absence import REASONS, absence_counts

    if not reasons:
        return "none"
    return f"{len(reasons)}: " + ", ".join(f"{n} {REASONS[key]}" for key, n in absence_counts(reasons).items())


def found_between(detected: np.ndarray) -> str:
    """Frames the measured person was found in, from the first frame they were found in to the last."""
    seen = np.flatnonzero(detected)
    span = detected[seen[0]: seen[-1] + 1] if len(seen) else detected[:0]
    return f"{int(span.sum())} of {len(span)}"


def subject_summary(outcomes: list[Outcome]) -> str:
    infos = [s for o in outcomes for s in o.subjects]
    if not infos or all(s is None for s in infos):
        return "not reported by this version"
    known = [s for s in infos if s is not None]
    others = sum(1 for s in known if s.people_max >= 2)
    gaps = sum(s.identity_gaps for s in known)
    return f"a second person reported in {others}/{len(known)} videos; {gaps} identity-gap frames"


# --------------------------------------------------------------------------- the run


def config(server: FakeOpenAIServer, cache: Path, extra: list[str]) -> Config:
    return load_config(None, offline_overrides(server.base_url, str(cache)) + extra)


def main() -> None:
    noise = _noise_module()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clips-dir", type=Path, default=noise.DEFAULT_CLIPS_DIR)
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "viddiff-bench" / "pose_trust")
    parser.add_argument("--quick", action="store_true", help="two clips, four copies, equal stages only for views")
    parser.add_argument("--markdown", type=Path, help="also write the tables to this Markdown file")
    parser.add_argument("--set", dest="sets", action="append", default=[], help="extra config overrides, e.g. pose.fps=15")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("OPENAI_API_KEY", "dummy")
    os.environ.setdefault("GLOG_minloglevel", "2")
    clips = Clips(
        singles=noise.require_clips(args.clips_dir, SINGLE[:2] if args.quick else SINGLE),
        multis=noise.require_clips(args.clips_dir, MULTI[:2] if args.quick else MULTI),
        crowd=noise.require_clips(args.clips_dir, [CROWD])[0],
        people=noise.require_clips(args.clips_dir, MULTI),
        root=args.clips_dir,
    )
    variants = ("reencode", "rotate90", "slow_vfr", "mirrored") if args.quick else VARIANTS
    (args.work / "variants").mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with FakeOpenAIServer(FixedMapping()) as server:
        cfgs = {mode: config(server, args.work / "trust.sqlite", extra + args.sets) for mode, extra in STAGE_MODES.items()}
        lines = asyncio.run(measure_all(cfgs, clips, variants, args.work, args.quick, started))
    lines.append(f"\nWhole run: {time.perf_counter() - started:.0f} s.")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")


@dataclass
class Clips:
    singles: list[Path]
    multis: list[Path]
    crowd: Path
    people: list[Path]
    """All four cameras of the two-person take, even with --quick (the subject rule is checked on each)."""
    root: Path


async def measure_all(
    cfgs: dict[str, Config], clips: Clips, variants, work: Path, quick: bool, started: float
) -> list[str]:
    methods = {mode: get_method("pose")(cfg) for mode, cfg in cfgs.items()}
    try:
        pose_cfg = cfgs["equal stages"].pose
        lines = [f"Defaults under test: pose.fps={pose_cfg.fps}, data fps {cfgs['equal stages'].data.default_fps:g}, "
                 f"margins {pose_cfg.margins.model_dump()}", ""]
        outcomes: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
        tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
        tempo: dict[tuple[str, str], list[tuple[float, bool, bool]]] = defaultdict(list)
        for clip in clips.singles:
            for name in variants:
                variant = build_variant(clip, name, work / "variants", reuse=True)
                statements = angle_statements(variant.mirrored)
                tempo_part = list(TEMPO_STATEMENTS) if variant.time_scale != 1.0 else []
                for mode, method in methods.items():
                    outcome = await run_pair(method, clip, variant.path, statements + tempo_part)
                    outcomes[(name, mode)].append(outcome)
                    tallies[(name, mode)].add(outcome, statements)
                    if tempo_part:
                        a, b = outcome.values["the person is slower"]
                        ratio = b / a if a and b else float("nan")
                        tempo[(name, mode)].append((ratio, outcome.letters["the person is slower"] == "b",
                                                    outcome.letters["the person is faster"] == "a"))
            elapsed = time.perf_counter() - started
            print(f"{clip.relative_to(clips.root)}: {len(variants)} copies ({elapsed:.0f} s)", flush=True)
        lines += false_difference_table(tallies, variants)
        view_tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)
        view_outcomes: list[Outcome] = []
        for take, views in (("single person", clips.singles), ("two people", clips.multis)):
            for i, first in enumerate(views):
                for second in views[i + 1:]:
                    for mode, method in methods.items():
                        if quick and mode != "equal stages":
                            continue
                        statements = angle_statements(False)
                        outcome = await run_pair(method, first, second, statements)
                        view_tallies[(take, mode)].add(outcome, statements)
                        if take == "two people":
                            view_outcomes.append(outcome)
            print(f"views of the {take} take ({time.perf_counter() - started:.0f} s)", flush=True)
        lines += views_table(view_tallies)
        lines += tempo_table(tempo)
    finally:
        for method in methods.values():
            await method.aclose()
    pose = cfgs["equal stages"].pose  # the defaults, with --set's overrides
    estimator = build_pose_estimator(pose)
    cache = Cache(work / "people.sqlite")
    wide = side_by_side(clips.crowd, clips.crowd, work / "variants" / "wide_1768x498.mp4")
    half = resized_copy(clips.crowd, work / "variants" / "half_884x498.mp4", 884, 498)
    rows = [people_row(str(p.relative_to(clips.root)), p, estimator, cache, IN_VIEW_S[str(p.relative_to(clips.root))])
            for p in (*clips.people, clips.crowd)]
    rows += [people_row("Sports2D demo at 884x498", half, estimator, cache, IN_VIEW_S[CROWD]),
             people_row("two 884x498 halves side by side", wide, estimator, cache, IN_VIEW_S[CROWD])]
    rows += [people_row(f"{'Sports2D demo' if p == clips.crowd else 'two-person take ' + p.stem}, as the pose evidence "
                        "reads it", p, estimator, cache, IN_VIEW_S[str(p.relative_to(clips.root))], pose)
             for p in (*clips.people, clips.crowd)]
    rows.append(people_row("the two halves side by side, as the pose evidence reads it", wide, estimator, cache,
                           IN_VIEW_S[CROWD], pose))
    lines += people_table(rows, subject_summary(view_outcomes))
    lines += cost_table(clips.singles[0], estimator, outcomes)
    return lines


def false_difference_table(tallies, variants) -> list[str]:
    out = ["### Identical movement: a/b answers to 14 angle/width statements per pair (7 whole-action, 7 in the "
           "middle stage); target ≤ 5%", "",
           "| copy | equal stages: a/b | c | no answer | localizer stages: a/b | c | no answer |",
           "|---|---|---|---|---|---|---|"]
    totals = {mode: Tally() for mode in STAGE_MODES}
    for name in variants:
        cells = []
        for mode in STAGE_MODES:
            t = tallies[(name, mode)]
            totals[mode].counts.update(t.counts)
            cells += [t.shown("a/b"), t.shown("c"), t.others()]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = []
    for mode in STAGE_MODES:
        t = totals[mode]
        cells += [f"**{t.counts['a/b']}/{t.total} ({t.counts['a/b'] / max(t.total, 1):.0%})**", t.shown("c"), t.others()]
    out.append("| all | " + " | ".join(cells) + " |")
    return out + [""]


def views_table(tallies) -> list[str]:
    out = ["### Different views of one take (all camera pairs): a/b is wrong; not comparable or c is right", "",
           "| take | stages | statements | a/b | c | no answer (status) |", "|---|---|---|---|---|---|"]
    for (take, mode), t in sorted(tallies.items()):
        out.append(f"| {take} | {mode} | {t.total} | {t.shown('a/b')} | {t.shown('c')} | {t.others()} |")
    return out + [""]


def tempo_table(tempo) -> list[str]:
    out = ["### Tempo: a 1.5x slowed copy (B) against its source (A): duration ratio B/A read (target 1.5 ± 2%), "
           "\"slower\" answered b, \"faster\" answered a", "",
             "| copy | stages | ratio read (mean; worst) | \"slower\" right | \"faster\" right |",
           "|---|---|---|---|---|"]
    for (name, mode), rows in sorted(tempo.items()):
        ratios = np.array([r for r, _, _ in rows])
        worst = ratios[np.nanargmax(np.abs(ratios - 1.5))] if np.isfinite(ratios).any() else float("nan")
        out.append(f"| {name} | {mode} | {np.nanmean(ratios):.3f}; {worst:.3f} | {sum(s for _, s, _ in rows)}/{len(rows)} "
                   f"| {sum(f for _, _, f in rows)}/{len(rows)} |")
    return out + [""]


def people_table(rows, subjects: str) -> list[str]:
    out = ["### People: every frame at the native rate and full size, then as the pose evidence reads each clip (its rate "
           "and `pose.max_side`), default estimator (target: the measured person in ≥ 80% of the frames; the athlete "
           "measured on each camera of the two-person take; a second person always reported)", "",
           "In view: the frames the person is in the picture, checked by eye (`IN_VIEW_S`). Found: frames the measured "
           "person was found in, of all frames and of those in view.", "",
           "| clip | size | frames | in view | found, of all | found, of in view | missed in view, by reason | "
           "not found out of view | found from their first frame to their last | people seen | measured person | "
           "abrupt jumps |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out + ["", f"In the evidence of the two-person views: {subjects}.", ""]


def cost_table(clip: Path, estimator, outcomes) -> list[str]:
    video = read_video(clip)
    estimator.estimate(list(video.frames[:1]), [0.0])  # warm-up
    start = time.perf_counter()
    estimator.estimate(list(video.frames), list(video.times_s))
    ms = 1000 * (time.perf_counter() - start) / len(video.frames)
    frames = [f for rows in outcomes.values() for o in rows for f in o.frames]
    seconds = [o.seconds for rows in outcomes.values() for o in rows]
    return ["### Cost", "",
            f"- pose estimation: {ms:.0f} ms per {video.frames.shape[2]}x{video.frames.shape[1]} frame (uncached, "
            f"{len(video.frames)} frames, this machine under its current load);",
            f"- pose frames a statistic rests on at the defaults: median {np.median(frames):.0f} per video "
            f"(min {min(frames)}, max {max(frames)});" if frames else "- no pose frames used",
            f"- one pose-method comparison (14–16 statements, cached pose and CLIP after the first): median "
            f"{np.median(seconds):.1f} s.", ""]


if __name__ == "__main__":
    main()
