"""Editing one ``[mcp_servers.<name>]`` table of a TOML file (Codex's config.toml) in place.

The standard library reads TOML but does not write it, and re-serialising a user's file would drop
its comments and layout. So the edit is textual and narrow: our table (with any sub-tables of it)
is replaced, or appended at the end; every other line stays byte-for-byte. The result is parsed
again and must equal the original document with only our entry changed — otherwise nothing is
written.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from slowave_graph.clients.entries import Entry
from slowave_graph.clients.files import SetupError

_HEADER = re.compile(r"^\s*\[\[?\s*(?P<key>[^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key_parts(key: str) -> list[str]:
    """Dotted TOML key → its parts (bare or quoted)."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', key)
    return [a or b or c for a, b, c in parts]


def _key(part: str) -> str:
    return part if _BARE.match(part) else json.dumps(part)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise SetupError(f"cannot write {type(value).__name__} values to TOML; edit the entry by hand")


def render_table(path: list[str], entry: dict[str, Any]) -> str:
    lines = ["[" + ".".join(_key(p) for p in path) + "]"]
    lines += [f"{_key(k)} = {_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


def _block_span(lines: list[str], path: list[str]) -> tuple[int, int] | None:
    """Line range of the table ``path`` and its sub-tables, if it is written as a [table]."""
    start = None
    end = len(lines)
    for i, line in enumerate(lines):
        match = _HEADER.match(line)
        if not match:
            continue
        parts = _key_parts(match.group("key"))
        if start is None:
            if parts == path:
                start = i
        elif parts[: len(path)] != path:
            end = i
            break
    if start is None:
        return None
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # blank lines and comments after our keys stay (they introduce what follows)
    return start, end


def upsert_toml_table(text: str | None, path: list[str], entry: Entry, where: str) -> str:
    source = text or ""
    try:
        data = tomllib.loads(source)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"{where} is not valid TOML ({exc}); fix it first") from exc
    parent: Any = data
    for part in path[:-1]:
        parent = parent.get(part, {}) if isinstance(parent, dict) else None
    if not isinstance(parent, dict):
        raise SetupError(f"{where}: {'.'.join(path[:-1])} is not a table; edit it by hand")
    existing = parent.get(path[-1])
    merged = entry.merge(existing)
    if existing == merged and text is not None:
        return source
    block = render_table(path, merged)
    lines = source.splitlines(keepends=True)
    span = _block_span(lines, path)
    if span is None and existing is not None:
        raise SetupError(
            f"{where} defines {'.'.join(path)} without a [{'.'.join(path)}] header (inline or dotted "
            "keys); replace it by hand"
        )
    if span is None:
        prefix = source if not source or source.endswith("\n") else source + "\n"
        result = prefix + ("\n" if prefix.strip() else "") + block
    else:
        start, end = span
        tail = "".join(lines[end:])
        separator = "\n" if tail.strip() and not tail.startswith(("\n", "\r\n")) else ""
        result = "".join(lines[:start]) + block + separator + tail
    # The edit must change our table and nothing else.
    expected = tomllib.loads(source)
    node = expected
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = merged
    try:
        written = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(f"editing {where} would break its TOML ({exc}); edit it by hand") from exc
    if written != expected:
        raise SetupError(f"editing {where} would change more than {'.'.join(path)}; edit it by hand")
    return result


def find_toml_entry(text: str | None, path: list[str]) -> Any:
    try:
        node: Any = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError:
        return None
    for part in path:
        node = node.get(part) if isinstance(node, dict) else None
    return node
