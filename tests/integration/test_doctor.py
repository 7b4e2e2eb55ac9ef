"""`slowave-graph doctor` against the real Neo4j and a real HTTP server: what passes, and that each
broken thing is reported as a failure with what to do."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest

from slowave_graph.cli import main
from slowave_graph.commands.doctor import check_clients, check_database, check_embedding, check_http
from slowave_graph.config import Settings
from tests.support.neo4j import Neo4jTarget

pytestmark = pytest.mark.lts  # also run against the 5.26 LTS line (scripts/test)


def _configure_cursor(home: Path, port: int) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcpServers": {"slowave-graph": {"url": f"http://127.0.0.1:{port}/mcp"}}}))


def test_doctor_passes_on_a_working_setup(
    neo4j: Neo4jTarget,
    http_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The real command (in this process, so the model's libraries are already loaded)."""
    port = urlparse(http_url).port
    assert port is not None
    _configure_cursor(tmp_path, port)
    for var, value in {**neo4j.env(), "SLOWAVE_HTTP_PORT": str(port)}.items():
        if var.startswith(("NEO4J_", "SLOWAVE_")):
            monkeypatch.setenv(var, value)
    monkeypatch.delenv("SLOWAVE_AUTH_TOKEN", raising=False)
    code = main(["doctor", "--json", "--home", str(tmp_path)])
    report = json.loads(capsys.readouterr().out)
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert code == 0 and report["ok"] is True, report
    assert statuses["python"] == statuses["neo4j"] == statuses["schema"] == "ok"
    assert statuses["embedding model"] == "ok" and statuses["client cursor"] == "ok"
    assert statuses["java"] == "skip"  # an external Neo4j needs no Java
    http = next(c for c in report["checks"] if c["name"] == "http")
    assert http["status"] == "ok" and "answers" in http["detail"]
    assert (
        "matches the database"
        in next(c for c in report["checks"] if c["name"] == "embedding model")["detail"]
    )

    _configure_cursor(tmp_path / "other", port + 1)
    assert main(["doctor", "--home", str(tmp_path / "other")]) == 1  # a client pointing elsewhere fails
    out = capsys.readouterr().out
    assert "✗ client cursor" in out and "→ slowave-graph setup --client cursor" in out


async def test_doctor_reports_what_is_broken(neo4j: Neo4jTarget, tmp_path: Path) -> None:
    wrong = Settings.from_env({}, neo4j_uri=neo4j.uri, neo4j_user=neo4j.user, neo4j_password="wrong")
    checks, stored = await check_database(wrong, start=False)
    assert [c.status for c in checks] == ["fail", "skip"] and stored is None
    assert "NEO4J_PASSWORD" in (checks[0].fix or "")

    checks, stored = await check_database(neo4j.settings(), start=False)
    assert [c.status for c in checks] == ["ok", "ok"] and stored is not None, checks

    foreign = {"model": "e5-large", "dimension": 1024}
    configured = Settings.from_env({}, embedding_model="all-MiniLM-L6-v2-q8")
    mismatch = check_embedding(configured, foreign)
    assert mismatch.status == "fail" and "SLOWAVE_EMBEDDING_MODEL=e5-large" in (mismatch.fix or "")
    unset = check_embedding(Settings.from_env({}), foreign)  # a server would load the database's model
    assert unset.status == "fail" and unset.detail.startswith("e5-large does not load offline")

    with socket.socket() as busy:  # a port held by something that is not slowave-graph
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        taken = check_http(Settings.from_env({}, http_port=port))
        assert taken.status == "fail" and "taken by another program" in taken.detail

        _configure_cursor(tmp_path, port + 1)  # points at another port than this server's
        clients = {c.name: c for c in check_clients(Settings.from_env({}, http_port=port), tmp_path)}
        assert clients["client cursor"].status == "fail" and "url" in clients["client cursor"].detail
        assert clients["client cursor"].fix == "slowave-graph setup --client cursor"
