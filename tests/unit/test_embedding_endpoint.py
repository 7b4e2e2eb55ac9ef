"""Embeddings from an OpenAI-compatible endpoint, against a local server that speaks the API
(tests/support/embedding_stub.py): batching, order, normalisation, retries of transient failures, a
timeout, a wrong size, a bad key (never retried, never echoed), names that carry the size, and
the settings that choose it all. No real provider is ever called."""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Any

import pytest

from slowave_graph.config import Settings
from slowave_graph.embedding.embedder import load_embedder
from slowave_graph.embedding.endpoint import EndpointConfig, EndpointEmbedder, EndpointError, parse_name
from tests.support.embedding_stub import KEY, embedding_stub


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUB_EMBEDDING_KEY", KEY)


def config(url: str, **options: Any) -> EndpointConfig:
    return replace(EndpointConfig(base_url=url, api_key_env="STUB_EMBEDDING_KEY", retries=0), **options)


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_texts_go_in_batches_and_come_back_in_order_unit_length() -> None:
    texts = [f"note {i} about the deploy pipeline" for i in range(10)]
    with embedding_stub(dimension=32) as stub:
        model = EndpointEmbedder("openai:stub-embed", config(stub.url, batch_size=4))
        vectors = model.embed(texts)
        assert stub.batches == [4, 4, 2]
        assert all(b["model"] == "stub-embed" and "dimensions" not in b for b in stub.bodies)
        assert [len(v) for v in vectors] == [32] * 10
        assert all(math.isclose(math.sqrt(cosine(v, v)), 1.0) for v in vectors)
        # order follows `index` (the stub answers in reverse): each text gets its own vector
        assert vectors == [model.embed([t])[0] for t in texts]
        near = model.embed(
            ["Backups are kept for thirty days", "How long are backups kept?", "Paint the fence"]
        )
        assert cosine(near[0], near[1]) > cosine(near[0], near[2])
        assert model.model_name == "openai:stub-embed" and model.dimension == 32


def test_the_size_is_asked_for_named_and_learnt_once() -> None:
    with embedding_stub(dimension=48) as stub:
        asked = EndpointEmbedder("openai:stub-embed", config(stub.url, dimensions=16))
        assert asked.model_name == "openai:stub-embed@16" and asked.dimension == 16
        assert len(asked.embed(["a text"])[0]) == 16 and stub.bodies[-1]["dimensions"] == 16
        # the stored name alone loads the same model at the same size, whatever the settings say
        again = EndpointEmbedder("openai:stub-embed@16", config(stub.url))
        assert again.model_name == "openai:stub-embed@16" and again.requested_dimensions == 16
        learnt = EndpointEmbedder("openai:stub-embed", config(stub.url))
        requests = len(stub.bodies)
        assert learnt.dimension == 48 and learnt.dimension == 48
        assert len(stub.bodies) == requests + 1  # one request to learn it, then remembered


def test_transient_failures_are_retried_then_reported(caplog: pytest.LogCaptureFixture) -> None:
    with embedding_stub() as stub:
        stub.fail_next = [429, 503, 500]
        model = EndpointEmbedder("openai:stub-embed", config(stub.url, retries=3))
        assert len(model.embed(["survives three failures"])) == 1
        assert len(stub.bodies) == 4 and not stub.fail_next

        stub.fail_next = [502, 502, 502]
        once = EndpointEmbedder("openai:stub-embed", config(stub.url, retries=1))
        with pytest.raises(EndpointError, match="answered 502: stub failure 502") as failed:
            once.embed(["fails twice"])
        assert failed.value.retryable and stub.fail_next == [502]


def test_a_slow_endpoint_times_out() -> None:
    with embedding_stub(delay=1.5) as stub:
        model = EndpointEmbedder("openai:stub-embed", config(stub.url, timeout=0.3))
        with pytest.raises(EndpointError, match=r"did not answer within 0\.3 s") as failed:
            model.embed(["slow"])
        assert failed.value.retryable


def test_a_wrong_size_is_refused() -> None:
    with embedding_stub(dimension=24, wrong_size=True) as stub:
        model = EndpointEmbedder("openai:stub-embed", config(stub.url, dimensions=24))
        with pytest.raises(EndpointError, match="answered 25 dimensions for stub-embed, expected 24"):
            model.embed(["one too many"])


def test_a_bad_key_is_refused_at_once_and_never_echoed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = "sk-wrong-secret-987654321"
    monkeypatch.setenv("STUB_EMBEDDING_KEY", wrong)
    caplog.set_level(logging.DEBUG)
    with embedding_stub() as stub:
        model = EndpointEmbedder("openai:stub-embed", config(stub.url, retries=4))
        with pytest.raises(EndpointError, match="answered 401: Incorrect API key provided") as failed:
            model.embed(["anything"])
        assert len(stub.bodies) == 1 and not failed.value.retryable  # not retried
        assert wrong not in str(failed.value) and wrong not in caplog.text
        assert wrong not in repr(model.config)  # the settings hold the variable's name only


def test_settings_choose_the_endpoint() -> None:
    settings = Settings.from_env(
        {
            "SLOWAVE_EMBEDDING_MODEL": "openai:text-embedding-3-small",
            "SLOWAVE_EMBEDDING_BASE_URL": "http://127.0.0.1:11434/v1",
            "SLOWAVE_EMBEDDING_API_KEY_ENV": "MY_KEY",
            "SLOWAVE_EMBEDDING_DIMENSIONS": "256",
            "SLOWAVE_EMBEDDING_BATCH_SIZE": "16",
            "SLOWAVE_EMBEDDING_TIMEOUT": "5",
            "SLOWAVE_EMBEDDING_RETRIES": "2",
        }
    )
    assert settings.embedding_endpoint == EndpointConfig(
        "http://127.0.0.1:11434/v1", "MY_KEY", 256, 16, 5.0, 2
    )
    assert Settings.from_env({"SLOWAVE_EMBEDDING_DIMENSIONS": ""}).embedding_dimensions is None
    model = load_embedder(str(settings.embedding_model), settings.embedding_endpoint)
    assert isinstance(model, EndpointEmbedder) and model.model_name == "openai:text-embedding-3-small@256"
    assert parse_name("openai:nomic-embed-text:v1.5") == ("nomic-embed-text:v1.5", None)
    assert parse_name("openai:org/model@768") == ("org/model", 768)
    with pytest.raises(ValueError, match="openai:<model>"):
        EndpointEmbedder("openai:", EndpointConfig())
