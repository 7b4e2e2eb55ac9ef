"""The stdio transport's lines: each one reaches the server or is answered, and none ends it.

The SDK reads a line, validates it as a JSON-RPC message and, when that fails, passes the error to
the session, which logs it and answers nothing: the client waits for an answer that never comes.
So every line is checked here first, with the SDK's own validator on the very text the SDK will
read, and a line it would refuse is answered: -32700 for what is not JSON (or nests deeper, or
holds a longer number, than the parser takes), -32600 for JSON that is not a JSON-RPC message, the
id echoed when the line has a valid one. Such a line reaches the SDK as a notification with this
process's private method name (``REFUSED``), which ``refusals_answered`` turns into the error
response on the SDK's own writer, so answers never interleave on stdout.

Lone surrogates (``"\\ud800"``, not Unicode) are what Python's JSON parser reads but the SDK's
refuses: in arguments each is replaced by the noncharacter U+FFFF, which the tools' edge check
refuses (``invalid_input`` with the path of the value) like any other value that is not text; in
an id, the request is refused (-32600), since an id changed on the way could not be matched.
"""

from __future__ import annotations

import io
import json
import re
import secrets
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

# a lone surrogate: not part of a high+low pair
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
NONCHARACTER = "\uffff"
# the method of the stand-in for a refused line: private to this process, so no client can send it
REFUSED = f"slowave/refused/{secrets.token_hex(8)}"
PARSE_ERROR = "Parse error: the line is not JSON the server reads (nesting and numbers are bounded)"


def _replace(value: Any) -> Any:
    if isinstance(value, str):
        return _LONE.sub(NONCHARACTER, value)
    if isinstance(value, dict):
        return {_replace(k): _replace(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v) for v in value]
    return value


def _refusal(code: int, message: str, ident: int | str | None = None) -> str:
    return json.dumps(
        {"jsonrpc": "2.0", "method": REFUSED, "params": {"code": code, "message": message, "id": ident}}
    )


def _valid_id(message: Any) -> int | str | None:
    """The line's id when it is one a client could match (an integer, or text without lone
    surrogates), else None."""
    ident = message.get("id") if isinstance(message, dict) else None
    if isinstance(ident, int) and not isinstance(ident, bool):
        return ident
    if isinstance(ident, str) and not _LONE.search(ident):
        return ident
    return None


def _loads(text: str) -> Any:
    """Python's reading of a line, or None where it cannot read it (nesting, number length)."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def screen(line: bytes) -> str | None:
    """What the SDK is to read for one line of stdin: the line, its stand-in when it must be
    refused, or None for a blank line (nothing to answer). Never raises: an exception here would
    end the stdin reader and with it the server."""
    text = line.decode("utf-8", errors="replace").rstrip("\r\n")  # as the SDK decodes it
    if not text.strip():
        return None
    if "\\u" in text and (message := _loads(text)) is not None:
        repaired = _replace(message)
        if repaired != message:
            ident = message.get("id") if isinstance(message, dict) else None
            if isinstance(ident, str) and _LONE.search(ident):
                return _refusal(types.INVALID_REQUEST, "Invalid Request: the id holds a lone surrogate")
            text = json.dumps(repaired, ensure_ascii=False)
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            return _refusal(types.PARSE_ERROR, PARSE_ERROR)
        return _refusal(
            types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", _valid_id(_loads(text))
        )
    except (ValueError, RecursionError):
        return _refusal(types.PARSE_ERROR, PARSE_ERROR)
    # a carriage return in a valid line lies between tokens (in a string it would be invalid), and
    # the SDK's text reader would cut the line there: it is whitespace like a space
    return text.replace("\r", " ")


class _ScreenedLines(io.RawIOBase):
    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self.pending = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self.pending:
            line = self.source.readline()
            if not line:
                return 0  # end of input
            screened = screen(line)
            if screened is not None:
                self.pending = screened.encode() + b"\n"
        size = min(len(buffer), len(self.pending))
        buffer[:size] = self.pending[:size]
        self.pending = self.pending[size:]
        return size


def install() -> None:
    """Put the screening stdin in place (call before serving stdio)."""
    raw = _ScreenedLines(sys.stdin.buffer)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")


@asynccontextmanager
async def refusals_answered(
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
    write_stream: MemoryObjectSendStream[SessionMessage],
) -> AsyncIterator[MemoryObjectReceiveStream[SessionMessage | Exception]]:
    """The session's incoming messages, with the stand-ins of refused lines answered on the
    transport's writer instead (and anything the SDK still could not read answered -32700)."""
    send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

    async def forward() -> None:
        async with send:
            async for item in read_stream:
                refused = _refused(item)
                if refused is None:
                    await send.send(item)
                else:
                    await write_stream.send(SessionMessage(refused))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(forward)
        try:
            yield receive
        finally:
            tasks.cancel_scope.cancel()


def _refused(item: SessionMessage | Exception) -> types.JSONRPCError | None:
    if isinstance(item, Exception):
        error = types.ErrorData(code=types.PARSE_ERROR, message=PARSE_ERROR)
        return types.JSONRPCError(jsonrpc="2.0", id=None, error=error)
    message = item.message
    if not isinstance(message, types.JSONRPCNotification) or message.method != REFUSED:
        return None
    params = message.params or {}
    error = types.ErrorData(code=int(params["code"]), message=str(params["message"]))
    return types.JSONRPCError(jsonrpc="2.0", id=params.get("id"), error=error)
