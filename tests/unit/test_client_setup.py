"""`slowave-graph setup` against temporary home directories holding each client's real file format:
other servers and unrelated keys survive, a second run changes nothing, --dry-run writes nothing,
backups keep the previous file, unsafe files are refused untouched."""

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
from slowave_graph.config import Settings

URL = "http://127.0.0.1:8766/mcp"
TOKEN = "t0ken-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
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

EXPECTED_HTTP: dict[str, dict[str, Any]] = {
    "claude-code": {"type": "http", "url": URL, "headers": BEARER},
    "claude-desktop": {"command": COMMAND, "args": STDIO_ARGS},  # its file holds no remote servers
    "cursor": {"url": URL, "headers": BEARER},
    "cline": {"type": "streamableHttp", "url": URL, "headers": BEARER, "disabled": False, "autoApprove": []},
    "windsurf": {"serverUrl": URL, "headers": BEARER},
    "opencode": {"type": "remote", "url": URL, "enabled": True, "headers": BEARER},
    "codex": {"url": URL, "http_headers": BEARER},
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
    assert servers["slowave-graph"] == {"type": "remote", "url": URL, "headers": BEARER}
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
        'http_headers = { Authorization = "Bearer t0ken-for-tests" }\n\n# the end\n'
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
    ("mutate", "state"),
    [
        (lambda path: None, "ok"),
        (lambda path: path.write_text(path.read_text().replace("8766", "9999")), "outdated"),
        (lambda path: path.write_text(path.read_text().replace(TOKEN, "old-token")), "outdated"),
        (lambda path: path.write_text('{"mcpServers": {}}'), "not_configured"),
    ],
)
def test_status_tells_whether_a_client_points_at_this_server(
    tmp_path: Path, mutate: Mutate, state: str
) -> None:
    (tmp_path / ".cursor").mkdir()
    assert _setup(tmp_path, "--client", "cursor") == 0
    mutate(tmp_path / ".cursor" / "mcp.json")
    spec = spec_from_settings(Settings.from_env(), "http")
    result = status(CLIENTS["cursor"], tmp_path, spec)
    assert result.state == state, result
    assert status(CLIENTS["windsurf"], tmp_path, spec).state == "not_installed"


def test_print_instructions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["setup", "--print-instructions"]) == 0
    assert capsys.readouterr().out == BLOCK
