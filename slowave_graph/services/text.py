"""Pure text helpers: duplicate keys, scope keys, Lucene queries."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from functools import lru_cache

import Stemmer

_SPACE = re.compile(r"\s+")
_TRAILING_PUNCT = re.compile(r"[\s.!?;:,]+$")
_WORD = re.compile(r"\w+", re.UNICODE)

# Words that carry no topic; dropped from full-text queries (the index keeps them, BM25 would
# only add noise matches on them).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    """.split()  # noqa: SIM905 — a word list reads better as text
)


def normalise_claim(content: str) -> str:
    """The text two claims must share to count as exact duplicates: Unicode-normalised,
    case-folded, whitespace collapsed, trailing punctuation dropped."""
    text = unicodedata.normalize("NFKC", content).casefold()
    text = _SPACE.sub(" ", text).strip()
    return _TRAILING_PUNCT.sub("", text)


def active_key(scope: str, content: str) -> str:
    """Identity of an active claim within a scope (unique in the database)."""
    return hashlib.sha256(f"{scope}\n{normalise_claim(content)}".encode()).hexdigest()


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


# Letters of other scripts drawn like Latin ones: "project:shоp" with a Cyrillic о is another scope
# that looks the same (the Unicode confusables a scope is likely to meet; not the whole table).
_LOOKALIKES = str.maketrans(
    "аеорсхуіјѕԁһӏԛԝвкмнтɡαβεικνορτυχ",
    "aeopcxyijsdhlqwbkmhtgabeikvoptux",
)


def scope_norm_key(scope: str) -> str:
    """Scopes that differ only by case, '-' vs '_', spaces, compatibility forms (full-width
    letters) or look-alike letters of other scripts share this key."""
    folded = unicodedata.normalize("NFKC", scope).casefold().translate(_LOOKALIKES)
    return re.sub(r"[-_\s]+", "_", folded).strip("_")


def scope_token(scope: str) -> str:
    """A single alphanumeric token that stands for the scope in the full-text index."""
    return "s" + hashlib.sha256(scope.encode()).hexdigest()[:24]


def split_scope(scope: str) -> tuple[str, str]:
    kind, _, name = scope.partition(":")
    return kind, name


def query_terms(text: str, limit: int = 48) -> list[str]:
    """Distinct topical words of a query, in order of first appearance."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.casefold()):
        if word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        seen.setdefault(word, None)
        if len(seen) >= limit:
            break
    return list(seen)


def lucene_query(text: str, token: str, *, other_scopes: bool = False) -> str | None:
    """A Lucene query over memory content that must match active status and the scope token (with
    ``other_scopes``, must not: the scope's own memories left out).

    Terms are \\w+ runs, so no Lucene syntax from user text can reach the parser; each is still
    quoted to be safe with reserved words such as AND/OR/NOT.
    """
    terms = query_terms(text)
    if not terms:
        return None
    words = " ".join(f'"{term}"' for term in terms)
    # ^0: the scope and status clauses filter without adding to the score, so BM25 scores are the
    # content's alone (otherwise every hit carries the same constant and max-normalising misleads)
    scope = f"-scope_token:{token}" if other_scopes else f"+scope_token:{token}^0"
    return f"{scope} +status:active^0 +content:({words})"


# Porter, as Neo4j's English full-text analyzer stems (Lucene's PorterStemFilter): a word the
# index matches by stem is one that counts here, and concept keys are the same stems.
_stemmer = Stemmer.Stemmer("porter")


@lru_cache(maxsize=131_072)
def stem(word: str) -> str:
    return str(_stemmer.stemWord(word)) or word  # Porter takes a lone "s" to nothing


@lru_cache(maxsize=1_024)
def _words_stemming_to(stems: tuple[str, ...]) -> re.Pattern[str]:
    """Whole words that could stem to one of ``stems``, so only they need stemming. A Porter stem
    without its last letter is a prefix of the word it came from (the last letter may be rewritten:
    happy → happi, hoped → hope), however long the suffix it stripped (generalizations → gener)."""
    prefixes = {s[:-1] if len(s) > 1 else s for s in stems}
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})\w*")


def term_coverage(terms: list[str], content: str) -> float:
    """Share of the query's topical terms that occur in the content (0..1), words compared by stem.

    The content is scanned once by a pattern of the terms' stems instead of stemming its every
    word: ranking judges ~60-100 memories per cue, mostly not seen by the previous query."""
    if not terms:
        return 0.0
    stems = tuple(stem(t) for t in terms)
    present = {stem(w) for w in _words_stemming_to(stems).findall(content.casefold())}
    return sum(1 for s in stems if s in present) / len(terms)


def procedure_text(goal: str | None, summary: str | None, context_text: str | None) -> str:
    """What a procedure's vector is computed from: its goal, summary and context cue. Commit embeds
    it, and re-embedding or an import recomputes it from the stored goal, summary and context_text
    (operator/texts.py), so both must read this one function."""
    return f"{goal or ''}. {summary or ''} {context_text or ''}".strip()
