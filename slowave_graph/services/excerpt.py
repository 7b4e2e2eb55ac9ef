"""Memory content under a character budget, as source spans rather than a silent prefix cut.

An agent must never receive a truncated memory that looks whole: a cut can drop the one sentence
that mattered (often not the first) and the agent cannot tell. Content of at most the budget is
delivered verbatim; longer content is delivered as whole sentences/lines picked by the cue terms,
and the spans [start, end) say exactly which parts of the source the agent got
(provenance.source_excerpt). Pure and deterministic: cursor replays must be identical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

from slowave_graph.services.text import query_terms, term_coverage

EXCERPT_BUDGET = 1_024
EXCERPT_VERSION = 1

# A unit ends at a newline, or at . ! ? followed by whitespace.
_BREAK = re.compile(r"(?<=[.!?])\s+|\n")


class SourceExcerptSpans(TypedDict):
    """provenance.source_excerpt as a plain mapping (contract.retrieval.SourceExcerpt validates it)."""

    version: int
    source_chars: int
    source_spans: list[list[int]]  # [start, end) into the original


@dataclass(frozen=True)
class Excerpt:
    content: str  # what the agent sees
    source_chars: int  # len(original)
    spans: list[tuple[int, int]]  # [start, end) into the original; [] when verbatim

    @property
    def verbatim(self) -> bool:
        return not self.spans and len(self.content) == self.source_chars

    def source_excerpt(self) -> SourceExcerptSpans | None:
        """provenance.source_excerpt, or None when the content is the source verbatim."""
        if self.verbatim:
            return None
        return {
            "version": EXCERPT_VERSION,
            "source_chars": self.source_chars,
            "source_spans": [[start, end] for start, end in self.spans],
        }


def _units(content: str) -> list[tuple[int, int]]:
    """Sentence/line spans, surrounding whitespace stripped, empty ones dropped."""
    units: list[tuple[int, int]] = []
    start = 0
    for end, next_start in [(m.start(), m.end()) for m in _BREAK.finditer(content)] + [(len(content), 0)]:
        piece = content[start:end]
        s = start + len(piece) - len(piece.lstrip())
        e = start + len(piece.rstrip())
        if s < e:
            units.append((s, e))
        start = next_start
    return units


def _prefix_end(content: str, start: int, end: int, budget: int) -> int:
    """End of the longest prefix of content[start:end] within the budget that does not cut a word:
    at the last whitespace, else the last word boundary, else (one giant word) at the budget."""
    limit = start + budget  # content[limit] is the first character left out
    for i in range(limit, start, -1):
        if content[i].isspace():
            return start + len(content[start:i].rstrip())
    for i in range(limit, start, -1):
        if not (content[i - 1].isalnum() and content[i].isalnum()):
            return i
    return limit


def excerpt(content: str, cue_terms: Iterable[str] = (), budget: int = EXCERPT_BUDGET) -> Excerpt:
    """The content verbatim if it fits the budget, else its units that best match the cue terms
    (the first unit always, when it fits) as merged source spans; len(result.content) <= budget,
    counting the newlines that join the spans."""
    if budget < 1:
        raise ValueError("budget must be positive")
    if len(content) <= budget:
        return Excerpt(content, len(content), [])
    units = _units(content)
    joined = " ".join(cue_terms)
    # Same normalisation as search: query_terms (casefold, \w+ words, no stopwords), compared by stem.
    terms = query_terms(joined, limit=len(joined) + 1)
    order = list(range(len(units)))
    if terms:
        scores = [term_coverage(terms, content[s:e]) for s, e in units]
        first = 0 if units and units[0][1] - units[0][0] <= budget else -1  # names the subject
        order.sort(key=lambda i: (i != first, -scores[i], i))

    chosen: dict[int, tuple[int, int]] = {}  # unit index -> span
    length = 0  # sum of merged span lengths
    count = 0  # number of merged spans
    for i in order:
        s, e = units[i]
        if not chosen:
            if e - s > budget:
                e = _prefix_end(content, s, e, budget)
            chosen[i] = (s, e)
            length, count = e - s, 1
            continue
        # Neighbours chosen whole merge with this unit, taking the whitespace between them.
        left = i - 1 in chosen and chosen[i - 1][1] == units[i - 1][1]
        right = i + 1 in chosen
        new_length = length + e - s
        new_length += s - units[i - 1][1] if left else 0
        new_length += units[i + 1][0] - e if right else 0
        new_count = count + 1 - left - right
        if new_length + new_count - 1 <= budget:
            chosen[i] = (s, e)
            length, count = new_length, new_count

    spans: list[tuple[int, int]] = []
    for s, e in (chosen[i] for i in sorted(chosen)):
        if spans and content[spans[-1][1] : s].isspace():
            spans[-1] = (spans[-1][0], e)
        else:
            spans.append((s, e))
    return Excerpt("\n".join(content[s:e] for s, e in spans), len(content), spans)
