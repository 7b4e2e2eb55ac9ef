"""Editing one ``[mcp_servers.<name>]`` table of a TOML file (Codex's config.toml) with tomlkit, which
writes every other part of the file back as it was: comments, layout, order.

Our table (with any sub-tables of it) is written anew from the merged entry, in its place, or
appended at the end of the file. The result is parsed again, by the standard library, and must equal
the original document with only our entry changed — otherwise nothing is written.
"""

from __future__ import annotations

import tomllib
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import AoT, Comment, Table, Whitespace

from slowave_graph.clients.entries import Entry, container
from slowave_graph.clients.files import SetupError


def _parse(text: str | None, where: str) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise SetupError(f"{where} is not valid TOML ({exc}); fix it first") from exc


def load_toml(text: str | None, where: str) -> dict[str, Any]:
    return _parse(text, where).unwrap()


def _value(value: Any) -> Any:
    """Tables, also inside arrays, as inline tables: our entry stays one [table] of key = value lines
    rather than growing sub-tables or arrays of tables."""
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        table.update({key: _value(item) for key, item in value.items()})
        return table
    if isinstance(value, list):
        array = tomlkit.array()
        array.extend(_value(item) for item in value)
        return array
    return value


def _tail(table: Table) -> list[Whitespace | Comment]:
    """The blank lines and comments that end the table (those of its last sub-table, if it ends with
    one): they introduce what follows it, so they stay after the table that replaces it."""
    tail: list[Whitespace | Comment] = []
    for key, item in reversed(table.value.body):
        if key is None and isinstance(item, Whitespace | Comment):
            tail.insert(0, item)
        elif tail:
            break
        elif isinstance(item, Table):
            return _tail(item)
        elif isinstance(item, AoT) and item.body:  # [[...]]: the tail is its last table's
            return _tail(item.body[-1])
        else:
            break
    return tail


def _write(
    doc: tomlkit.TOMLDocument, source: str, keys: tuple[str, ...], values: dict[str, Any], where: str
) -> None:
    """Our table, holding ``values``, in place of the one at ``keys`` or else at the end of the file."""
    ours = tomlkit.table()
    for key, value in values.items():
        ours.add(key, _value(value))
    *path, name = keys
    node: Any = doc
    for key in path:
        node = node.get(key) if node is not None else None
    existing = node.get(name) if node is not None else None
    if existing is None:
        if source.strip():  # a blank line after the user's text, which stays the file's beginning
            doc.add(tomlkit.nl())
            if not source.endswith("\n"):
                doc.add(tomlkit.nl())
        for key in reversed(keys[1:]):  # [mcp_servers.<name>] without a [mcp_servers] header
            parent = tomlkit.table(is_super_table=True)
            parent.add(key, ours)
            ours = parent
        doc.append(keys[0], ours)
    elif isinstance(existing, Table) and not existing.is_super_table():
        for item in _tail(existing):
            ours.add(item)
        node[name] = ours
    else:
        dotted = ".".join(keys)
        raise SetupError(
            f"{where} defines {dotted} without a [{dotted}] header (inline or dotted keys); replace it "
            "by hand"
        )


def upsert_toml(text: str | None, path: tuple[str, ...], name: str, entry: Entry, where: str) -> str:
    """The file's new text with our entry merged in (the same text when nothing changes)."""
    doc = _parse(text, where)
    expected = doc.unwrap()  # becomes the document as it must read after the edit
    servers = container(expected, path, where, "a table")
    merged = entry.merge(servers.get(name))
    if servers.get(name) == merged and text is not None:
        return text
    servers[name] = merged
    try:
        _write(doc, text or "", (*path, name), merged, where)
        result = doc.as_string()
        written = tomllib.loads(result)
    except (TOMLKitError, tomllib.TOMLDecodeError) as exc:
        raise SetupError(f"editing {where} would break its TOML ({exc}); edit it by hand") from exc
    if written != expected:
        raise SetupError(f"editing {where} would change more than {'.'.join((*path, name))}; edit it by hand")
    return result
