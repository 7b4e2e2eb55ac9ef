"""What setup would change for one client, and whether a client already points at this server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from slowave_graph.clients.entries import Entry, find_entry, load_json, upsert_json
from slowave_graph.clients.files import FileChange, SetupError, read_text
from slowave_graph.clients.instructions import upsert_block
from slowave_graph.clients.redact import holds_literal_secret
from slowave_graph.clients.registry import Client
from slowave_graph.clients.spec import ServerSpec
from slowave_graph.clients.tomlfile import load_toml, upsert_toml

# Per file suffix: the file's data, from (text, where); and its new text with our entry merged in,
# from (text, path to the servers, name, entry, where).
_Load = Callable[[str | None, str], dict[str, Any]]
_Upsert = Callable[[str | None, tuple[str, ...], str, Entry, str], str]
_FORMATS: dict[str, tuple[_Load, _Upsert]] = {
    ".json": (load_json, upsert_json),
    ".toml": (load_toml, upsert_toml),
}


@dataclass
class ClientPlan:
    client: Client
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Variables whose values the client reads from its own environment (its file names them) ...
    references: tuple[str, ...] = ()
    # ... or whose values are written into its file (a client that cannot refer to one).
    literals: tuple[str, ...] = ()


def _effective_spec(client: Client, spec: ServerSpec) -> ServerSpec:
    return spec if client.http or spec.transport == "stdio" else spec.with_transport("stdio")


def config_change(client: Client, path: Path, spec: ServerSpec) -> FileChange:
    old = read_text(path)
    spec = _effective_spec(client, spec)
    load, upsert = _FORMATS[path.suffix]
    container, layout = client.container(load(old, str(path)))
    new = upsert(old, container, spec.name, client.build(spec, layout), str(path))
    old_entry = current_entry_from_text(client, path, old, spec.name) if old is not None else None
    return FileChange(
        path,
        old,
        new,
        holds_secret=client.literal_only and bool(spec.secrets),
        old_holds_secret=holds_literal_secret(old_entry, spec.secret_values),
    )


def plan(client: Client, home: Path, spec: ServerSpec, instructions: bool = True) -> ClientPlan:
    result = ClientPlan(client, notes=list(client.notes))
    if not client.http and spec.transport == "http":
        result.notes.insert(0, f"{client.title}: written as stdio (see below).")
    names = tuple(s.var for s in _effective_spec(client, spec).secrets)
    if client.literal_only:
        result.literals = names
    else:
        result.references = names
    for path in client.configs(home):
        result.changes.append(config_change(client, path, spec))
    target = client.instructions(home) if instructions else None
    if target is not None:
        old = read_text(target)
        result.changes.append(FileChange(target, old, upsert_block(old, str(target)), private=False))
    return result


def current_entry(client: Client, path: Path, name: str) -> Any:
    return current_entry_from_text(client, path, read_text(path), name)


def current_entry_from_text(client: Client, path: Path, text: str | None, name: str) -> Any:
    load, _ = _FORMATS[path.suffix]
    try:
        data = load(text, str(path))
    except SetupError:
        return None
    container, _ = client.container(data)
    return find_entry(data, container, name)


def entry_transport(entry: dict[str, Any]) -> Literal["http", "stdio"]:
    remote = "url" in entry or "serverUrl" in entry or entry.get("type") in ("http", "remote")
    return "http" if remote else "stdio"


@dataclass(frozen=True)
class ClientStatus:
    client: str
    state: Literal["not_installed", "not_configured", "ok", "outdated", "unreadable"]
    path: Path
    detail: str


def status(client: Client, home: Path, spec: ServerSpec) -> ClientStatus:
    """Whether the client's main config has our entry, pointing at this server (same transport it
    already uses): 'ok' means `setup` would not change it."""
    path = client.configs(home)[0]
    if not client.installed(home):
        return ClientStatus(client.name, "not_installed", path, f"{client.title} not found")
    try:
        entry = current_entry(client, path, spec.name)
    except SetupError as exc:
        return ClientStatus(client.name, "unreadable", path, str(exc))
    if not isinstance(entry, dict):
        return ClientStatus(client.name, "not_configured", path, f"no {spec.name} entry in {path}")
    transport = entry_transport(entry)
    try:
        change = config_change(client, path, spec.with_transport(transport))
    except SetupError as exc:
        return ClientStatus(client.name, "unreadable", path, str(exc))
    where = entry.get("url") or entry.get("serverUrl") or entry.get("command")
    if change.changed and change.old_holds_secret and not client.literal_only:
        return ClientStatus(
            client.name,
            "outdated",
            path,
            f"{path} has {spec.name} ({transport}: {where}) with a secret written into it as plain "
            "text; setup replaces it with a reference to an environment variable",
        )
    if change.changed:
        wanted = current_entry_from_text(client, path, change.new, spec.name)
        keys = sorted(k for k in set(entry) | set(wanted) if entry.get(k) != wanted.get(k))
        return ClientStatus(
            client.name,
            "outdated",
            path,
            f"{path} has {spec.name} ({transport}: {where}) but it differs from this server's "
            f"settings in: {', '.join(keys)}",
        )
    return ClientStatus(client.name, "ok", path, f"{transport}: {where}")
