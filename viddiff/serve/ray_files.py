"""A job's files on Ray, never as paths: its videos go to the actor through Ray's object store, and its
report comes back to the head with its events.

The head reads the job's uploaded files (its two videos, and any other views and calibrations) and puts them
in the object store once (:func:`read_files`, then ``ray.put``); a re-run on another actor gets the same objects. The actor writes them to a directory of
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
from typing import Iterator, Sequence

from viddiff.serve.executor import JobSpec


@dataclass(frozen=True)
class ReportFile:
    """The job's HTML report, made on the actor."""

    data: bytes


def read_files(spec: JobSpec) -> list[bytes]:
    """The job's files as bytes, in the order of :meth:`JobSpec.files` (on the head, which holds them)."""
    return [Path(path).read_bytes() for path in spec.files()]


@contextlib.contextmanager
def job_on_this_node(spec: JobSpec, files: Sequence[bytes]) -> Iterator[JobSpec]:
    """``spec`` with its files (``files``, in the order of :meth:`JobSpec.files`) and its report, if asked for,
    in a directory of this process's, removed after."""
    with tempfile.TemporaryDirectory(prefix=f"viddiff-{spec.job_id}-") as folder:
        here: dict[str, str] = {}
        for i, (path, data) in enumerate(zip(spec.files(), files, strict=True)):
            here[path] = str(Path(folder) / f"{i}{''.join(Path(path).suffixes)}")  # .qca.txt: the reader's cue
            Path(here[path]).write_bytes(data)
        report = str(Path(folder) / "report.html") if spec.report_path else None
        yield spec.model_copy(update={
            "video_a": here[spec.video_a], "video_b": here[spec.video_b],
            "views_a": [here[p] for p in spec.views_a], "views_b": [here[p] for p in spec.views_b],
            "calibration_a": here.get(spec.calibration_a or ""), "calibration_b": here.get(spec.calibration_b or ""),
            "report_path": report,
        })


def write_report(path: Path, data: bytes) -> None:
    """The report at ``path`` on the head, whole or not at all (a re-run writes it again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.write_bytes(data)
    os.replace(part, path)
