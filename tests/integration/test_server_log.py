"""A real server's log file: one JSON record per line, rotated by size, each tool call's line
tied by its request id to the Neo4j statements it ran — and no secret anywhere in it or on
stderr: not the master token, a named token, a wrong token a client sent, the Neo4j password or
an embedding endpoint's key, with everything logged at DEBUG."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from slowave_graph.neo4j_local.manager import free_port
from tests.integration.test_token_grants import new_token
from tests.support.mcp_helpers import activate, commit, recall, remember, settle
from tests.support.neo4j import Neo4jTarget
from tests.support.servers import client_as, server_fleet

pytestmark = pytest.mark.neo4j

MASTER = "swg_master_" + os.urandom(12).hex()
WRONG = "swg_wrong_" + os.urandom(12).hex()
ENDPOINT_KEY = "sk-" + os.urandom(12).hex()


async def test_the_log_file_is_json_rotated_tied_by_request_id_and_free_of_secrets(
    neo4j: Neo4jTarget, scope: str, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.json"
    kind, name = scope.split(":", 1)
    named = new_token(tokens, "ci-agent", scope)
    log = tmp_path / "logs" / "server.log"
    port = free_port()
    env = {
        **neo4j.env(),
        "SLOWAVE_HTTP_PORT": str(port),
        "SLOWAVE_AUTH_TOKEN": MASTER,
        "SLOWAVE_TOKENS_FILE": str(tokens),
        "SLOWAVE_LOG_FILE": str(log),
        "SLOWAVE_LOG_FORMAT": "json",
        "SLOWAVE_LOG_LEVEL": "DEBUG",
        "SLOWAVE_LOG_MAX_BYTES": "8192",
        "SLOWAVE_LOG_BACKUPS": "2",
        "OPENAI_API_KEY": ENDPOINT_KEY,  # present in the environment, never used or logged
    }
    base = f"http://127.0.0.1:{port}"
    with server_fleet(env, 1, tmp_path / "out", ports=[port]) as (server,):
        for token in (MASTER, named):
            async with client_as(base, token) as client:
                for n in range(4):
                    started = await activate(client, scope, f"Check the release checklist, round {n}")
                    session = started["session_id"]
                    await remember(client, scope, session, f"Release step {n}: sign the tag")
                    await settle(client, started)
                    await settle(client, await recall(client, scope, session, "How is the tag signed?"))
                    await commit(client, session)
        with pytest.raises(Exception):  # noqa: B017 — refused at the door: 401
            async with client_as(base, WRONG) as client:
                await activate(client, f"{kind}:{name}-wrong", "Never starts")
    stderr = server.log.read_text()  # what the server wrote to stderr (and stdout)
    assert '"request_id"' in stderr  # stderr has the same records

    files = sorted(log.parent.glob("server.log*"))
    assert log in files and 1 < len(files) <= 3, files  # rotated at 8 KiB, two old files kept
    assert all(f.stat().st_size <= 8192 + 4096 for f in files)
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    calls = [r for r in records if r["logger"] == "slowave_graph.mcp.adapter" and r.get("request_id")]
    statements: dict[str, list[str]] = defaultdict(list)
    for r in records:
        if r["logger"] == "slowave_graph.telemetry" and r.get("request_id"):
            statements[r["request_id"]].append(r["message"])
    assert calls, records[-5:]
    for call in calls:
        assert call["message"].startswith(call["tool"] + " ok "), call
    tied = [c for c in calls if statements.get(c["request_id"])]
    assert tied and all(s.startswith("neo4j ") for c in tied for s in statements[c["request_id"]])
    assert len({c["request_id"] for c in calls}) == len(calls)  # one id per call

    text = "\n".join(f.read_text() for f in files) + stderr
    for secret in (MASTER, named, WRONG, neo4j.password, ENDPOINT_KEY):
        assert secret not in text
