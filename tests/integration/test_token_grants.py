"""Named tokens with scope grants (access/tokens.py): a token works only in the scopes it was granted —
a call outside them is refused and writes nothing — the dashboard shows only granted scopes, and a
token revoked with `slowave-graph token revoke` is refused at its next request."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.commands.serve import site
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.mcp.server import build_server
from slowave_graph.services.context import ClientInfo
from tests.support.mcp_helpers import activate, call, commit_args, error, ok, recall, remember, settle
from tests.support.servers import SERVER, client_as, serve_in_process

pytestmark = [pytest.mark.neo4j]


def token_cli(tokens: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"SLOWAVE_TOKENS_FILE": str(tokens), "PATH": "/usr/bin:/bin"}
    return subprocess.run([*SERVER, "token", *args], capture_output=True, text=True, env=env, timeout=60)


def new_token(tokens: Path, name: str, *scopes: str) -> str:
    made = token_cli(tokens, "add", name, *[arg for s in scopes for arg in ("--scope", s)])
    assert made.returncode == 0, made.stderr
    token = next(line for line in made.stdout.splitlines() if line.startswith("swg_"))
    assert token not in tokens.read_text(), "only the token's hash is stored"
    return token


async def scope_exists(app: App, scope: str) -> bool:
    found = await app.db.driver.execute_query(
        "RETURN EXISTS { MATCH (:Scope {id: $scope}) } AS found", scope=scope, database_=app.db.database
    )
    return bool(found.records[0]["found"])


async def test_tokens_work_only_in_their_granted_scopes(app: App, scope: str, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.json"
    kind, name = scope.split(":", 1)
    shop, alice_a, alice_b = f"{kind}:{name}-shop", f"user:{name}-alice-a", f"user:{name}-alice-b"
    alice = new_token(tokens, "alice", shop, f"user:{name}-alice-*")
    bob = new_token(tokens, "bob", f"{kind}:{name}-other")
    listed = token_cli(tokens, "list")
    assert "alice" in listed.stdout and "bob" in listed.stdout and "swg_" not in listed.stdout

    settings = app.settings.model_copy(update={"tokens_file": tokens})
    served = dataclasses.replace(app, settings=settings)
    async with serve_in_process(site(served, build_server(served))) as base:
        async with client_as(base, alice) as client:
            for granted in (shop, alice_a, alice_b):
                act = await activate(client, granted, "Note the deploy rules")
                await remember(client, granted, act["session_id"], "Deploys need a green build")
        async with client_as(base, bob) as client:
            refused = await call(
                client, "slowave_activate", {"task": "t", "initial_goal": "g", "scope": shop}
            )
            assert "not granted" in error(refused, "invalid_input")["message"]
            # outside its grants nothing is written, not even the scope
            outside = f"{kind}:{name}-nowhere"
            await call(client, "slowave_activate", {"task": "t", "initial_goal": "g", "scope": outside})
            assert not await scope_exists(app, outside)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {bob}"}) as http:
            index = (await http.get(f"{base}/ui/")).text
            assert shop not in index and alice_a not in index
            # finding by name looks only among the token's own scopes
            assert alice_a not in (await http.get(f"{base}/ui/", params={"find": "alice"})).text
            assert (await http.get(f"{base}/ui/memories", params={"scope": shop})).status_code == 403
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {alice}"}) as http:
            index = (await http.get(f"{base}/ui/")).text
            assert shop in index and alice_a in index and alice_b in index
            found = (await http.get(f"{base}/ui/", params={"find": f"{name}-ALICE-A"})).text
            assert alice_a in found and alice_b not in found and shop not in found
            assert (await http.get(f"{base}/ui/memories", params={"scope": shop})).status_code == 200
        # revoked: refused at the next request, without a restart
        assert token_cli(tokens, "revoke", "bob").returncode == 0
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {bob}"}) as http:
            assert (await http.post(f"{base}/mcp", json={})).status_code == 401
            assert (await http.get(f"{base}/ui/")).status_code == 401
        async with httpx2.AsyncClient() as http:  # no token at all, now that tokens exist
            assert (await http.get(f"{base}/ui/")).status_code == 401
        twice = {"Authorization": f"Bearer {alice}"}
        async with httpx2.AsyncClient() as http:  # two Authorization headers: ambiguous, refused
            response = await http.get(f"{base}/ui/", headers=[*twice.items(), *twice.items()])
            assert response.status_code == 401


async def test_grants_hold_on_feedback_and_commit_and_a_reissued_name_inherits_nothing(
    app: App, scope: str, tmp_path: Path
) -> None:
    """Feedback and commit name no scope, only a retrieval or a session: the token's grants are
    checked against the scope of what they touch. A token issued again under a revoked name is a
    new principal that does not inherit the old token's sessions. Refused calls write nothing."""
    tokens = tmp_path / "tokens.json"
    assert token_cli(tokens, "add", "default", "--scope", "*").returncode == 2  # reserved
    kind, name = scope.split(":", 1)
    shop, other = f"{kind}:{name}-shop", f"{kind}:{name}-other"
    first = new_token(tokens, "carol", shop, other)
    [entry] = json.loads(tokens.read_text())["tokens"]

    def grant(*scopes: str) -> None:  # the first token's grants edited by hand
        tokens.write_text(json.dumps({"version": 1, "tokens": [{**entry, "scopes": list(scopes)}]}))

    settings = app.settings.model_copy(update={"tokens_file": tokens})
    served = dataclasses.replace(app, settings=settings)
    async with serve_in_process(site(served, build_server(served))) as base:
        async with client_as(base, first) as client:
            act = await activate(client, shop, "Note the deploy rules")
            stored = await remember(client, shop, act["session_id"], "Shop deploys need a green build")
            shown = await recall(client, shop, act["session_id"], "What do shop deploys need?")
            assert [m["memory_id"] for m in shown["memories"]] == [stored["memory_id"]]
        stale = {"retrieval_id": shown["retrieval_id"], "coverage": "complete", "memory_feedback": [
            {"memory_id": stored["memory_id"], "assessment": "stale", "stale_reason": "outdated",
             "reason": "says so"}]}  # fmt: skip

        async def refused_everything(token: str) -> None:
            async with client_as(base, token) as client:
                error(await call(client, "slowave_feedback", stale), "not_found")
                batch = ok(await call(client, "slowave_feedback", {"items": [stale]}))
                assert batch["results"][0]["ok"] is False
                refused = await call(client, "slowave_commit", commit_args(act["session_id"]))
                assert "unknown session_id" in error(refused, "invalid_input")["message"]
                assert act["retrieval_id"] not in json.dumps(refused)

        grant(other)  # narrowed: its own session and retrieval in the shop are unknown to it
        await refused_everything(first)
        assert token_cli(tokens, "revoke", "carol").returncode == 0
        again = new_token(tokens, "carol", shop, other)  # the same name, the same grants: someone new
        await refused_everything(again)
        found = await app.db.driver.execute_query(
            "MATCH (s:Session {id: $id}) RETURN s.status AS status, "
            "COUNT { (:Retrieval {session_id: $id})-[:ASSESSED]->() } AS assessed, "
            "COUNT { (:Memory {scope: $scope, status: 'stale'}) } AS stale",
            id=act["session_id"], scope=shop, database_=app.db.database,
        )  # fmt: skip
        assert dict(found.records[0]) == {"status": "open", "assessed": 0, "stale": 0}
        grant(shop)  # granted again, the first token still owns its session and closes it
        async with client_as(base, first) as client:
            await settle(client, act)
            await settle(client, shown)
            assert ok(await call(client, "slowave_commit", commit_args(act["session_id"])))["committed"]


async def test_a_narrow_token_cannot_count_or_locate_other_scopes(
    app: App, scope: str, tmp_path: Path
) -> None:
    """A memory or continuity line in a scope the token is not granted answers exactly as one that
    does not exist; fragmentation warnings name no ungranted scope; /metrics (every tenant's
    figures) and its reset need the master token."""
    kind, name = scope.split(":", 1)
    shop, other, variant = f"{kind}:{name}-shop", f"{kind}:{name}-other", f"{kind}:{name}-Shop"
    async with Client(build_server(app)) as master:  # no token: every scope
        elsewhere = await activate(master, other, "Note the other team's rules")
        foreign = await remember(master, other, elsewhere["session_id"], "Other deploys need two approvals")
        await activate(master, variant, "Open a look-alike scope")
        await remember(master, variant, (await activate(master, variant, "x"))["session_id"], "Look-alike")
    tokens = tmp_path / "tokens.json"
    token = new_token(tokens, "erin", shop)
    settings = app.settings.model_copy(update={"tokens_file": tokens})
    served = dataclasses.replace(app, settings=settings)
    async with serve_in_process(site(served, build_server(served))) as base:
        async with client_as(base, token) as client:
            act = await activate(client, shop, "Note the deploy rules")
            assert not [w for w in act.get("warnings", []) if variant in w["message"]]  # not granted
            stored = await remember(client, shop, act["session_id"], "Shop deploys need a green build")
            shown = await recall(client, shop, act["session_id"], "What do shop deploys need?")

            def superseded_by(replacement: str) -> dict[str, Any]:
                return {"retrieval_id": shown["retrieval_id"], "memory_feedback": [
                    {"memory_id": stored["memory_id"], "assessment": "stale", "stale_reason": "superseded",
                     "reason": "replaced", "replacement_memory_id": replacement}]}  # fmt: skip

            answers = [
                ok(await call(client, "slowave_feedback", superseded_by(replacement)))["rejected"]
                for replacement in (foreign["memory_id"], "sch_999999999")
            ]
            assert [(r["reason"], r["field"], r["hint"]) for r in answers[0]] == [
                (r["reason"], r["field"], r["hint"]) for r in answers[1]
            ]
            assert [r["reason"] for r in answers[0]] == ["replacement_not_found"]
            messages = [
                error(await call(client, "slowave_activate", args), "invalid_input")["message"]
                for args in (
                    {
                        "task": "t",
                        "initial_goal": "g",
                        "scope": shop,
                        "continuity_id": elsewhere["continuity_id"],
                    },
                    {
                        "task": "t",
                        "initial_goal": "g",
                        "scope": shop,
                        "continuity_id": "cont_00000000000000000000000000000000",
                    },
                )
            ]
            assert messages[0] == messages[1] and "unknown continuity_id" in messages[0]
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
            assert (await http.get(f"{base}/metrics")).status_code == 403
            assert (await http.delete(f"{base}/metrics")).status_code == 403


async def test_the_index_finds_a_scope_by_part_of_its_name(app: App, scope: str) -> None:
    """A store can hold more scopes than the index lists (the fullest first): a person finds one
    by part of its name, case ignored; what they typed is shown back as text."""
    kind, name = scope.split(":", 1)
    wanted, other = f"{kind}:{name}-Billing-API", f"{kind}:{name}-frontend"
    client = ClientInfo("test", "1")
    for each in (wanted, other):
        await app.services.activation.activate(
            ActivateRequest(task="t", initial_goal="g", scope=each), client
        )
    async with serve_in_process(site(app, build_server(app))) as base, httpx2.AsyncClient() as http:
        found = (await http.get(f"{base}/ui/", params={"find": f"{name}-billing"})).text
        assert wanted in found and other not in found
        assert "1 scope with" in found
        evil = "<script>alert(1)</script>"
        none = (await http.get(f"{base}/ui/", params={"find": evil})).text
        assert "No scope has" in none and evil not in none and "&lt;script&gt;" in none
