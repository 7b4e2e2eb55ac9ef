"""Catalog queries an analyst (or a dashboard) may run by name, with their declared parameters.

A query in ``cypher/explore.cypher`` declares each parameter on a comment line::

    // param: as_of datetime — the moment, e.g. 2026-03-01T09:30:00Z
    // param: limit int = 100 — at most this many rows

(name, type, optional ``= default`` as a JSON literal, optional description). The read-only stats
queries declare nothing; their parameters are read off the statement and taken as they come.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from slowave_graph.exceptions import SlowaveError
from slowave_graph.graph.cypher import CypherCatalog, NamedQuery, catalog

# Files whose every statement is read-only and may be run by name.
RUNNABLE_FILES = ("explore", "stats")
PARAM_TYPES = ("string", "int", "float", "bool", "list", "datetime")

_PARAM_LINE = re.compile(
    r"^param:\s*(?P<name>[a-z_][a-z0-9_]*)\s+(?P<type>[a-z]+)"
    r"(?:\s*=\s*(?P<default>\S+))?(?:\s+[—–-]+\s+(?P<description>.*))?$"
)
_USED = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$")
_TRUE = ("true", "yes", "1")
_FALSE = ("false", "no", "0")


class ParamError(SlowaveError, ValueError):
    """A parameter that is unknown, missing or not of its declared type."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str | None  # None: undeclared (stats queries) — the value's type is inferred
    required: bool
    default: Any = None
    description: str = ""


@dataclass(frozen=True)
class CatalogQuery:
    name: str
    file: str
    summary: str
    params: tuple[Param, ...]
    text: str

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


def used_parameters(text: str) -> list[str]:
    """The $parameters a statement refers to, in order of first use."""
    return list(dict.fromkeys(_USED.findall(text)))


def _describe(query: NamedQuery) -> CatalogQuery:
    declared: list[Param] = []
    summary: list[str] = []
    for line in query.lines:
        match = _PARAM_LINE.match(line)
        if match is None:
            if line.startswith("param:"):
                raise ValueError(f"{query.name}: malformed parameter line {line!r}")
            summary.append(line)
            continue
        kind = match.group("type")
        if kind not in PARAM_TYPES:
            raise ValueError(f"{query.name}: parameter type {kind!r} is not one of {', '.join(PARAM_TYPES)}")
        raw_default = match.group("default")
        declared.append(
            Param(
                name=match.group("name"),
                type=kind,
                required=raw_default is None,
                default=None if raw_default is None else json.loads(raw_default),
                description=(match.group("description") or "").strip(),
            )
        )
    names = {p.name for p in declared}
    undeclared = [Param(n, None, True) for n in used_parameters(query.text) if n not in names]
    return CatalogQuery(query.name, query.file, " ".join(summary), (*declared, *undeclared), query.text)


def catalog_queries(queries: CypherCatalog | None = None) -> dict[str, CatalogQuery]:
    """Every runnable query by name, explore first, in file order."""
    source = queries or catalog()
    return {name: _describe(source.get(name)) for file in RUNNABLE_FILES for name in source.names(file)}


def get_query(name: str, queries: CypherCatalog | None = None) -> CatalogQuery:
    found = catalog_queries(queries).get(name)
    if found is None:
        raise ParamError(
            f"{name!r} is not a catalog query (only read-only queries from "
            f"{' and '.join(f + '.cypher' for f in RUNNABLE_FILES)} run by name; "
            "`slowave-graph cypher list` shows them)"
        )
    return found


def parse_value(raw: str, kind: str | None = None) -> Any:
    """A command-line value as the parameter's type; undeclared ones are inferred
    (null, booleans, ints, floats, JSON lists/objects, else the string itself)."""
    text = raw.strip()
    if text == "null":
        return None
    if kind is None:
        if text in ("true", "false"):
            return text == "true"
        if _INT.match(text):
            return int(text)
        if _FLOAT.match(text):
            return float(text)
        if text.startswith(("[", "{")):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                raise ParamError(f"{raw!r} looks like JSON but does not parse: {exc}") from None
        return raw
    if kind == "string":
        return raw
    if kind == "int":
        if not _INT.match(text):
            raise ParamError(f"{raw!r} is not an integer")
        return int(text)
    if kind == "float":
        if not _FLOAT.match(text):
            raise ParamError(f"{raw!r} is not a number")
        return float(text)
    if kind == "bool":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ParamError(f"{raw!r} is not a boolean (true/false)")
    if kind == "list":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParamError(f"{raw!r} is not a JSON list: {exc}") from None
        if not isinstance(value, list):
            raise ParamError(f"{raw!r} is not a JSON list")
        return value
    if kind == "datetime":
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise ParamError(f"{raw!r} is not an ISO 8601 timestamp, e.g. 2026-03-01T09:30:00Z") from None
        if parsed.tzinfo is None:
            raise ParamError(f"{raw!r} needs an offset (Z or +hh:mm)")
        return text  # the query converts it with datetime(), as in Neo4j Browser
    raise ParamError(f"unknown parameter type {kind!r}")


def bind_params(query: CatalogQuery, assignments: list[str] | dict[str, Any]) -> dict[str, Any]:
    """Parameters for a run: ``k=v`` strings (typed by the declaration) or an already typed dict;
    unknown names and missing required ones are errors, optional ones get their defaults."""
    given: dict[str, Any] = {}
    if isinstance(assignments, dict):
        given = dict(assignments)
        for name, value in given.items():
            param = query.param(name)
            if param is not None and isinstance(value, str) and param.type not in (None, "string"):
                given[name] = parse_value(value, param.type)
    else:
        for item in assignments:
            name, sep, raw = item.partition("=")
            name = name.strip()
            if not sep or not name:
                raise ParamError(f"--param {item!r}: expected NAME=VALUE")
            param = query.param(name)
            given[name] = parse_value(raw, param.type if param else None)
    known = {p.name for p in query.params}
    unknown = sorted(set(given) - known)
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise ParamError(f"{query.name} takes no parameter {', '.join(unknown)} (it takes: {listed})")
    missing = [p.name for p in query.params if p.required and p.name not in given]
    if missing:
        raise ParamError(f"{query.name} needs --param {' --param '.join(m + '=…' for m in missing)}")
    return {p.name: given.get(p.name, p.default) for p in query.params}
