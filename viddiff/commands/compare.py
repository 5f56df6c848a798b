"""``viddiff compare``: two of the user's videos, closed / open / describe, with optional report and figures."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Optional

from viddiff.api import (
    ComparisonResult, EventView, VideoInput, VidDiff, run_once, build_describe_sample, build_sample, to_comparison,
)
from viddiff.config import config_from_args
from viddiff.errors import ViddiffError
from viddiff.methods.events import Finished
from viddiff.methods.viddiff import PairRun
from viddiff.pose.measure import describe_evidence
from viddiff.pose.view import describe_measured
from viddiff.report.compare import PairOutputs
from viddiff.report.standins import COMPARE_SHOWS, DESCRIBE_SHOWS, STAND_IN_NOTE, note_lines, notice_of
from viddiff.report.views import StandInView
from viddiff.runs.cost_guard import dollars
from viddiff.schema import Mode, Sample, StageUsage


def check_compare_flags(args: argparse.Namespace) -> None:
    """The command line's own words for the mistakes ``build_sample`` would report in Python terms."""
    _check_video_flags(args)
    if args.n_differences is not None and args.n_differences < 1:
        raise ViddiffError(f"--n-differences must be at least 1, got {args.n_differences}")
    if args.describe:
        return
    if not (args.action or "").strip():
        raise ViddiffError("--action is required: say what the videos show, e.g. --action 'barbell back squat'")
    if args.difference and args.n_differences is not None:
        raise ViddiffError("give --difference (closed mode) or --n-differences (open mode), not both")
    if not args.difference and args.n_differences is None:
        raise ViddiffError(
            "give --difference TEXT to check a statement (closed mode, repeatable) "
            "or --n-differences N to have differences proposed (open mode)"
        )


def _check_video_flags(args: argparse.Namespace) -> None:
    """Two sides, each one video or one take from several calibrated cameras (``--a``/``--b`` repeated)."""
    positional = [video for video in (args.video_a, args.video_b) if video is not None]
    repeated = args.videos_a or args.videos_b
    if positional and repeated:
        raise ViddiffError("give the videos as VIDEO_A VIDEO_B or with --a and --b, not both ways")
    if repeated and not (args.videos_a and args.videos_b):
        raise ViddiffError(f"{'--b' if args.videos_a else '--a'} is missing: give both sides with --a and --b")
    if not repeated and len(positional) < 2:
        raise ViddiffError("give two videos: VIDEO_A VIDEO_B, or --a VIDEO --b VIDEO (repeated for more cameras)")
    several = {side: len(videos or ()) > 1 for side, videos in (("a", args.videos_a), ("b", args.videos_b))}
    own = {"a": args.calibration_a, "b": args.calibration_b}
    if args.calibration and any(own.values()):
        raise ViddiffError("give --calibration (both sides) or --calibration-a / --calibration-b, not both")
    if args.calibration and not any(several.values()):
        raise ViddiffError("--calibration is for a side filmed by several cameras: repeat --a or --b, once per video")
    for side in "ab":
        if own[side] and not several[side]:
            raise ViddiffError(f"--calibration-{side} is for several videos of side {side.upper()}: repeat --{side}")
        if several[side] and not (args.calibration or own[side]):
            raise ViddiffError(
                f"--{side} names {len(getattr(args, f'videos_{side}'))} videos: give --calibration (or "
                f"--calibration-{side}), the file that says where their cameras stand (a Pose2Sim .toml or a .qca.txt)"
            )


def cli_compare(args: argparse.Namespace) -> int:
    check_compare_flags(args)
    cfg = config_from_args(args)
    if getattr(args, "pose", False):
        cfg = cfg.model_copy(update={"pose": cfg.pose.model_copy(update={"evidence": True})})
    if args.describe:
        if args.difference:
            raise ViddiffError("--describe proposes its own differences; drop --difference")
        n = cfg.proposer.describe_n_differences if args.n_differences is None else args.n_differences
        sample = build_describe_sample(
            *_videos(args), args.action or "", n, fps_original=args.fps_original, **_calibrations(args)
        )
        mode: Mode = "describe"
    else:
        sample, mode = build_sample(
            *_videos(args), args.action or "", differences=args.difference or None,
            n_differences=args.n_differences, fps_original=args.fps_original, **_calibrations(args),
        )
    outputs = PairOutputs.from_args(args, cfg, sample)  # checked before any model call
    if args.json_lines:  # the result, the last line, names the stand-ins in its notes
        run = run_once(cfg, lambda vd: print_events(vd, sample, mode, args.fps))
        outputs.write(run, cfg)
        return 0
    run, stand_ins = run_once(cfg, lambda vd: _compare(vd, sample, mode, args.fps))
    result = to_comparison(run.result, sample.action_description, note_lines(stand_ins))
    outputs.write(run, cfg)
    if args.json:  # the stand-ins are in its notes
        print(result.model_dump_json(indent=2))
        return 0
    print(result.description if mode == "describe" else format_comparison(result))
    notice = notice_of(stand_ins, DESCRIBE_SHOWS if mode == "describe" else COMPARE_SHOWS)
    if notice:  # beside the table; on stderr when stdout is the description itself
        print(notice, file=sys.stderr if mode == "describe" else sys.stdout)
    return 0


def _videos(args: argparse.Namespace) -> tuple[VideoInput, VideoInput]:
    """A side is one video (VIDEO_A, or one --a) or the videos of one take from several cameras (--a repeated)."""
    if args.videos_a:
        return _one_or_several(args.videos_a), _one_or_several(args.videos_b)
    return args.video_a, args.video_b


def _one_or_several(videos: list[str]) -> VideoInput:
    return videos[0] if len(videos) == 1 else videos


def _calibrations(args: argparse.Namespace) -> dict[str, Optional[str]]:
    return {
        "calibration": args.calibration, "calibration_a": args.calibration_a, "calibration_b": args.calibration_b,
    }


async def _compare(vd: VidDiff, sample: Sample, mode: Mode, fps: float | None) -> tuple[PairRun, list[StandInView]]:
    run = await vd.arun_pair(sample, mode, fps=fps)
    return run, vd.stand_in_views(run.result)


async def print_events(vd: VidDiff, sample: Sample, mode: Mode, fps: float | None) -> PairRun:
    """``--json-lines``: each event on its own line as it happens (flushed, for a reading process); the last, the
    result, carries the stand-in notes."""
    view = EventView(sample.action_description, vd.stand_in_notes)
    events = vd.aevents(sample, mode, fps=fps)
    async with contextlib.aclosing(events):
        async for event in events:
            print(view.convert(event).model_dump_json(), flush=True)
            if isinstance(event, Finished):
                return PairRun(sample=sample, videos=event.videos, result=event.result)
    raise AssertionError("unreachable: the events end with the result")


def format_comparison(result: ComparisonResult) -> str:
    """Human-readable table of a comparison for the terminal."""
    names = {"a": "A", "b": "B", "c": "similar", None: "invalid"}
    lines = [f"Action: {result.action}  ({result.mode} mode)", ""]
    width = max([len(d.description) for d in result.differences] + [10])
    lines.append(f"{'difference'.ljust(width)}  more true of  keyframes A (s) / B (s)")
    for d in result.differences:
        times = f"{_fmt_times(d.times_a)} / {_fmt_times(d.times_b)}"
        lines.append(f"{d.description.ljust(width)}  {names[d.prediction]:<12}  {times}")
        if d.agreement is not None:
            lines.append(f"  verdict: {d.agreement.headline}")
        if d.evidence is not None:
            lines.append(f"  measured: {describe_evidence(d.evidence)}")
            if d.evidence.status == "not_comparable":
                lines.append(f"    not compared: {d.evidence.reason}")
            who = describe_measured(d.evidence)
            if who:
                lines.append(f"    who: {who}")
        elif d.evidence_absent:
            lines.append(f"  measured: nothing ({d.evidence_absent})")
    for note in result.notes:
        if not note.startswith(STAND_IN_NOTE):  # the stand-in notice under the table says those
            lines.append(f"note: {note}")
    total = StageUsage()
    for usage in result.usage.values():
        total = total.add(usage)
    cost = "unknown" if total.cost_usd is None else dollars(total.cost_usd)[0]
    lines.append(f"\n{total.calls} model calls ({total.cache_hits} cached), {total.images} images, est. cost {cost}")
    return "\n".join(lines)


def _fmt_times(times: list[float]) -> str:
    return ",".join(f"{t:.2f}" for t in times) or "-"
