"""The MCP clients slowave-graph can configure: where each keeps its files and in what shape.

Formats (user-level configuration, Linux and macOS), HTTP entry / stdio entry / instructions:

- claude-code: ``~/.claude.json`` ``mcpServers``; ``type: http, url, headers`` /
  ``type: stdio, command, args, env``; ``~/.claude/CLAUDE.md``.
- claude-desktop: ``~/.config/Claude/claude_desktop_config.json`` ``mcpServers``; stdio only (its
  file cannot hold remote servers); no instruction file (it reads the server's MCP instructions).
- cursor: ``~/.cursor/mcp.json`` ``mcpServers``; ``url, headers`` / ``command, args, env``; no
  instruction file (user rules live in its settings).
- codex: ``~/.codex/config.toml`` ``[mcp_servers.<name>]``; ``url, http_headers`` /
  ``command, args, env, startup_timeout_sec``; ``~/.codex/AGENTS.md``.
- cline: VS Code globalStorage ``saoudrizwan.claude-dev/settings/cline_mcp_settings.json`` (and the
  CLI's ``~/.cline/data/settings/…`` when present) ``mcpServers``; ``type: streamableHttp, url,
  headers`` / ``type: stdio, command, args, env``; ``~/Documents/Cline/Rules/slowave-graph.md``.
- windsurf: ``~/.codeium/windsurf/mcp_config.json`` ``mcpServers``; ``serverUrl, headers`` /
  ``command, args, env``; ``~/.codeium/windsurf/memories/global_rules.md``.
- opencode: ``~/.config/opencode/opencode.json`` ``mcp`` (``mcp.servers`` in a V2-style file);
  ``type: remote, url, headers`` / ``type: local, command[], environment``;
  ``~/.config/opencode/AGENTS.md``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from slowave_graph.clients.entries import Entry
from slowave_graph.clients.spec import ServerSpec

Format = Literal["json", "toml"]


def config_home(home: Path) -> Path:
    """XDG config directory; XDG_CONFIG_HOME counts only for the real home (not a --home sandbox)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg and home == Path.home():
        return Path(xdg)
    return home / ".config"


def app_support(home: Path) -> Path:
    """Where Electron apps (Claude Desktop, VS Code) keep their settings."""
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    return config_home(home)


def _cline_vscode_dir(home: Path) -> Path:
    return app_support(home) / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"


def _stdio(spec: ServerSpec, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {**extra, "command": spec.command, "args": list(spec.args)}
    if spec.env:
        entry["env"] = dict(spec.env)
    return entry


def _with_headers(entry: dict[str, Any], spec: ServerSpec, key: str = "headers") -> dict[str, Any]:
    if spec.headers:
        entry[key] = spec.headers
    return entry


_COMMON_KEYS = frozenset({"type", "url", "headers", "command", "args", "env"})


def _claude_code(spec: ServerSpec, layout: str) -> Entry:
    if spec.transport == "http":
        return Entry(_with_headers({"type": "http", "url": spec.url}, spec), _COMMON_KEYS)
    return Entry(_stdio(spec, type="stdio"), _COMMON_KEYS)


def _claude_desktop(spec: ServerSpec, layout: str) -> Entry:
    return Entry(_stdio(spec), _COMMON_KEYS)


def _cursor(spec: ServerSpec, layout: str) -> Entry:
    if spec.transport == "http":
        return Entry(_with_headers({"url": spec.url}, spec), _COMMON_KEYS)
    return Entry(_stdio(spec), _COMMON_KEYS)


def _windsurf(spec: ServerSpec, layout: str) -> Entry:
    keys = _COMMON_KEYS | {"serverUrl"}
    if spec.transport == "http":
        return Entry(_with_headers({"serverUrl": spec.url}, spec), keys)
    return Entry(_stdio(spec), keys)


def _cline(spec: ServerSpec, layout: str) -> Entry:
    defaults = {"disabled": False, "autoApprove": []}
    if spec.transport == "http":
        return Entry(_with_headers({"type": "streamableHttp", "url": spec.url}, spec), _COMMON_KEYS, defaults)
    return Entry(_stdio(spec, type="stdio"), _COMMON_KEYS, defaults)


_CODEX_KEYS = frozenset(
    {"url", "http_headers", "bearer_token_env_var", "command", "args", "env", "startup_timeout_sec"}
)


def _codex(spec: ServerSpec, layout: str) -> Entry:
    if spec.transport == "http":
        return Entry(_with_headers({"url": spec.url}, spec, "http_headers"), _CODEX_KEYS)
    # A stdio server answers `initialize` once Neo4j and the embedding model are up: give it time.
    return Entry({**_stdio(spec), "startup_timeout_sec": 120}, _CODEX_KEYS)


_OPENCODE_KEYS = frozenset({"type", "url", "headers", "command", "environment", "enabled"})


def _opencode(spec: ServerSpec, layout: str) -> Entry:
    # V1 layout (mcp.<name>) carries `enabled`; the V2 layout (mcp.servers.<name>) connects by default.
    flag = {"enabled": True} if layout == "v1" else {}
    if spec.transport == "http":
        return Entry(_with_headers({"type": "remote", "url": spec.url, **flag}, spec), _OPENCODE_KEYS)
    entry: dict[str, Any] = {"type": "local", "command": [spec.command, *spec.args], **flag}
    if spec.env:
        entry["environment"] = dict(spec.env)
    return Entry(entry, _OPENCODE_KEYS)


def _opencode_layout(data: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    mcp = data.get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):
        return ("mcp", "servers"), "v2"
    return ("mcp",), "v1"


def _mcp_servers(data: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    return ("mcpServers",), ""


def _codex_servers(data: dict[str, Any]) -> tuple[tuple[str, ...], str]:
    return ("mcp_servers",), ""


@dataclass(frozen=True)
class Client:
    name: str
    title: str
    format: Format
    configs: Callable[[Path], list[Path]]  # the files to write; the first is the client's main one
    markers: Callable[[Path], list[Path]]  # any of these existing means the client is installed
    build: Callable[[ServerSpec, str], Entry]
    container: Callable[[dict[str, Any]], tuple[tuple[str, ...], str]] = _mcp_servers
    instructions: Callable[[Path], Path | None] = lambda home: None
    http: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)

    def installed(self, home: Path) -> bool:
        return any(p.exists() for p in self.markers(home))


def _cline_configs(home: Path) -> list[Path]:
    paths = [_cline_vscode_dir(home) / "settings" / "cline_mcp_settings.json"]
    if (home / ".cline").exists():  # the Cline CLI keeps its own copy
        paths.append(home / ".cline" / "data" / "settings" / "cline_mcp_settings.json")
    return paths


CLIENTS: dict[str, Client] = {
    c.name: c
    for c in [
        Client(
            "claude-code",
            "Claude Code",
            "json",
            configs=lambda h: [h / ".claude.json"],
            markers=lambda h: [h / ".claude.json", h / ".claude"],
            build=_claude_code,
            instructions=lambda h: h / ".claude" / "CLAUDE.md",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            "json",
            configs=lambda h: [app_support(h) / "Claude" / "claude_desktop_config.json"],
            markers=lambda h: [app_support(h) / "Claude"],
            build=_claude_desktop,
            http=False,
            notes=(
                "Claude Desktop's config file holds only servers it spawns, so it gets the stdio "
                "command (it shares the managed Neo4j with other servers); remote servers are added "
                "in its Settings → Connectors.",
                "No instruction file: Claude Desktop reads the server's own MCP instructions.",
            ),
        ),
        Client(
            "cursor",
            "Cursor",
            "json",
            configs=lambda h: [h / ".cursor" / "mcp.json"],
            markers=lambda h: [h / ".cursor"],
            build=_cursor,
            notes=(
                "Cursor keeps user rules in its settings, not in a file: paste the output of "
                "`slowave-graph setup --print-instructions` into Settings → Rules → User Rules.",
            ),
        ),
        Client(
            "codex",
            "Codex",
            "toml",
            configs=lambda h: [h / ".codex" / "config.toml"],
            markers=lambda h: [h / ".codex"],
            build=_codex,
            container=_codex_servers,
            instructions=lambda h: h / ".codex" / "AGENTS.md",
        ),
        Client(
            "cline",
            "Cline",
            "json",
            configs=_cline_configs,
            markers=lambda h: [_cline_vscode_dir(h), h / ".cline"],
            build=_cline,
            instructions=lambda h: h / "Documents" / "Cline" / "Rules" / "slowave-graph.md",
        ),
        Client(
            "windsurf",
            "Windsurf",
            "json",
            configs=lambda h: [h / ".codeium" / "windsurf" / "mcp_config.json"],
            markers=lambda h: [h / ".codeium" / "windsurf"],
            build=_windsurf,
            instructions=lambda h: h / ".codeium" / "windsurf" / "memories" / "global_rules.md",
        ),
        Client(
            "opencode",
            "opencode",
            "json",
            configs=lambda h: [config_home(h) / "opencode" / "opencode.json"],
            markers=lambda h: [config_home(h) / "opencode"],
            build=_opencode,
            container=_opencode_layout,
            instructions=lambda h: config_home(h) / "opencode" / "AGENTS.md",
        ),
    ]
}
