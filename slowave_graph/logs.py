"""Where the log goes and what a record looks like.

Records go to stderr — never stdout, which on the stdio transport carries JSON-RPC alone — and,
with ``SLOWAVE_LOG_FILE``, to a file as well, rotated by size (``SLOWAVE_LOG_MAX_BYTES``,
``SLOWAVE_LOG_BACKUPS`` old files kept; the standard library's ``RotatingFileHandler``). Each
record is one line: text, or with ``SLOWAVE_LOG_FORMAT=json`` one JSON object a log shipper reads
as is. A record written during a tool call carries the call's request id and tool (telemetry's
``CallTimer``), so a call's line, its Neo4j statements (at DEBUG) and any warning it caused can be
found together: ``grep req_5f0c… server.log``.

Secrets are not logged: settings hold them as ``SecretStr``, bearer tokens are compared and never
printed, and an embedding endpoint's error text has its key replaced (a test reads a whole DEBUG
log of a server with a token, named tokens and a Neo4j password for them).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from slowave_graph.telemetry import current_call

LogFormat = Literal["text", "json"]
TEXT = "%(asctime)s %(levelname)s %(name)s%(call)s: %(message)s"
# libraries that are chatty at INFO; their warnings still come through
QUIET = ("neo4j", "httpx", "httpx2", "sentence_transformers", "mcp.server.lowlevel", "uvicorn.access")


class CallContext(logging.Filter):
    """Tags each record with the tool call it was written for (``request_id``, ``tool``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        call = current_call()
        record.request_id = call.request_id if call is not None else ""
        record.tool = call.tool if call is not None else ""
        record.call = f" [{call.request_id} {call.tool}]" if call is not None and call.tool else ""
        return True


class JsonLines(logging.Formatter):
    """One JSON object per record: time (UTC, ISO 8601), level, logger, message, the call's
    request id and tool when there is one, and the exception's traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if getattr(record, "request_id", ""):
            out["request_id"] = record.__dict__["request_id"]  # set by CallContext
            out["tool"] = record.__dict__.get("tool", "")
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure(
    level: str,
    file: Path | None = None,
    max_bytes: int = 10 * 2**20,
    backups: int = 5,
    form: LogFormat = "text",
) -> None:
    """The process's logging, once, at start-up (cli.main). Like ``logging.basicConfig`` it leaves
    a root logger that already has handlers alone (an embedding application's, pytest's)."""
    if logging.getLogger().handlers:
        return
    formatter: logging.Formatter = JsonLines() if form == "json" else logging.Formatter(TEXT)
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True)
        handlers.append(
            logging.handlers.RotatingFileHandler(
                file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
            )
        )
    context = CallContext()
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(context)
    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO), handlers=handlers)
    for noisy in QUIET:
        logging.getLogger(noisy).setLevel(logging.WARNING)
