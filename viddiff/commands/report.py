"""``viddiff report RUN_DIR``: build or rebuild the HTML pages of a finished run, without any model call."""

from __future__ import annotations

import argparse
from pathlib import Path

from viddiff.runs.report_only import rebuild_report


def cli_report(args: argparse.Namespace) -> int:
    index = rebuild_report(Path(args.run_dir), embed_videos=args.embed_videos)
    print(f"report in {index}")
    return 0
