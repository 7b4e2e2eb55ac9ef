"""No request can hold the HTTP server: deadlines for a request's headers and body, and a cap on
connections that have not yet sent their headers.

uvicorn waits for a request's headers, and the app for its body, as long as the client likes: a
client that sends a few bytes at a time (or a body shorter than its Content-Length) holds a
connection, a task and its buffers for ever — before any token is checked, since the token is in
the headers. Here the headers must be complete within ``HEADER_TIMEOUT`` seconds of the
connection (or of the previous response on a kept-alive one), and a body must arrive within
``BODY_TIMEOUT`` seconds of its headers (else 408).

At most ``MAX_PENDING`` connections wait for their headers, ``MAX_PENDING_PER_CLIENT`` of them
from one address. A new connection beyond either cap closes the *oldest* waiting one (of that
address, else of all) rather than being refused: a client that means it sends its headers within
milliseconds, so a flood of silent connections, reopened as fast as they are closed, only ever
evicts itself, and /health and real clients are served throughout (refusing the newcomer instead
let 64 silent connections lock everyone out).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import h11
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0
BODY_TIMEOUT = 30.0
MAX_PENDING = 256
MAX_PENDING_PER_CLIENT = 32


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header deadline and the caps on connections awaiting headers
    (pass as ``uvicorn.Config(http=…)``)."""

    header_timeout: ClassVar[float] = HEADER_TIMEOUT
    max_pending: ClassVar[int] = MAX_PENDING
    max_pending_per_client: ClassVar[int] = MAX_PENDING_PER_CLIENT
    # waiting for headers, oldest first (a dict keeps insertion order)
    pending: ClassVar[dict[DeadlineH11Protocol, None]] = {}
    _deadline: asyncio.TimerHandle | None = None
    _served = False  # has answered a request: a kept-alive client's connection

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_headers()

    def _address(self) -> str | None:
        return self.client[0] if self.client else None

    def _await_headers(self) -> None:
        self._clear()
        address = self._address()
        same = [p for p in self.pending if p._address() == address]
        if len(same) >= self.max_pending_per_client:
            _oldest(same)._drop()
        elif len(self.pending) >= self.max_pending:
            _oldest(list(self.pending))._drop()
        self.pending[self] = None
        self._deadline = self.loop.call_later(self.header_timeout, self._drop)

    def _clear(self) -> None:
        self.pending.pop(self, None)
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _drop(self) -> None:
        """Stop waiting for this connection's headers: closed, unless they have begun to arrive."""
        self._clear()
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        super().handle_events()
        if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
            self._clear()

    def on_response_complete(self) -> None:
        self._served = True
        super().on_response_complete()
        if not self.transport.is_closing():  # kept alive: the next request's headers, in time
            self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._clear()
        super().connection_lost(exc)


def _oldest(waiting: list[DeadlineH11Protocol]) -> DeadlineH11Protocol:
    """The connection to give up first: the oldest that has never sent a request, else the oldest
    kept-alive one (a flood of connections that never speak evicts itself, not a real client that
    is between two requests)."""
    return next((p for p in waiting if not p._served), waiting[0])


class BodyDeadline:
    """ASGI middleware: an HTTP request's body must arrive within ``timeout`` seconds; a late one
    is answered 408 and the app is told the client went away."""

    def __init__(self, app: ASGIApp, timeout: float = BODY_TIMEOUT) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        state: dict[str, Any] = {"body_done": False, "started": False, "timed_out": False}

        async def timed_receive() -> Message:
            if state["body_done"] or state["timed_out"]:
                return await receive()  # after the body: wait for a disconnect as usual
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                state["timed_out"] = True
                if not state["started"]:
                    headers = [(b"content-type", b"text/plain"), (b"connection", b"close")]
                    await send({"type": "http.response.start", "status": 408, "headers": headers})
                    await send({"type": "http.response.body", "body": b"request body too slow\n"})
                    state["started"] = True
                return {"type": "http.disconnect"}
            if message["type"] == "http.request" and not message.get("more_body", False):
                state["body_done"] = True
            return message

        async def guarded_send(message: Message) -> None:
            if state["timed_out"]:
                return  # the 408 has been sent; whatever the app answers goes nowhere
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, timed_receive, guarded_send)
