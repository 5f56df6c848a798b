"""``--log-format``: the console handler's lines as timestamped text or one JSON object each."""

from __future__ import annotations

import io
import json
import logging
import re

from viddiff.console import console_session
from viddiff.serve.log_format import FIELDS, use_log_format


def written(log_format: str, level: str | None, emit) -> str:
    stream = io.StringIO()
    with console_session(stream=stream):
        use_log_format(log_format, level)
        emit(logging.getLogger("viddiff.serve.access"))
    return stream.getvalue()


def test_text_lines_have_a_time_and_json_lines_carry_the_fields():
    def access(log):
        log.info("GET /healthz %d", 200, extra={FIELDS: {"status": 200, "request_id": "r1"}})

    text = written("text", None, access)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} INFO viddiff\.serve\.access: GET /healthz 200\n", text)
    (line,) = written("json", None, access).splitlines()
    record = json.loads(line)
    assert record["message"] == "GET /healthz 200" and record["status"] == 200 and record["request_id"] == "r1"
    assert record["level"] == "info" and record["logger"] == "viddiff.serve.access" and record["time"].endswith("+00:00")


def test_an_exception_stays_on_its_json_line_and_the_level_filters():
    def failing(log):
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("job failed")

    (line,) = written("json", None, failing).splitlines()
    assert "ValueError: boom" in json.loads(line)["exception"]
    assert written("text", "warning", lambda log: log.info("an access line")) == ""
