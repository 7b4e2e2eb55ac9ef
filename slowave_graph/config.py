"""Configuration: one model, read from environment variables, overridable by CLI flags.

Every setting names its environment variable once, as the field's ``validation_alias``, so the
README table, the Docker compose file, server.json and the code all refer to the same keys (tests
check them).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

if TYPE_CHECKING:
    from slowave_graph.embedding.endpoint import EndpointConfig

# How much of the memory graph retrieval uses (services/ranking.py RankingPolicy.graph), each level
# adding to the one before: vector and full-text only; the walk over shared concepts; episodic
# context (NEXT); learned co-use (ASSOCIATED).
GraphUse = Literal["direct", "concepts", "walk", "full"]
GRAPH_USES: tuple[GraphUse, ...] = ("direct", "concepts", "walk", "full")

DEFAULT_NEO4J_VERSION = "2026.09.0"
# The LTS line (Java 17): `make test` runs the version-dependent tests against it too.
LTS_NEO4J_VERSION = "5.26.31"


def _xdg(var: str, fallback: str) -> Path:
    base = os.environ.get(var)
    return Path(base) if base else Path.home() / fallback


# The variables `Settings.from_env` reads while it builds a Settings. None otherwise, so that
# `Settings(...)` takes only its arguments and the defaults: the linger process builds one from
# exactly the values it was handed, whatever its environment holds.
_VARIABLES: ContextVar[Mapping[str, str] | None] = ContextVar("settings_variables", default=None)


class _Variables(PydanticBaseSettingsSource):
    """The settings' environment variables, looked up in the given mapping: os.environ, or a
    caller's own mapping instead of it (never merged with it). Only the declared names are read:
    a variable called data_dir or log_level is not a setting. Values are the variables' strings;
    every setting is a scalar, which the field's own validation parses."""

    def __init__(self, settings_cls: type[Settings], variables: Mapping[str, str]) -> None:
        super().__init__(settings_cls)
        self._values = {var: variables[var] for var in settings_cls.env_names().values() if var in variables}

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        name = str(field.validation_alias)
        return self._values.get(name), name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._values)


class Settings(BaseSettings):
    """Runtime configuration of slowave-graph."""

    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        case_sensitive=True,  # names match as written: NEO4J_URI, http_port (not neo4j_uri, HTTP_PORT)
        validate_by_name=True,  # CLI flags and code pass field names
        loc_by_alias=False,  # a bad value's error names the field, as the CLI reports it
    )

    neo4j_uri: str | None = Field(
        None,
        description="Bolt URI of an existing Neo4j (bolt://, neo4j://, neo4j+s://). Unset: start the "
        "managed local Neo4j.",
        validation_alias="NEO4J_URI",
    )
    neo4j_user: str = Field("neo4j", description="Neo4j user.", validation_alias="NEO4J_USER")
    neo4j_password: SecretStr | None = Field(
        None,
        description="Neo4j password. For the managed Neo4j, a random one is generated and kept in its "
        "data directory unless this is set.",
        validation_alias="NEO4J_PASSWORD",
    )
    neo4j_database: str = Field("neo4j", description="Database name.", validation_alias="NEO4J_DATABASE")
    neo4j_concurrency: int = Field(
        default_factory=lambda: max(4, 2 * (os.cpu_count() or 1)),
        ge=1,
        description="Neo4j statements one server process runs at once (default: twice this machine's "
        "CPUs, at least 4). More wait in the server and run in the order their tool calls started, "
        "oldest first, so a call near its end does not queue behind calls that have just begun.",
        validation_alias="SLOWAVE_NEO4J_CONCURRENCY",
    )
    data_dir: Path = Field(
        default_factory=lambda: _xdg("XDG_DATA_HOME", ".local/share") / "slowave-graph",
        description="Where the managed Neo4j keeps its store, logs and password.",
        validation_alias="SLOWAVE_DATA_DIR",
    )
    cache_dir: Path = Field(
        default_factory=lambda: _xdg("XDG_CACHE_HOME", ".cache") / "slowave-graph",
        description="Where the Neo4j jars (from Maven Central) and the compiled launcher are cached.",
        validation_alias="SLOWAVE_CACHE_DIR",
    )
    neo4j_version: str = Field(
        DEFAULT_NEO4J_VERSION,
        description="Neo4j Community version of the managed server (2026.x needs Java 21+, 5.26.x runs "
        "on Java 17).",
        validation_alias="SLOWAVE_NEO4J_VERSION",
    )
    neo4j_bolt_port: int = Field(
        7697,
        ge=1,
        le=65535,
        description="Bolt port of the managed Neo4j (loopback only).",
        validation_alias="SLOWAVE_NEO4J_BOLT_PORT",
    )
    neo4j_heap: str = Field(
        "1g", description="JVM heap of the managed Neo4j.", validation_alias="SLOWAVE_NEO4J_HEAP"
    )
    neo4j_pagecache: str = Field(
        "512m",
        description="Page cache of the managed Neo4j. Size it to hold the store, about 7.5 KB per "
        "memory with its history (100k ≈ 0.8 GB, 1M ≈ 6.7 GB): at 100k memories activate took "
        "p50 130 ms with 512m and 77 ms with 2g (docs/performance.md).",
        validation_alias="SLOWAVE_NEO4J_PAGECACHE",
    )
    neo4j_aot_cache: bool = Field(
        True,
        description="Start the managed Neo4j with the JVM's ahead-of-time cache (Java 25+), recorded "
        "once by `slowave-graph neo4j fetch`: classes loaded and linked ahead. On 2 cores the 100k "
        "benchmark store was ready in 6-8 s instead of 9-11 s.",
        validation_alias="SLOWAVE_NEO4J_AOT_CACHE",
    )
    neo4j_linger: int = Field(
        600,
        ge=0,
        description="Seconds a managed Neo4j that a server process started on its own keeps running "
        "after the last slowave-graph process using it exits, so that the next conversation finds it "
        "ready, its query plans cached and its JIT warm (a stdio conversation's first lifecycle took "
        "7-9 s on a fresh Neo4j against 0.4-2.7 s on a lingering one). 0 stops it at once.",
        validation_alias="SLOWAVE_NEO4J_LINGER",
    )
    java_home: Path | None = Field(
        None,
        description="JDK for the managed Neo4j. Unset: the newest suitable JDK under /usr/lib/jvm or "
        "JAVA_HOME.",
        validation_alias="SLOWAVE_JAVA_HOME",
    )
    http_host: str = Field(
        "127.0.0.1",
        description="HTTP bind address. Anything but loopback requires SLOWAVE_AUTH_TOKEN.",
        validation_alias="SLOWAVE_HTTP_HOST",
    )
    http_port: int = Field(
        8766, ge=1, le=65535, description="HTTP port.", validation_alias="SLOWAVE_HTTP_PORT"
    )
    auth_token: SecretStr | None = Field(
        None,
        description="Bearer token required on HTTP requests (if set).",
        validation_alias="SLOWAVE_AUTH_TOKEN",
    )
    tokens_file: Path | None = Field(
        None,
        description="Named tokens with scope grants (`slowave-graph token add`); default "
        "<SLOWAVE_DATA_DIR>/tokens.json. Used only once it exists.",
        validation_alias="SLOWAVE_TOKENS_FILE",
    )
    http_max_body: int = Field(
        1_048_576,
        ge=1024,
        description="Largest HTTP request body in bytes; larger requests get 413 before anything is "
        "parsed. 1 MiB holds a 100-memory remember batch of 8,000-character ASCII claims.",
        validation_alias="SLOWAVE_HTTP_MAX_BODY",
    )
    http_allowed_hosts: str = Field(
        "",
        description="Extra Host header values the HTTP server accepts (comma-separated, e.g. "
        "memory.internal:8766 or proxy.example.com:*). On a loopback bind only 127.0.0.1, localhost "
        "and [::1] are accepted otherwise (DNS-rebinding protection).",
        validation_alias="SLOWAVE_HTTP_ALLOWED_HOSTS",
    )
    embedding_model: str | None = Field(
        None,
        description="Embedding model: all-MiniLM-L6-v2-fused-q8 (bundled, offline, ONNX Runtime, "
        "int8 arithmetic in fused transformer operators), all-MiniLM-L6-v2-q8 (int8 arithmetic, "
        "unfused: ~15-35 % more time per text), all-MiniLM-L6-v2-int8 (float arithmetic: about twice "
        "the CPU per text), all-MiniLM-L6-v2 (the float model, sentence-transformers), "
        "multilingual-e5-small-q4 (questions and memories in about a hundred languages in one space; "
        "the multilingual extra), a local "
        "sentence-transformers model directory, or openai:<model> from an OpenAI-compatible "
        "endpoint (SLOWAVE_EMBEDDING_BASE_URL). Unset: the model the database's memories were "
        "embedded with, and all-MiniLM-L6-v2-fused-q8 for a new database. Changing a database's "
        "model needs `slowave-graph reembed`.",
        validation_alias="SLOWAVE_EMBEDDING_MODEL",
    )
    embedding_base_url: str = Field(
        "https://api.openai.com/v1",
        description="Base URL of the OpenAI-compatible embeddings endpoint an openai:<model> is asked "
        "at ({base}/embeddings): OpenAI, Azure OpenAI, Ollama (http://127.0.0.1:11434/v1), vLLM, "
        "Text Embeddings Inference, LM Studio, llama.cpp's server.",
        validation_alias="SLOWAVE_EMBEDDING_BASE_URL",
    )
    embedding_api_key_env: str = Field(
        "OPENAI_API_KEY",
        description="Name of the environment variable that holds the endpoint's API key (the key "
        "itself is never a setting, stored or logged); empty or unset variable: no key sent.",
        validation_alias="SLOWAVE_EMBEDDING_API_KEY_ENV",
    )
    embedding_dimensions: int | None = Field(
        None,
        ge=1,
        description="Ask the endpoint for vectors of this size (models trained for shortening, e.g. "
        "text-embedding-3-*); unset: the model's own size.",
        validation_alias="SLOWAVE_EMBEDDING_DIMENSIONS",
    )
    embedding_batch_size: int = Field(
        64,
        ge=1,
        le=2048,
        description="Texts per request to the embeddings endpoint.",
        validation_alias="SLOWAVE_EMBEDDING_BATCH_SIZE",
    )
    embedding_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds one request to the embeddings endpoint may take.",
        validation_alias="SLOWAVE_EMBEDDING_TIMEOUT",
    )
    embedding_retries: int = Field(
        4,
        ge=0,
        le=20,
        description="Retries of a request to the embeddings endpoint that timed out, could not connect "
        "or was answered 408, 409, 429 or 5xx (jittered exponential backoff, at most 20 s apart).",
        validation_alias="SLOWAVE_EMBEDDING_RETRIES",
    )
    candidate_k: int = Field(
        50,
        ge=10,
        le=200,
        description="Memories fetched per cue from the vector index and from the full-text index before "
        "ranking: retrieval depth against latency. On LoCoMo 30 instead of 50 cut retrieval p50 from "
        "30 to 21 ms for recall@5 0.625 instead of 0.630.",
        validation_alias="SLOWAVE_CANDIDATE_K",
    )
    retrieval_graph: GraphUse = Field(
        "full",
        description="How much of the memory graph retrieval uses: direct (vector and full-text only), "
        "concepts (+ the walk over concepts shared with the best direct hits), walk (+ episodic "
        "context: memories recorded next to them), full (+ learned co-use). Less is faster and "
        "ranks worse; the reported policy version says which (e.g. graph-v1-direct).",
        validation_alias="SLOWAVE_RETRIEVAL_GRAPH",
    )
    consolidation: bool = Field(
        True,
        description="Find near-duplicates and updates of each memory when it is stored (linked "
        "SIMILAR_TO in the graph, listed in remember's result) and show a duplicate cluster once and "
        "an update pair together in retrieval. false: every claim stands alone, as before.",
        validation_alias="SLOWAVE_CONSOLIDATION",
    )
    generalisation: bool = Field(
        True,
        description="Let a lesson validated in several scopes (used with effect helped, itself or a "
        "near-duplicate remembered there) reach other scopes, by stage: its kind's scopes, then every "
        "scope ranked below local memories, then global; only for tokens granted its scope. false: "
        "every memory stays in its scope (the next maintenance pass clears what travelled).",
        validation_alias="SLOWAVE_GENERALISATION",
    )
    dashboard_actions: bool = Field(
        False,
        description="Let people suppress, restore and supersede memories from the dashboard's memory "
        "page (POST forms behind the same auth as /ui, refused from other sites; each action recorded "
        "with its actor). false: the dashboard only reads.",
        validation_alias="SLOWAVE_DASHBOARD_ACTIONS",
    )
    session_idle_timeout: float = Field(
        3600.0,
        gt=0,
        description="Seconds without a call after which an open session is closed with outcome unknown.",
        validation_alias="SLOWAVE_SESSION_IDLE_TIMEOUT",
    )
    maintenance_interval: float = Field(
        3600.0,
        ge=0,
        description="Seconds between maintenance passes, run by the server in the background: links "
        "near-duplicates and updates among memories never judged, decays co-use weights, clears stale "
        "learned marks, judges lessons again (one pass at a time among servers sharing a database, each "
        "recorded as a MaintenanceRun). 0: the server runs none (`slowave-graph maintain --once` still "
        "does).",
        validation_alias="SLOWAVE_MAINTENANCE_INTERVAL",
    )
    co_use_half_life_days: float = Field(
        90.0,
        ge=0,
        description="Days after which a co-use association (memories assessed used together) weighs "
        "half as much in retrieval unless used together again; the maintenance pass stores the decayed "
        "weight. 0: no decay.",
        validation_alias="SLOWAVE_CO_USE_HALF_LIFE_DAYS",
    )
    tool_timeout: float = Field(
        30.0,
        gt=0,
        description="Seconds a tool call may take before it fails with a retryable `unavailable` error "
        "(outcome unknown). A safety net for a database that stops answering: the Neo4j driver has no "
        "read timeout, so without it a call could wait forever. Keep it above the 20 s retry budget.",
        validation_alias="SLOWAVE_TOOL_TIMEOUT",
    )
    backup_keep: int = Field(
        7,
        ge=1,
        le=1000,
        description="Backups `backup --dir` keeps (the newest; the scheduled backup of `slowave-graph "
        "service` writes one a day).",
        validation_alias="SLOWAVE_BACKUP_KEEP",
    )
    log_level: str = Field(
        "INFO",
        description="Log level: DEBUG adds each Neo4j statement of a tool call, tagged with its request id.",
        validation_alias="SLOWAVE_LOG_LEVEL",
    )
    log_file: Path | None = Field(
        None,
        description="Also write the log to this file, rotated by size (stderr keeps it too; stdout "
        "never carries it).",
        validation_alias="SLOWAVE_LOG_FILE",
    )
    log_max_bytes: int = Field(
        10 * 2**20,
        ge=1024,
        description="Size at which the log file is rotated.",
        validation_alias="SLOWAVE_LOG_MAX_BYTES",
    )
    log_backups: int = Field(
        5,
        ge=0,
        le=100,
        description="Rotated log files kept beside the current one.",
        validation_alias="SLOWAVE_LOG_BACKUPS",
    )
    log_format: Literal["text", "json"] = Field(
        "text",
        description="One line per record: text, or json (time, level, logger, message, request_id, tool).",
        validation_alias="SLOWAVE_LOG_FORMAT",
    )

    @field_validator(
        "neo4j_uri",
        "neo4j_password",
        "auth_token",
        "java_home",
        "embedding_dimensions",
        "log_file",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def tokens_path(self) -> Path:
        return self.tokens_file or self.data_dir / "tokens.json"

    @property
    def embedding_endpoint(self) -> EndpointConfig:
        """Where an openai:<model> is asked (embedding/endpoint.py)."""
        from slowave_graph.embedding.endpoint import EndpointConfig

        return EndpointConfig(
            base_url=self.embedding_base_url,
            api_key_env=self.embedding_api_key_env,
            dimensions=self.embedding_dimensions,
            batch_size=self.embedding_batch_size,
            timeout=self.embedding_timeout,
            retries=self.embedding_retries,
        )

    @property
    def managed(self) -> bool:
        """True when slowave-graph runs its own Neo4j (no NEO4J_URI)."""
        return self.neo4j_uri is None

    @classmethod
    def env_names(cls) -> dict[str, str]:
        """Field name → environment variable."""
        names = {}
        for name, field in cls.model_fields.items():
            assert isinstance(field.validation_alias, str), f"{name} names no environment variable"
            names[name] = field.validation_alias
        return names

    def managed_env(self) -> dict[str, str]:
        """The environment that makes another process (a server under test) use this managed
        Neo4j: the same data and jar directories, version and port find the running instance
        through its lease, and the same heap and page cache size it if that process starts it.
        A CLI flag of the parent (``--neo4j-version``, ``--bolt-port``) is carried over too."""
        names = self.env_names()
        fields = ["data_dir", "cache_dir", "neo4j_version", "neo4j_bolt_port"]
        fields += ["neo4j_heap", "neo4j_pagecache"]
        return {names[field]: str(getattr(self, field)) for field in fields}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Keyword arguments come first, so they win; no .env file or secrets directory is read.
        variables = _VARIABLES.get()
        if variables is None:
            return (init_settings,)
        return init_settings, _Variables(cls, variables)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Settings from environment variables (``env`` instead of os.environ when given); keyword
        overrides (CLI flags) win when not None."""
        # Overrides go in under their variables' names, the keys the environment's values have too,
        # so that source order alone decides between the two (older pydantic-settings releases let a
        # variable win over a keyword argument given by field name).
        names = cls.env_names()
        token = _VARIABLES.set(os.environ if env is None else env)
        try:
            return cls(**{names.get(k, k): v for k, v in overrides.items() if v is not None})
        finally:
            _VARIABLES.reset(token)
