"""Explicit dates in a question, as time windows retrieval can match against occurred_at.

"What did Maria donate in December 2023?" names a month; "on October 13, 2023" a day; "in 2023"
a year. Memories whose time (occurred_at, else when they were recorded) falls in such a window
rank higher (``RankingPolicy.time_weight``). Only explicit calendar dates are read — relative
phrases ("last week") depend on when the question is asked and are left to the text match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
# Most specific first; a span matched by one pattern is not read again by a later one.
_PATTERNS = [
    re.compile(rf"\b{_YEAR}-(?P<mnum>[01]\d)-(?P<dnum>[0-3]\d)\b"),  # 2023-10-13
    re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),  # 13 October, 2023
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),  # October 13, 2023
    re.compile(rf"\b{_YEAR}-(?P<mnum>[01]\d)\b"),  # 2023-10
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.IGNORECASE),  # October 2023
    # a bare year only after a word that makes it a time ("in 2023"), never "Cyberpunk 2077"
    re.compile(rf"\b(?:in|during|of|since|throughout|by)\s+(?:the\s+year\s+)?{_YEAR}\b", re.IGNORECASE),
]


@dataclass(frozen=True)
class Window:
    """[start, end) in UTC."""

    start: datetime
    end: datetime
    _span: tuple[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # ranking compares epoch seconds: the searches return times as numbers, which the driver
        # decodes far faster than temporal values
        object.__setattr__(self, "_span", (self.start.timestamp(), self.end.timestamp()))

    def holds(self, seconds: float, grace_seconds: float) -> bool:
        """Whether the moment (epoch seconds) lies in the window or within the grace after it
        (what happened is often told a few days later: "last week I went …")."""
        start, end = self._span
        return start <= seconds < end + grace_seconds


def windows(text: str) -> list[Window]:
    """The explicit calendar dates of ``text`` (days, months, years) as windows, in order found."""
    found: list[tuple[int, Window]] = []
    taken: list[range] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            span = range(match.start(), match.end())
            if any(span.start < t.stop and t.start < span.stop for t in taken):
                continue
            window = _window(match.groupdict())
            if window is not None:
                taken.append(span)
                found.append((match.start(), window))
    return [w for _, w in sorted(found, key=lambda pair: pair[0])]


def _window(parts: dict[str, str | None]) -> Window | None:
    year = int(parts["year"] or 0)
    month_name = parts.get("month")
    month = _MONTHS[month_name.lower()] if month_name else int(parts.get("mnum") or 0)
    day = int(parts.get("day") or parts.get("dnum") or 0)
    try:
        if day:
            start = datetime(year, month, day, tzinfo=UTC)
            return Window(start, start + timedelta(days=1))
        if month:
            start = datetime(year, month, 1, tzinfo=UTC)
            end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
            return Window(start, end)
        return Window(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    except ValueError:  # "February 30, 2023", month 13: not a date
        return None
