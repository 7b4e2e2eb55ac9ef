"""Explicit dates in questions become time windows; nothing else does."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from slowave_graph.services.timeframe import Window, windows


def day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What painting did Melanie show on October 13, 2023?", [(day(2023, 10, 13), day(2023, 10, 14))]),
        ("What happened on 13 October, 2023?", [(day(2023, 10, 13), day(2023, 10, 14))]),
        ("What happened on the 3rd of May 2023?", [(day(2023, 5, 3), day(2023, 5, 4))]),
        ("Which game was John playing on Aug 10 2022?", [(day(2022, 8, 10), day(2022, 8, 11))]),
        ("What did Maria donate in December 2023?", [(day(2023, 12, 1), day(2024, 1, 1))]),
        ("What did she start in Sept. 2022?", [(day(2022, 9, 1), day(2022, 10, 1))]),
        ("How many times did she go to the beach in 2023?", [(day(2023, 1, 1), day(2024, 1, 1))]),
        ("What broke on 2024-02-29 and in 2024-03?", [(day(2024, 2, 29), day(2024, 3, 1)),
                                                      (day(2024, 3, 1), day(2024, 4, 1))]),
        ("Between May 2023 and July 2023?", [(day(2023, 5, 1), day(2023, 6, 1)),
                                             (day(2023, 7, 1), day(2023, 8, 1))]),
    ],
)  # fmt: skip
def test_explicit_dates_become_windows(question: str, expected: list[tuple[datetime, datetime]]) -> None:
    assert [(w.start, w.end) for w in windows(question)] == expected


@pytest.mark.parametrize(
    "question",
    [
        "Which RPG did John play last week?",  # relative: depends on when it is asked
        "Has James tried Cyberpunk 2077 yet?",  # a number, not a year
        "Did they play FIFA 23 together?",
        "What happened on February 30, 2023?",  # not a date
        "Why did the deploy fail in May?",  # a month without a year is not a window
        "",
    ],
)
def test_no_window_without_an_explicit_calendar_date(question: str) -> None:
    assert windows(question) == []


def test_a_day_is_not_read_again_as_its_month_or_year() -> None:
    assert len(windows("On October 13, 2023 in the morning")) == 1


def test_a_window_holds_its_span_and_the_grace_after_it() -> None:
    july = Window(day(2023, 7, 1), day(2023, 8, 1))
    week = timedelta(days=7).total_seconds()
    assert july.holds(day(2023, 7, 1).timestamp(), week)
    assert july.holds(day(2023, 8, 7).timestamp(), week)  # told a week later
    assert not july.holds(day(2023, 8, 8).timestamp(), week)
    assert not july.holds(day(2023, 6, 30).timestamp(), week)
