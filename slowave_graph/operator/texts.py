"""The text each stored vector is computed from — the same text the services embed, so a
re-embedded (or import-re-embedded) vector equals what the service would have stored."""

from __future__ import annotations

from typing import Any

from slowave_graph.services.text import procedure_text  # commit stores goal and context_text for it


def memory_text(content: str) -> str:
    """RememberService embeds the claim itself."""
    return content


def retrieval_text(query: str) -> str:
    """A retrieval's query_embedding is the vector of its first cue: the task (activate) or the
    query (recall), whole and stripped (services.needs.split_needs)."""
    return query.strip()


def node_text(label: str, props: dict[str, Any]) -> str | None:
    """The text behind a node's vector, or None for nodes without one."""
    if label == "Memory" and props.get("embedding") is not None:
        return memory_text(str(props.get("content") or ""))
    if label == "Procedure" and props.get("embedding") is not None:
        return procedure_text(props.get("goal"), props.get("summary"), props.get("context_text"))
    if label == "Retrieval" and props.get("query_embedding") is not None:
        return retrieval_text(str(props.get("query") or ""))
    return None


VECTOR_PROPERTY = {"Memory": "embedding", "Procedure": "embedding", "Retrieval": "query_embedding"}

# Index copies the database keeps beside a stored vector. An export leaves them out (they are not
# content, and an export's checksum should not depend on them); an import derives them again.
DERIVED_PROPERTIES = {"Retrieval": ("experience_embedding",)}
# Bookkeeping of derived data, left out of exports likewise: experience_pending marks a learned
# retrieval whose copy is not made yet (index_pending_experience), and an import makes it at once;
# concepts_version marks a memory whose concepts are linked — the concept layer (Concept nodes,
# MENTIONS) is not exported, and an import links it again (services/concept_upkeep.py); the scope's
# count of active memories is recounted there too.
_BOOKKEEPING = {
    "Retrieval": ("experience_pending",),
    "Memory": ("concepts_version",),
    "Scope": ("active_memories",),
}

# Every vector property by label, stored as float32 on import (see the header of schema.cypher).
STORED_VECTORS = {label: [key, *DERIVED_PROPERTIES.get(label, ())] for label, key in VECTOR_PROPERTY.items()}


def without_derived(label: str, props: dict[str, Any]) -> dict[str, Any]:
    derived = (*DERIVED_PROPERTIES.get(label, ()), *_BOOKKEEPING.get(label, ()))
    return {k: v for k, v in props.items() if k not in derived} if derived else props


def with_derived(label: str, props: dict[str, Any]) -> dict[str, Any]:
    """A learned retrieval's query vector, copied to the property the experience index holds
    (``index_pending_experience`` does the same for retrievals that feedback marked)."""
    if label == "Retrieval" and props.get("learned") is True and props.get("query_embedding") is not None:
        return {**without_derived(label, props), "experience_embedding": props["query_embedding"]}
    return props
