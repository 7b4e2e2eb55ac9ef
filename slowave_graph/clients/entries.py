"""Merging our server entry into a client's configuration without touching anything else.

An entry is described by the keys slowave-graph manages (set to our values, or removed when the
other transport needs them gone) and defaults (set only when absent, so a user's own choice — e.g.
Cline's ``autoApprove`` list — survives). Keys of the entry that we never manage are kept as they are.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from slowave_graph.clients.files import SetupError


@dataclass(frozen=True)
class Entry:
    managed: dict[str, Any]
    managed_keys: frozenset[str]  # every key any transport of this client may write
    defaults: dict[str, Any] = field(default_factory=dict)

    def merge(self, existing: Any) -> dict[str, Any]:
        merged: dict[str, Any] = copy.deepcopy(existing) if isinstance(existing, dict) else {}
        for key in self.managed_keys - set(self.managed):
            merged.pop(key, None)
        merged.update(copy.deepcopy(self.managed))
        for key, value in self.defaults.items():
            merged.setdefault(key, copy.deepcopy(value))
        return merged


def container(data: dict[str, Any], path: tuple[str, ...], where: str, kind: str) -> dict[str, Any]:
    """The mapping at ``path`` in ``data`` (created empty where missing), where our entry goes."""
    node = data
    for key in path:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise SetupError(f"{where}: {'.'.join(path)} is not {kind}; edit it by hand")
        node = child
    return node


def _indent(text: str) -> int | str:
    """The file's own indentation (2 spaces, 4 spaces or a tab), so a rewrite keeps its look."""
    match = re.search(r"^\{\s*\n([ \t]+)\S", text)
    if not match:
        return 2
    unit = match.group(1)
    return "\t" if unit.startswith("\t") else len(unit)


def load_json(text: str | None, where: str) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SetupError(
            f"{where} is not plain JSON ({exc.msg} at line {exc.lineno}); files with comments or "
            "trailing commas are not edited automatically: add the entry by hand (`--dry-run --home "
            "<empty directory>` prints it)"
        ) from exc
    if not isinstance(data, dict):
        raise SetupError(f"{where} does not hold a JSON object")
    return data


def find_entry(data: dict[str, Any], path: tuple[str, ...], name: str) -> Any:
    node: Any = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return node.get(name) if isinstance(node, dict) else None


def upsert_json(text: str | None, path: tuple[str, ...], name: str, entry: Entry, where: str) -> str:
    """The file's new text with our entry merged in (the same text when nothing changes)."""
    data = load_json(text, where)
    servers = container(data, path, where, "a JSON object")
    merged = entry.merge(servers.get(name))
    if servers.get(name) == merged and text is not None:
        return text
    servers[name] = merged
    return json.dumps(data, indent=_indent(text or ""), ensure_ascii=False) + "\n"
