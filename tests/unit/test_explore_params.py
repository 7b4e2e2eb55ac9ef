"""The catalog's declared parameters, typed parameter parsing for `cypher run`, the export codec."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from neo4j.time import Date, DateTime, Duration, Time

from slowave_graph import cli
from slowave_graph.commands.cypher import format_table
from slowave_graph.explore.catalog import (
    RUNNABLE_FILES,
    CatalogQuery,
    Param,
    ParamError,
    bind_params,
    catalog_queries,
    get_query,
    parse_value,
    used_parameters,
)
from slowave_graph.explore.run import plan_operators, refusal
from slowave_graph.graph.cypher import catalog
from slowave_graph.graph.values import jsonable
from slowave_graph.operator.codec import Checksum, UnsupportedValue, decode, encode, line
from slowave_graph.operator.model import DERIVED_RELATIONSHIPS, RELATIONSHIP_TYPES, SCOPED_LABELS

EXPLORE = [q for q in catalog_queries().values() if q.file == "explore"]


@pytest.mark.parametrize(
    ("raw", "kind", "expected"),
    [
        ("42", None, 42),
        ("-3", "int", -3),
        ("0.25", None, 0.25),
        ("1e-3", "float", 0.001),
        ("7", "float", 7.0),
        ("true", None, True),
        ("No", "bool", False),
        ("yes", "bool", True),
        ("null", "string", None),
        ("null", None, None),
        ('["a", 1]', None, ["a", 1]),
        ("[1, 2]", "list", [1, 2]),
        ('{"k": 1}', None, {"k": 1}),
        ("sch_12", None, "sch_12"),
        ("123", "string", "123"),  # a declared string stays a string, even if it looks numeric
        ("project:shop", "string", "project:shop"),
        ("2026-03-01T09:30:00Z", "datetime", "2026-03-01T09:30:00Z"),
        ("2026-03-01T09:30:00+02:00", "datetime", "2026-03-01T09:30:00+02:00"),
    ],
)
def test_parse_value(raw: str, kind: str | None, expected: object) -> None:
    value = parse_value(raw, kind)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("raw", "kind", "message"),
    [
        ("ten", "int", "not an integer"),
        ("1.5", "int", "not an integer"),
        ("abc", "float", "not a number"),
        ("maybe", "bool", "not a boolean"),
        ('{"a": 1}', "list", "not a JSON list"),
        ("[1,", "list", "not a JSON list"),
        ("[1,", None, "does not parse"),
        ("yesterday", "datetime", "ISO 8601"),
        ("2026-03-01T09:30:00", "datetime", "needs an offset"),
    ],
)
def test_parse_value_rejects(raw: str, kind: str | None, message: str) -> None:
    with pytest.raises(ParamError, match=message):
        parse_value(raw, kind)


QUERY = CatalogQuery(
    "q",
    "explore",
    "",
    (Param("scope", "string", True), Param("limit", "int", False, 100), Param("topic", "string", False)),
    "RETURN $scope, $limit, $topic",
)


def test_bind_params() -> None:
    assert bind_params(QUERY, ["scope=project:a=b", "limit=5"]) == {
        "scope": "project:a=b",
        "limit": 5,
        "topic": None,
    }
    assert bind_params(QUERY, {"scope": "x:y", "limit": "7"}) == {"scope": "x:y", "limit": 7, "topic": None}
    with pytest.raises(ParamError, match="needs --param scope"):
        bind_params(QUERY, ["limit=5"])
    with pytest.raises(ParamError, match=r"takes no parameter bogus \(it takes: limit, scope, topic\)"):
        bind_params(QUERY, ["scope=x:y", "bogus=1"])
    with pytest.raises(ParamError, match="expected NAME=VALUE"):
        bind_params(QUERY, ["scope"])
    with pytest.raises(ParamError, match="not an integer"):
        bind_params(QUERY, ["scope=x:y", "limit=lots"])
    with pytest.raises(ParamError, match="not a catalog query"):
        get_query("remember_call")


def test_explore_queries_declare_exactly_the_parameters_they_use() -> None:
    assert len(EXPLORE) >= 12
    for query in EXPLORE:
        declared = [p.name for p in query.params if p.type is not None]
        assert sorted(declared) == sorted(used_parameters(query.text)), query.name
        assert query.summary, query.name
        assert all(p.description for p in query.params), query.name


def test_only_read_only_files_are_runnable() -> None:
    assert RUNNABLE_FILES == ("explore", "stats")
    writes = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DROP|FOREACH)\b")
    for query in catalog_queries().values():
        assert not writes.search(query.text), query.name


def test_export_statements_know_every_label_and_type() -> None:
    nodes = catalog()["import_nodes"]
    assert sorted(re.findall(r"MERGE \(n:(\w+) \{id", nodes)) == sorted(SCOPED_LABELS)
    rels = catalog()["import_relationships"]
    for side in ("from", "to"):
        assert sorted(re.findall(rf"row\.{side}_label = '(\w+)'", rels)) == sorted(SCOPED_LABELS)
    assert sorted(re.findall(r"MERGE \(a\)-\[r:(\w+)", rels)) == sorted(RELATIONSHIP_TYPES)
    everything = "\n".join(catalog()[n] for n in catalog().names())
    used = set(re.findall(r"\[(?:\w+)?:([A-Z_]+)(?:\|[A-Z_|]+)?[\] {]", everything))
    assert used - {"ASSESSED"} <= set(RELATIONSHIP_TYPES) | set(DERIVED_RELATIONSHIPS)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        7,
        0.6607563687658171,
        "x",
        [0.1, -2.5e-7, 3.0],
        [],
        DateTime(2026, 11, 30, 18, 19, 13, 959735001, tzinfo=UTC),
        DateTime(2026, 1, 1, 0, 0, 0, 500000000, tzinfo=timezone(timedelta(hours=2))),
        DateTime(2026, 1, 2, 3, 4, 5, 6),
        Date(2026, 1, 2),
        Time(12, 0, 0, 1, tzinfo=timezone(timedelta(hours=1))),
        Time(12, 0, 0, 0),
        Duration(months=14, days=3, seconds=14706, nanoseconds=7),
        bytearray(b"\x00\x01"),
    ],
)
def test_codec_round_trip(value: object) -> None:
    back = decode(json.loads(line({"v": encode(value)}))["v"])
    assert back == value and type(back) is type(value)
    if isinstance(value, DateTime) and value.tzinfo is not None:
        assert back.utcoffset() == value.utcoffset()  # the offset, not only the instant


def test_codec_keeps_named_zones_and_refuses_the_unknown() -> None:
    import pytz

    berlin = DateTime(2026, 7, 1, 12, 0, 0, 0, tzinfo=UTC).astimezone(pytz.timezone("Europe/Berlin"))
    encoded = encode(berlin)
    assert encoded["tz"] == "Europe/Berlin"
    assert decode(encoded) == berlin and decode(encoded).tzinfo.zone == "Europe/Berlin"
    with pytest.raises(UnsupportedValue):
        encode(object())


def test_checksum_is_order_independent_and_content_sensitive() -> None:
    a, b, c = Checksum(), Checksum(), Checksum()
    for text in ("x", "y", "z"):
        a.add(text)
    for text in ("z", "x", "y"):
        b.add(text)
    for text in ("x", "y", "y"):
        c.add(text)
    assert a.hexdigest() == b.hexdigest() != c.hexdigest()


def test_jsonable() -> None:
    when = DateTime(2026, 3, 1, 9, 30, 0, 0, tzinfo=UTC)
    assert jsonable({"t": when, "l": [Date(2026, 3, 1)], "n": None}) == {
        "t": datetime(2026, 3, 1, 9, 30, tzinfo=UTC).isoformat(),
        "l": ["2026-03-01"],
        "n": None,
    }


def test_format_table() -> None:
    text = format_table(
        [{"id": "sch_1", "content": "a\nb", "n": None}, {"id": "sch_22", "content": "x" * 80, "n": 3}]
    )
    lines = text.splitlines()
    assert lines[0].split() == ["id", "content", "n"]
    assert lines[2].split() == ["sch_1", "a", "b"] and lines[3].endswith("…  3")
    assert lines[-1] == "(2 rows)"
    assert format_table([]) == "(no rows)"


def test_cypher_list_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["cypher", "list", "--json"]) == 0
    listed = {q["name"]: q for q in json.loads(capsys.readouterr().out)}
    assert set(listed) == set(catalog_queries())
    beliefs = listed["beliefs_as_of"]
    assert beliefs["file"] == "explore.cypher" and beliefs["doc"].startswith("What the scope believed")
    assert [(p["name"], p["type"], p["required"], p["default"]) for p in beliefs["params"]] == [
        ("scope", "string", True, None),
        ("as_of", "datetime", True, None),
        ("topic", "string", False, None),
        ("limit", "int", False, 100),
    ]
    assert cli.main(["cypher", "list"]) == 0
    assert (
        "beliefs_as_of  (explore.cypher)  scope:string as_of:datetime [topic:string=null]"
        in capsys.readouterr().out
    )
    assert cli.main(["cypher", "run", "delete_scope", "--param", "scope=x:y"]) == 2
    assert "not a catalog query" in capsys.readouterr().err


def test_plans_that_read_the_host_or_act_on_the_server_are_refused() -> None:
    modes = {"db.labels": "READ", "db.clearQueryCaches": "DBMS", "dbms.components": "DBMS"}

    def plan(*operators: tuple[str, str]) -> dict[str, Any]:
        tree: dict[str, Any] = {"operatorType": "ProduceResults@neo4j", "args": {}, "children": []}
        node = tree
        for operator, details in operators:
            child = {"operatorType": f"{operator}@neo4j", "args": {"Details": details}, "children": []}
            node["children"].append(child)
            node = child
        return tree

    def why(*operators: tuple[str, str]) -> str | None:
        return refusal(plan_operators(plan(*operators)), modes)

    assert (
        why(("Apply", ""), ("LoadCSV", "row"))
        == "LOAD CSV reads files and fetches URLs from the database host"
    )
    assert "acts on the server" in (why(("TerminateTransactions", "transactions($x)")) or "")
    assert "db.clearQueryCaches" in (
        why(("ProcedureCall", "db.clearQueryCaches() :: (value :: STRING)")) or ""
    )
    assert "mode unknown" in (why(("ProcedureCall", "custom.thing() :: (x :: INTEGER)")) or "")
    assert why(("ProcedureCall", "db.labels() :: (label :: STRING)")) is None
    assert why(("ProcedureCall", "dbms.components() :: (name :: STRING)")) is None  # reports only
    assert why(("NodeByLabelScan", "m:Memory")) is None
