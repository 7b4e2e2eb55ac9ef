"""The MCP clients slowave-graph can configure: where each keeps its files and in what shape.

Formats (user-level configuration, Linux and macOS), HTTP entry / stdio entry / instructions:

- claude-code: ``~/.claude.json`` ``mcpServers``; ``type: http, url, headers`` /
  ``type: stdio, command, args, env``; ``~/.claude/CLAUDE.md``.
- claude-desktop: ``~/.config/Claude/claude_desktop_config.json`` ``mcpServers``; stdio only (its
  file cannot hold remote servers); no instruction file (it reads the server's MCP instructions).
- cursor: ``~/.cursor/mcp.json`` ``mcpServers``; ``url, headers`` / ``command, args, env``; no
  instruction file (user rules live in its settings).
- codex: ``~/.codex/config.toml`` ``[mcp_servers.<name>]``; ``url, bearer_token_env_var`` /
  ``command, args, env, env_vars, startup_timeout_sec``; ``~/.codex/AGENTS.md``.
- cline: VS Code globalStorage ``saoudrizwan.claude-dev/settings/cline_mcp_settings.json`` (and the
  CLI's ``~/.cline/data/settings/…`` when present) ``mcpServers``; ``type: streamableHttp, url,
  headers`` / ``type: stdio, command, args, env``; ``~/Documents/Cline/Rules/slowave-graph.md``.
- windsurf: ``~/.codeium/windsurf/mcp_config.json`` ``mcpServers``; ``serverUrl, headers`` /
  ``command, args, env``; ``~/.codeium/windsurf/memories/global_rules.md``.
- opencode: ``~/.config/opencode/opencode.json`` ``mcp`` (``mcp.servers`` in a V2-style file);
  ``type: remote, url, headers`` / ``type: local, command[], environment``;
  ``~/.config/opencode/AGENTS.md``.

Secrets (the bearer token, a user-supplied NEO4J_PASSWORD) are written as references to environment
variables wherever the client documents a way to read one, so the value stays in the user's
environment and the file holds only its name:

- claude-code: ``${VAR}`` in ``command, args, env, url, headers``
  (https://code.claude.com/docs/en/mcp, "Environment variable expansion in .mcp.json"; the section
  names the project file, and the user-scope ``~/.claude.json`` entries expand the same way per
  https://microsoft.github.io/apm/reference/mcp-variable-compatibility/, checked against the client).
- cursor: ``${env:VAR}`` in ``command, args, env, url, headers``
  (https://cursor.com/docs/context/mcp, "Config interpolation").
- windsurf: ``${env:VAR}`` in ``command, args, env, serverUrl, url, headers``; an unset variable
  becomes "" (https://docs.windsurf.com/windsurf/cascade/mcp, "Config Interpolation").
- opencode: ``{env:VAR}`` anywhere in the config file, replaced as text before parsing (so a value
  holding ``"`` would break the JSON); an unset variable becomes ""
  (https://opencode.ai/docs/config/#variables).
- codex: no interpolation, but ``bearer_token_env_var`` names the variable holding the bearer token,
  and ``env_vars`` lists variables forwarded from Codex's environment to a stdio server, which
  otherwise gets only a default whitelist (https://github.com/openai/codex/blob/main/docs/config.md,
  "MCP integration"; https://developers.openai.com/codex/mcp).
- claude-desktop, cline: no variable syntax is documented, and values are passed as written
  (Claude Desktop: https://modelcontextprotocol.io/quickstart/user,
  https://github.com/modelcontextprotocol/servers/issues/1039; Cline:
  https://docs.cline.bot/mcp/adding-and-configuring-servers, https://github.com/cline/cline/issues/3129).
  Relying on a spawned server inheriting the variable instead does not hold either: Cline gives a
  stdio server only PATH besides its ``env`` (https://github.com/cline/cline/issues/3533). So the
  value itself is written, the file is made owner-only, and setup says so.

The managed Neo4j's generated password is never among these secrets: a spawned server reads it
from its data directory (neo4j_local/manager.py), so a stdio entry needs no secret at all unless the
user set NEO4J_PASSWORD.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from slowave_graph.clients.entries import Entry
from slowave_graph.clients.files import SetupError
from slowave_graph.clients.spec import Secret, ServerSpec


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


# How a client file refers to an environment variable; None: it can only hold the value itself.
Reference = Callable[[str], str] | None


def _claude_ref(var: str) -> str:
    return f"${{{var}}}"


def _env_ref(var: str) -> str:  # Cursor, Windsurf
    return f"${{env:{var}}}"


def _opencode_ref(var: str) -> str:
    return f"{{env:{var}}}"


def _secret(secret: Secret, ref: Reference) -> str:
    if ref is not None:
        return ref(secret.var)
    if secret.value is None:
        raise SetupError(
            f"its configuration cannot refer to environment variables, so setup writes the value of "
            f"{secret.var} into it, and {secret.var} is not set here: export it and run setup again"
        )
    return secret.value


def _env(spec: ServerSpec, ref: Reference) -> dict[str, str]:
    return {**spec.env, **{s.var: _secret(s, ref) for s in spec.secret_env}}


def _stdio(spec: ServerSpec, ref: Reference, **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {**extra, "command": spec.command, "args": list(spec.args)}
    env = _env(spec, ref)
    if env:
        entry["env"] = env
    return entry


def _with_headers(entry: dict[str, Any], spec: ServerSpec, ref: Reference) -> dict[str, Any]:
    if spec.token:
        entry["headers"] = {"Authorization": f"Bearer {_secret(spec.token, ref)}"}
    return entry


_COMMON_KEYS = frozenset({"type", "url", "headers", "command", "args", "env"})
Build = Callable[[ServerSpec, str], Entry]


def _mcp_servers_entry(
    ref: Reference,
    url_key: str = "url",
    http_type: str | None = None,
    stdio_type: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> Build:
    """The entry of the clients whose files follow Claude's ``mcpServers`` shape: the URL (under
    ``url_key``) and an Authorization header, or command, args and env; a ``type`` where the client
    wants one."""
    keys = _COMMON_KEYS | {url_key}

    def build(spec: ServerSpec, layout: str) -> Entry:
        if spec.transport == "http":
            typed = {"type": http_type} if http_type else {}
            entry = _with_headers({**typed, url_key: spec.url}, spec, ref)
        else:
            entry = _stdio(spec, ref, **({"type": stdio_type} if stdio_type else {}))
        return Entry(entry, keys, defaults or {})

    return build


# http_headers stays managed so that the literal Authorization header of an older setup goes away.
_CODEX_KEYS = frozenset(
    {
        "url",
        "http_headers",
        "bearer_token_env_var",
        "command",
        "args",
        "env",
        "env_vars",
        "startup_timeout_sec",
    }
)


def _codex(spec: ServerSpec, layout: str) -> Entry:
    if spec.transport == "http":
        entry: dict[str, Any] = {"url": spec.url}
        if spec.token:
            entry["bearer_token_env_var"] = spec.token.var
        return Entry(entry, _CODEX_KEYS)
    entry = {"command": spec.command, "args": list(spec.args)}
    if spec.env:
        entry["env"] = dict(spec.env)
    if spec.secret_env:
        entry["env_vars"] = [s.var for s in spec.secret_env]
    # A stdio server answers `initialize` once Neo4j and the embedding model are up: give it time.
    entry["startup_timeout_sec"] = 120
    return Entry(entry, _CODEX_KEYS)


_OPENCODE_KEYS = frozenset({"type", "url", "headers", "command", "environment", "enabled"})


def _opencode(spec: ServerSpec, layout: str) -> Entry:
    # V1 layout (mcp.<name>) carries `enabled`; the V2 layout (mcp.servers.<name>) connects by default.
    flag = {"enabled": True} if layout == "v1" else {}
    if spec.transport == "http":
        entry = _with_headers({"type": "remote", "url": spec.url, **flag}, spec, _opencode_ref)
        return Entry(entry, _OPENCODE_KEYS)
    entry = {"type": "local", "command": [spec.command, *spec.args], **flag}
    env = _env(spec, _opencode_ref)
    if env:
        entry["environment"] = env
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
    configs: Callable[[Path], list[Path]]  # the files to write (.json or .toml); the first is the main one
    build: Build
    # Any of these existing means the client is installed; by default the folders of its files.
    markers: Callable[[Path], list[Path]] | None = None
    container: Callable[[dict[str, Any]], tuple[tuple[str, ...], str]] = _mcp_servers
    instructions: Callable[[Path], Path | None] = lambda home: None
    http: bool = True
    notes: tuple[str, ...] = field(default_factory=tuple)
    literal_only: bool = False  # its file cannot refer to an environment variable (see above)

    def installed(self, home: Path) -> bool:
        markers = self.markers(home) if self.markers else [p.parent for p in self.configs(home)]
        return any(p.exists() for p in markers)


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
            configs=lambda h: [h / ".claude.json"],
            build=_mcp_servers_entry(_claude_ref, http_type="http", stdio_type="stdio"),
            markers=lambda h: [h / ".claude.json", h / ".claude"],
            instructions=lambda h: h / ".claude" / "CLAUDE.md",
        ),
        Client(
            "claude-desktop",
            "Claude Desktop",
            configs=lambda h: [app_support(h) / "Claude" / "claude_desktop_config.json"],
            build=_mcp_servers_entry(None),
            http=False,
            literal_only=True,
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
            configs=lambda h: [h / ".cursor" / "mcp.json"],
            build=_mcp_servers_entry(_env_ref),
            notes=(
                "Cursor keeps user rules in its settings, not in a file: paste the output of "
                "`slowave-graph setup --print-instructions` into Settings → Rules → User Rules.",
            ),
        ),
        Client(
            "codex",
            "Codex",
            configs=lambda h: [h / ".codex" / "config.toml"],
            build=_codex,
            container=_codex_servers,
            instructions=lambda h: h / ".codex" / "AGENTS.md",
        ),
        Client(
            "cline",
            "Cline",
            configs=_cline_configs,
            build=_mcp_servers_entry(
                None,
                http_type="streamableHttp",
                stdio_type="stdio",
                defaults={"disabled": False, "autoApprove": []},
            ),
            markers=lambda h: [_cline_vscode_dir(h), h / ".cline"],
            literal_only=True,
            instructions=lambda h: h / "Documents" / "Cline" / "Rules" / "slowave-graph.md",
        ),
        Client(
            "windsurf",
            "Windsurf",
            configs=lambda h: [h / ".codeium" / "windsurf" / "mcp_config.json"],
            build=_mcp_servers_entry(_env_ref, url_key="serverUrl"),
            instructions=lambda h: h / ".codeium" / "windsurf" / "memories" / "global_rules.md",
        ),
        Client(
            "opencode",
            "opencode",
            configs=lambda h: [config_home(h) / "opencode" / "opencode.json"],
            build=_opencode,
            container=_opencode_layout,
            instructions=lambda h: config_home(h) / "opencode" / "AGENTS.md",
        ),
    ]
}
