"""How ``viddiff serve`` writes its log: ``--log-format text`` (timestamped lines) or ``json`` (one object a line).

A record may carry structured fields as ``extra={"fields": {...}}`` (the access and job lifecycle lines do):
the JSON format puts them beside the message, so a log pipeline can filter on them; the text line already says
them in its message.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Optional

from viddiff.console import ConsoleHandler

FIELDS = "fields"
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, FIELDS, {}),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def use_log_format(log_format: str, level: Optional[str]) -> None:
    """Switch the command's console handler (:func:`viddiff.console.console_session`) to ``log_format`` and
    viddiff's loggers to ``level`` (``None``: as ``--debug`` / ``-q`` set them); the session undoes both when
    the command ends."""
    formatter = JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, ConsoleHandler):
            handler.setFormatter(formatter)
    if level is not None:
        logging.getLogger("viddiff").setLevel(level.upper())
