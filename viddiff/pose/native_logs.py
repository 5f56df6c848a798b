"""Keep the native libraries' start-up chatter (MediaPipe's absl/glog lines, TFLite's "Created TensorFlow Lite
XNNPACK delegate") off the console unless ``--debug``.

Those lines are written by C++ straight to file descriptor 2, so Python's logging cannot filter them and
environment variables do not reach all of them (TFLite's minimal logging ignores ``GLOG_minloglevel``). The
cause is fixed where they are written: while a native graph is built and runs (the legacy API logs on its first
frame, the Tasks API at construction and on some later frames), descriptor 2 points at a temporary file;
afterwards the native lines go to the debug log and anything else written meanwhile (another thread's log line)
is written back to the real stderr, later but not lost.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
from typing import Iterator

log = logging.getLogger(__name__)
NATIVE_LINE = re.compile(
    r"^(?:[IWEF]\d{4} \d\d:\d\d:\d\d|INFO: |WARNING: All log messages before absl|WARNING: Logging before|"
    r"Created TensorFlow Lite)"
)
"""Lines of absl/glog (``W0000 00:00:...``) and of TFLite's minimal logger."""


@contextlib.contextmanager
def native_stderr_to_debug(logger: logging.Logger = log) -> Iterator[None]:
    """Descriptor 2 captured for the block (unless ``logger`` shows debug lines, when nothing is touched)."""
    if logger.isEnabledFor(logging.DEBUG):
        yield
        return
    try:
        sys.stderr.flush()
    except (AttributeError, ValueError):
        pass
    with tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except (AttributeError, ValueError):
                pass
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            _replay(captured.read().decode("utf-8", "replace"), logger)


def _replay(text: str, logger: logging.Logger) -> None:
    kept = []
    for line in text.splitlines():
        if NATIVE_LINE.match(line):
            logger.debug("native: %s", line)
        elif line.strip():
            kept.append(line)
    if kept:
        try:
            sys.stderr.write("\n".join(kept) + "\n")
            sys.stderr.flush()
        except (AttributeError, ValueError):
            pass
