"""The Cypher catalog: every statement named, documented, parameterised; models match the schema."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from slowave_graph.graph import models
from slowave_graph.graph.cypher import CypherCatalog, catalog, cypher_directory, parse_cypher_file

ROOT = Path(__file__).resolve().parents[2]


def test_parse_format() -> None:
    source = (
        "// header\n\n// name: one\n// Does one thing.\n// Carefully.\nMATCH (n)\nRETURN n;\n\n"
        "// name: two\nRETURN 2;\n"
    )
    one, two = parse_cypher_file(source, "f")
    assert (one.name, one.doc, one.text) == ("one", "Does one thing. Carefully.", "MATCH (n)\nRETURN n")
    assert (two.name, two.text) == ("two", "RETURN 2")


def test_fragments_are_included_where_named_and_are_not_statements(tmp_path: Path) -> None:
    (tmp_path / "a.cypher").write_text(
        "// name: both\n// Runs the block twice.\nMATCH (n)\nCALL (n) {\n  // include: block\n}\n"
        "// include: block\nRETURN n;\n\n"
        "// name: block\n// fragment: expects n bound.\nSET n.seen = true\nSET n.twice = true;\n"
    )
    found = CypherCatalog.from_directory(tmp_path)
    assert found.names() == ["both"]
    assert found["both"] == (
        "MATCH (n)\nCALL (n) {\n  SET n.seen = true\n  SET n.twice = true\n}\n"
        "SET n.seen = true\nSET n.twice = true\nRETURN n"
    )
    (tmp_path / "a.cypher").write_text("// name: one\n// include: two\nRETURN 1;\n// name: two\nRETURN 2;\n")
    with pytest.raises(ValueError, match="'two', which is not a fragment"):
        CypherCatalog.from_directory(tmp_path)
    (tmp_path / "a.cypher").write_text("// name: one\n// include: nowhere\nRETURN 1;\n")
    with pytest.raises(ValueError, match="'nowhere', which is not a fragment"):
        CypherCatalog.from_directory(tmp_path)


def test_shipped_fragments_are_expanded() -> None:
    assert "include:" not in "".join(catalog()[n] for n in catalog().names())
    assert "CREATE (r:Retrieval" in catalog()["activate_session"]
    assert "CREATE (r:Retrieval" in catalog()["create_retrieval"]
    assert "freeze_retrieval" not in catalog().names()


def test_every_query_file_parses_and_names_are_unique() -> None:
    names = catalog().names()
    assert len(names) == len(set(names)) > 20
    assert cypher_directory() == ROOT / "cypher"


@pytest.mark.parametrize("name", catalog().names())
def test_queries_take_parameters_not_spliced_values(name: str) -> None:
    text = catalog()[name]
    assert ";" not in text.rstrip(";"), "one statement per name"
    # Python-style placeholders would mean someone formats values into the text.
    assert not re.search(r"\{[a-z_]+\}|%\(|%s", text), text


def test_hot_path_queries_are_documented() -> None:
    undocumented = [
        n
        for n in catalog().names()
        if not catalog().get(n).doc and not n.startswith(("constraint_", "index_"))
    ]
    assert undocumented == [n for n in undocumented if catalog().get(n).file in ("schema", "stats")]


# The one place that runs text from outside the catalog: `cypher query` runs the analyst's own
# statement verbatim, and first its plan ("EXPLAIN " + the statement) to refuse what reads the host.
ANALYST_STATEMENT = ROOT / "slowave_graph" / "explore" / "run.py"


def test_service_code_never_builds_cypher_text() -> None:
    """tx.run / session.run only ever receive catalog text (self.db.q / self.q / db.queries)."""
    offenders = []
    for path in (ROOT / "slowave_graph").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("run", "execute_query")
                and node.args
                and isinstance(node.args[0], ast.JoinedStr | ast.Constant | ast.BinOp)
                and not (path == ANALYST_STATEMENT and ast.unparse(node.args[0]) == "'EXPLAIN ' + statement")
            ):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def _unique_properties() -> set[tuple[str, str]]:
    out = set()
    for cls in vars(models).values():
        if (
            isinstance(cls, type)
            and issubclass(cls, models.AsyncStructuredNode)
            and cls is not models.AsyncStructuredNode
        ):
            for prop_name, prop in cls.defined_properties(aliases=False, rels=False).items():
                if getattr(prop, "unique_index", False):
                    out.add((cls.__name__, prop.get_db_property_name(prop_name)))
    return out


def test_model_unique_properties_have_schema_constraints() -> None:
    schema = "\n".join(catalog()[n] for n in catalog().names("schema"))
    single = re.compile(
        r"CONSTRAINT constraint_unique_(\w+?)_(\w+) IF NOT EXISTS\s+FOR \(n:\w+\) REQUIRE n\."
    )
    declared = set(single.findall(schema))
    assert _unique_properties() == declared
    # composite constraints (neomodel declares single properties only) name model properties
    composite = re.findall(r"FOR \(n:(\w+)\) REQUIRE \(([^)]*)\) IS UNIQUE", schema)
    assert composite == [("Concept", "n.scope, n.key")]
    assert {"scope", "key"} <= set(models.Concept.defined_properties(aliases=False, rels=False))


STORED_VECTOR_COSINE = re.compile(r"vector\.similarity\.cosine\(\s*(\w+\.\w+)\s*,\s*([^)]*?)\s*\)")


@pytest.mark.parametrize("name", [n for n in catalog().names() if "$embeddings" in catalog()[n]])
def test_a_stored_vector_is_read_once_per_row_not_once_per_cue(name: str) -> None:
    """Comparing a node's stored vector with several cues reads it into a variable first
    (`WITH m, m.embedding AS v`): written against the property, the comparison reads the 384-d
    list again for every cue, ~15 us a read (retrieval.cypher's header). A row that carries one
    cue (`$embeddings[qi]`) may read it in place."""
    per_cue = [
        f"cosine({stored}, {cue})"
        for stored, cue in STORED_VECTOR_COSINE.findall(catalog()[name])
        if not re.fullmatch(r"\$embeddings\[\w+\]", cue)
    ]
    assert per_cue == []


def test_every_stored_vector_is_written_as_float32() -> None:
    """A vector property written with SET or a map literal would be a list of doubles, twice the
    store of the float32 array db.create.setNodeVectorProperty writes (schema.cypher)."""
    written = re.compile(r"(SET|,)\s+\w+\.(embedding|query_embedding|experience_embedding)\s*=|"
                         r"\b(embedding|query_embedding|experience_embedding):\s*\$")  # fmt: skip
    offenders = [name for name in catalog().names() if written.search(catalog()[name])]
    assert offenders == []


def test_each_server_line_gets_its_own_vector_indexes() -> None:
    """Start-up creates, and doctor expects, the in-index-filtered vector indexes on 2026.01+ and
    the plain memory index alone on 5.26 (which compares retrievals and procedures exactly)."""
    from slowave_graph.graph.database import ServerInfo
    from slowave_graph.graph.schema import expected_indexes

    current = expected_indexes(catalog(), ServerInfo("2026.09.0", "community", vector_filter_in_index=True))
    lts = expected_indexes(catalog(), ServerInfo("5.26.31", "community", vector_filter_in_index=False))
    assert {"memory_embedding", "retrieval_experience_embedding", "procedure_embedding"} <= set(current)
    assert "memory_embedding" in lts
    assert not {"retrieval_experience_embedding", "procedure_embedding"} & set(lts)
    assert set(current) - set(lts) == {"retrieval_experience_embedding", "procedure_embedding"}
    assert {"memory_text", "constraint_unique_Memory_id"} <= set(lts)
