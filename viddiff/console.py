"""The terminal side of the ``viddiff`` command: log lines, progress, and quiet libraries.

- One handler writes every log record through tqdm, so a line never lands in the middle of a bar.
- A message that repeats for every video (logged with ``extra=ONCE_PER_RUN``) is printed the first
  time only.
- Progress is shown as tqdm bars on a terminal and as plain periodic lines elsewhere (log files, CI),
  so no cursor codes end up in files. ``-q`` (viddiff logging above INFO) shows none.
- Library chatter stays out of sight unless ``--debug``: other libraries' INFO lines (open_clip's
  "Parsing model identifier", httpx requests), huggingface_hub's own handler (its warnings would
  print twice), FFmpeg inside decord (PyAV's FFmpeg is silent unless asked).

Nothing here runs at import time; :func:`console_session` sets it up and takes it down.
"""

from __future__ import annotations

import logging
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Callable, Iterator, Optional, Protocol, Sequence

ONCE_PER_RUN = {"once_per_run": True}
"""``extra=`` for a log call made once per video with the same text: the console says it once."""

def count_of(n: int, noun: str, plural: str = "") -> str:
    """``n`` and the noun in the number it takes: ``1 frame``, ``2 frames``, ``0 frames``."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


PROGRESS_INTERVAL_S = 30.0
"""Seconds between plain progress lines when stderr is not a terminal."""
_FORMAT = "%(levelname)s %(name)s: %(message)s"
_PACKAGE_LOGGER = "viddiff"


class ConsoleHandler(logging.Handler):
    """Writes records through ``tqdm.write`` (bars are cleared and redrawn around the line) and
    drops repeats of once-per-run messages."""

    def __init__(self, stream: IO[str]):
        super().__init__()
        self.stream = stream
        self.said: set[tuple[str, int, str]] = set()
        self.setFormatter(logging.Formatter(_FORMAT))
        self.addFilter(_name_root_records)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if getattr(record, "once_per_run", False):
                key = (record.name, record.levelno, record.getMessage())
                if key in self.said:
                    return
                self.said.add(key)
            self._write(self.format(record))
        except Exception:
            self.handleError(record)

    def _write(self, line: str) -> None:
        from tqdm import tqdm

        tqdm.write(line, file=self.stream)


def _name_root_records(record: logging.LogRecord) -> bool:
    """Libraries that log through the root logger (open_clip) are named by their package, not 'root'."""
    if record.name == "root":
        parts = Path(record.pathname).parts
        if "site-packages" in parts[:-2]:
            record.name = parts[parts.index("site-packages") + 1]
    return True


@contextmanager
def console_session(*, debug: bool = False, quiet: bool = False, stream: Optional[IO[str]] = None) -> Iterator[ConsoleHandler]:
    """Logging for one command: viddiff's INFO (or DEBUG/WARNING), other libraries' WARNING and up.

    Handlers already on the root logger (an embedding app's, pytest's) are left in place. The
    previous setup is restored on exit, so calling ``main()`` twice in a process neither doubles
    handlers nor leaks levels.
    """
    handler = ConsoleHandler(stream or sys.stderr)
    root, package = logging.getLogger(), logging.getLogger(_PACKAGE_LOGGER)
    saved_levels = (root.level, package.level)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    package.setLevel(logging.DEBUG if debug else logging.WARNING if quiet else logging.INFO)
    restore_ffmpeg = _quiet_libraries(debug)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(saved_levels[0])
        package.setLevel(saved_levels[1])
        restore_ffmpeg()


def _quiet_libraries(debug: bool) -> Callable[[], None]:
    """Route library output through the one handler (or keep it quiet); returns how to undo the FFmpeg part."""
    try:
        import huggingface_hub.utils.logging as hf_logging  # cheap: the package imports lazily
    except ImportError:
        pass
    else:
        hub = hf_logging.get_logger()
        # it installs its own stderr handler at import; with propagation to ours every line printed twice
        hub.handlers = [h for h in hub.handlers if type(h) is not logging.StreamHandler]
        hub.setLevel(logging.NOTSET)
    if not debug:
        return lambda: None
    import av.logging

    previous = av.logging.get_level()
    av.logging.set_level(av.logging.WARNING)  # FFmpeg's messages as "libav" log records (PyAV drops them by default)
    return lambda: av.logging.set_level(previous)


# --------------------------------------------------------------------------- progress


class Progress(Protocol):
    def update(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


class _PlainProgress:
    """Progress of several named counters as one plain log line at most every ``interval_s`` seconds,
    and a last line on close (for logs and pipes, where bars would leave cursor codes)."""

    def __init__(self, names: Sequence[str], total: int, unit: str, interval_s: float):
        self.counts = {name: 0 for name in names}
        self.total, self.unit, self.interval_s = total, unit, interval_s
        self.started = self.last = time.monotonic()
        self.closed = False
        self.log = logging.getLogger(f"{_PACKAGE_LOGGER}.progress")

    def counter(self, name: str) -> "_PlainCounter":
        return _PlainCounter(self, name)

    def update(self, name: str, n: int) -> None:
        self.counts[name] += n
        now = time.monotonic()
        if now - self.last >= self.interval_s:
            self.last = now
            self._report()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._report()

    def _report(self) -> None:
        done = ", ".join(f"{name} {count}/{self.total}" for name, count in self.counts.items())
        self.log.info("%s %s (%.0f s)", done, self.unit + "s", time.monotonic() - self.started)


class _PlainCounter:
    def __init__(self, progress: _PlainProgress, name: str):
        self.progress, self.name = progress, name

    def update(self, n: int = 1) -> None:
        self.progress.update(self.name, n)

    def close(self) -> None:
        self.progress.close()


class _Silent:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def stage_progress(
    names: Sequence[str], total: int, *, unit: str = "sample", stream: Optional[IO[str]] = None,
    interval_s: Optional[float] = None,
) -> dict[str, Progress]:
    """One progress counter per stage: tqdm bars on a terminal, plain periodic lines otherwise, none with ``-q``."""
    stream = stream or sys.stderr
    if not logging.getLogger(f"{_PACKAGE_LOGGER}.progress").isEnabledFor(logging.INFO):
        return {name: _Silent() for name in names}
    if _is_terminal(stream):
        from tqdm import tqdm

        width = max(len(name) for name in names)
        return {
            name: tqdm(total=total, desc=f"{name:<{width}}", position=i, unit=unit, leave=True, file=stream)
            for i, name in enumerate(names)
        }
    plain = _PlainProgress(names, total, unit, PROGRESS_INTERVAL_S if interval_s is None else interval_s)
    return {name: plain.counter(name) for name in names}


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
