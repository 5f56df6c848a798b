"""``viddiff compare``: two of the user's videos, closed / open / describe, with optional report and figures."""

from __future__ import annotations

import argparse
import contextlib
import sys

from viddiff.api import ComparisonResult, EventView, VidDiff, run_once, build_describe_sample, build_sample, to_comparison
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


def cli_compare(args: argparse.Namespace) -> int:
    check_compare_flags(args)
    cfg = config_from_args(args)
    if getattr(args, "pose", False):
        cfg = cfg.model_copy(update={"pose": cfg.pose.model_copy(update={"evidence": True})})
    if args.describe:
        if args.difference:
            raise ViddiffError("--describe proposes its own differences; drop --difference")
        n = cfg.proposer.describe_n_differences if args.n_differences is None else args.n_differences
        sample = build_describe_sample(args.video_a, args.video_b, args.action or "", n, fps_original=args.fps_original)
        mode: Mode = "describe"
    else:
        sample, mode = build_sample(
            args.video_a, args.video_b, args.action or "", differences=args.difference or None,
            n_differences=args.n_differences, fps_original=args.fps_original,
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
