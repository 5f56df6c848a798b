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
from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.runs.ablation_variants import variant_names
from viddiff.methods import method_names
from viddiff.schema import Mode
from viddiff.serve.keys import SCOPES as KEY_SCOPES

Handler = Callable[[argparse.Namespace], int]
MODES = list(get_args(Mode))
MODE_HELP = (
    "task mode: closed or open for VidDiffBench (required there), describe for description benchmarks, "
    "caption or qa for single-video benchmarks "
    "(default: the benchmark's only mode, if it has one)"
)
RESUME_HELP = (
    "continue a stopped run in --output: keeps its finished samples, retries failed ones "
    "(default: off; a directory holding results is refused)"
)


def _command(
    sub: "argparse._SubParsersAction",
    name: str,
    flags: list[argparse.ArgumentParser],
    *,
    help: str,
    description: str,
    examples: Sequence[str],
) -> argparse.ArgumentParser:
    """A subcommand whose ``--help`` says what it does and shows examples (as written, one per line)."""
    return sub.add_parser(
        name,
        help=help,
        description=description,
        epilog="examples:\n" + "\n".join(f"  {example}" for example in examples),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=flags,
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
        "--config", metavar="NAME_OR_FILE",
        help="a preset name (`viddiff config list`: paper is the released setting, cpu-fast for a laptop) or a YAML "
        "file (default: the built-in defaults)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set localizer.method=uniform (repeatable; default: none)",
    )


def _add_dataset_args(p: argparse.ArgumentParser, benchmark_names: Optional[list[str]] = None) -> None:
    """``benchmark_names``: the benchmarks the command runs on (default: every registered one)."""
    data = Config().data
    p.add_argument(
        "--benchmark",
        choices=benchmark_names or benchmarks.names(),
        help=f"which benchmark --dataset holds (default: data.benchmark, i.e. {data.benchmark})",
    )
    p.add_argument(
        "--dataset",
        help="'hf' (HF hub) or a local dataset directory / .json / .jsonl / .parquet file "
        f"(default: data.dataset, i.e. {data.dataset})",
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
        _add_run, _add_compare, _add_eval, _add_baseline, _add_ablate, _add_audit, _add_pose, _add_calibrate, _add_data,
        _add_cache, _add_serve, _add_report, _add_config,
    ):
        add_command(sub, flags)
    return parser


def _add_run(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff run: the method on a benchmark, then scoring."""
    run = _command(
        sub, "run", flags,
        help="run the VidDiff method (or another --method) on a benchmark and score it",
        description=(
            "Run the VidDiff method (propose differences and stages, align keyframes with CLIP + Viterbi, ask\n"
            "a VLM per difference) over a benchmark selection, then score it. Each finished sample is saved\n"
            "at once to --output (samples.jsonl, predictions.json, metrics.json, report.md, usage.json);\n"
            "a stopped run continues with --resume. Exit code 1: some samples failed, answers stayed invalid\n"
            "or the scores are incomplete (the last lines say which); 2: an error stopped the run."
        ),
        examples=(
            "viddiff run --split easy --mode closed",
            "viddiff run --split hard --mode open --config paper --output runs/hard-open",
            "viddiff run --dataset /tmp/synth --mode closed --limit 4 --set localizer.method=uniform",
            "viddiff run --split easy --mode closed --output runs/easy-closed --resume",
        ),
    )
    _add_dataset_args(run)
    run.add_argument("--mode", choices=MODES, help=MODE_HELP)
    run.add_argument(
        "--method", choices=method_names(),
        help="viddiff (the method), pose (body-pose measurements alone, closed mode; see the Body pose page of the "
        f"docs), baseline (an LMM: baseline.model, i.e. {Config().baseline.model}; `viddiff baseline --model` sets "
        "it), or a registered plug-in (default: the benchmark's own: viddiff for VidDiffBench and ViDiC-1K, baseline "
        "for the single-video benchmarks); a method that cannot answer the benchmark's task is refused, naming those "
        "that can",
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
    run.add_argument(
        "--executor", choices=["local", "ray"],
        help="where samples run: local (this process) or ray (Ray actors, each with its models: --set ray.actors=N "
        '--set ray.num_gpus=G, see docs/performance.md; pip install "viddiff[ray]"); this process keeps the output, '
        "its lock and the writing either way (default: run.executor, i.e. local)",
    )
    _add_config_args(run)
    run.set_defaults(handler="viddiff.commands.run:cli_run")


def _add_compare(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff compare: two of the user's own videos."""
    defaults = Config()
    cmp_ = _command(
        sub, "compare", flags,
        help="compare two of your own videos",
        description=(
            "Compare two videos of the same action. Closed mode (--difference): say for each statement which\n"
            "video it is more true of. Open mode (--n-differences): propose differences, then answer them.\n"
            "--describe: describe similarities and differences as text. Prints a table (or --json)."
        ),
        examples=(
            "viddiff compare a.mp4 b.mp4 --action 'barbell back squat' --difference 'the squat is deeper'",
            "viddiff compare a.mp4 b.mp4 --action 'tennis serve' --n-differences 6 --json",
            "viddiff compare a.mp4 b.mp4 --describe --report comparison.html",
            "viddiff compare --a a_front.mp4 --a a_side.mp4 --b b_front.mp4 --b b_side.mp4 --calibration setup.toml "
            "--action 'barbell back squat' --pose --difference 'the squat is deeper'",
        ),
    )
    cmp_.add_argument(
        "video_a", nargs="?", help="video A: a video file (.mp4, .mov, .webm, ...) or a directory of frame images"
    )
    cmp_.add_argument("video_b", nargs="?", help="video B, the same kinds as video A")
    cmp_.add_argument(
        "--a", dest="videos_a", action="append", metavar="VIDEO",
        help="video A, repeatable instead of the positional VIDEO_A: several videos of one take from calibrated "
        "cameras, the main video first; the body-pose evidence (--pose) is then measured in 3D, the rest of the "
        "method reads the main video (default: none)",
    )
    cmp_.add_argument("--b", dest="videos_b", action="append", metavar="VIDEO", help="video B, as --a (default: none)")
    cmp_.add_argument(
        "--calibration", metavar="FILE",
        help="where the cameras of a side with several videos stand, one camera per video in their order: the .toml "
        "viddiff calibrate writes, a Pose2Sim .toml or a Qualisys .qca.txt; one setup for both sides (default: none)",
    )
    cmp_.add_argument(
        "--calibration-a", metavar="FILE", help="the calibration of video A's cameras alone (default: none)"
    )
    cmp_.add_argument(
        "--calibration-b", metavar="FILE", help="the calibration of video B's cameras alone (default: none)"
    )
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
        help="open mode: propose at most N differences (default: none; with --describe: "
        f"proposer.describe_n_differences, i.e. {defaults.proposer.describe_n_differences})",
    )
    cmp_.add_argument(
        "--fps", type=float, help=f"inference fps (default: data.default_fps, i.e. {defaults.data.default_fps:g})"
    )
    cmp_.add_argument(
        "--fps-original", type=float, metavar="FPS",
        help="frame rate of image-directory videos; files carry their own (default: none)",
    )
    cmp_.add_argument(
        "--pose", action="store_true",
        help="also measure each difference from body pose (like --set pose.evidence=true; needs the pose extra; see the "
        "Body pose page of the docs) (default: off)",
    )
    output = cmp_.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the result as JSON (default: off, a table)")
    output.add_argument(
        "--json-lines", action="store_true",
        help="print events as they happen, one JSON object a line: the proposal, the segmentation, each verdict "
        "the moment it is decided, then the result (default: off)",
    )
    cmp_.add_argument(
        "--report", metavar="FILE.html",
        help="write an HTML report of the comparison: one page, keyframes inside it, the videos linked from where "
        "they are (relative links: move the page and the videos together, or use --report-embed-videos) "
        "(default: none)",
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
        help="write segmentation and keyframe PNGs to DIR/compare/ (default DIR: ./visuals; with --set run.output_dir=D, D/visuals)",
    )
    _add_config_args(cmp_)
    cmp_.set_defaults(handler="viddiff.commands.compare:cli_compare")


def _add_eval(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff eval: score any predictions file."""
    ev = _command(
        sub, "eval", flags,
        help="score a predictions file in its benchmark's format (--benchmark)",
        description=(
            "Score a predictions file (a run's predictions.json, or another toolkit's output in the benchmark's\n"
            "published format) and write metrics.json, the per-item CSV and report.md. Open mode asks an LLM\n"
            "judge; exit code 1 when its answers stayed invalid (the scores are then incomplete)."
        ),
        examples=(
            "viddiff eval --predictions runs/easy-closed/predictions.json --mode closed --split easy",
            "viddiff eval --predictions preds.json --mode open --split hard --output scores/",
            "viddiff eval --benchmark vidic --predictions responses.json",
        ),
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
    base = _command(
        sub, "baseline", flags,
        help="LMM baseline: frames of both videos to a multimodal chat model",
        description=(
            "The paper's LMM baseline: frames of both videos in one request to a multimodal chat model, which\n"
            "answers every difference at once; run, saved, resumed and scored like viddiff run."
        ),
        examples=(
            "viddiff baseline --model gpt-4o-2024-08-06 --split easy --mode closed",
            "viddiff baseline --model Qwen/Qwen2.5-VL-7B-Instruct --split easy --mode open "
            "--set endpoints.default.base_url=http://localhost:8000/v1",
        ),
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
    abl = _command(
        sub, "ablate", flags,
        help="all localizer variants over one split, one table beside the paper's",
        description=(
            "The localisation ablation: every localizer variant (or those given with --variant) on the same\n"
            "proposals, closed accuracy in one table beside the paper's numbers."
        ),
        examples=(
            "viddiff ablate --split easy",
            "viddiff ablate --split medium --variant viterbi --variant random --output runs/ablate-medium",
        ),
    )
    _add_dataset_args(abl, ["viddiffbench"])  # the ablation needs VidDiffBench's keyframe annotations
    abl.add_argument("--mode", choices=["closed"], default="closed", help="closed accuracy, the paper's ablation (default: closed)")
    names = variant_names()
    abl.add_argument(
        "--variant",
        action="append",
        choices=names,
        metavar="VARIANT",
        help=f"variant to include (repeatable; default: all): {', '.join(names)}",
    )
    abl.add_argument("--output", help="results directory (default: runs/ablate-<split>-closed)")
    abl.add_argument("--resume", action="store_true", help=RESUME_HELP)
    _add_config_args(abl)
    abl.set_defaults(handler="viddiff.runs.ablate:cli_ablate")


def _add_audit(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff audit: original, swapped and identical-video runs."""
    aud = _command(
        sub, "audit", flags,
        help="answer consistency: the same samples in the original order, with A and B swapped, and on identical videos",
        description=(
            "Run a method three times on one cache: as given, with A and B swapped (verdicts should flip) and\n"
            "on identical videos (nothing should differ), then report swap_flip_rate, same_video_decisive_rate,\n"
            "a_share and order-debiased accuracy."
        ),
        examples=(
            "viddiff audit --split easy --mode closed",
            "viddiff audit --split easy --mode closed --method baseline --model gpt-4o-2024-08-06",
        ),
    )
    _add_dataset_args(aud)
    aud.add_argument(
        "--mode", choices=["closed", "open", "qa"],
        help="closed or open (required on VidDiffBench); qa for VidPair-Halluc, which runs single-video and pair-aware "
        "answering (default: the benchmark's only mode)",
    )
    aud.add_argument(
        "--method", choices=method_names(), default=None,
        help="the VidDiff method, an LMM baseline, or a registered plug-in method (default: the benchmark's own, "
        "viddiff for VidDiffBench)",
    )
    aud.add_argument(
        "--model",
        help=f"--method baseline: the chat model, as for viddiff baseline (default: baseline.model, i.e. {Config().baseline.model})",
    )
    aud.add_argument(
        "--output", help="directory for the three runs and the audit's files (default: runs/audit-<method>-<split>-<mode>)"
    )
    aud.add_argument("--resume", action="store_true", help=RESUME_HELP)
    _add_config_args(aud)
    aud.set_defaults(handler="viddiff.audit.cli:cli_audit")


def _add_pose(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff pose: one video's keypoints and kinematics as CSV files."""
    pose = _command(
        sub, "pose", flags,
        help="body pose of one video (or one take from calibrated cameras, in 3D): keypoints.csv, angles.csv, an "
        "optional overlay video and .trc",
        description=(
            "Estimate the body pose in every sampled frame of one video (pose.estimator: BlazePose by default,\n"
            "offline with the pose extra) and write the files people take to a spreadsheet or a biomechanics\n"
            "tool: keypoints.csv (x, y in upright pixels and a confidence per keypoint and frame) and angles.csv\n"
            "(joint angles, trunk lean, widths and heights per frame, empty where the estimate is unsure)."
        ),
        examples=(
            "viddiff pose squat.mp4 --out runs/pose-squat",
            "viddiff pose squat.mp4 --out runs/pose-squat --overlay --fps 15",
            "viddiff pose frames/ --out runs/pose-frames --fps-original 30",
            "viddiff pose front.mp4 side.mp4 --calibration setup.toml --out runs/pose-3d --trc runs/pose-3d/take.trc",
        ),
    )
    pose.add_argument(
        "video", nargs="+",
        help="a video file or a directory of frame images; several: one take from calibrated cameras, the main "
        "video first, measured in 3D (with --calibration)",
    )
    pose.add_argument(
        "--calibration", metavar="FILE",
        help="where the cameras of several videos stand, one camera per video in their order: the .toml viddiff "
        "calibrate writes, a Pose2Sim .toml or a Qualisys .qca.txt (default: none)",
    )
    pose.add_argument(
        "--trc", metavar="FILE.trc",
        help="with several videos: also write the 3D markers as an OpenSim .trc file (default: none)",
    )
    pose.add_argument("--out", required=True, metavar="DIR", help="directory to write the files to (required)")
    pose.add_argument(
        "--overlay", action="store_true", help="also write overlay.mp4: the frames with the skeleton drawn (default: off)"
    )
    pose.add_argument(
        "--fps", type=float,
        help=f"frames per second to estimate at (default: pose.fps, i.e. {Config().pose.fps:g}; 30 when that is null)",
    )
    pose.add_argument(
        "--fps-original", type=float, metavar="FPS",
        help="frame rate of an image directory; files carry their own (default: none)",
    )
    _add_config_args(pose)
    pose.set_defaults(handler="viddiff.commands.pose:cli_pose")


def _add_calibrate(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff calibrate: phones calibrated with a checkerboard, for two-view 3D pose."""
    cal = _command(
        sub, "calibrate", flags,
        help="calibrate two or more phones with a printed checkerboard (for 3D body angles from two views)",
        description=(
            "Calibrate the phones that film one performance, for 3D body angles (docs/pose.md, \"Two phones\n"
            "(3D)\"). Per phone, main view first: --intrinsics, a clip (or folder of photos) of the board moved in\n"
            "front of it, or --intrinsics-from an earlier calibration; --extrinsics, a clip of the board standing\n"
            "still, upright, where every phone sees it. Writes a Pose2Sim-format TOML for --calibration."
        ),
        examples=[
            "viddiff calibrate --board 4x7 --square-mm 60 --intrinsics front_board.mp4 --intrinsics side_board.mp4 "
            "--extrinsics front_still.mp4 --extrinsics side_still.mp4 --out setup.toml",
            "viddiff calibrate --board 4x7 --square-mm 60 --intrinsics-from phones.toml "
            "--extrinsics front_still.mp4 --extrinsics side_still.mp4 --out setup.toml",
        ],
    )
    cal.add_argument("--board", required=True, metavar="COLSxROWS", help="the board's inner corners across and down, e.g. 4x7 (required)")
    cal.add_argument("--square-mm", type=float, required=True, help="the side of one printed square in millimetres (required)")
    cal.add_argument("--intrinsics", action="append", default=[], metavar="CLIP",
                     help="per phone, a clip or folder of photos of the board at several angles (repeat; main view first; default: none, then --intrinsics-from is needed)")
    cal.add_argument("--intrinsics-from", metavar="FILE", help="a calibration file whose cameras' intrinsics to keep instead (default: none)")
    cal.add_argument("--extrinsics", action="append", default=[], metavar="CLIP",
                     help="per phone, a clip of the still board seen by every phone (repeat; main view first; default: none, at least two are needed)")
    cal.add_argument("--names", nargs="+", metavar="NAME", help="the cameras' names (default: cam01, cam02, ...)")
    cal.add_argument("--every", type=float, default=0.5, metavar="SECONDS",
                     help="seconds between the frames read from a clip (default: 0.5)")
    cal.add_argument("--out", required=True, metavar="FILE", help="the calibration TOML to write (required)")
    cal.set_defaults(handler="viddiff.commands.calibrate:cli_calibrate")


def _add_data(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff data synth|check|download."""
    data = sub.add_parser("data", help="dataset tools", parents=flags)
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND")
    data_sub.required = True
    synth = _command(
        data_sub, "synth", flags,
        help="write the synthetic benchmark (offline tests and demos)",
        description=(
            "Write a small synthetic benchmark (generated videos and rows in the benchmark's own format) for\n"
            "offline tests and demos, then read it back with the real loader."
        ),
        examples=("viddiff data synth --out /tmp/synth", "viddiff data synth --out /tmp/vidic --benchmark vidic --pairs 4"),
    )
    synth.add_argument("--out", required=True, help="directory to write the videos and dataset.jsonl to (required)")
    synth.add_argument("--pairs", type=int, default=12, help="number of video pairs (default: 12)")
    synth.add_argument("--seed", type=int, default=0, help="random seed; the same seed writes the same data (default: 0)")
    synth.add_argument(
        "--benchmark", choices=benchmarks.names(), default="viddiffbench",
        help="row format to write (default: viddiffbench)",
    )
    synth.set_defaults(handler="viddiff.commands.data:cli_synth")
    check = _command(
        data_sub, "check", flags,
        help="list missing or unreadable videos of a dataset",
        description=(
            "List every missing or unreadable video of a dataset selection with how to get it; exit code 1\n"
            "if there is any."
        ),
        examples=("viddiff data check", "viddiff data check --dataset /tmp/synth --split easy"),
    )
    _add_dataset_args(check)
    _add_config_args(check)
    check.set_defaults(handler="viddiff.commands.data:cli_check")
    download = _command(
        data_sub, "download", flags,
        help="fetch and unpack the video archives the benchmark repo ships; print the steps for the others' videos",
        description=(
            "Fetch, verify and unpack the video archives the benchmark repo ships (resumable); print the steps\n"
            "for the videos their owners license separately."
        ),
        examples=("viddiff data download", "viddiff data download --domain fitness --domain surgery --keep-archives"),
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
    stats = _command(
        cache_sub, "stats", flags,
        help="entries and size per kind",
        description="Entries and size per kind (model calls, CLIP embeddings) in the SQLite cache (cache.path).",
        examples=("viddiff cache stats", "viddiff cache stats --set cache.path=/data/viddiff-cache.sqlite"),
    )
    _add_config_args(stats)
    stats.set_defaults(handler="viddiff.cache:cli_stats")
    clear = _command(
        cache_sub, "clear", flags,
        help="delete every cached entry",
        description="Delete every entry of the SQLite cache (cache.path); later runs pay for their model calls again.",
        examples=("viddiff cache clear",),
    )
    _add_config_args(clear)
    clear.set_defaults(handler="viddiff.cache:cli_clear")


def _add_serve(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff serve [keys create|list|revoke]: the HTTP service and its API keys."""
    serve = _command(
        sub, "serve", flags,
        help="the comparison service: HTTP API, streamed verdicts, web page, keys and limits (needs the serve extra)",
        description=(
            "Serve comparisons over HTTP (docs/serve.md): POST two videos, follow the verdicts as Server-Sent\n"
            "Events, fetch the result and the HTML report; a web page at /. Jobs, events and results persist in\n"
            "--data-dir; a restart resumes them. Every request needs an API key (viddiff serve keys create NAME),\n"
            "except with --dev on 127.0.0.1. Limits are the serve section of the config (--set serve.KEY=VALUE)."
        ),
        examples=(
            "viddiff serve keys create my-app --data-dir /srv/viddiff",
            "viddiff serve --data-dir /srv/viddiff --port 8000",
            "viddiff serve --dev --set serve.max_upload_bytes=50000000",
            "viddiff serve --data-dir /srv/viddiff --ray local --set ray.actors=2 --set ray.num_gpus=1",
        ),
    )
    serve.add_argument(
        "--data-dir", default="viddiff-serve",
        help="where jobs, videos, reports, keys and the model-call cache live (default: ./viddiff-serve)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    serve.add_argument(
        "--dev", action="store_true", help="accept requests without a key, from 127.0.0.1 only (default: off)"
    )
    serve.add_argument(
        "--workers", type=int, help=f"comparisons run at once (default: serve.workers, i.e. {Config().serve.workers})"
    )
    serve.add_argument(
        "--ray", metavar="ADDRESS",
        help="run the comparisons on Ray actors, each with its models and --workers jobs (--set ray.actors=N "
        "--set ray.num_gpus=G; the serve page of the docs, Scaling out on Ray): local starts a one-machine cluster, auto joins the one running "
        'here, ray://HOST:10001 a remote one; pip install "viddiff[ray]" (default: in this process)',
    )
    serve.add_argument(
        "--proxy-headers", action="store_true",
        help="trust X-Forwarded-For/-Proto from --forwarded-allow-ips (behind a reverse proxy) (default: off)",
    )
    serve.add_argument(
        "--forwarded-allow-ips", default="127.0.0.1",
        help="proxies whose forwarded headers are trusted, with --proxy-headers (default: 127.0.0.1)",
    )
    serve.add_argument(
        "--log-format", choices=["text", "json"], default="text",
        help="log lines as text or as one JSON object each (access lines, job lifecycle, errors) (default: text)",
    )
    serve.add_argument(
        "--log-level", choices=["debug", "info", "warning", "error"],
        help="the least important log lines written; info includes one access line per request "
        "(default: info, or as --debug / -q say)",
    )
    _add_config_args(serve)
    serve.set_defaults(handler="viddiff.serve.command:cli_serve")
    serve_sub = serve.add_subparsers(dest="serve_command", metavar="keys")
    keys = serve_sub.add_parser("keys", help="API keys: create NAME (printed once), list, revoke NAME", parents=flags)
    keys.set_defaults(handler="viddiff.serve.keys_command:cli_keys")  # light: no models, no web framework
    keys_sub = keys.add_subparsers(dest="keys_command", metavar="KEYS_COMMAND")
    keys_sub.required = True
    for name, help_, description in (
        ("create", "make a key and print it once (only its hash is stored)",
         "Make an API key named NAME and print it, once: only its SHA-256 hash is stored, and names are never reused."),
        ("list", "the keys' names and whether they are active", "List the keys' names and whether each is active."),
        ("revoke", "refuse a key from now on", "Revoke the key named NAME: the server refuses it from the next request on."),
    ):
        example = f"viddiff serve keys {name}{' my-app' if name != 'list' else ''} --data-dir /srv/viddiff"
        cmd = _command(keys_sub, name, flags, help=help_, description=description, examples=(example,))
        if name != "list":
            cmd.add_argument("name", metavar="NAME", help="the key's name, e.g. the app using it")
        if name == "create":
            cmd.add_argument(
                "--scope", action="append", choices=list(KEY_SCOPES),
                help="what the key may do: app (the API) or metrics (/metrics, for operators); repeat for both "
                "(default: app)",
            )
            cmd.add_argument(
                "--callback-url", default=None,
                help="where this key's comparisons send their webhook when they end, unless one names its own (default: none)",
            )
        cmd.add_argument(
            "--data-dir", default=argparse.SUPPRESS, help="the server's --data-dir (default: ./viddiff-serve)"
        )


def _add_report(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff report RUN_DIR: the HTML pages of a finished run."""
    rep = _command(
        sub, "report", flags,
        help="build (or rebuild) the HTML report of a finished run, without any model call",
        description=(
            "Write RUN_DIR/report/index.html and one page per finished sample from what a `viddiff run` or\n"
            "`viddiff baseline` wrote there (samples.jsonl, config.yaml, run.json). No model is called: the\n"
            "scores are computed again from the predictions, an open-mode judge's answers come from the cache\n"
            "the run filled. The videos are read again from where the dataset keeps them (linked, or copied\n"
            "into the pages with --embed-videos)."
        ),
        examples=("viddiff report runs/easy-closed", "viddiff report runs/easy-closed --embed-videos"),
    )
    rep.add_argument("run_dir", metavar="RUN_DIR", help="the --output directory of a finished run")
    rep.add_argument(
        "--embed-videos", action="store_true",
        help="copy the videos into the report pages instead of linking them (default: off)",
    )
    rep.set_defaults(handler="viddiff.commands.report:cli_report")


def _add_config(sub: "argparse._SubParsersAction", flags: list[argparse.ArgumentParser]) -> None:
    """viddiff config list|show: the presets shipped with the package."""
    config = sub.add_parser("config", help="configuration presets: list them, show one", parents=flags)
    config_sub = config.add_subparsers(dest="config_command", metavar="CONFIG_COMMAND")
    config_sub.required = True
    listing = _command(
        config_sub, "list", flags,
        help="the presets shipped with viddiff, and what each is for",
        description="The configuration presets shipped with viddiff; give one by name to any --config.",
        examples=("viddiff config list",),
    )
    listing.set_defaults(handler="viddiff.commands.config:cli_config_list")
    show = _command(
        config_sub, "show", flags,
        help="print a preset's YAML, comments included",
        description=(
            "Print a preset's YAML as shipped; redirect it to a file and edit that to make your own config\n"
            "(viddiff config show cpu-fast > my-config.yaml, then --config my-config.yaml)."
        ),
        examples=("viddiff config show paper", "viddiff config show cpu-fast"),
    )
    show.add_argument("name", metavar="NAME", help="a preset name from `viddiff config list` (or a YAML file)")
    show.set_defaults(handler="viddiff.commands.config:cli_config_show")


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


EXIT_READER_GONE = 141
"""The exit status when the reader of the output went away (``viddiff ... | head -1``): 128 + SIGPIPE, what a
shell reports for ``cat`` or ``grep`` in the same place, so ``set -o pipefail`` scripts treat viddiff alike."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; a closed stdout or stderr pipe ends it quietly with :data:`EXIT_READER_GONE`."""
    try:
        return _run_command(argv)
    except BrokenPipeError:
        _silence_closed_pipes()
        return EXIT_READER_GONE


def _run_command(argv: Optional[Sequence[str]]) -> int:
    from viddiff.console import console_session

    parser = build_parser()
    args = parser.parse_args(argv)
    with console_session(debug=args.debug, quiet=args.quiet):
        try:
            return int(_resolve(args.handler)(args) or 0)
        except ViddiffError as exc:
            if args.debug:
                traceback.print_exc()
            print(f"viddiff: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(interrupted_message(args), file=sys.stderr)
            return 130


def _silence_closed_pipes() -> None:
    """Point stdout and stderr at /dev/null where their reader is gone, so the interpreter's final flush of
    what is still buffered does not print "Exception ignored ... BrokenPipeError" on the way out."""
    import os
    import select

    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            fd = stream.fileno()
        except (AttributeError, ValueError, OSError):  # replaced by a test harness or already closed
            continue
        poll = select.poll()
        poll.register(fd, select.POLLOUT)
        if any(events & select.POLLERR for _, events in poll.poll(0)):  # a pipe whose reader closed it
            os.dup2(devnull, fd)
    os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
