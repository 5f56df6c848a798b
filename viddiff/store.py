"""Results directory I/O: append-only ``samples.jsonl`` that survives a kill, atomic JSON files.

A run can be SIGKILLed at any moment. Each finished sample is one complete
line written with a single ``write`` on an ``O_APPEND`` descriptor and
fsynced; on resume a trailing partial line (the only possible damage) is cut
off, and nothing else is ever rewritten in place.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from viddiff.errors import ViddiffError
from viddiff.schema import SampleResult

log = logging.getLogger(__name__)
SAMPLES_FILE = "samples.jsonl"


class ResultsStore:
    """The finished-sample log of one run directory."""

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)
        self.path = self.out_dir / SAMPLES_FILE

    def load(self) -> dict[str, SampleResult]:
        """Finished samples by key; repairs a torn last line left by a kill."""
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        results: dict[str, SampleResult] = {}
        good_end = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                result = SampleResult.model_validate_json(line)
            except ValidationError:
                break
            if result.sample_key in results:
                raise ViddiffError(f"{self.path}: sample {result.sample_key} appears twice; the file was edited by hand?")
            results[result.sample_key] = result
            good_end += len(line)
        if good_end < len(data):
            log.warning("%s: dropping a partial last line (%d bytes) left by an interrupted run", self.path, len(data) - good_end)
            with open(self.path, "r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
        return results

    def append(self, result: SampleResult) -> None:
        line = (result.model_dump_json() + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = os.write(fd, line)
            if written != len(line):
                raise OSError(f"short write to {self.path} ({written} of {len(line)} bytes)")
            os.fsync(fd)
        finally:
            os.close(fd)


def write_json_atomic(path: Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temp file + rename so readers never see a half-written file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def prepare_output_dir(out_dir: Path) -> Path:
    """Create the output directory or say clearly why it cannot be used."""
    out_dir = Path(out_dir).expanduser()
    if out_dir.exists() and not out_dir.is_dir():
        raise ViddiffError(f"output path {out_dir} is an existing file, not a directory; choose another --output")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ViddiffError(f"cannot create output directory {out_dir}: {exc.strerror}; choose another --output") from None
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ViddiffError(f"output directory {out_dir} is not writable; choose another --output")
    return out_dir
