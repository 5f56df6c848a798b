"""``viddiff compare`` outputs: ``--report FILE.html`` (+ ``--report-embed-videos``) and ``--save-visuals [DIR]``.

Destinations are checked before any model is called, so a typo costs nothing; the files are
written after the comparison succeeded.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from viddiff.config import Config
from viddiff.errors import ViddiffError
from viddiff.schema import Sample

if TYPE_CHECKING:
    from viddiff.report.pages import ProcessedPair

DEFAULT_VISUALS_DIR = "visuals"


class ReportError(ViddiffError):
    """A report or visuals destination cannot be used (a directory, an input video, not writable)."""


def check_report_path(path: str | Path, inputs: list[str]) -> Path:
    """The report file to write: refuse a directory, an input file, or a folder that cannot be written."""
    target = Path(path).expanduser()
    if target.is_dir():
        raise ReportError(f"--report {target} is a directory; give a file name such as {target / 'report.html'}")
    resolved = target.resolve()
    if any(resolved == Path(p).resolve() for p in inputs):
        raise ReportError(f"--report {target} is one of the input videos; choose another file name")
    ensure_writable_dir(resolved.parent, "--report")
    return target


def ensure_writable_dir(directory: Path, flag: str) -> Path:
    if directory.exists() and not directory.is_dir():
        raise ReportError(f"{flag}: {directory} is a file, not a directory")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ReportError(f"{flag}: cannot create {directory} ({exc.strerror})") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise ReportError(f"{flag}: {directory} is not writable")
    return directory


@dataclass(frozen=True)
class PairOutputs:
    """What ``viddiff compare`` was asked to write beside its printed result."""

    report: Optional[Path] = None
    embed_videos: bool = False
    visuals_dir: Optional[Path] = None

    @classmethod
    def from_args(cls, args: Any, cfg: Config, sample: Sample) -> "PairOutputs":
        report = getattr(args, "report", None)
        embed = bool(getattr(args, "report_embed_videos", False))
        if embed and not report:
            raise ReportError("--report-embed-videos needs --report FILE.html")
        inputs = [v.path for v in sample.videos]
        report_path = check_report_path(report, inputs) if report else None
        visuals_flag = getattr(args, "save_visuals", None)  # None: not given; "": given without DIR
        visuals_dir = None
        if visuals_flag is not None or cfg.run.save_visuals:
            default = Path(cfg.run.output_dir or ".") / DEFAULT_VISUALS_DIR
            visuals_dir = ensure_writable_dir(Path(visuals_flag or default).expanduser(), "--save-visuals")
        return cls(report=report_path, embed_videos=embed, visuals_dir=visuals_dir)

    def write(self, run: "ProcessedPair", cfg: Config) -> None:
        if self.visuals_dir is not None:
            from viddiff.report.figures import save_sample_visuals

            written = save_sample_visuals(self.visuals_dir, run.sample, run.result, run.videos)
            print(f"visuals written to {written}", file=sys.stderr)  # stdout may be --json
        if self.report is not None:
            from viddiff.report.pages import write_comparison_report

            write_comparison_report(self.report, run, cfg, embed_videos=self.embed_videos)
            print(f"report written to {self.report}", file=sys.stderr)
