"""The typed rows (graph/rows.py) name exactly the columns their named statements return."""

from __future__ import annotations

import re
from typing import Any, get_origin

import pytest

from slowave_graph.graph import rows, statements
from slowave_graph.graph.cypher import catalog
from slowave_graph.graph.statements import Statement

_WORD = re.compile(r"\bRETURN\b|\bORDER BY\b|\bLIMIT\b")


def _code(name: str) -> str:
    """A statement's text without its comments."""
    return re.sub(r"//[^\n]*", "", catalog()[name])


def _depths(text: str) -> list[int]:
    """The bracket depth at each character (strings skipped)."""
    depths, depth, quote = [], 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        depths.append(depth)
    return depths


def _split(text: str) -> list[str]:
    """``text`` split at its top-level commas."""
    depths = _depths(text)
    cuts = [i for i, ch in enumerate(text) if ch == "," and depths[i] == 0]
    return [text[a + 1 : b].strip() for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]


def returned_columns(name: str) -> set[str]:
    """The columns of a statement's final, top-level RETURN."""
    text = _code(name)
    depths = _depths(text)
    top = [m for m in _WORD.finditer(text) if depths[m.start()] == 0]
    start = max(i for i, m in enumerate(top) if m.group() == "RETURN")
    end = top[start + 1].start() if start + 1 < len(top) else len(text)
    items = _split(text[top[start].end() : end])
    named = [re.search(r"\bAS\s+(\w+)$", item) or re.match(r"(\w+)$", item) for item in items]
    return {m[1] if m else item for m, item in zip(named, items, strict=True)}


def map_literals(name: str) -> list[set[str]]:
    """The key sets of every map literal in a statement (``{key: value, …}``)."""
    text = _code(name)
    depths = _depths(text)
    found = []
    for m in re.finditer(r"\{\s*\w+\s*:", text):
        open_at = m.start()
        close_at = next(i for i in range(open_at + 1, len(text)) if depths[i] == depths[open_at] - 1)
        found.append({part.split(":", 1)[0].strip() for part in _split(text[open_at + 1 : close_at])})
    return found


def keys(row: Any) -> set[str]:
    """A TypedDict's keys, inherited ones included."""
    return set(row.__required_keys__ | row.__optional_keys__)


# each typed statement handle's row type (graph/statements.py): the pairing is declared there once
ROWS = [
    (handle.name, get_origin(handle.row) or handle.row)
    for handle in vars(statements).values()
    if isinstance(handle, Statement)
]

# maps a statement builds inside its columns (the hits of a search, the links of an association, …)
MAPS = [
    ("vector_search_filtered", rows.VectorHit),
    ("vector_search_overfetch", rows.VectorHit),
    ("vector_scan_scope", rows.VectorHit),
    ("fulltext_search", rows.FulltextHit),
    ("candidate_context", rows.Neighbour),
    ("candidate_context", rows.AssociationLink),
    ("candidate_context", rows.AssociatedMemory),
    ("concept_walk", rows.WalkPath),
    ("concept_walk", rows.WalkedMemory),
    ("remember_call", rows.StoredMemory),
    ("feedback_context", rows.NamedMemory),
    ("feedback_context", rows.NamedProcedure),
    ("write_feedback", rows.RecordedEvent),
    ("write_feedback", rows.LearningChange),
    ("write_feedback", rows.CoverageRow),
    ("procedure_details", rows.TalliesRow),
    ("procedure_details", rows.ContributionRow),
    ("commit_session", rows.OutstandingRow),
]


@pytest.mark.parametrize(("name", "row"), ROWS, ids=[f"{n}-{r.__name__}" for n, r in ROWS])
def test_row_keys_are_the_returned_columns(name: str, row: type) -> None:
    if not keys(row):  # a statement that returns nothing
        assert "RETURN" not in _code(name)
        return
    assert keys(row) == returned_columns(name)


@pytest.mark.parametrize(("name", "row"), MAPS, ids=[f"{n}-{r.__name__}" for n, r in MAPS])
def test_map_keys_are_a_map_the_statement_builds(name: str, row: type) -> None:
    assert keys(row) in map_literals(name), map_literals(name)


def test_the_parsers() -> None:
    assert returned_columns("procedure_search") == {
        "id", "cosine", "similarities", "goal", "summary", "outcome", "outcome_summary", "caveats",
        "helped", "harmed",
    }  # fmt: skip
    assert returned_columns("vector_scan_scope") == {"live", "scope_count", "total_count", "hits"}
    assert {"id", "walk", "paths"} in map_literals("concept_walk")
