"""Embeddings from an OpenAI-compatible endpoint (``POST {base}/embeddings``).

OpenAI, Azure OpenAI, Ollama, vLLM, Text Embeddings Inference, LM Studio and llama.cpp's server
all speak this API, so one provider serves a hosted model one pays for and a self-hosted one.
Selected by ``SLOWAVE_EMBEDDING_MODEL=openai:<model>`` with the endpoint settings
(``SLOWAVE_EMBEDDING_BASE_URL``, ``…_API_KEY_ENV``, ``…_DIMENSIONS``, ``…_BATCH_SIZE``,
``…_TIMEOUT``, ``…_RETRIES``; docs/configuration.md).

The stored model name says what produced the vectors: ``openai:<model>``, and
``openai:<model>@<dimensions>`` when the endpoint shortens them (the ``dimensions`` parameter of
models trained for it), so a database names the model and size its memories were embedded with
and a later start without settings loads the same. The key is read from the environment variable
the settings name, never stored or logged; a refused request says the status and the endpoint's
own message, without the key.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from slowave_graph.exceptions import SlowaveError
from slowave_graph.telemetry import measure

log = logging.getLogger(__name__)

PREFIX = "openai:"
# statuses worth a second try: rate limits, and the server's own failures
RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


class EndpointError(SlowaveError, RuntimeError):
    """The endpoint refused, failed beyond the retries, or answered something unusable."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class EndpointConfig:
    """Where and how to ask (the ``SLOWAVE_EMBEDDING_*`` settings)."""

    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"  # the name of the variable holding the key, not the key
    dimensions: int | None = None
    batch_size: int = 64
    timeout: float = 30.0
    retries: int = 4


def parse_name(name: str) -> tuple[str, int | None]:
    """(model, dimensions) of ``openai:<model>[@<dimensions>]``."""
    model, _, size = name.removeprefix(PREFIX).rpartition("@")
    if model and size.isdigit():
        return model, int(size)
    return name.removeprefix(PREFIX), None


class EndpointEmbedder:
    """An ``Embedder`` over an OpenAI-compatible ``/embeddings`` endpoint: batches of at most
    ``batch_size`` texts per request, transient failures (timeouts, connection errors, 429 and 5xx)
    retried with jittered exponential backoff, every vector checked and unit-normalised (cosine is
    what the store's index measures)."""

    def __init__(self, name: str, config: EndpointConfig, transport: httpx2.BaseTransport | None = None):
        model, named_dimensions = parse_name(name)
        if not model:
            raise ValueError(f"embedding model {name!r}: give it as openai:<model>")
        self.model = model
        self.config = config
        self.requested_dimensions = named_dimensions or config.dimensions
        self._dimension = self.requested_dimensions
        self._name = PREFIX + model + (f"@{self.requested_dimensions}" if self.requested_dimensions else "")
        self._http = httpx2.Client(
            base_url=config.base_url.rstrip("/") + "/",
            timeout=config.timeout,
            transport=transport,
        )

    def _key(self) -> str:
        """Read at every request, so a rotated key takes effect without a restart."""
        return os.environ.get(self.config.api_key_env, "") if self.config.api_key_env else ""

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        if self._dimension is None:  # learnt from the endpoint once: the schema needs it first
            self._dimension = len(self.embed(["dimension"])[0])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        size = max(1, self.config.batch_size)
        for start in range(0, len(texts), size):
            out.extend(self._batch(list(texts[start : start + size])))
        return out

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await asyncio.to_thread(self.embed, texts)

    def close(self) -> None:
        self._http.close()

    def _batch(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self.requested_dimensions:
            body["dimensions"] = self.requested_dimensions
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: isinstance(exc, EndpointError) and exc.retryable),
            stop=stop_after_attempt(1 + max(0, self.config.retries)),
            wait=wait_random_exponential(multiplier=0.5, max=20),
            reraise=True,
        )
        answer: dict[str, Any] = retrying(self._post, body)
        return self._vectors(answer, len(texts))

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            key = self._key()
            # Azure OpenAI reads api-key; every other server reads the bearer token
            headers = {"Authorization": f"Bearer {key}", "api-key": key} if key else {}
            response = self._http.post("embeddings", json=body, headers=headers)
        except httpx2.TimeoutException as exc:
            where = self._where()
            raise EndpointError(
                f"{where} did not answer within {self.config.timeout} s", retryable=True
            ) from exc
        except httpx2.TransportError as exc:
            raise EndpointError(f"{self._where()} is unreachable: {exc}", retryable=True) from exc
        if response.status_code != 200:
            retryable = response.status_code in RETRIED_STATUSES
            if retryable:
                log.warning("%s answered %s; retrying", self._where(), response.status_code)
            said = _message(response)
            if key:  # an endpoint that echoes what it was sent must not put the key in a log
                said = said.replace(key, "***")
            raise EndpointError(
                f"{self._where()} answered {response.status_code}: {said}", retryable=retryable
            )
        try:
            answer = response.json()
        except ValueError as exc:
            raise EndpointError(f"{self._where()} answered something other than JSON") from exc
        if not isinstance(answer, dict):
            raise EndpointError(f"{self._where()} answered an unexpected JSON value")
        return answer

    def _vectors(self, answer: dict[str, Any], count: int) -> list[list[float]]:
        items = answer.get("data")
        if not isinstance(items, list) or len(items) != count:
            raise EndpointError(f"{self._where()} answered {len(items or [])} embeddings for {count} texts")
        ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
        vectors = []
        for item in ordered:
            vector = item.get("embedding")
            if not isinstance(vector, list) or not vector:
                raise EndpointError(f"{self._where()} answered an embedding that is not a list of numbers")
            if self._dimension is not None and len(vector) != self._dimension:
                raise EndpointError(
                    f"{self._where()} answered {len(vector)} dimensions for {self.model}, expected "
                    f"{self._dimension} (SLOWAVE_EMBEDDING_DIMENSIONS, or the store's model)"
                )
            norm = math.sqrt(sum(float(x) * float(x) for x in vector))
            if not math.isfinite(norm) or norm == 0:
                raise EndpointError(f"{self._where()} answered a zero or non-finite vector")
            vectors.append([float(x) / norm for x in vector])
        return vectors

    def _where(self) -> str:
        return f"the embedding endpoint {self.config.base_url} ({self.model})"


def _message(response: httpx2.Response) -> str:
    """The endpoint's own error text (OpenAI's {"error": {"message"}} or plain text), short."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:300]
    if isinstance(error, str):
        return error[:300]
    return str(body)[:300]
