"""What a new claim is to the memories already in its scope: a near-duplicate, an update, or
neither.

A **duplicate** says the same thing in other words ("Deploys go through Argo CD" / "All deploys are
done via ArgoCD"): retrieval shows one of them. An **update** says something else about the same
subject ("The staging database is in us-east-1" / "Staging DB moved to eu-west-2"): retrieval
shows both, newer first, so the agent can retire the old one. Everything else — the same template
about another subject ("stage 3 publishes to q3" / "stage 4 publishes to q4"), two facts about one
thing — is neither, and stays a memory of its own.

The judgement needs no model beyond the embedding the claim already has, and costs microseconds:

- **similarity** of the two claims in the model's calibrated units (services/calibration.py:
  statement-to-statement cosines above unrelated statements), so thresholds mean the same with
  every embedding model;
- **specifics**: the tokens that carry a claim's values and names — numbers, times, versions,
  identifiers (``us-east-1``, ``/var/log``), names (capitalised inside a sentence, inner capitals),
  weekdays and periods, states (enabled, required, …) and environments (staging, production).
  Written forms are normalised first (``3 pm`` = ``15:00``, ``two`` = ``2``, ``Argo CD`` =
  ``ArgoCD``, ``GCS`` = ``Google Cloud Storage``, ``2027-08-22`` = ``22 August 2027``, ``every
  other Monday`` = ``fortnightly on Mondays``, ``orders-svc`` = ``orders service``, common short
  forms such as ``DB``);
- **alignment** of the two claims' plain words (stemmed; stop words and change words left out);
- **polarity**: a claim and its negation ("is shut down" / "is no longer shut down").

A **duplicate** needs a high similarity (lower when two or more names and values agree, a name
among them: two remarks of one conversation share a date and a time), the same specifics on both
sides (one may add detail), the same polarity, no change word the old claim lacks, half of the
shorter claim's plain words, and no word or value swapped in otherwise aligned text (one template
filled twice). An **update** needs a moderate similarity and either a flipped polarity on the same
words; or one value replaced by a value of the same kind (a region by a
region, not by a schedule) with at most a few other words different, where the replaced span is
not the claim's subject (its first part) and does not recur in the other values (``stage 3 …
etl-stage-3``); or a change word ("moved", "switched", "instead", …) with a value of its own.
What neither describes is left alone: a missed duplicate costs a second feedback entry, a false
one would hide a claim. Measured by ``slowave-graph bench consolidation`` on labelled agent
memories (docs/consolidation.md).
"""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from slowave_graph.services.text import STOPWORDS, normalise_claim, stem

Kind = Literal["duplicate", "update"]

# Thresholds, in calibrated units of statement-to-statement similarity (all-MiniLM-L6-v2: unrelated
# statements average a cosine of ~0.05 with a spread of ~0.09, so 7.5 units is a cosine of ~0.73).
DUPLICATE_Z = 7.5
UPDATE_Z = 5.5
# a paraphrase with the same names and values (at least ANCHOR_MIN of them) counts from here
DUPLICATE_ANCHORED_Z = 6.0
ANCHOR_MIN = 2
# a duplicate keeps at least this share of the shorter claim's plain words
DUPLICATE_WORDS = 0.5
# an update differs in at most this many plain words besides its values (with a change word: more)
REST_MAX = 3
CUE_REST_MAX = 8
CUE_SHARED = 0.4
# How many memories of the scope, nearest first, a new claim is compared with.
NEIGHBOURS = 8
# The version of these rules a memory was judged by (Memory.similar_version): remember marks what it
# judges, the maintenance pass judges active memories without the mark or with an older one (links
# are only ever added). Raise it when a change of the rules should reach memories already stored.
SIMILAR_VERSION = 2


@dataclass(frozen=True)
class Thresholds:
    duplicate: float = DUPLICATE_Z
    update: float = UPDATE_Z


DEFAULT = Thresholds()

_WORDS_0_TO_20 = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty
"""
_NUMBER_WORDS = {word: str(n) for n, word in enumerate(_WORDS_0_TO_20.split())} | {
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80",
    "ninety": "90", "hundred": "100", "thousand": "1000", "once": "1", "twice": "2", "single": "1",
    "double": "2", "half": "0.5", "dozen": "12",
}  # fmt: skip
# Short forms agents write for the same thing; mapped to one form before comparing.
_ABBREVIATIONS = {
    "db": "database", "dbs": "database", "prod": "production", "stg": "staging", "env": "environment",
    "envs": "environment", "k8s": "kubernetes", "repo": "repository", "repos": "repository",
    "config": "configuration", "configs": "configuration", "cfg": "configuration", "docs": "documentation",
    "doc": "documentation", "dev": "development", "min": "minute", "mins": "minute", "hr": "hour",
    "hrs": "hour", "h": "hour", "sec": "second", "secs": "second", "s": "second", "ms": "millisecond",
    "wk": "week", "wks": "week", "mo": "month", "yr": "year", "yrs": "year", "approx": "about",
    "info": "information", "infra": "infrastructure", "pr": "pull-request", "prs": "pull-request",
    "mr": "merge-request", "mgr": "manager", "dept": "department", "appt": "appointment",
    "tel": "phone", "mom": "mother", "mum": "mother", "dad": "father", "postgres": "postgresql",
    "nyc": "newyorkcity",
    "pg": "postgresql", "js": "javascript", "ts": "typescript", "py": "python", "gh": "github",
    "svc": "service", "creds": "credentials", "req": "request", "reqs": "request", "rd": "road",
    "ave": "avenue", "st": "street", "sr": "senior", "jr": "junior", "vet": "veterinary",
    "uni": "university", "jan": "january", "feb": "february",
    "mar": "march", "apr": "april", "jun": "june", "jul": "july", "aug": "august", "sep": "september",
    "sept": "september", "annual": "yearly", "annually": "yearly",
    "oct": "october", "nov": "november", "dec": "december", "mon": "monday",
    "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "thu": "thursday", "thur": "thursday",
    "thurs": "thursday", "fri": "friday", "sat": "saturday", "sun": "sunday", "fortnightly": "biweekly",
}  # fmt: skip
# the short forms above that stand for a name, a specific (the rest are ordinary words: "DB")
_NAMES = frozenset("postgres pg k8s js ts py gh nyc".split())  # noqa: SIM905
_WORD_FORMS = _ABBREVIATIONS.keys() - _NAMES
_CALENDAR = frozenset(
    """
    monday tuesday wednesday thursday friday saturday sunday weekday weekend weekends weekdays
    january february march april may june july august september october november december
    daily weekly monthly nightly hourly yearly annually quarterly biweekly morning evening
    afternoon night noon midnight
    """.split()  # noqa: SIM905 — a word list reads better as text
)
# Words that state a value without a number or a name: states, and the environments a fact may
# hold in (a fact about staging is another claim than the same fact about production).
_STATES = frozenset(
    """
    enabled disabled true false allowed forbidden blocked required optional mandatory
    public private open closed active inactive deprecated supported unsupported denied readonly
    read-only writable manual automatic automated encrypted unencrypted synchronous asynchronous
    strict lenient primary secondary paused running stopped vegetarian vegan pescatarian
    production staging sandbox preview canary aisle window
    """.split()  # noqa: SIM905
)
_DETERMINERS = frozenset("a an the this that these those its their your our my his her".split())  # noqa: SIM905
_NEGATIONS = frozenset("not no never cannot without none nobody nothing neither nor".split())  # noqa: SIM905
# Words that say a value changed; a new claim with one that its old one lacks is never a duplicate.
_STRONG_CUES = frozenset(
    """
    moved migrated switched changed replaced raised lowered increased decreased reduced renamed
    upgraded downgraded instead anymore retired decommissioned transferred cancelled canceled
    quit sold stopped resumed reverted lifted removed dropped deprecated fixed postponed rescheduled
    turned
    """.split()  # noqa: SIM905
)
# Words that phrase a change without carrying content, and the ones that only frame a rule ("always
# do X", "…, otherwise Y"); left out of the alignment.
_CHANGE = _STRONG_CUES | frozenset(
    "now new currently became become becomes from to longer again always otherwise also just still".split()  # noqa: SIM905
)

_MONTHS = "january february march april may june july august september october november december".split()  # noqa: SIM905
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_ISO_DATE = re.compile(r"\b(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
# "02:00-04:00", "2am-4am": two times, as "2am to 4am" is
_HOUR = r"\d{1,2}(?::\d{2})?\s*(?:[ap]\.?m\.?)?"
_RANGE = re.compile(rf"\b({_HOUR})\s*[-–]\s*({_HOUR})(?=\s|$|[,.;])", re.IGNORECASE)
# One recurrence written several ways: "every other Monday" = "fortnightly on Mondays" (biweekly
# monday), "every Thursday" = "on Thursdays, every week" (weekly thursday), "each day" = "daily".
_RECURRENCES: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    (re.compile(rf"\bevery (?:other|second) ({_WEEKDAYS})s?\b", re.IGNORECASE), r"biweekly \1"),
    (re.compile(r"\bevery (?:other|second|two) weeks?\b", re.IGNORECASE), "biweekly"),
    (re.compile(rf"\b(?:every|each) ({_WEEKDAYS})\b", re.IGNORECASE), r"weekly \1"),
    (re.compile(r"\b(?:every|each|per) (day|week|month|year|hour|night)\b", re.IGNORECASE),
     lambda m: {"day": "daily", "night": "nightly"}.get(m.group(1).lower(), m.group(1).lower() + "ly")),
]  # fmt: skip
_TIME = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2})\b")
_TOKEN = re.compile(r"\w+(?:['’]\w+)*(?:[-./:@]\w+)*|[.!?;]")
# "50mg", "9th", "2x", "15min": a number and what follows it are two words (ordinals: the number)
_NUMBER_UNIT = re.compile(r"^(\d+(?:[.,]\d+)?)(st|nd|rd|th|[a-z]+)$", re.IGNORECASE)


def _time(match: re.Match[str]) -> str:
    hour, minute, half = int(match.group(1)), match.group(2) or "00", match.group(3).lower()
    hour = hour % 12 + (12 if half == "p" else 0)
    return f"{hour:02d}:{minute}"


def _normalised(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("’", "'")
    text = _ISO_DATE.sub(lambda m: f"{int(m.group(3))} {_MONTHS[int(m.group(2)) - 1]} {m.group(1)}", text)
    text = _RANGE.sub(r"\1 to \2", text).replace(" & ", " and ")  # "Tsai & Partners" = "Tsai and Partners"
    for pattern, replacement in _RECURRENCES:
        text = pattern.sub(replacement, text)
    text = _TIME.sub(_time, text)
    return _CLOCK.sub(lambda m: f"{int(m.group(1)):02d}:{m.group(2)}", text)


@dataclass(frozen=True)
class Token:
    word: str  # the comparable form: case-folded, abbreviations and number words resolved, stemmed
    specific: bool
    initials: str = ""  # of a name of several words ("Google Cloud Storage": "gcs")
    surface: str = ""  # case-folded as written, for plain words (a name that opens a sentence)
    parts: tuple[str, ...] = ()  # the words of a name of several words


@dataclass(frozen=True)
class Parsed:
    tokens: tuple[Token, ...]  # content words in order (no stop words, no change words)
    negated: bool
    cues: frozenset[str]  # the words of the claim that say a value changed

    @property
    def specifics(self) -> list[Token]:
        return [t for t in self.tokens if t.specific]


def _name_like(raw: str) -> bool:
    letters = [c for c in raw if c.isalpha()]
    return len(letters) >= 2 and any(c.isupper() for c in letters[1:])


def _words(text: str) -> list[tuple[str, bool]]:
    """(token, opens a sentence) with numbers split from their units."""
    out: list[tuple[str, bool]] = []
    start = True
    for raw in _TOKEN.findall(_normalised(text)):
        if raw in ".!?;":
            start = True
            continue
        unit = _NUMBER_UNIT.match(raw)
        if unit and not re.search(r"[-./:@]", raw):
            out.append((unit.group(1), start))
            if unit.group(2).lower() not in ("st", "nd", "rd", "th", "s"):
                out.append((unit.group(2), False))
        elif "-" in raw and all(p.casefold() in _NUMBER_WORDS for p in raw.split("-")):
            out.append(
                (
                    str(sum(float(_NUMBER_WORDS[p.casefold()]) for p in raw.split("-"))).removesuffix(".0"),
                    start,
                )
            )
        elif "-" in raw:
            # number words inside a compound are numbers ("five-a-side" = "5-a-side"), and a
            # number with its unit is two words ("two-year" = "2 year", "45-minute")
            parts = [_NUMBER_WORDS.get(p.casefold(), p) for p in raw.split("-")]
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isalpha():
                out.extend([(parts[0], start), (parts[1], False)])
            else:
                out.append(("-".join(parts), start))
        else:
            out.append((raw, start))
        start = False
    return out


@lru_cache(maxsize=65_536)
def parse(text: str) -> Parsed:
    """A claim's content words (specifics marked), polarity and whether it announces a change."""
    tokens: list[Token] = []
    negations = 0
    cues: set[str] = set()
    run: list[str] = []  # consecutive capitalised words: one name ("Argo CD" = "ArgoCD")

    def flush_run() -> None:
        if run:
            run[:] = [_ABBREVIATIONS.get(w, w) if w not in _NAMES else w for w in run]
            word = "".join(run)
            several = len(run) > 1
            initials = "".join(w[0] for w in run) if several else ""
            parts = tuple(run) if several else ()
            tokens.append(Token(_ABBREVIATIONS.get(word, word), True, initials, parts=parts))
            run.clear()

    previous = ""
    words = _words(text)
    for position, (written, opens) in enumerate(words):
        following = words[position + 1][0].casefold() if position + 1 < len(words) else ""
        raw = re.sub(r"'s$", "", written)
        lower = raw.casefold()
        if lower.endswith("s") and lower[:-1] in _CALENDAR:  # "Mondays", "weekends"
            lower = lower[:-1]
        if lower in _NEGATIONS or lower.endswith("n't") or (lower == "longer" and previous == "no"):
            negations += lower != "longer"
            previous = lower
            flush_run()
            continue
        previous = lower
        if lower in _STRONG_CUES:
            cues.add(lower)
        named = (raw[:1].isupper() and not opens) or _name_like(raw)
        if named and lower not in STOPWORDS | _CALENDAR | _WORD_FORMS | _STATES:
            run.append(lower)
            continue
        flush_run()
        word = _NUMBER_WORDS.get(lower, _ABBREVIATIONS.get(lower, lower))
        # a state word with an object is a verb ("before running the tests", "open a pull request")
        if (word in _STATES and following not in _DETERMINERS) or word in _CALENDAR:
            tokens.append(Token(word, True))
            continue
        if word in STOPWORDS or word in _CHANGE:
            continue
        named_word = _name_like(raw) and lower not in _WORD_FORMS
        if (
            any(c.isdigit() for c in word)
            or re.search(r"\w[-./:@_]\w", word)
            or named_word
            or lower in _NAMES
        ):
            if "-" in word:  # "orders-svc" = "orders-service"
                word = "-".join(_ABBREVIATIONS.get(part, part) for part in word.split("-"))
            tokens.append(
                Token(word.removesuffix("s") if word[:1].isalpha() and word[-2:-1].isdigit() else word, True)
            )
            continue
        tokens.append(Token(stem(word), False, surface=word))
    flush_run()
    return Parsed(tuple(tokens), negations % 2 == 1, frozenset(cues))


def _compact(word: str) -> str:
    """A specific as compared: letters and digits only ("us-east-1" = "useast1", "v2.3" = "v23")."""
    return re.sub(r"[\W_]+", "", word)


def _same_specific(a: Token, b: Token) -> bool:
    """One name or value in two written forms: the same letters and digits, an acronym of the
    other ("GCS", "Google Cloud Storage"), one word of the other's name ("RDS", "Amazon RDS"), or
    a number with and without its unit ("50", "50mg" written as one word)."""
    x, y = _compact(a.word), _compact(b.word)
    if x == y or (a.initials and a.initials == y) or (b.initials and b.initials == x):
        return True
    if (a.parts and y in a.parts) or (b.parts and x in b.parts):
        return True
    if _described(a.word, y) or _described(b.word, x):
        return True
    shorter, longer = sorted((x, y), key=len)
    return shorter.isdigit() and longer.startswith(shorter) and longer[len(shorter) :].isalpha()


def _described(identifier: str, other: str) -> bool:
    """An identifier that is the other word with plain words added ("json-formatted", "json")."""
    parts = [p for p in re.split(r"[-./:@_]", identifier) if p]
    return len(parts) == 2 and other in parts and all(p.isalpha() for p in parts)


def _unmatched(side: Sequence[Token], other: Sequence[Token]) -> list[Token]:
    """Specifics of ``side`` with no equal among the ``other`` side's words: a name that opens
    one sentence is a plain word there, a name of several words may be written in lower case
    ("Product Designer", "product designer") or as two words run together ("ArgoCD", "Argo CD")."""
    plain = {o.surface for o in other if not o.specific} | {o.word for o in other if not o.specific}
    joined = _joined([o.surface or _compact(o.word) for o in other])
    return [
        t
        for t in side
        if t.specific
        and _compact(t.word) not in plain | joined
        and not (t.parts and all(part in plain for part in t.parts))
        and not any(_same_specific(t, o) for o in other if o.specific)
    ]


@lru_cache(maxsize=1_024)
def _matcher(old: Parsed, new: Parsed) -> difflib.SequenceMatcher[str]:
    """The alignment of two claims' content words (specifics compared in compact form); one pair
    is aligned once however many of the rules below ask."""
    a = [_compact(t.word) if t.specific else t.word for t in old.tokens]
    b = [_compact(t.word) if t.specific else t.word for t in new.tokens]
    return difflib.SequenceMatcher(a=a, b=b, autojunk=False)


def _replacements(old: Parsed, new: Parsed) -> list[tuple[list[Token], list[Token]]]:
    """The spans where the aligned content words differ: (old side, new side), in order."""
    spans = []
    for op, i1, i2, j1, j2 in _matcher(old, new).get_opcodes():
        if op != "equal":
            spans.append((list(old.tokens[i1:i2]), list(new.tokens[j1:j2])))
    return spans


def _swaps(old: Parsed, new: Parsed) -> list[tuple[list[Token], list[Token]]]:
    """Replaced spans whose two sides are not one thing written twice: a word or a value of one
    claim swapped for another. Words that only moved (they stand elsewhere in the other claim)
    are no swap."""
    old_forms, new_forms = _forms(old, new), _forms(new, old)
    out = []
    for old_side, new_side in _replacements(old, new):
        old_side = [t for t in old_side if _compact(t.word) not in new_forms and t.surface not in new_forms]
        new_side = [t for t in new_side if _compact(t.word) not in old_forms and t.surface not in old_forms]
        if not old_side or not new_side:
            continue
        if (
            _unmatched(old_side, new.tokens)
            or _unmatched(new_side, old.tokens)
            or not all(t.specific for t in old_side + new_side)
        ):
            out.append((old_side, new_side))
    return out


def _forms(claim: Parsed, other: Parsed) -> set[str]:
    """Every way a word of ``claim`` may be written in ``other``: its compact and written forms,
    two neighbours run together ("read replica" = "read-replica"), and the parts of an identifier
    that ``other`` writes as words ("orders-service": "orders", "service"; not "mother-in-law":
    "mother")."""
    forms = [t.surface or _compact(t.word) for t in claim.tokens]
    written = {t.surface or _compact(t.word) for t in other.tokens}
    parts = set()
    for t in claim.tokens:
        pieces = [p for p in re.split(r"[-./:@_]", t.word) if p]
        if t.specific and len(pieces) > 1 and all(p in written for p in pieces):
            parts.update(pieces)
    return {_compact(t.word) for t in claim.tokens} | set(forms) | _joined(forms) | parts


def _joined(forms: Sequence[str]) -> set[str]:
    return {a + b for a, b in itertools.pairwise(forms)}


def _shared_share(old: Parsed, new: Parsed) -> float:
    """Share of the shorter claim's content words that the other holds."""
    return _share({_compact(t.word) for t in old.tokens}, {_compact(t.word) for t in new.tokens}, 0.0)


def _rest_alike(old: Parsed, new: Parsed, most: int = REST_MAX) -> bool:
    """Whether the claims say the same apart from their values: at most ``REST_MAX`` plain words
    differ in all (added, dropped or swapped). Two claims about one subject that each tell a
    different story, dated differently, are no update of one another."""
    differing = sum(not t.specific for o, n in _replacements(old, new) for t in o + n)
    return differing <= most


def _wordy(side: Sequence[Token]) -> bool:
    """A swapped span with more than two plain words: another statement about the subject ("reads
    its configuration from …" / "stores its data in …"), not another value of the same one."""
    return sum(not t.specific for t in side) > 2


def _value_kind(token: Token) -> str:
    """What sort of value a specific is: a time, a number, a day or period, a state, or a name or
    identifier (one kind: "Docker Hub" and "ghcr.io/acme" fill the same slot)."""
    word = token.word
    if re.fullmatch(r"\d{2}:\d{2}", word):
        return "time"
    if re.fullmatch(r"[\d.,]+", word):
        return "number"
    if word in _CALENDAR:
        return "calendar"
    if word in _STATES:
        return "state"
    return "name"


def _same_slot(old_only: Sequence[Token], new_only: Sequence[Token]) -> bool:
    """Whether a value of the old claim and one of the new are of one kind, so one can replace the
    other (a region does not replace a schedule)."""
    return bool({_value_kind(t) for t in old_only} & {_value_kind(t) for t in new_only})


def _plain_share(old: Parsed, new: Parsed) -> float:
    """Share of the shorter claim's plain words (stemmed) that the other holds too: a claim said
    again keeps some of its words, however it is rephrased; two remarks that only share a
    speaker, a date or a template keep few."""
    plain_old = {t.word for t in old.tokens if not t.specific}
    return _share(plain_old, {t.word for t in new.tokens if not t.specific}, 1.0)


def _share(a: set[str], b: set[str], empty: float) -> float:
    """Share of the smaller set held by the other (``empty`` when one is empty)."""
    shorter = min(len(a), len(b))
    return empty if shorter == 0 else len(a & b) / shorter


def _aligned(old: Parsed, new: Parsed) -> float:
    """How much of the two claims' content words line up in order (difflib's ratio, 0..1): high
    for one template filled twice, low for a paraphrase that reorders."""
    return _matcher(old, new).ratio()


def relation(new_text: str, old_text: str, z: float, thresholds: Thresholds = DEFAULT) -> Kind | None:
    """What ``new_text`` is to ``old_text``, given their similarity in calibrated units."""
    if z < thresholds.update:
        return None
    old, new = parse(old_text), parse(new_text)
    new_only = _unmatched(new.specifics, old.tokens)
    old_only = _unmatched(old.specifics, new.tokens)
    flipped = old.negated != new.negated
    shared = _shared_share(old, new)
    swaps = _swaps(old, new)
    changed = bool(new.cues - old.cues)
    # one template filled twice: the same words in the same order, a word or value swapped ("team
    # blue owns the fix" / "team red owns the fix"; a verb swapped in a paraphrase is lost with it)
    templated = bool(swaps) and _aligned(old, new) >= 0.6
    # the same names and values on both sides (two at least: one date or number alone anchors
    # nothing) let a paraphrase count at a lower similarity
    anchored = (
        len(old.specifics) >= ANCHOR_MIN
        and not new_only
        and not old_only
        # a date and a time name no thing: two remarks of one conversation share them
        and any(_value_kind(t) in ("name", "state") for t in old.specifics)
    )
    same_claim = (
        not flipped
        and not changed
        and not (new_only and old_only)
        and not templated
        and _plain_share(old, new) >= DUPLICATE_WORDS
    )
    if same_claim and (z >= thresholds.duplicate or (anchored and z >= DUPLICATE_ANCHORED_Z)):
        return "duplicate"
    if flipped and shared >= 0.75 and not swaps:
        return "update"
    if (
        new_only
        and old_only
        and _same_slot(old_only, new_only)
        and len(swaps) <= 1
        and not any(_wordy(side) for swap in swaps for side in swap)
        and _rest_alike(old, new)
        and not _another_subject(old, swaps, old_only, new_only)
    ):
        return "update"
    if (
        changed
        and (flipped or (new_only and (not old_only or _same_slot(old_only, new_only))))
        and shared >= CUE_SHARED
        and _rest_alike(old, new, CUE_REST_MAX)
    ):
        return "update"
    return None


def same_lesson(new_text: str, old_text: str, z: float, thresholds: Thresholds = DEFAULT) -> bool:
    """Whether two memories of different scopes are one lesson in other words
    (services/generalisation.py), ``new_text`` the one written later: a duplicate, or — at a
    duplicate's similarity — the same names and values on both sides, not one template filled
    twice, and enough plain words in common, whatever their polarity words ("run X before the tests,
    otherwise …" / "never skip X before the tests"): rules are restated with and without negations.
    A scope-specific fact differs in its names, so it never joins another scope's. A wrong merge of
    two opposite rules needs both to have been found helpful in their scopes before anything
    travels, and only the older travels."""
    if relation(new_text, old_text, z, thresholds) == "duplicate":
        return True
    if z < thresholds.duplicate:
        return False
    old, new = parse(old_text), parse(new_text)
    # a name or value that the other lacks: another thing ("atlas" / "borealis") or another value
    # ("Jenkins" / "GitHub Actions"), an update rather than the same rule
    if _unmatched(new.specifics, old.tokens) or _unmatched(old.specifics, new.tokens):
        return False
    if new.cues - old.cues:  # "… was changed to …": a change of the rule, not the rule again
        return False
    templated = bool(_swaps(old, new)) and _aligned(old, new) >= 0.6
    return not templated and _plain_share(old, new) >= DUPLICATE_WORDS


def names_and_values(text: str) -> list[str]:
    """The names and values of a claim, in their comparable forms and, for a name of several
    words, its words: what a text must mention to be the same lesson (``same_lesson`` finds none of
    them unmatched), so what a lexical search for its other wordings looks for."""
    out: dict[str, None] = {}
    for token in parse(text).specifics:
        for word in (token.word, *token.parts):
            out.setdefault(word, None)
    return list(out)


def _another_subject(
    old: Parsed,
    swaps: Sequence[tuple[list[Token], list[Token]]],
    old_only: Sequence[Token],
    new_only: Sequence[Token],
) -> bool:
    """Whether the claims are about two subjects rather than one subject's two values: the swap
    takes a word from the first part of the old claim (its subject, in a claim written subject
    first: "The billing service …" / "The search service …"), or what is swapped recurs inside
    the values that differ ("stage 2 … etl-stage-2" / "stage 3 … etl-stage-3"): the values follow
    the subject, as one template filled for two things."""
    if not old.tokens:
        return False
    for old_side, new_side in swaps:
        if _in_subject(old, old_side):
            return True
        if _recurs(old_side, old_only) and _recurs(new_side, new_only):
            return True
    return False


def _in_subject(old: Parsed, old_side: Sequence[Token]) -> bool:
    """Whether a swapped span starts in the first part of the old claim: its subject, in a claim
    written subject first."""
    return bool(old_side) and old.tokens.index(old_side[0]) < 0.4 * len(old.tokens)


def _recurs(side: Sequence[Token], values: Sequence[Token]) -> bool:
    words = {t.surface or _compact(t.word) for t in side}
    return any(w and w in _compact(v.word) and w != _compact(v.word) for w in words for v in values)


@dataclass(frozen=True)
class Neighbour:
    """A memory of the scope near a new claim: its id, text and cosine to the claim."""

    id: str
    content: str
    cosine: float


@dataclass(frozen=True)
class Link:
    """A new claim's relation to a memory: (:Memory)-[:SIMILAR_TO {kind, score}]->(:Memory)."""

    target: str  # a memory id, or "#<position>" for an earlier claim of the same call
    kind: Kind
    score: float  # the cosine
    content: str  # the target's text


def links_for(
    content: str,
    neighbours: Sequence[Neighbour],
    statement_z: Callable[[float], float],
    thresholds: Thresholds = DEFAULT,
) -> list[Link]:
    """A new claim's duplicates and updates among its nearest memories, most similar first. A
    memory with the very same text (up to case, spacing and final punctuation) is not one: remember
    matches it instead of storing the claim again."""
    found = []
    same = normalise_claim(content)
    for n in sorted(neighbours, key=lambda n: (-n.cosine, n.id)):
        if normalise_claim(n.content) == same:
            continue
        kind = relation(content, n.content, statement_z(n.cosine), thresholds)
        if kind is not None:
            found.append(Link(n.id, kind, round(n.cosine, 6), n.content))
    return found


def judge_claims(
    claims: Sequence[str],
    vectors: Sequence[Sequence[float]],
    stored: Sequence[Sequence[Neighbour]],
    statement_z: Callable[[float], float],
    thresholds: Thresholds = DEFAULT,
) -> list[list[Link]]:
    """Per claim of one call, in order: its duplicates and updates among the memories stored near
    it (``stored``, per claim) and the call's earlier claims (targets ``#<position>``)."""
    units = _units(vectors)
    out = []
    for i, content in enumerate(claims):
        earlier = [Neighbour(f"#{j}", claims[j], float(units[i] @ units[j])) for j in range(i)]
        out.append(links_for(content, [*stored[i], *earlier], statement_z, thresholds))
    return out


def _units(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    return np.asarray(array / np.maximum(np.linalg.norm(array, axis=1, keepdims=True), 1e-12))
