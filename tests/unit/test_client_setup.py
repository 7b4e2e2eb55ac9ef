"""`slowave-graph setup` against temporary home directories holding each client's real file format:
other servers and unrelated keys survive, a second run changes nothing, --dry-run writes nothing,
backups keep the previous file, unsafe files are refused untouched; secrets stay out of the files of
clients that can refer to environment variables and out of everything setup prints."""

from __future__ import annotations

import json
import os
import stat
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from slowave_graph.cli import main
from slowave_graph.clients import CLIENTS, spec_from_settings, status
from slowave_graph.clients.instructions import BEGIN, BLOCK, END, upsert_block
from slowave_graph.clients.redact import redact
from slowave_graph.config import Settings

URL = "http://127.0.0.1:8766/mcp"
TOKEN = "t0ken-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}  # only clients that cannot refer to a variable
PASSWORD = "neo4j-pa55word-for-tests"
COMMAND = str(Path(sys.executable).parent / "slowave-graph")
STDIO_ARGS = ["serve", "--transport", "stdio"]

CODEX_TOML = """\
# my Codex settings
model = "o3"  # the default model

[mcp_servers.docs]
command = "docs-mcp"
args = ["--verbose"]

[mcp_servers.docs.env]
DOCS_TOKEN = "abc"

[profiles.fast]
model = "mini"
"""


def _json(path: Path) -> Any:
    return json.loads(path.read_text())


# name → (file under home, existing content, path to the server map, their server, other top-level key)
EXISTING: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "claude-code": (
        ".claude.json",
        {"numStartups": 12, "projects": {"/home/me/shop": {"allowedTools": []}},
         "mcpServers": {"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}}},
        ("mcpServers",),
    ),
    "claude-desktop": (
        ".config/Claude/claude_desktop_config.json",
        {"globalShortcut": "Ctrl+Space",
         "mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}},
        ("mcpServers",),
    ),
    "cursor": (".cursor/mcp.json", {"mcpServers": {"context7": {"url": "https://mcp.context7.com/mcp"}}}, ("mcpServers",)),
    "cline": (
        ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        {"mcpServers": {"github": {"command": "docker", "args": ["run", "gh"], "disabled": False,
                                   "autoApprove": ["list_issues"]}}},
        ("mcpServers",),
    ),
    "windsurf": (
        ".codeium/windsurf/mcp_config.json",
        {"mcpServers": {"linear": {"serverUrl": "https://mcp.linear.app/mcp"}}},
        ("mcpServers",),
    ),
    "opencode": (
        ".config/opencode/opencode.json",
        {"$schema": "https://opencode.ai/config.json", "theme": "tokyonight",
         "mcp": {"other": {"type": "local", "command": ["other-mcp"], "enabled": True}}},
        ("mcp",),
    ),
}  # fmt: skip


def _bearer(reference: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {reference}"}


# Each client refers to SLOWAVE_AUTH_TOKEN in its own syntax; Cline can only hold the value.
EXPECTED_HTTP: dict[str, dict[str, Any]] = {
    "claude-code": {"type": "http", "url": URL, "headers": _bearer("${SLOWAVE_AUTH_TOKEN}")},
    "claude-desktop": {"command": COMMAND, "args": STDIO_ARGS},  # its file holds no remote servers
    "cursor": {"url": URL, "headers": _bearer("${env:SLOWAVE_AUTH_TOKEN}")},
    "cline": {"type": "streamableHttp", "url": URL, "headers": BEARER, "disabled": False, "autoApprove": []},
    "windsurf": {"serverUrl": URL, "headers": _bearer("${env:SLOWAVE_AUTH_TOKEN}")},
    "opencode": {
        "type": "remote",
        "url": URL,
        "enabled": True,
        "headers": _bearer("{env:SLOWAVE_AUTH_TOKEN}"),
    },
    "codex": {"url": URL, "bearer_token_env_var": "SLOWAVE_AUTH_TOKEN"},
}
EXPECTED_STDIO: dict[str, dict[str, Any]] = {
    "claude-code": {"type": "stdio", "command": COMMAND, "args": STDIO_ARGS},
    "claude-desktop": {"command": COMMAND, "args": STDIO_ARGS},
    "cursor": {"command": COMMAND, "args": STDIO_ARGS},
    "cline": {"type": "stdio", "command": COMMAND, "args": STDIO_ARGS, "disabled": False, "autoApprove": []},
    "windsurf": {"command": COMMAND, "args": STDIO_ARGS},
    "opencode": {"type": "local", "command": [COMMAND, *STDIO_ARGS], "enabled": True},
    "codex": {"command": COMMAND, "args": STDIO_ARGS, "startup_timeout_sec": 120},
}
INSTRUCTIONS = {
    "claude-code": ".claude/CLAUDE.md",
    "codex": ".codex/AGENTS.md",
    "cline": "Documents/Cline/Rules/slowave-graph.md",
    "windsurf": ".codeium/windsurf/memories/global_rules.md",
    "opencode": ".config/opencode/AGENTS.md",
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings come from the environment: start from none of ours, then set the token."""
    for var in list(os.environ):
        if var.startswith(("NEO4J_", "SLOWAVE_", "XDG_")):
            monkeypatch.delenv(var)
    monkeypatch.setenv("SLOWAVE_AUTH_TOKEN", TOKEN)
    monkeypatch.setattr(sys, "platform", "linux")


def _seed(home: Path, name: str) -> Path:
    """The client's config file as a user has it (with another server), or Codex's TOML."""
    if name == "codex":
        path = home / ".codex" / "config.toml"
        path.parent.mkdir(parents=True)
        path.write_text(CODEX_TOML)
        return path
    relative, content, _ = EXISTING[name]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=2) + "\n")
    return path


def _entry(path: Path, name: str) -> Any:
    if name == "codex":
        return tomllib.loads(path.read_text())["mcp_servers"]["slowave-graph"]
    node = _json(path)
    for key in EXISTING[name][2]:
        node = node[key]
    return node["slowave-graph"]


def _without_ours(path: Path, name: str) -> Any:
    if name == "codex":
        data = tomllib.loads(path.read_text())
        del data["mcp_servers"]["slowave-graph"]
        return data
    data = _json(path)
    node = data
    for key in EXISTING[name][2]:
        node = node[key]
    del node["slowave-graph"]
    return data


def _setup(home: Path, *args: str) -> int:
    return main(["setup", "--home", str(home), *args])


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("name", list(CLIENTS))
def test_entry_in_the_clients_own_format_keeps_everything_else(
    tmp_path: Path, name: str, transport: str
) -> None:
    path = _seed(tmp_path, name)
    before = tomllib.loads(path.read_text()) if name == "codex" else _json(path)
    assert _setup(tmp_path, "--client", name, "--transport", transport) == 0
    expected = (EXPECTED_HTTP if transport == "http" else EXPECTED_STDIO)[name]
    assert _entry(path, name) == expected
    assert _without_ours(path, name) == before  # other servers and unrelated keys untouched
    if name == "codex":
        assert path.read_text().startswith(CODEX_TOML)  # comments and layout kept byte for byte
    if name in INSTRUCTIONS:
        text = (tmp_path / INSTRUCTIONS[name]).read_text()
        assert text.startswith(BEGIN) and text.rstrip().endswith(END) and "slowave_feedback" in text


@pytest.mark.parametrize("name", list(CLIENTS))
def test_second_run_changes_nothing_and_makes_no_backup(tmp_path: Path, name: str) -> None:
    path = _seed(tmp_path, name)
    assert _setup(tmp_path, "--client", name) == 0
    backups = sorted(path.parent.glob(path.name + ".bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == (
        CODEX_TOML if name == "codex" else json.dumps(EXISTING[name][1], indent=2) + "\n"
    )
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert _setup(tmp_path, "--client", name) == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot


def test_dry_run_prints_diffs_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _seed(tmp_path, "codex")
    _seed(tmp_path, "claude-code")
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert _setup(tmp_path, "--client", "codex", "--client", "claude-code", "--dry-run") == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    out = capsys.readouterr().out
    assert f"--- {path}\n+++ {path}\n" in out and "+[mcp_servers.slowave-graph]" in out
    assert '+      "type": "http",' in out  # .claude.json
    assert f"+++ {tmp_path / '.claude' / 'CLAUDE.md'}" in out and "--- /dev/null" in out


def test_new_config_files_are_private_and_backups_keep_the_mode(tmp_path: Path) -> None:
    (tmp_path / ".cursor").mkdir()
    assert _setup(tmp_path, "--client", "cursor") == 0
    created = tmp_path / ".cursor" / "mcp.json"
    assert stat.S_IMODE(created.stat().st_mode) == 0o600  # it holds the bearer token
    os.chmod(created, 0o640)
    assert _setup(tmp_path, "--client", "cursor", "--transport", "stdio") == 0
    (backup,) = created.parent.glob("mcp.json.bak-*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o640 == stat.S_IMODE(created.stat().st_mode)
    assert "headers" in _json(backup)["mcpServers"]["slowave-graph"]


def test_switching_transport_keeps_the_users_own_keys_of_our_entry(tmp_path: Path) -> None:
    path = _seed(tmp_path, "cline")
    assert _setup(tmp_path, "--client", "cline") == 0
    data = _json(path)
    data["mcpServers"]["slowave-graph"]["autoApprove"] = ["slowave_recall"]  # the user's choice
    data["mcpServers"]["slowave-graph"]["timeout"] = 120
    path.write_text(json.dumps(data))
    assert _setup(tmp_path, "--client", "cline", "--transport", "stdio") == 0
    entry = _json(path)["mcpServers"]["slowave-graph"]
    assert entry == {"type": "stdio", "command": COMMAND, "args": STDIO_ARGS, "disabled": False,
                     "autoApprove": ["slowave_recall"], "timeout": 120}  # fmt: skip
    assert "url" not in entry and "headers" not in entry


def test_no_token_no_header_and_url_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SLOWAVE_AUTH_TOKEN")
    _seed(tmp_path, "windsurf")
    assert _setup(tmp_path, "--client", "windsurf", "--port", "9000", "--no-instructions") == 0
    assert _entry(tmp_path / EXISTING["windsurf"][0], "windsurf") == {
        "serverUrl": "http://127.0.0.1:9000/mcp"
    }
    assert not (tmp_path / INSTRUCTIONS["windsurf"]).exists()


def test_stdio_entry_carries_the_settings_that_differ_from_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://db.internal:7687")
    monkeypatch.setenv("NEO4J_PASSWORD", "pw")
    _seed(tmp_path, "claude-desktop")
    assert _setup(tmp_path, "--client", "claude-desktop", "--log-level", "DEBUG") == 0
    entry = _entry(tmp_path / EXISTING["claude-desktop"][0], "claude-desktop")
    # HTTP-only settings (the token) stay out of a stdio entry
    assert entry["env"] == {
        "NEO4J_URI": "bolt://db.internal:7687",
        "NEO4J_PASSWORD": "pw",
        "SLOWAVE_LOG_LEVEL": "DEBUG",
    }


def test_opencode_v2_layout_gets_mcp_servers(tmp_path: Path) -> None:
    path = tmp_path / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"mcp": {"servers": {"other": {"type": "local", "command": ["x"]}}}}))
    assert _setup(tmp_path, "--client", "opencode") == 0
    servers = _json(path)["mcp"]["servers"]
    assert servers["slowave-graph"] == {
        "type": "remote",
        "url": URL,
        "headers": _bearer("{env:SLOWAVE_AUTH_TOKEN}"),
    }
    assert servers["other"] == {"type": "local", "command": ["x"]}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("cursor", '{\n  // my servers\n  "mcpServers": {}\n}\n', "not plain JSON"),
        ("cursor", '{"mcpServers": []}', "not a JSON object"),
        ("codex", '[mcp_servers]\nslowave-graph = { url = "http://old/mcp" }\n', "without a [mcp_servers.slowave-graph] header"),
        ("codex", 'model = "o3\n', "not valid TOML"),
    ],
)  # fmt: skip
def test_files_that_cannot_be_edited_safely_are_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: str, message: str
) -> None:
    path = tmp_path / (".cursor/mcp.json" if name == "cursor" else ".codex/config.toml")
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert _setup(tmp_path, "--client", name) == 1
    assert message in capsys.readouterr().err
    assert path.read_text() == content
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no backup, no instruction file


def test_codex_table_with_subtables_is_replaced_in_place(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    old = (
        '[mcp_servers.slowave-graph]\ncommand = "/old/slowave-graph"\n\n'
        '[mcp_servers.slowave-graph.env]\nNEO4J_URI = "bolt://old"\n\n'
        '# keep me\n[profiles.fast]\nmodel = "mini"\n'
    )
    path.write_text(old)
    assert _setup(tmp_path, "--client", "codex", "--no-instructions") == 0
    text = path.read_text()
    assert text.endswith('\n\n# keep me\n[profiles.fast]\nmodel = "mini"\n') and "/old/" not in text
    data = tomllib.loads(text)
    assert data["mcp_servers"]["slowave-graph"] == EXPECTED_HTTP["codex"]
    assert data["profiles"] == {"fast": {"model": "mini"}}


def test_codex_comments_after_our_table_stay(tmp_path: Path) -> None:
    path = tmp_path / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text('model = "o3"\n\n[mcp_servers.slowave-graph]\nurl = "http://old:1/mcp"\n\n# the end\n')
    assert _setup(tmp_path, "--client", "codex", "--no-instructions") == 0
    assert path.read_text() == (
        'model = "o3"\n\n[mcp_servers.slowave-graph]\nurl = "http://127.0.0.1:8766/mcp"\n'
        'bearer_token_env_var = "SLOWAVE_AUTH_TOKEN"\n\n# the end\n'
    )


def test_instruction_block_is_replaced_in_place_on_upgrade() -> None:
    user = "# My rules\n\nAlways run the tests.\n"
    older = f"{user}\n<!-- slowave-graph:instructions v0 -->\nold advice\n{END}\n\n## After\nMore of mine.\n"
    upgraded = upsert_block(older, "f")
    assert upgraded == f"{user}\n{BLOCK}\n## After\nMore of mine.\n"
    assert upsert_block(upgraded, "f") == upgraded
    assert upsert_block(None, "f") == BLOCK and upsert_block(user, "f") == f"{user}\n{BLOCK}"


def test_all_configures_the_clients_found_and_only_those(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _setup(tmp_path, "--client", "all") == 1
    assert "no MCP client found" in capsys.readouterr().err
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codeium" / "windsurf").mkdir(parents=True)
    assert _setup(tmp_path, "--client", "all") == 0
    assert (tmp_path / ".codex" / "config.toml").is_file()
    assert (tmp_path / ".codeium" / "windsurf" / "mcp_config.json").is_file()
    assert not (tmp_path / ".cursor").exists() and not (tmp_path / ".claude.json").exists()


Mutate = Callable[[Path], None]


@pytest.mark.parametrize(
    ("mutate", "state", "detail"),
    [
        (lambda path: None, "ok", "http: " + URL),
        (lambda path: path.write_text(path.read_text().replace("8766", "9999")), "outdated", "differs"),
        # an entry an older setup wrote, with the token itself in place of the reference
        (
            lambda path: path.write_text(path.read_text().replace("${env:SLOWAVE_AUTH_TOKEN}", TOKEN)),
            "outdated",
            "with a secret written into it as plain text",
        ),
        (lambda path: path.write_text('{"mcpServers": {}}'), "not_configured", "no slowave-graph entry"),
    ],
)
def test_status_tells_whether_a_client_points_at_this_server(
    tmp_path: Path, mutate: Mutate, state: str, detail: str
) -> None:
    (tmp_path / ".cursor").mkdir()
    assert _setup(tmp_path, "--client", "cursor") == 0
    mutate(tmp_path / ".cursor" / "mcp.json")
    spec = spec_from_settings(Settings.from_env(), "http")
    result = status(CLIENTS["cursor"], tmp_path, spec)
    assert result.state == state, result
    assert detail in result.detail and TOKEN not in result.detail
    assert status(CLIENTS["windsurf"], tmp_path, spec).state == "not_installed"


def test_print_instructions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "--print-instructions"]) == 0
    assert capsys.readouterr().out == BLOCK


# --- secrets: referenced where the client can, masked in everything printed -----------------------

LITERAL_ONLY = {"claude-desktop", "cline"}  # no documented way to refer to an environment variable


def _config_path(home: Path, name: str) -> Path:
    return home / (".codex/config.toml" if name == "codex" else EXISTING[name][0])


def _every_file(home: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(home.rglob("*")) if p.is_file())


@pytest.fixture
def neo4j_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """An external Neo4j with the user's own password: the one secret a stdio entry can need."""
    monkeypatch.setenv("NEO4J_URI", "bolt://db.internal:7687")
    monkeypatch.setenv("NEO4J_PASSWORD", PASSWORD)


@pytest.mark.usefixtures("neo4j_password")
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("name", list(CLIENTS))
def test_secrets_are_referenced_where_the_client_can_and_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, transport: str
) -> None:
    path = _seed(tmp_path, name)
    before = tomllib.loads(path.read_text()) if name == "codex" else _json(path)
    assert _setup(tmp_path, "--client", name, "--transport", transport) == 0
    out, err = capsys.readouterr()
    assert TOKEN not in out + err and PASSWORD not in out + err
    assert _without_ours(path, name) == before  # other servers and unrelated keys untouched
    stdio = transport == "stdio" or name == "claude-desktop"  # Claude Desktop's file is stdio-only
    secret, var = (PASSWORD, "NEO4J_PASSWORD") if stdio else (TOKEN, "SLOWAVE_AUTH_TOKEN")
    entry_text = json.dumps(_entry(path, name))
    if name in LITERAL_ONLY:
        assert secret in entry_text  # the client cannot do otherwise: said so, file owner-only
        assert f"warning: {CLIENTS[name].title} cannot read environment variables" in out
        assert f"{path} holds {var} as plain text (owner-only, mode 0600" in out
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    else:
        assert TOKEN not in _every_file(tmp_path) and PASSWORD not in _every_file(tmp_path)
        assert var in entry_text  # the file names the variable ...
        # ... and the output says to export it, by name
        assert any(f"${var}" in line and "export it where it starts" in line for line in out.splitlines())
        assert "warning" not in out


def _seed_old_literal_entry(home: Path, name: str) -> Path:
    """The client's file with the entry an older setup wrote: token and password as plain text."""
    path = _seed(home, name)
    if name == "codex":
        path.write_text(
            path.read_text() + "\n[mcp_servers.slowave-graph]\n"
            f'url = "http://127.0.0.1:1/mcp"\nhttp_headers = {{ Authorization = "Bearer {TOKEN}" }}\n'
            f'\n[mcp_servers.slowave-graph.env]\nNEO4J_PASSWORD = "{PASSWORD}"\n'
        )
        return path
    data = _json(path)
    node = data
    for key in EXISTING[name][2]:
        node = node[key]
    node["slowave-graph"] = {
        "url": "http://127.0.0.1:1/mcp",
        "headers": BEARER,
        "env": {"NEO4J_PASSWORD": PASSWORD},
    }
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


@pytest.mark.usefixtures("neo4j_password")
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("name", list(CLIENTS))
def test_dry_run_masks_secrets_old_and_new(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, transport: str
) -> None:
    _seed_old_literal_entry(tmp_path, name)
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    assert _setup(tmp_path, "--client", name, "--transport", transport, "--dry-run") == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    out, err = capsys.readouterr()
    assert TOKEN not in out + err and PASSWORD not in out + err
    assert "****" in out  # the old entry's lines are shown, masked
    if name in LITERAL_ONLY:
        assert "would hold" in out and "as plain text (owner-only, mode 0600)" in out


def test_dry_run_shows_references_and_masks_literal_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".cursor").mkdir()
    _seed(tmp_path, "cline")
    assert _setup(tmp_path, "--client", "cursor", "--client", "cline", "--dry-run") == 0
    out = capsys.readouterr().out
    assert '+        "Authorization": "Bearer ${env:SLOWAVE_AUTH_TOKEN}"' in out  # Cursor: a reference
    assert '+        "Authorization": "Bearer ****"' in out  # Cline: the value, masked


def test_tightening_the_mode_only_where_a_secret_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cline = _seed(tmp_path, "cline")
    cursor = _seed(tmp_path, "cursor")
    os.chmod(cline, 0o644)
    os.chmod(cursor, 0o644)
    assert _setup(tmp_path, "--client", "cline", "--client", "cursor", "--no-instructions") == 0
    out = capsys.readouterr().out
    assert stat.S_IMODE(cline.stat().st_mode) == 0o600  # holds the token now
    assert f"{cline} holds SLOWAVE_AUTH_TOKEN as plain text (owner-only, mode 0600, was 0644)" in out
    assert stat.S_IMODE(cursor.stat().st_mode) == 0o644  # holds only a reference: left as it was
    (backup,) = cline.parent.glob(cline.name + ".bak-*")
    assert stat.S_IMODE(backup.stat().st_mode) == 0o644  # held no secret: keeps its mode


def test_a_backup_keeping_an_old_literal_secret_is_made_private_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _seed_old_literal_entry(tmp_path, "cursor")
    os.chmod(path, 0o644)
    assert _setup(tmp_path, "--client", "cursor") == 0
    out = capsys.readouterr().out
    assert TOKEN not in path.read_text() and stat.S_IMODE(path.stat().st_mode) == 0o644
    (backup,) = path.parent.glob("mcp.json.bak-*")
    assert TOKEN in backup.read_text() and stat.S_IMODE(backup.stat().st_mode) == 0o600
    assert f"note: {backup} keeps the secret the previous entry held as plain text" in out
    assert TOKEN not in out


def test_token_env_names_another_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLOWAVE_AUTH_TOKEN")
    (tmp_path / ".codex").mkdir()
    cline = _seed(tmp_path, "cline")
    seeded = cline.read_text()
    args = ("--client", "codex", "--client", "cline", "--token-env", "MY_SLOWAVE_TOKEN", "--no-instructions")
    # Codex refers to the variable, so setup needs no value; Cline needs the value, which is not set
    assert _setup(tmp_path, *args) == 1
    out, err = capsys.readouterr()
    assert _entry(tmp_path / ".codex" / "config.toml", "codex") == {
        "url": URL,
        "bearer_token_env_var": "MY_SLOWAVE_TOKEN",
    }
    assert "✗ Cline:" in err and "MY_SLOWAVE_TOKEN is not set here" in err and cline.read_text() == seeded
    assert "token from `slowave-graph token add`" in out
    monkeypatch.setenv("MY_SLOWAVE_TOKEN", "named-t0ken-of-alice")
    assert _setup(tmp_path, *args) == 0
    out, err = capsys.readouterr()
    assert _entry(cline, "cline")["headers"] == {"Authorization": "Bearer named-t0ken-of-alice"}
    assert "named-t0ken-of-alice" not in out + err


def test_token_env_must_be_a_variable_name(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["setup", "--client", "codex", "--token-env", "MY-TOKEN"])
    assert "not an environment variable name" in capsys.readouterr().err


def test_named_tokens_without_a_token_here_say_how_to_configure_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLOWAVE_AUTH_TOKEN")
    tokens = tmp_path / "tokens.json"
    tokens.write_text("{}")
    monkeypatch.setenv("SLOWAVE_TOKENS_FILE", str(tokens))
    (tmp_path / ".cursor").mkdir()
    assert _setup(tmp_path, "--client", "cursor") == 0
    out = capsys.readouterr().out
    assert "no Authorization header was written" in out
    assert "slowave-graph token add" in out and "--token-env" in out


def test_managed_neo4j_stdio_entries_carry_no_secret(tmp_path: Path) -> None:
    """The managed Neo4j's password lives in its data directory, where the spawned server reads it."""
    for name in ("cline", "claude-desktop"):
        _seed(tmp_path, name)
        assert _setup(tmp_path, "--client", name, "--transport", "stdio") == 0
        assert "env" not in _entry(_config_path(tmp_path, name), name)


def test_secret_values_stay_out_of_reprs() -> None:
    spec = spec_from_settings(
        Settings.from_env({"SLOWAVE_AUTH_TOKEN": TOKEN, "NEO4J_PASSWORD": PASSWORD}), "http"
    )
    assert spec.secret_values == (TOKEN, PASSWORD)
    assert TOKEN not in repr(spec) and PASSWORD not in repr(spec)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ('"Authorization": "Bearer abc123"', '"Authorization": "Bearer ****"'),
        ('http_headers = { Authorization = "Bearer abc123" }', 'http_headers = { Authorization = "Bearer ****" }'),
        ('DOCS_TOKEN = "abc"', 'DOCS_TOKEN = "****"'),
        ('"NEO4J_PASSWORD": "p\\"w"', '"NEO4J_PASSWORD": "****"'),
        ('"X-Api-Key": "zzz"', '"X-Api-Key": "****"'),
        # references name variables: they stay readable
        ('"Authorization": "Bearer ${env:SLOWAVE_AUTH_TOKEN}"', None),
        ('"Authorization": "Bearer ${SLOWAVE_AUTH_TOKEN}"', None),
        ('"NEO4J_PASSWORD": "{env:NEO4J_PASSWORD}"', None),
        ('bearer_token_env_var = "SLOWAVE_AUTH_TOKEN"', None),
        ('env_vars = ["NEO4J_PASSWORD"]', None),
        ('"numStartups": 12,', None),
    ],
)  # fmt: skip
def test_redact_masks_credentials_and_keeps_references(line: str, shown: str | None) -> None:
    assert redact(line) == (line if shown is None else shown)


def test_redact_masks_known_values_wherever_they_are() -> None:
    assert redact('--password=s3cr"t and s3cr\\"t', ['s3cr"t']) == "--password=**** and ****"
    assert redact("Bearer abc and x", patterns=False) == "Bearer abc and x"


def test_a_file_holding_a_secret_opened_to_others_is_made_private_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _seed(tmp_path, "cline")
    assert _setup(tmp_path, "--client", "cline", "--no-instructions") == 0
    os.chmod(path, 0o644)
    content = path.read_bytes()
    capsys.readouterr()
    assert _setup(tmp_path, "--client", "cline", "--no-instructions") == 0
    out = capsys.readouterr().out
    assert path.read_bytes() == content and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "already up to date" in out and "(owner-only, mode 0600, was 0644)" in out
    assert len(list(path.parent.glob(path.name + ".bak-*"))) == 1  # no new backup
