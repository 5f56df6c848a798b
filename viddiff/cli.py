"""The ``viddiff`` command.

Parsing lives here; each subcommand's work lives in the module that owns it
and is imported lazily, so ``viddiff --help`` stays fast and a missing heavy
dependency only affects the commands that need it.
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from typing import Callable, Optional, Sequence

from viddiff.errors import ViddiffError

Handler = Callable[[argparse.Namespace], int]
MODES = ["closed", "open", "describe"]
MODE_HELP = "VidDiffBench: closed or open (required); ViDiC-1K: describe (the default there)"


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="YAML config file (default: built-in defaults = paper settings)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value, e.g. --set localizer.method=uniform (repeatable)",
    )


def _add_dataset_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--benchmark",
        choices=["viddiffbench", "vidic"],
        help="which benchmark --dataset holds (default: data.benchmark, i.e. viddiffbench)",
    )
    p.add_argument("--dataset", help="'hf' (HF hub) or a local dataset directory / .json / .jsonl / .parquet file")
    p.add_argument("--split", choices=["easy", "medium", "hard"], action="append", help="benchmark split (repeatable)")
    p.add_argument("--subset", type=int, metavar="N_PER_ACTION", help="keep the first N samples of each action")
    p.add_argument("--limit", type=int, metavar="N", help="keep the first N samples")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="viddiff",
        description="Video action differencing: the VidDiff method and the VidDiffBench evaluation.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and debug logs")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser("run", help="run the VidDiff method on VidDiffBench and score it")
    _add_dataset_args(run)
    run.add_argument("--mode", choices=MODES, help=MODE_HELP)
    run.add_argument("--output", help="results directory (default: runs/<split>-<mode>)")
    run.add_argument("--resume", action="store_true", help="continue a killed run in --output")
    run.add_argument("--swap-videos", action="store_true", help="sanity check: swap A and B (predictions should flip)")
    run.add_argument("--same-video", action="store_true", help="sanity check: B := A (predictions should split evenly)")
    run.add_argument("--save-visuals", action="store_true", help="write segmentation plots and keyframe strips")
    run.add_argument(
        "--report", action="store_true", help="write an HTML report: <output>/report/index.html and one page per sample"
    )
    run.add_argument(
        "--report-embed-videos", action="store_true", help="copy the videos into the report pages instead of linking them"
    )
    _add_config_args(run)
    run.set_defaults(handler="viddiff.pipeline:cli_run")

    cmp_ = sub.add_parser("compare", help="compare two of your own videos")
    cmp_.add_argument("video_a")
    cmp_.add_argument("video_b")
    cmp_.add_argument("--action", help="what the action is, e.g. 'barbell back squat' (optional with --describe)")
    cmp_.add_argument(
        "--describe",
        action="store_true",
        help="write a ViDiC-style description of similarities and differences along 7 dimensions",
    )
    cmp_.add_argument("--difference", action="append", default=[], help="a candidate difference (closed mode; repeatable)")
    cmp_.add_argument("--n-differences", type=int, help="open mode: propose at most N differences")
    cmp_.add_argument("--fps", type=float, help="inference fps (default: data.default_fps)")
    cmp_.add_argument("--fps-original", type=float, help="frame rate of image-directory videos (files carry their own)")
    cmp_.add_argument("--json", action="store_true", help="print the result as JSON")
    cmp_.add_argument("--report", metavar="FILE.html", help="write a self-contained HTML report of the comparison")
    cmp_.add_argument(
        "--report-embed-videos", action="store_true", help="copy both videos into the report instead of linking them"
    )
    cmp_.add_argument(
        "--save-visuals",
        nargs="?",
        const="",
        metavar="DIR",
        help="write segmentation and keyframe PNGs to DIR/compare/ (default DIR: ./visuals, or run.output_dir/visuals)",
    )
    _add_config_args(cmp_)
    cmp_.set_defaults(handler="viddiff.api:cli_compare")

    ev = sub.add_parser("eval", help="score VidDiffBench predictions or ViDiC-1K responses (--benchmark vidic)")
    ev.add_argument(
        "--predictions",
        required=True,
        help="VidDiffBench: official predictions JSON; ViDiC-1K: responses, as `viddiff run` writes them "
        '([{"id", "response"}]), {id: text}, or a ViDiC-1K repository response list',
    )
    ev.add_argument("--mode", choices=MODES, help=MODE_HELP)
    _add_dataset_args(ev)
    ev.add_argument(
        "--output",
        help="directory for metrics.json, report.md and differences.csv (ViDiC-1K: checklist.csv) "
        "(default: the predictions file's directory)",
    )
    _add_config_args(ev)
    ev.set_defaults(handler="viddiff.eval.cli:cli_eval")

    base = sub.add_parser("baseline", help="LMM baseline: frames of both videos to a multimodal chat model")
    base.add_argument("--model", required=True)
    _add_dataset_args(base)
    base.add_argument("--mode", choices=MODES, help=MODE_HELP)
    base.add_argument("--output")
    base.add_argument("--resume", action="store_true")
    _add_config_args(base)
    base.set_defaults(handler="viddiff.baselines.lmm:cli_baseline")

    abl = sub.add_parser("ablate", help="all localizer variants over one split, one table beside the paper's")
    _add_dataset_args(abl)
    abl.add_argument("--mode", choices=["closed"], default="closed", help="closed accuracy (the paper's ablation)")
    abl.add_argument(
        "--variant",
        action="append",
        help="localizer method to include (repeatable; default: all, see `localizer.method`)",
    )
    abl.add_argument("--output", help="results directory (default: runs/ablate-<split>-closed)")
    abl.add_argument("--resume", action="store_true", help="continue a killed ablation in --output")
    _add_config_args(abl)
    abl.set_defaults(handler="viddiff.ablate:cli_ablate")

    data = sub.add_parser("data", help="dataset tools")
    data_sub = data.add_subparsers(dest="data_command", metavar="DATA_COMMAND")
    data_sub.required = True
    synth = data_sub.add_parser("synth", help="write the synthetic benchmark (offline tests and demos)")
    synth.add_argument("--out", required=True)
    synth.add_argument("--pairs", type=int, default=12)
    synth.add_argument("--seed", type=int, default=0)
    synth.add_argument(
        "--benchmark", choices=["viddiffbench", "vidic"], default="viddiffbench", help="row format to write"
    )
    synth.set_defaults(handler="viddiff.data.synthetic:cli_synth")
    check = data_sub.add_parser("check", help="list missing or unreadable videos of a dataset")
    _add_dataset_args(check)
    _add_config_args(check)
    check.set_defaults(handler="viddiff.data.check:cli_check")
    download = data_sub.add_parser(
        "download",
        help="fetch and unpack the video archives the benchmark repo ships; print the steps for the others' videos",
    )
    _add_dataset_args(download)
    download.add_argument(
        "--domain",
        action="append",
        choices=["fitness", "ballsports", "diving", "music", "surgery"],
        help="only this domain (repeatable; default: every domain of the selected samples)",
    )
    download.add_argument("--keep-archives", action="store_true", help="keep the zip files after unpacking them")
    _add_config_args(download)
    download.set_defaults(handler="viddiff.data.download:cli_download")

    cache = sub.add_parser("cache", help="model-call cache tools")
    cache_sub = cache.add_subparsers(dest="cache_command", metavar="CACHE_COMMAND")
    cache_sub.required = True
    stats = cache_sub.add_parser("stats", help="entries and size per kind")
    _add_config_args(stats)
    stats.set_defaults(handler="viddiff.cache:cli_stats")
    clear = cache_sub.add_parser("clear", help="delete every cached entry")
    _add_config_args(clear)
    clear.set_defaults(handler="viddiff.cache:cli_clear")
    return parser


def _resolve(spec: str) -> Handler:
    import importlib

    module_name, func_name = spec.split(":")
    return getattr(importlib.import_module(module_name), func_name)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.debug else logging.WARNING if args.quiet else logging.INFO
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpx2", "openai", "httpcore", "urllib3", "PIL"):
        logging.getLogger(noisy).setLevel(logging.WARNING if not args.debug else logging.DEBUG)
    try:
        return int(_resolve(args.handler)(args) or 0)
    except ViddiffError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"viddiff: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("viddiff: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
