"""Named tokens (access/tokens.py) and the stdio line repair (mcp/stdio.py): pure logic, no server."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from slowave_graph.access.bearer import TOKEN_PRINCIPAL
from slowave_graph.access.tokens import TokensFile, digest
from slowave_graph.services.context import LOCAL_PRINCIPAL, granted


def test_grants_are_shell_style_patterns() -> None:
    assert granted(None, "anything:at-all")
    grants = ("project:shop", "user:alice-*")
    assert granted(grants, "project:shop") and granted(grants, "user:alice-laptop")
    assert not granted(grants, "project:shop2") and not granted(grants, "user:bob")
    assert not granted(grants, "Project:Shop")  # case matters, as scopes are case-sensitive
    assert not granted((), "project:shop")


def test_tokens_are_stored_as_hashes_identified_and_revoked(tmp_path: Path) -> None:
    tokens = TokensFile(tmp_path / "tokens.json")
    assert tokens.entries() == [] and tokens.identify(b"swg_nothing") is None
    alice = tokens.add("alice", ["project:shop", "user:alice-*"])
    bob = tokens.add("bob", ["*"])
    assert alice != bob and alice.startswith("swg_")
    text = tokens.path.read_text()
    assert alice not in text and bob not in text
    assert stat.S_IMODE(tokens.path.stat().st_mode) == 0o600
    found = tokens.identify(alice.encode())
    assert found is not None and found.name == "alice" and found.allows("user:alice-1")
    assert found.principal.startswith("tok_") and found.principal != "alice"
    assert not found.allows("project:other")
    assert tokens.identify(alice.encode() + b"x") is None
    with pytest.raises(ValueError):
        tokens.add("alice", ["*"])  # one token per name
    with pytest.raises(ValueError):
        tokens.add("Alice Smith", ["*"])
    with pytest.raises(ValueError):
        tokens.add("carol", [])
    # another process (the CLI) revokes: the server's reader sees it at the next request
    assert TokensFile(tokens.path).revoke("alice") and not TokensFile(tokens.path).revoke("alice")
    assert tokens.identify(alice.encode()) is None and tokens.identify(bob.encode()) is not None


def test_a_token_is_its_own_principal_never_its_name(tmp_path: Path) -> None:
    """The principal is per token: a name issued again after a revoke is someone new, and no
    name can take the master token's or the local user's principal."""
    tokens = TokensFile(tmp_path / "tokens.json")
    first = tokens.identify(tokens.add("alice", ["*"]).encode())
    assert tokens.revoke("alice")
    second = tokens.identify(tokens.add("alice", ["*"]).encode())
    assert first is not None and second is not None
    assert first.principal != second.principal and first.name == second.name == "alice"
    for reserved in ("default", "local"):
        with pytest.raises(ValueError, match="reserved"):
            tokens.add(reserved, ["*"])
    # a file written before tokens had ids: the principal comes from the token's hash
    legacy = tmp_path / "legacy.json"
    token = "swg_legacy-token"
    entry = {"name": "default", "sha256": digest(token), "scopes": ["*"], "created_at": "2026-01-01"}
    legacy.write_text(json.dumps({"version": 1, "tokens": [entry]}))
    found = TokensFile(legacy).identify(token.encode())
    assert found is not None and found.principal == "tok_" + digest(token)[:32]
    assert found.principal not in (TOKEN_PRINCIPAL, LOCAL_PRINCIPAL)
