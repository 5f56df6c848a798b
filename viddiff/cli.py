"""The ``viddiff`` command.

Parsing lives here; each subcommand's handler lives in ``viddiff.commands``
(or the module that owns the tool) and is imported lazily, so ``viddiff --help``
stays fast and a missing heavy dependency only affects the commands that need
it. Benchmark and method choices come from their registries. Console output (log lines,
progress, library noise) is set up by :mod:`viddiff.console`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import Callable, Optional, Sequence, get_args

from viddiff import __version__, benchmarks
from viddiff.errors import ViddiffError
from viddiff.localizer.segmenters import segmenter_names
from viddiff.methods import method_names
from viddiff.schema import Mode

Handler = Callable[[argparse.Namespace], int]
MODES = list(get_args(Mode))
MODE_HELP = (
    "task mode: closed or open for VidDiffBench (required there), describe for description benchmarks "
    "(default: the benchmark's only mode, if it has one)"
)
RESUME_HELP = (
    "continue a stopped run in --output: keeps its finished samples, retries failed ones "
    "(default: off; a directory holding results is refused)"
)


def _global_flags(*, with_defaults: bool) -> argparse.ArgumentParser:
    """``--debug`` and ``-q`` for the main parser and (without defaults, so they never reset a value
    given before the subcommand) for every subcommand, so they work on either side of it."""
    flags = argparse.ArgumentParser(add_help=False)
    unset = {} if with_defaults else {"default": argparse.SUPPRESS}
    flags.add_argument(
        "--debug", action="store_true", **unset,
        help="show tracebacks, debug logs and library messages (FFmpeg, open_clip, HTTP) (default: off)",
    )
    flags.add_argument(
        "-q", "--quiet", action="store_true", **unset, help="only warnings and errors, no progress (default: off)"
    )
    return flags


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", help="YAML config file (default: the built-in defaults; configs/paper.yaml is the released setting)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set localizer.method=uniform (repeatable; default: none)",
    )


def _add_dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--benchmark",
        choices=benchmarks.names(),
        help="which benchmark --dataset holds (default: data.benchmark, i.e. viddiffbench)",
    )
    p.add_argument(
        "--dataset",
        help="'hf' (HF hub) or a local dataset directory / .json / .jsonl / .parquet file (default: data.dataset, i.e. hf)",
    )
    p.add_argument(
        "--split", choices=["easy", "medium", "hard"], action="append",
        help="benchmark split (repeatable; default: every split)",
    )
    p.add_argument(
        "--subset", type=int, metavar="N_PER_ACTION", help="keep the first N samples of each action (default: all)"
    )
    p.add_argument("--limit", type=int, metavar="N", help="keep the first N samples (default: all)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="viddiff",
        description="Video action differencing: the VidDiff method and the VidDiffBench evaluation.",
        parents=[_global_flags(with_defaults=True)],
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    flags = [_global_flags(with_defaults=False)]
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    for add_command in (
        _add_run, _add_compare, _add_eval, _add_baseline, _add_ablate, _add_audit, _add_pose, _add_data, _add_cache,
    ):
        add_command(sub, flags)
    return parser


def _add_run(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff run: the method on a benchmark, then scoring."""
    run = sub.add_parser("run", help="run the VidDiff method (or another --method) on a benchmark and score it", parents=flags)
    _add_dataset_args(run)
    run.add_argument("--mode", choices=MODES, help=MODE_HELP)
    run.add_argument(
        "--method", choices=method_names(), default="viddiff",
        help="viddiff (the method), pose (body-pose measurements alone, closed mode; docs/pose.md), baseline "
        "(an LMM, model from baseline.model; `viddiff baseline` sets it), or a registered plug-in (default: viddiff)",
    )
    run.add_argument("--output", help="results directory (default: runs/<split>-<mode>)")
    run.add_argument("--resume", action="store_true", help=RESUME_HELP)
    run.add_argument(
        "--swap-videos", action="store_true", help="sanity check: swap A and B (predictions should flip) (default: off)"
    )
    run.add_argument(
        "--same-video", action="store_true",
        help="sanity check: B := A (predictions should split evenly) (default: off)",
    )
    run.add_argument(
        "--save-visuals", action="store_true", help="write segmentation plots and keyframe strips (default: off)"
    )
    run.add_argument(
        "--report", action="store_true",
        help="write an HTML report: <output>/report/index.html and one page per sample (default: off)",
    )
    run.add_argument(
        "--report-embed-videos", action="store_true",
        help="copy the videos into the report pages instead of linking them (default: off)",
    )
    _add_config_args(run)
    run.set_defaults(handler="viddiff.commands.run:cli_run")


def _add_compare(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff compare: two of the user's own videos."""
    cmp_ = sub.add_parser("compare", help="compare two of your own videos", parents=flags)
    cmp_.add_argument("video_a", help="video A: a video file (.mp4, .mov, .webm, ...) or a directory of frame images")
    cmp_.add_argument("video_b", help="video B, the same kinds as video A")
    cmp_.add_argument(
        "--action",
        help="what the action is, e.g. 'barbell back squat' (required, except with --describe; default: none)",
    )
    cmp_.add_argument(
        "--describe",
        action="store_true",
        help="describe the similarities and differences along 7 dimensions, as text (default: off)",
    )
    cmp_.add_argument(
        "--difference", action="append", default=[], metavar="TEXT",
        help="closed mode: a statement to check, e.g. 'the squat is deeper' (repeatable; default: none)",
    )
    cmp_.add_argument(
        "--n-differences", type=int, metavar="N",
        help="open mode: propose at most N differences (default: none; with --describe: proposer.describe_n_differences)",
    )
    cmp_.add_argument("--fps", type=float, help="inference fps (default: data.default_fps)")
    cmp_.add_argument(
        "--fps-original", type=float, metavar="FPS",
        help="frame rate of image-directory videos; files carry their own (default: none)",
    )
    cmp_.add_argument(
        "--pose", action="store_true",
        help="also measure each difference from body pose (pose.evidence=true; needs the pose extra, docs/pose.md) "
        "(default: off)",
    )
    cmp_.add_argument("--json", action="store_true", help="print the result as JSON (default: off, a table)")
    cmp_.add_argument(
        "--report", metavar="FILE.html", help="write a self-contained HTML report of the comparison (default: none)"
    )
    cmp_.add_argument(
        "--report-embed-videos", action="store_true",
        help="copy both videos into the report instead of linking them (default: off)",
    )
    cmp_.add_argument(
        "--save-visuals",
        nargs="?",
        const="",
        metavar="DIR",
        help="write segmentation and keyframe PNGs to DIR/compare/ (default DIR: ./visuals, or run.output_dir/visuals)",
    )
    _add_config_args(cmp_)
    cmp_.set_defaults(handler="viddiff.commands.compare:cli_compare")


def _add_eval(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff eval: score any predictions file."""
    ev = sub.add_parser(
        "eval", help="score a predictions file in its benchmark's format (--benchmark)", parents=flags
    )
    ev.add_argument(
        "--predictions",
        required=True,
        help="the predictions file, as `viddiff run` writes it (predictions.json) or in the benchmark's own "
        "published format; see docs/evaluation.md (required)",
    )
    ev.add_argument("--mode", choices=MODES, help=MODE_HELP)
    _add_dataset_args(ev)
    ev.add_argument(
        "--output",
        help="directory for metrics.json, report.md and the per-item CSV "
        "(default: the predictions file's directory)",
    )
    _add_config_args(ev)
    ev.set_defaults(handler="viddiff.commands.evaluate:cli_eval")


def _add_baseline(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff baseline: an LMM given the frames of both videos."""
    base = sub.add_parser(
        "baseline", help="LMM baseline: frames of both videos to a multimodal chat model", parents=flags
    )
    base.add_argument(
        "--model", required=True, help="chat model name as the endpoint knows it, e.g. gpt-4o-2024-08-06 (required)"
    )
    _add_dataset_args(base)
    base.add_argument("--mode", choices=MODES, help=MODE_HELP)
    base.add_argument("--output", help="results directory (default: runs/baseline-<model>-<split>-<mode>)")
    base.add_argument("--resume", action="store_true", help=RESUME_HELP)
    _add_config_args(base)
    base.set_defaults(handler="viddiff.commands.run:cli_baseline")


def _add_ablate(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff ablate: every localizer variant on shared proposals."""
    abl = sub.add_parser(
        "ablate", help="all localizer variants over one split, one table beside the paper's", parents=flags
    )
    _add_dataset_args(abl)
    abl.add_argument("--mode", choices=["closed"], default="closed", help="closed accuracy, the paper's ablation (default: closed)")
    abl.add_argument(
        "--variant",
        action="append",
        choices=segmenter_names(),
        metavar="METHOD",
        help=f"localizer method to include (repeatable; default: all): {', '.join(segmenter_names())}",
    )
    abl.add_argument("--output", help="results directory (default: runs/ablate-<split>-closed)")
    abl.add_argument("--resume", action="store_true", help=RESUME_HELP)
    _add_config_args(abl)
    abl.set_defaults(handler="viddiff.runs.ablate:cli_ablate")


def _add_audit(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff audit: original, swapped and identical-video runs."""
    aud = sub.add_parser(
        "audit",
        help="answer consistency: the same samples in the original order, with A and B swapped, and on identical videos",
        parents=flags,
    )
    _add_dataset_args(aud)
    aud.add_argument("--mode", choices=["closed", "open"], required=True, help="closed or open (required)")
    aud.add_argument(
        "--method", choices=method_names(), default="viddiff",
        help="the VidDiff method, an LMM baseline, or a registered plug-in method (default: viddiff)",
    )
    aud.add_argument("--model", help="--method baseline: the chat model, as for viddiff baseline (default: baseline.model)")
    aud.add_argument(
        "--output", help="directory for the three runs and the audit's files (default: runs/audit-<method>-<split>-<mode>)"
    )
    aud.add_argument("--resume", action="store_true", help=RESUME_HELP)
    _add_config_args(aud)
    aud.set_defaults(handler="viddiff.audit.cli:cli_audit")


def _add_pose(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff pose: one video's keypoints and kinematics as CSV files."""
    pose = sub.add_parser(
        "pose", help="body pose of one video: keypoints.csv, angles.csv and an optional overlay video", parents=flags
    )
    pose.add_argument("video", help="a video file or a directory of frame images")
    pose.add_argument("--out", required=True, metavar="DIR", help="directory to write the files to (required)")
    pose.add_argument(
        "--overlay", action="store_true", help="also write overlay.mp4: the frames with the skeleton drawn (default: off)"
    )
    pose.add_argument("--fps", type=float, help="frames per second to estimate at (default: pose.fps, else 30)")
    pose.add_argument(
        "--fps-original", type=float, metavar="FPS",
        help="frame rate of an image directory; files carry their own (default: none)",
    )
    _add_config_args(pose)
    pose.set_defaults(handler="viddiff.commands.pose:cli_pose")


def _add_data(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff data synth|check|download."""
    data = sub.add_parser("data", help="dataset tools", parents=flags)
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND")
    data_sub.required = True
    synth = data_sub.add_parser("synth", help="write the synthetic benchmark (offline tests and demos)", parents=flags)
    synth.add_argument("--out", required=True, help="directory to write the videos and dataset.jsonl to (required)")
    synth.add_argument("--pairs", type=int, default=12, help="number of video pairs (default: 12)")
    synth.add_argument("--seed", type=int, default=0, help="random seed; the same seed writes the same data (default: 0)")
    synth.add_argument(
        "--benchmark", choices=benchmarks.names(), default="viddiffbench",
        help="row format to write (default: viddiffbench)",
    )
    synth.set_defaults(handler="viddiff.commands.data:cli_synth")
    check = data_sub.add_parser("check", help="list missing or unreadable videos of a dataset", parents=flags)
    _add_dataset_args(check)
    _add_config_args(check)
    check.set_defaults(handler="viddiff.commands.data:cli_check")
    download = data_sub.add_parser(
        "download",
        help="fetch and unpack the video archives the benchmark repo ships; print the steps for the others' videos",
        parents=flags,
    )
    _add_dataset_args(download)
    download.add_argument(
        "--domain",
        action="append",
        choices=["fitness", "ballsports", "diving", "music", "surgery"],
        help="only this domain (repeatable; default: every domain of the selected samples)",
    )
    download.add_argument("--keep-archives", action="store_true", help="keep the zip files after unpacking them (default: off)")
    _add_config_args(download)
    download.set_defaults(handler="viddiff.commands.data:cli_download")


def _add_cache(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff cache stats|clear."""
    cache = sub.add_parser("cache", help="model-call cache tools", parents=flags)
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="CACHE_COMMAND")
    cache_sub.required = True
    stats = cache_sub.add_parser("stats", help="entries and size per kind", parents=flags)
    _add_config_args(stats)
    stats.set_defaults(handler="viddiff.cache:cli_stats")
    clear = cache_sub.add_parser("clear", help="delete every cached entry", parents=flags)
    _add_config_args(clear)
    clear.set_defaults(handler="viddiff.cache:cli_clear")


def _resolve(spec: str) -> Handler:
    import importlib

    module_name, func_name = spec.split(":")
    return getattr(importlib.import_module(module_name), func_name)


def interrupted_message(args: argparse.Namespace) -> str:
    """What Ctrl-C leaves behind and how to go on: resumable commands name ``--resume`` and their output."""
    if not hasattr(args, "resume"):
        return "viddiff: interrupted"
    output = getattr(args, "output", None)
    where = f"--output {output}" if output else "the same --output"
    return (
        "viddiff: interrupted; finished samples are saved. "
        f"To continue, run the same command with --resume and {where}"
    )


def main(argv: Optional[Sequence[str]] = None) -> int:
    from viddiff.console import console_session

    parser = build_parser()
    args = parser.parse_args(argv)
    with console_session(debug=args.debug, quiet=args.quiet) as console:
        try:
            return int(_resolve(args.handler)(args) or 0)
        except ViddiffError as exc:
            if args.debug:
                traceback.print_exc()
            console.summarize_repeats()  # the last line a user sees is what went wrong
            print(f"viddiff: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            console.summarize_repeats()
            print(interrupted_message(args), file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
