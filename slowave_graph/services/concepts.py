"""The things a memory is about: named things and key terms, as graph nodes.

A memory's concepts become ``(:Concept {scope, key, name})`` nodes linked by ``MENTIONS {weight}``
(cypher/memory.cypher); retrieval walks them from its best direct hits to memories that talk about
the same specific things (services/ranking.py, cypher/retrieval.cypher ``candidate_context``).

Extraction is deterministic, needs no model and costs a tiny fraction of a write, so it runs inside
every write. Two kinds:

- **entities**: runs of capitalised words (``Becoming Nicole``, ``McGee's bar`` → ``McGee``), a
  capitalised word inside a sentence (``Italy``), and words with inner capitals or all capitals
  (``LGBTQ``, ``iPhone``). A capitalised word that only opens a sentence is not taken for a name.
- **terms**: content words (no stop words, three letters or more, not numbers or calendar words).

Keys are normalised — case-folded, Porter-stemmed (the stemmer of the full-text index's English
analyzer), words joined by one space — so ``Painting``, ``paintings`` and ``painted`` are one
concept ``paint``, and an entity of one word is the same concept as that word as a term. The name
is the first surface form seen.

Measured on LoCoMo: these concepts lift recall as much as spaCy's en_core_web_sm entities, noun
chunks and lemmas did, at a tiny fraction of the cost per write (the spaCy pipeline would have
doubled remember's CPU): docs/decisions/0008-concept-rules-not-spacy.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from slowave_graph.graph.rows import ConceptLink
from slowave_graph.services.text import STOPWORDS, stem

# Bump when extraction changes: memories extracted by an older version are extracted again by the
# backfill (services/concept_upkeep.py).
EXTRACTOR_VERSION = 1
MAX_CONCEPTS = 16
ENTITY_WEIGHT = 1.0
TERM_WEIGHT = 0.5

_CALENDAR = frozenset(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday am pm
    """.split()  # noqa: SIM905 — a word list reads better as text
)
# Words that carry no topic beyond STOPWORDS (which full-text queries also drop): chat fillers and
# modal/auxiliary forms. Frequent words get little weight anyway; these would only add nodes.
_NOT_CONCEPTS = (
    STOPWORDS
    | _CALENDAR
    | frozenset(
        """
    also yeah yes hey wow okay ok oh hi hello thanks thank really just like get got gonna
    yesterday today tomorrow tonight last next well sure anyway though
    wanna would could should might must may can will shall one ones thing things something
    anything everything nothing lot lots much many very quite still even ever never always
    """.split()  # noqa: SIM905
    )
)
# a word: letters, then letters/digits/apostrophes/hyphens inside ("McGee's", "e-mail")
_TOKEN = re.compile(r"[^\W\d_](?:[\w'’-]*\w)?|[.!?;:()\[\]\"“”]")
_BREAK = frozenset('.!?;:()[]"“”')
_CONNECTORS = frozenset({"of", "de", "da", "van", "von", "the"})


@dataclass(frozen=True)
class Concept:
    key: str
    name: str
    kind: Literal["entity", "term"]
    weight: float


def _plain(token: str) -> str:
    """Case-folded, possessive and outer apostrophes/hyphens removed."""
    word = token.casefold().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    return word.strip("'-")


def _capitalised(token: str) -> bool:
    return token[:1].isupper()


def _name_like(token: str) -> bool:
    """Inner or all capitals (LGBTQ, McGee, iPhone): a name wherever it stands."""
    letters = [c for c in token if c.isalpha()]
    return len(letters) >= 2 and any(c.isupper() for c in letters[1:])


def concept_key(text: str) -> str:
    """The key of a concept named by ``text`` (one or more words)."""
    return " ".join(stem(_plain(w)) for w in text.split() if _plain(w))


def extract(text: str, limit: int = MAX_CONCEPTS) -> list[Concept]:
    """A memory's concepts, entities first, each key once, at most ``limit``."""
    entities: dict[str, Concept] = {}
    terms: dict[str, Concept] = {}
    run: list[str] = []
    sentence_start = True

    def close_run(starts_sentence: bool) -> None:
        # "Then Samantha", "But LGBTQ": a sentence's capitalised opener is not part of the name
        if starts_sentence and len(run) > 1 and _plain(run[0]) in _NOT_CONCEPTS:
            run.pop(0)
            starts_sentence = False
        while run and _plain(run[-1]) in _CONNECTORS:
            run.pop()
        words = [w for w in run if _plain(w)]
        if words and (len(words) > 1 or not starts_sentence or _name_like(words[0])):
            plain = [_plain(w) for w in words]
            if not (len(plain) == 1 and (plain[0] in _NOT_CONCEPTS or len(plain[0]) < 2)):
                key = " ".join(stem(p) for p in plain)
                entities.setdefault(key, Concept(key, " ".join(words), "entity", ENTITY_WEIGHT))
        run.clear()

    run_starts_sentence = False
    for token in _TOKEN.findall(text):
        if token in _BREAK:
            close_run(run_starts_sentence)
            sentence_start = token not in '()[]"“”' or sentence_start
            continue
        plain = _plain(token)
        if (_capitalised(token) and plain not in STOPWORDS) or _name_like(token):
            if not run:
                run_starts_sentence = sentence_start
            run.append(token)
        elif run and plain in _CONNECTORS:
            run.append(token)
        else:
            close_run(run_starts_sentence)
        sentence_start = False
        if len(plain) >= 3 and plain.isalpha() and plain not in _NOT_CONCEPTS:
            key = stem(plain)
            if key not in terms:
                terms[key] = Concept(key, plain, "term", TERM_WEIGHT)
    close_run(run_starts_sentence)
    found = list(entities.values()) + [c for k, c in terms.items() if k not in entities]
    return found[:limit]


def concept_links(memories: Sequence[tuple[str, str]]) -> list[ConceptLink]:
    """The concepts of memories given as (scope, text), one row per concept of a scope with the
    memories that mention it (by their position), in the order the write statements take concept
    locks: by scope, then key (link_concepts in memory.cypher). A concept that some memory names
    as an entity is an entity, under that spelling."""
    groups: dict[tuple[str, str], ConceptLink] = {}
    for position, (scope, text) in enumerate(memories):
        for c in extract(text):
            group = groups.setdefault(
                (scope, c.key), {"scope": scope, "key": c.key, "name": c.name, "kind": c.kind, "mentions": []}
            )
            if c.kind == "entity" and group["kind"] != "entity":
                group.update({"name": c.name, "kind": "entity"})
            group["mentions"].append({"position": position, "weight": c.weight})
    return [groups[k] for k in sorted(groups)]
