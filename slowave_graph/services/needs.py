"""What a request asks for: its needs, each searched and admitted on its own.

An agent seldom asks one thing at a time. ``slowave_activate`` gets a whole task, a recall is often
two questions in one sentence ("Where are rate limits enforced and which endpoints must be
exempt?"), a list of items, or questions passed as ``task_context`` values. Judged as one need,
such a request finds a memory only when it answers the whole; judged part by part, each part finds
what it would find alone (services/ranking.py admits per need, relative to that need's best). The
needs of a request, in this order:

1. each text the caller wrote, whole — the task, the initial goal, the semantic context, a query —
   then each ``task_context`` string of three words or more (a question, a description; a bare
   value such as a language name is only a word for the full-text query);
2. the sentences, lines and list items of each text, when it has several (bullets and numbering
   taken off), of three words or more;
3. the clauses of each sentence, when it joins several: split at commas and semicolons (with an
   "and", "then", "also" or "but" after them) and at "and" / "then" before a question word; a
   clause is a need when it names three topical words, or two after a question word of its own
   ("… and which endpoints must be exempt?").

The answer opens with the best answer of each thing asked (services/ranking.by_need), in the
order asked: the texts, or the clauses of a one-sentence text, or the items of a list. The
sentences of prose or of a dialogue are searched one by one, but they are context, not asks: such
a text is one ask. Identical needs (up to case, spacing and final punctuation) are one. At most
``MAX_NEEDS``: each costs a vector search; when the bound cuts, the catalog says so
(``catalog_truncated``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from slowave_graph.services.text import normalise_claim, query_terms

MAX_NEEDS = 8
# a sentence or line counts as a need of its own from this many words
SENTENCE_WORDS = 3
# a clause: this many topical words, or CLAUSE_ASKING after a question word of its own
CLAUSE_TERMS = 3
CLAUSE_ASKING = 2

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\s*\n+\s*")
_BULLET = re.compile(r"^(?:[-*•+‣◦]|\(?\d{1,3}[.)]|\(?[a-z][.)])\s+", re.IGNORECASE)
_QUESTION = r"(?:which|who|whom|whose|where|what|when|why|how)\b"
# where one sentence joins two asks: a comma or semicolon (with an optional "and"/"then"/"also"),
# or "and"/"then" right before a question word ("… enforced and which endpoints …")
_CLAUSE = re.compile(
    rf"\s*[,;]\s*(?:(?:and|then|also|but)\s+)*|\s+(?:and|then|also)\s+(?=(?:also\s+)?{_QUESTION})",
    re.IGNORECASE,
)
_ASKS = re.compile(rf"^(?:and\s+|also\s+)*{_QUESTION}", re.IGNORECASE)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Needs:
    texts: list[str]  # in order: the wholes, then their sentences, then their clauses
    truncated: bool  # the bound left some out
    # what the request asks, in order (indices into texts): the clauses of a one-sentence text,
    # the items of a list, else the text itself — the order the answer opens with
    asked: list[int] = field(default_factory=list)


def split_needs(texts: Sequence[str | None], context: Any = None, limit: int = MAX_NEEDS) -> Needs:
    """The needs of a request: its texts (task, goal, context, query…) and the strings of its
    task_context (any nesting), finest last."""
    written = [t.strip() for t in texts if t and t.strip()]
    strings = [v.strip() for v in context_values(context) if isinstance(v, str)]
    wholes = written + [s for s in strings if _words(s) >= SENTENCE_WORDS]
    split = {whole: sentences(whole) for whole in wholes}
    parted = {sentence: clauses(sentence) for whole in wholes for sentence in split[whole] or [whole]}
    found: dict[str, str] = {}
    for text in [*wholes, *(s for w in wholes for s in split[w]), *(c for p in parted.values() for c in p)]:
        found.setdefault(normalise_claim(text), text)
    every = [key for key in found if key]
    keys = every[:limit]
    position = {key: i for i, key in enumerate(keys)}
    asked: dict[int, None] = {}
    for whole in wholes:
        for leaf in _asks_of(whole, split[whole], parted):
            i = position.get(normalise_claim(leaf))
            if i is not None:
                asked.setdefault(i, None)
    return Needs([found[key] for key in keys], len(every) > limit, list(asked))


def _asks_of(whole: str, parts: list[str], parted: dict[str, list[str]]) -> list[str]:
    """What a text asks, in order, as the answer should open with: the clauses of a one-sentence
    request, the items of a list (each item's clauses), else the text itself. The sentences of
    prose or of a dialogue are searched each (they admit) but are not asks: they are context,
    and the text's own best opens the answer."""
    items = _items(whole)
    if len(items) > 1:
        return [leaf for item in items for leaf in parted.get(item) or [item]]
    if not parts:
        return parted.get(whole) or [whole]
    return [whole]


def _items(text: str) -> list[str]:
    """The items of a bulleted or numbered list in a text."""
    lines = [line.strip() for line in text.splitlines()]
    return [_BULLET.sub("", line).strip() for line in lines if _BULLET.match(line)]


def sentences(text: str) -> list[str]:
    """The sentences, lines and list items of a text, when it has several; else none."""
    parts = [_BULLET.sub("", p.strip()).strip() for p in _SENTENCE.split(text)]
    kept = [p for p in parts if _words(p) >= SENTENCE_WORDS]
    return kept if len([p for p in parts if p]) > 1 else []


def clauses(sentence: str) -> list[str]:
    """The asks one sentence joins, when it joins several; else none."""
    parts = [p.strip(" ,;") for p in _CLAUSE.split(sentence) if p and p.strip(" ,;")]
    kept = [p for p in parts if _asks(p)]
    return kept if len(kept) > 1 else []


def _asks(clause: str) -> bool:
    terms = len(query_terms(clause))
    return terms >= CLAUSE_TERMS or (terms >= CLAUSE_ASKING and bool(_ASKS.match(clause)))


def _words(text: str) -> int:
    return len(_WORD.findall(text))


def context_values(value: Any) -> Iterable[str | int | float]:
    """Every scalar value of a task_context, in order (keys are names, not values)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from context_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from context_values(item)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield value
