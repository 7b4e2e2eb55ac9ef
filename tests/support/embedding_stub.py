"""A local server that speaks the OpenAI embeddings API (``POST /v1/embeddings``), for testing the
endpoint provider without a real one: deterministic vectors (hashed words, so texts that share
words are near), a key it checks, and failures on demand (statuses, slowness, a wrong size)."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from slowave_graph.neo4j_local.manager import free_port

KEY = "sk-stub-0123456789abcdef"


@dataclass
class Stub:
    dimension: int = 64
    fail_next: list[int] = field(default_factory=list)  # statuses answered before the next success
    delay: float = 0.0  # seconds before each answer
    wrong_size: bool = False  # answer one dimension too many
    batches: list[int] = field(default_factory=list)  # texts per request received
    bodies: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def vector(self, text: str, size: int) -> list[float]:
        """Hashed words, unnormalised (the provider normalises): shared words, near vectors."""
        out = [0.0] * size
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            digest = hashlib.sha256(word.removesuffix("s").encode()).digest()
            out[int.from_bytes(digest[:4], "big") % size] += 2.0 if digest[4] % 2 else -2.0
        out[0] += 0.1  # never the zero vector
        return out

    async def embeddings(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.bodies.append(body)
        if self.delay:
            await asyncio.sleep(self.delay)
        if request.headers.get("authorization") != f"Bearer {KEY}":
            sent = request.headers.get("authorization", "").removeprefix("Bearer ")
            message = f"Incorrect API key provided: {sent}"  # echoes the key, as some servers do
            return JSONResponse({"error": {"message": message, "type": "invalid_request_error"}}, 401)
        if self.fail_next:
            status = self.fail_next.pop(0)
            return JSONResponse({"error": {"message": f"stub failure {status}"}}, status)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.batches.append(len(texts))
        size = int(body.get("dimensions") or self.dimension) + (1 if self.wrong_size else 0)
        data = [
            {"object": "embedding", "index": i, "embedding": self.vector(t, size)}
            for i, t in enumerate(texts)
        ]
        data.reverse()  # the order of `data` is not promised; `index` is
        return JSONResponse({"object": "list", "data": data, "model": body["model"]})


class _Quiet(uvicorn.Server):
    @contextmanager
    def capture_signals(self) -> Iterator[None]:  # not the main thread: no signal handlers
        yield


@contextmanager
def embedding_stub(**options: Any) -> Iterator[Stub]:
    """The stub served on a free loopback port from a thread of its own (the provider's client is
    synchronous, so the stub must not share the caller's event loop)."""
    stub = Stub(**options)
    port = free_port()
    app = Starlette(routes=[Route("/v1/embeddings", stub.embeddings, methods=["POST"])])
    server = _Quiet(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the embedding stub did not start"
        time.sleep(0.02)
    stub.url = f"http://127.0.0.1:{port}/v1"
    try:
        yield stub
    finally:
        server.should_exit = True
        thread.join(timeout=10)
