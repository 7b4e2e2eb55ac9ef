"""Log records are one line each, and those written during a tool call carry its request id and
tool (text and JSON forms); the call's own line names its outcome."""

from __future__ import annotations

import io
import json
import logging

from slowave_graph.logs import TEXT, CallContext, JsonLines
from slowave_graph.telemetry import tool_call


def captured(formatter: logging.Formatter) -> tuple[logging.Logger, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(formatter)
    handler.addFilter(CallContext())
    logger = logging.getLogger(f"test-logs-{id(out)}")
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(logging.DEBUG)
    return logger, out


def test_json_records_carry_the_calls_request_id_one_line_each() -> None:
    logger, out = captured(JsonLines())
    logger.info("outside any call")
    with tool_call(None, "slowave_recall") as call:
        logger.warning("inside:\na second line of text")
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 3  # newlines inside a message or a traceback stay inside the JSON string
    outside, inside, failed = (json.loads(line) for line in lines)
    assert "request_id" not in outside and outside["message"] == "outside any call"
    assert inside["request_id"] == call.request_id and call.request_id.startswith("req_")
    assert inside["tool"] == "slowave_recall" and inside["level"] == "WARNING"
    assert failed["request_id"] == call.request_id and "ValueError: boom" in failed["exception"]
    assert inside["time"].endswith("+00:00")


def test_text_records_name_the_call_and_two_calls_differ() -> None:
    logger, out = captured(logging.Formatter(TEXT))
    ids = []
    for tool in ("slowave_activate", "slowave_remember"):
        with tool_call(None, tool) as call:
            logger.info("working")
            ids.append(call.request_id)
    logger.info("after")
    first, second, after = out.getvalue().splitlines()
    assert f"[{ids[0]} slowave_activate]: working" in first
    assert f"[{ids[1]} slowave_remember]: working" in second and ids[0] != ids[1]
    assert "req_" not in after
