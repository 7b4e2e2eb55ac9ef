"""Concept extraction on generated text: deterministic, and it never fails."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from slowave_graph.services.concepts import extract


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_extraction_is_deterministic_and_never_fails(text: str) -> None:
    first = extract(text)
    assert first == extract(text)
    assert all(c.key and c.key == c.key.strip() and c.weight > 0 for c in first)
