"""The stage of a lesson from its evidence (services/generalisation.py): which scopes validate it,
per session, and the thresholds of each stage."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from slowave_graph.services.generalisation import Generaliser, Lesson, ScopeEvidence, stage_of, validations


def member(memory_id: str, *rows: tuple[str, str, int]) -> dict[str, Any]:
    return {
        "id": memory_id,
        "evidence": [{"scope": s, "session_id": ses, "sign": sign} for s, ses, sign in rows],
    }


def evidence(*scopes: tuple[str, int]) -> list[ScopeEvidence]:
    return [ScopeEvidence(scope, sessions, ("sch_1",)) for scope, sessions in scopes]


def test_a_scope_validates_by_its_sessions_net_and_neutral_marks_count_nothing() -> None:
    found = validations([
        member("sch_1", ("repo:a", "s1", 1), ("repo:a", "s2", 1), ("repo:b", "s3", 0)),
        member("sch_2", ("repo:c", "s4", 1), ("repo:c", "s5", -1), ("repo:c", "s6", -1)),
        member("sch_3", ("repo:d", "s7", 1), ("repo:d", "s7", -1), ("repo:e", "s8", 1)),
    ])  # fmt: skip
    # a: two helpful sessions; b: neutral only; c: one helped, two harmed; d: a session that
    # helped then harmed counts nothing; e: one helpful session
    assert found == [ScopeEvidence("repo:a", 2, ("sch_1",)), ScopeEvidence("repo:e", 1, ("sch_3",))]


def test_members_of_one_scope_share_its_evidence() -> None:
    found = validations([member("sch_1", ("repo:a", "s1", 1)), member("sch_2", ("repo:a", "s2", 1))])
    assert found == [ScopeEvidence("repo:a", 2, ("sch_1", "sch_2"))]


def test_stage_thresholds() -> None:
    active = {"repo": 8, "project": 4}
    assert stage_of("repo", evidence(("repo:a", 5)), active) == 0  # one scope is not general
    assert stage_of("repo", evidence(("repo:a", 1), ("repo:b", 1)), active) == 0  # too few sessions
    assert stage_of("repo", evidence(("repo:a", 2), ("repo:b", 1)), active) == 1
    # stage 1 counts scopes of the origin's kind only
    assert stage_of("repo", evidence(("repo:a", 2), ("project:b", 1)), active) == 0
    assert stage_of("repo", evidence(("repo:a", 2), ("repo:b", 2), ("repo:c", 1)), active) == 2
    # a quarter of the kind's active scopes: 3 of 20 is not broad enough for stage 2
    assert stage_of("repo", evidence(("repo:a", 2), ("repo:b", 2), ("repo:c", 1)), {"repo": 20}) == 1
    five = evidence(("repo:a", 2), ("repo:b", 2), ("repo:c", 2), ("project:d", 1), ("project:e", 1))
    assert stage_of("repo", five, active) == 3
    assert stage_of("repo", five, {"repo": 8, "project": 20}) == 2  # 5 of 28 active: not 40 %
    one_kind = evidence(("repo:a", 2), ("repo:b", 2), ("repo:c", 2), ("repo:d", 1), ("repo:e", 1))
    assert stage_of("repo", one_kind, active) == 2  # global needs two kinds


def test_a_lesson_travels_only_on_evidence_a_limited_token_alone_cannot_give() -> None:
    def by(principal: str, *rows: tuple[str, str, int]) -> dict[str, Any]:
        found = member("sch_1", *rows)
        for row in found["evidence"]:
            row["principal"] = principal
        return found

    active = {"project": 200}
    alone = validations([by("tok_evil", ("project:evil-1", "s1", 1), ("project:evil-2", "s2", 1),
                            ("project:evil-2", "s3", 1))])  # fmt: skip
    assert [e.principals for e in alone] == [("tok_evil",), ("tok_evil",)]
    assert stage_of("project", alone, active) == 0  # one limited token: nothing travels
    local = validations(
        [by("local", ("project:a", "s1", 1)), by("default", ("project:b", "s2", 1), ("project:b", "s3", 1))]
    )
    assert {p for e in local for p in e.principals} == {"*"}  # the local user and the master token
    assert stage_of("project", local, active) == 1
    two = validations(
        [by("tok_a", ("project:a", "s1", 1)), by("tok_b", ("project:b", "s2", 1), ("project:b", "s3", 1))]
    )
    assert stage_of("project", two, active) == 1


class Recording(Generaliser):
    """A generaliser whose judging only records what it was asked (and can fail once)."""

    def __init__(self) -> None:
        super().__init__(db=None, embedder=None)  # type: ignore[arg-type]  # recompute never reads them
        self.judged: list[list[str]] = []
        self.fail_next = False

    async def recompute(self, memory_ids: Iterable[str], now: datetime) -> list[Lesson]:
        await asyncio.sleep(0.01)
        self.judged.append(list(memory_ids))
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("the database went away")
        return []


async def test_feedback_asks_for_judging_that_follows_its_answer_together_and_in_order() -> None:
    judge = Recording()
    clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
    judge.judge_soon(["m2", "m1"], clock)
    judge.judge_soon(["m3"], clock)  # asked while the first is waiting: judged with it
    assert judge.judged == []  # nothing judged inside the caller's call
    await judge.idle()
    assert judge.judged == [["m1", "m2", "m3"]]
    judge.fail_next = True
    judge.judge_soon(["m4"], clock)
    await asyncio.sleep(0)  # the worker starts on m4 and fails; what comes next is still judged
    judge.judge_soon(["m5"], clock)
    await judge.idle()
    assert judge.judged[1:] == [["m4"], ["m5"]]
    await judge.idle()  # nothing waiting: returns at once
