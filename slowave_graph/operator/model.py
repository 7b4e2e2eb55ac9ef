"""The export format: record kinds, the labels and relationship types it carries, the header."""

from __future__ import annotations

from typing import Any

from slowave_graph.exceptions import SlowaveError

FORMAT = "slowave-graph-export"
FORMAT_VERSION = 1

# Node labels of the memory graph (docs/architecture.md) that belong to a scope; Counter and EmbeddingSpace
# are database-wide and travel in the header/counter lines instead.
SCOPED_LABELS = (
    "Scope",
    "Memory",
    "Procedure",
    "Episode",
    "Event",
    "Session",
    "Continuity",
    "Retrieval",
    "Cursor",
    "Correction",
)
RELATIONSHIP_TYPES = (
    "IN_SCOPE",
    "CONTINUES",
    "RETRIEVED",
    "RECORDED",
    "FORMED",
    "DERIVED_FROM",
    "EXPOSED",
    "ASSESSED",
    "SUPERSEDES",
    "ASSOCIATED",
    "NEXT",
    "SIMILAR_TO",
    "CORRECTED",
    "VALIDATED_IN",
)

# Derived from the memories' text, so not carried by an export (an import links them again:
# services/concept_upkeep.py), together with the Concept nodes they lead to.
DERIVED_RELATIONSHIPS = ("MENTIONS",)


class FormatError(SlowaveError, ValueError):
    """A file that is not a (complete, intact) slowave-graph export."""


def is_header(record: dict[str, Any]) -> bool:
    return record.get("format") == FORMAT
