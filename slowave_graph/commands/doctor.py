"""`slowave-graph doctor`: is everything in place to serve, and do the clients point here?

Each check prints ✓ (fine), ! (works, but worth knowing), ✗ (broken, with what to do) or – (not
applicable). The exit code is 1 when any check failed. Nothing is changed: no schema is created,
no Neo4j is started (unless --start-neo4j), no file is written.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.metadata
import json
import re
import shutil
import socket
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from slowave_graph import __version__
from slowave_graph.clients import CLIENTS, spec_from_settings, status
from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.embedding.embedder import Embedder

if TYPE_CHECKING:
    from slowave_graph.embedding.endpoint import EndpointConfig
    from slowave_graph.graph.database import Database

Status = Literal["ok", "warn", "fail", "skip"]
MARK = {"ok": "✓", "warn": "!", "fail": "✗", "skip": "–"}


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str | None = None


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "doctor", help="check the installation, Neo4j, the embedding model, the HTTP port and clients"
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument("--home", help="home directory whose client configs are checked (default: yours)")
    parser.add_argument("--host", help="HTTP host of the server (SLOWAVE_HTTP_HOST)")
    parser.add_argument("--port", type=int, help="HTTP port of the server (SLOWAVE_HTTP_PORT)")
    parser.add_argument(
        "--start-neo4j",
        action="store_true",
        help="start the managed Neo4j if it is not running, to check its schema (stopped afterwards)",
    )
    common(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    home = Path(args.home).expanduser() if args.home else Path.home()
    checks = asyncio.run(run_checks(settings, home, start_neo4j=args.start_neo4j))
    failed = any(c.status == "fail" for c in checks)
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for c in checks:
            print(f"{MARK[c.status]} {c.name}: {c.detail}")
            if c.fix and c.status in ("fail", "warn"):
                print(f"    → {c.fix}")
        print("all checks passed" if not failed else "some checks failed (✗)")
    return 1 if failed else 0


async def run_checks(settings: Settings, home: Path, start_neo4j: bool = False) -> list[Check]:
    checks = [check_python(), *check_managed_prerequisites(settings)]
    db_checks, stored = await check_database(settings, start_neo4j)
    checks += db_checks
    checks.append(await asyncio.to_thread(check_embedding, settings, stored))
    checks.append(check_http(settings))
    checks += check_clients(settings, home)
    return checks


# ------------------------------------------------------------------------------- installation
def check_python() -> Check:
    try:
        requirements = importlib.metadata.requires("slowave-graph") or []
    except importlib.metadata.PackageNotFoundError:
        return Check(
            "python", "fail", "slowave-graph is not installed as a package", "pip install slowave-graph"
        )
    missing = []
    for requirement in requirements:
        if "extra ==" in requirement:
            continue
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        if name is None:
            continue
        try:
            importlib.metadata.version(name.group(0))
        except importlib.metadata.PackageNotFoundError:
            missing.append(name.group(0))
    if missing:
        return Check(
            "python", "fail", f"missing packages: {', '.join(missing)}", "pip install --upgrade slowave-graph"
        )
    return Check(
        "python",
        "ok",
        f"slowave-graph {__version__} on Python {sys.version.split()[0]}, {len(requirements)} dependencies",
    )


def check_managed_prerequisites(settings: Settings) -> list[Check]:
    if not settings.managed:
        skip = f"not needed: external Neo4j at {settings.neo4j_uri}"
        return [Check("java", "skip", skip), Check("maven", "skip", skip), Check("neo4j jars", "skip", skip)]
    from slowave_graph.neo4j_local.manager import ManagedNeo4j, Neo4jLocalError, find_java_home, java_major

    try:
        neo4j = ManagedNeo4j(settings)
    except Neo4jLocalError as exc:
        return [Check("neo4j version", "fail", str(exc), "set SLOWAVE_NEO4J_VERSION to e.g. 2026.09.0")]
    checks = []
    try:
        java = find_java_home(neo4j.version, settings.java_home)
        checks.append(Check("java", "ok", f"Java {java_major(java)} at {java}"))
    except Neo4jLocalError as exc:
        checks.append(
            Check("java", "fail", str(exc), "install a JDK (21+ for Neo4j 2026.x) or set NEO4J_URI")
        )
    cached = (neo4j.jar_dir / ".complete").is_file()
    mvn = shutil.which("mvn")
    if cached:
        checks.append(Check("maven", "ok", "not needed: the Neo4j jars are cached"))
    elif mvn:
        checks.append(Check("maven", "ok", f"{mvn} (fetches the Neo4j jars once)"))
    else:
        checks.append(
            Check("maven", "fail", "mvn not found and the Neo4j jars are not cached", "apt-get install maven")
        )
    if cached:
        jars = list(neo4j.jar_dir.glob("*.jar"))
        launchers = [
            p for p in neo4j.jar_dir.parent.glob("launcher-*") if (p / "SlowaveNeo4j.class").is_file()
        ]
        size = sum(p.stat().st_size for p in jars) / 1e6
        launcher = "launcher compiled" if launchers else "launcher compiled on first start"
        checks.append(
            Check(
                "neo4j jars", "ok", f"Neo4j {neo4j.version.text}: {len(jars)} jars, {size:.0f} MB; {launcher}"
            )
        )
    else:
        checks.append(
            Check(
                "neo4j jars",
                "warn",
                f"Neo4j {neo4j.version.text} jars not cached in {neo4j.jar_dir}",
                "slowave-graph neo4j fetch (otherwise the first start fetches them)",
            )
        )
    return checks


# ------------------------------------------------------------------------------------ database
async def _connection(settings: Settings, start: bool) -> tuple[str, str, str] | Check:
    """(uri, user, password) of the Neo4j to check, or why there is none."""
    if not settings.managed:
        assert settings.neo4j_uri is not None
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        return settings.neo4j_uri, settings.neo4j_user, password
    from slowave_graph.neo4j_local.manager import ManagedNeo4j

    neo4j = ManagedNeo4j(settings)
    state = neo4j.running()
    if state is None and not start:
        return Check(
            "neo4j",
            "warn",
            f"the managed Neo4j ({neo4j.instance_dir}) is not running; servers start it on demand",
            "slowave-graph doctor --start-neo4j (or slowave-graph neo4j start) to check its schema",
        )
    if state is None:
        return "", "", ""  # the caller acquires a lease
    return state.uri, "neo4j", neo4j.password()


async def check_database(settings: Settings, start: bool) -> tuple[list[Check], dict[str, Any] | None]:
    """Reachability, schema and the stored embedding space; returns the latter for the model check."""
    from slowave_graph.graph.database import Database

    target = await _connection(settings, start)
    if isinstance(target, Check):
        return [target, Check("schema", "skip", "Neo4j not checked")], None
    lease = None
    if not target[0]:
        from slowave_graph.neo4j_local.lease import ManagedLease

        lease = ManagedLease(settings)
        try:
            target = await asyncio.to_thread(lease.acquire)
        except Exception as exc:
            failed = Check("neo4j", "fail", f"the managed Neo4j did not start: {exc}", "see its launcher.log")
            return [failed, Check("schema", "skip", "Neo4j not running")], None
    uri, user, password = target
    db = Database.connect(uri, user, password, settings.neo4j_database, connection_timeout=5.0)
    db.retry_seconds = 3.0
    try:
        return await _check_connected(db, uri, user)
    finally:
        await db.close()
        if lease is not None:
            await asyncio.to_thread(lease.release)


async def _check_connected(db: Database, uri: str, user: str) -> tuple[list[Check], dict[str, Any] | None]:
    """The Neo4j and schema checks over an open connection, and the stored embedding space."""
    try:
        await asyncio.wait_for(db.driver.verify_connectivity(), timeout=15)
        component = (await db.run_read("server_components"))[0]
    except Exception as exc:
        return [
            Check(
                "neo4j",
                "fail",
                f"cannot reach {uri} as {user}: {str(exc)[:200]}",
                "check NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE (or unset NEO4J_URI "
                "for the managed Neo4j)",
            ),
            Check("schema", "skip", "Neo4j not reachable"),
        ], None
    reached = Check(
        "neo4j", "ok", f"Neo4j {component['version']} {component['edition']} at {uri} ({db.database})"
    )
    schema, stored = await _check_schema(db, component)
    return [reached, schema], stored


async def _check_schema(db: Database, component: dict[str, Any]) -> tuple[Check, dict[str, Any] | None]:
    """Whether every constraint and index this server version expects is ONLINE, and the stored
    embedding space."""
    from slowave_graph.graph.database import ServerInfo
    from slowave_graph.graph.schema import expected_indexes

    info = ServerInfo(str(component["version"]), str(component["edition"]), vector_filter_in_index=False)
    expected = expected_indexes(db.queries, info)
    rows = await db.run_read("stats_indexes")  # every index with its state (stats.cypher)
    states = {r["name"]: r["state"] for r in rows if r["name"] in expected}
    missing = [n for n in expected if n not in states]
    offline = [f"{n} ({s})" for n, s in states.items() if s != "ONLINE"]
    space = await db.run_read("embedding_space_get")
    stored = space[0] if space else None
    if offline:
        check = Check(
            "schema", "fail", f"indexes not ONLINE: {', '.join(offline)}", "wait, or see the Neo4j log"
        )
    elif missing and len(missing) == len(expected):
        check = Check("schema", "warn", "not created yet", "`slowave-graph serve` creates it at start-up")
    elif missing:
        check = Check(
            "schema",
            "fail",
            f"missing: {', '.join(missing)}",
            "restart `slowave-graph serve`: it creates the schema idempotently",
        )
    else:
        check = Check("schema", "ok", f"{len(expected)} constraints and indexes ONLINE")
    return check, stored


@functools.cache
def _load_model(name: str, endpoint: EndpointConfig) -> Embedder:
    from slowave_graph.embedding.embedder import load_embedder

    model = load_embedder(name, endpoint)
    model.embed(["doctor"])  # loading is not enough: it must also encode
    return model


def check_embedding(settings: Settings, stored: dict[str, Any] | None) -> Check:
    from slowave_graph.embedding.embedder import DEFAULT_MODEL

    started = time.monotonic()
    # unset, a server loads the database's model (the default on a new database)
    name = settings.embedding_model or (str(stored["model"]) if stored else DEFAULT_MODEL)
    try:
        model = _load_model(name, settings.embedding_endpoint)
    except Exception as exc:
        return Check(
            "embedding model",
            "fail",
            f"{name} does not load offline: {str(exc)[:200]}",
            "SLOWAVE_EMBEDDING_MODEL=all-MiniLM-L6-v2-fused-q8, all-MiniLM-L6-v2-q8, "
            "all-MiniLM-L6-v2-int8 or all-MiniLM-L6-v2 (all bundled) or a local sentence-transformers "
            "directory",
        )
    loaded = f"{model.model_name} ({model.dimension}-d) loads offline in {time.monotonic() - started:.1f}s"
    if stored is None:
        return Check("embedding model", "ok", f"{loaded}; no model recorded in the database yet")
    if (stored["model"], stored["dimension"]) != (model.model_name, model.dimension):
        return Check(
            "embedding model",
            "fail",
            f"{loaded}, but the database holds {stored['model']} ({stored['dimension']}-d) vectors",
            f"SLOWAVE_EMBEDDING_MODEL={stored['model']}, or re-embed: "
            f"`slowave-graph reembed --model {model.model_name}`",
        )
    return Check("embedding model", "ok", f"{loaded}; matches the database")


# --------------------------------------------------------------------------------- http, clients
def _port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def check_http(settings: Settings) -> Check:
    import httpx2

    from slowave_graph.clients.spec import http_url

    host, port = settings.http_host, settings.http_port
    if _port_free(host, port):
        return Check("http", "ok", f"port {port} on {host} is free for `slowave-graph serve`")
    health = http_url(settings).removesuffix("/mcp") + "/health"
    try:
        response = httpx2.get(health, timeout=3)
        body = response.json()
    except Exception:
        body, response = None, None
    if isinstance(body, dict) and "status" in body and response is not None:
        if response.status_code == 200 and body.get("status") == "ok":
            return Check(
                "http",
                "ok",
                f"slowave-graph {body.get('version')} answers {health} (Neo4j {body.get('neo4j')}, "
                f"{body.get('embedding_model')})",
            )
        return Check(
            "http", "fail", f"{health} answers {response.status_code}: {body}", "check the server's Neo4j"
        )
    return Check(
        "http",
        "fail",
        f"port {port} on {host} is taken by another program",
        "stop it, or choose another port with SLOWAVE_HTTP_PORT (then re-run `slowave-graph setup`)",
    )


def check_clients(settings: Settings, home: Path) -> list[Check]:
    spec = spec_from_settings(settings, "http")
    checks = []
    absent = []
    for name, client in CLIENTS.items():
        result = status(client, home, spec)
        label = f"client {name}"
        if result.state == "not_installed":
            absent.append(name)
        elif result.state == "ok":
            checks.append(Check(label, "ok", f"{result.path} → {result.detail}"))
        elif result.state == "not_configured":
            checks.append(Check(label, "warn", result.detail, f"slowave-graph setup --client {name}"))
        else:
            checks.append(Check(label, "fail", result.detail, f"slowave-graph setup --client {name}"))
    if not checks:
        checks.append(
            Check(
                "clients",
                "warn",
                f"no MCP client found under {home}",
                "slowave-graph setup --client claude-code (or codex, cursor, …)",
            )
        )
    elif absent:
        checks.append(Check("clients", "skip", f"not installed: {', '.join(absent)}"))
    return checks
