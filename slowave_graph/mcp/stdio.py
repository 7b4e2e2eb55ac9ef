"""stdin for the stdio transport: every request line reaches the server, so every request is answered.

The SDK's strict JSON parser refuses a line that escapes a lone surrogate (``"\\ud800"``, not
Unicode), and the transport then drops the line without a word: the client waits for an answer
that never comes. Python's JSON parser reads such a line; this filter re-encodes it with each lone
surrogate replaced by the noncharacter U+FFFF, which the tools' edge check refuses
(``invalid_input`` with the path of the value) like any other value that is not text.
"""

from __future__ import annotations

import io
import json
import re
import sys
from typing import Any, BinaryIO

# a lone surrogate: not part of a high+low pair
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
NONCHARACTER = "\uffff"


def _replace(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE.sub(NONCHARACTER, value)
    if isinstance(value, dict):
        return {_replace(k): _replace(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v) for v in value]
    return value


def repair_line(line: bytes) -> bytes:
    """The line as sent, or — when it escapes lone surrogates — re-encoded without them."""
    if b"\\u" not in line:
        return line
    try:
        message = json.loads(line)
        repaired = _replace(message)
        if repaired == message:
            return line
        return json.dumps(repaired, ensure_ascii=False).encode() + b"\n"
    except (ValueError, RecursionError):
        # not JSON, or nested deeper than Python's parser recurses (1,500 "[" in 3 KB): the line
        # goes on unchanged and the SDK's own parser, which bounds nesting, refuses it. The
        # repair must never raise: an exception here ends the stdin reader and with it the server.
        return line


class _RepairedLines(io.RawIOBase):
    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.pending:
            self.pending = repair_line(self.source.readline())
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def install() -> None:
    """Put the repairing stdin in place (call before serving stdio)."""
    raw = _RepairedLines(sys.stdin.buffer)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")
