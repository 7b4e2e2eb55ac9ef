"""The named Cypher catalog: every statement the service runs lives in ``cypher/*.cypher``.

File format (the same files an analyst opens in Neo4j Browser)::

    // name: remember_memories
    // One or more comment lines right after the name say what the query does and why it is
    // written the way it is (locking, over-fetch, idempotency).
    MATCH ...
    RETURN ...;

A statement runs from its ``// name:`` line to the next one. Statements take parameters only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

_NAME = re.compile(r"^//\s*name:\s*([a-z][a-z0-9_]*)\s*$")


@dataclass(frozen=True)
class NamedQuery:
    name: str
    text: str
    doc: str
    file: str
    # the comment lines one by one (``doc`` joins them): structured lines such as ``param: …``
    lines: tuple[str, ...] = ()


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
        return [q.name for q in self._queries.values() if file is None or q.file == file]

    @classmethod
    def from_directory(cls, directory: Path) -> CypherCatalog:
        queries: dict[str, NamedQuery] = {}
        for path in sorted(directory.glob("*.cypher")):
            for query in parse_cypher_file(path.read_text(), path.stem):
                if query.name in queries:
                    raise ValueError(f"duplicate query name {query.name!r} in {path.name}")
                queries[query.name] = query
        return cls(queries)


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
        if in_doc and stripped.startswith("//"):
            doc.append(stripped.lstrip("/").strip())
            continue
        in_doc = False
        body.append(line)
    flush()
    return queries


def cypher_directory() -> Path:
    """Installed wheels carry the catalog as package data; a source checkout has it at the top."""
    packaged = Path(str(resources.files("slowave_graph"))) / "cypher"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "cypher"


@cache
def catalog() -> CypherCatalog:
    return CypherCatalog.from_directory(cypher_directory())
