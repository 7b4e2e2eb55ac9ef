"""The named Cypher catalog: every statement the service runs lives in ``cypher/*.cypher``.

File format (the same files an analyst opens in Neo4j Browser)::

    // name: remember_call
    // One or more comment lines right after the name say what the query does and why it is
    // written the way it is (locking, over-fetch, idempotency).
    MATCH ...
    RETURN ...;

A statement runs from its ``// name:`` line to the next one. Statements take parameters only.

Two statements that share a block of clauses keep one copy of it: the block is a *fragment* (a
named entry whose first comment line starts with ``fragment:`` and says which variables it expects
bound), and each statement has a line ``// include: <fragment>`` where the block goes. The catalog
expands includes when it loads, so what runs is plain Cypher; fragments are not statements of
their own and ``names()`` leaves them out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from pathlib import Path

_NAME = re.compile(r"^//\s*name:\s*([a-z][a-z0-9_]*)\s*$")
_INCLUDE = re.compile(r"^(\s*)//\s*include:\s*([a-z][a-z0-9_]*)\s*$")


@dataclass(frozen=True)
class NamedQuery:
    name: str
    text: str
    doc: str
    file: str
    # the comment lines one by one (``doc`` joins them): structured lines such as ``param: …``
    lines: tuple[str, ...] = ()

    @property
    def fragment(self) -> bool:
        """A block of clauses other statements include, not a statement of its own."""
        return bool(self.lines) and self.lines[0].startswith("fragment:")


class CypherCatalog:
    def __init__(self, queries: dict[str, NamedQuery]) -> None:
        self._queries = queries

    def __getitem__(self, name: str) -> str:
        return self._queries[name].text

    def __contains__(self, name: object) -> bool:
        return name in self._queries

    def get(self, name: str) -> NamedQuery:
        return self._queries[name]

    def names(self, file: str | None = None) -> list[str]:
        """The runnable statements (fragments left out), of one file or all."""
        return [q.name for q in self._queries.values() if not q.fragment and (file is None or q.file == file)]

    @classmethod
    def from_directory(cls, directory: Path) -> CypherCatalog:
        queries: dict[str, NamedQuery] = {}
        for path in sorted(directory.glob("*.cypher")):
            for query in parse_cypher_file(path.read_text(), path.stem):
                if query.name in queries:
                    raise ValueError(f"duplicate query name {query.name!r} in {path.name}")
                queries[query.name] = query
        return cls({name: expand_includes(query, queries) for name, query in queries.items()})


def parse_cypher_file(source: str, file: str) -> list[NamedQuery]:
    queries: list[NamedQuery] = []
    name: str | None = None
    doc: list[str] = []
    body: list[str] = []
    in_doc = False

    def flush() -> None:
        if name is None:
            return
        statement = "\n".join(body).strip().rstrip(";").strip()
        if not statement:
            raise ValueError(f"query {name!r} in {file}.cypher has no statement")
        queries.append(NamedQuery(name, statement, " ".join(doc).strip(), file, tuple(doc)))

    for line in source.splitlines():
        match = _NAME.match(line.strip())
        if match:
            flush()
            name, doc, body, in_doc = match.group(1), [], [], True
            continue
        if name is None:
            continue  # file header
        stripped = line.strip()
        if in_doc and stripped.startswith("//") and not _INCLUDE.match(line):
            doc.append(stripped.lstrip("/").strip())
            continue
        in_doc = False
        body.append(line)
    flush()
    return queries


def expand_includes(query: NamedQuery, queries: dict[str, NamedQuery], depth: int = 0) -> NamedQuery:
    """``query`` with each ``// include: <fragment>`` line replaced by the fragment's clauses,
    indented like the include line."""
    if "include:" not in query.text:
        return query
    if depth > 8:
        raise ValueError(f"query {query.name!r}: includes nest too deep (a cycle?)")
    lines = []
    for line in query.text.splitlines():
        match = _INCLUDE.match(line)
        if not match:
            lines.append(line)
            continue
        indent, name = match.groups()
        included = queries.get(name)
        if included is None or not included.fragment:
            raise ValueError(f"query {query.name!r} includes {name!r}, which is not a fragment")
        block = expand_includes(included, queries, depth + 1).text
        lines.extend(indent + part if part.strip() else part for part in block.splitlines())
    return replace(query, text="\n".join(lines))


def cypher_directory() -> Path:
    """Installed wheels carry the catalog as package data; a source checkout has it at the top."""
    packaged = Path(str(resources.files("slowave_graph"))) / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "cypher"


@cache
def catalog() -> CypherCatalog:
    return CypherCatalog.from_directory(cypher_directory())
