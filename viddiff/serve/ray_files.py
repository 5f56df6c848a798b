"""A job's files on Ray, never as paths: its videos go to the actor through Ray's object store, and its
report comes back to the head with its events.

The head reads the job's two uploaded files and puts them in the object store once (:func:`read_videos`,
then ``ray.put``); a re-run on another actor gets the same objects. The actor writes them to a directory of
its own for the length of the comparison (:func:`job_on_this_node`), writes the report there, and sends its
bytes back (:class:`ReportFile`) just before the result event; the head writes it under its ``--data-dir``
before it passes the result on. So an actor needs no path of the head's, on any node.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from viddiff.serve.executor import JobSpec


@dataclass(frozen=True)
class ReportFile:
    """The job's HTML report, made on the actor."""

    data: bytes


def read_videos(spec: JobSpec) -> tuple[bytes, bytes]:
    """The job's two videos as bytes (on the head, which holds them)."""
    return Path(spec.video_a).read_bytes(), Path(spec.video_b).read_bytes()


@contextlib.contextmanager
def job_on_this_node(spec: JobSpec, video_a: bytes, video_b: bytes) -> Iterator[JobSpec]:
    """``spec`` with its videos (and report, if asked for) in a directory of this process's, removed after."""
    with tempfile.TemporaryDirectory(prefix=f"viddiff-{spec.job_id}-") as folder:
        paths = {}
        for side, path, data in (("a", spec.video_a, video_a), ("b", spec.video_b, video_b)):
            paths[side] = Path(folder) / f"{side}{Path(path).suffix}"
            paths[side].write_bytes(data)
        report = str(Path(folder) / "report.html") if spec.report_path else None
        yield spec.model_copy(update={"video_a": str(paths["a"]), "video_b": str(paths["b"]), "report_path": report})


def write_report(path: Path, data: bytes) -> None:
    """The report at ``path`` on the head, whole or not at all (a re-run writes it again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    os.replace(part, path)
