"""The maintenance pass's pure parts: which neighbours a memory is judged against, the server's
schedule (a pass when due, never a crash), the co-use half-life in the ranking policy."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from slowave_graph.config import Settings
from slowave_graph.operator import maintenance
from slowave_graph.operator.maintenance import LeaseHeld, MaintenanceRun, memory_number, older_neighbours
from slowave_graph.services.consolidation import NEIGHBOURS, Neighbour
from slowave_graph.services.ranking import DEFAULT_POLICY, policy_for


def test_a_memory_is_judged_against_the_nearest_memories_stored_before_it() -> None:
    assert (memory_number("sch_12"), memory_number("sch_7"), memory_number("imported")) == (12, 7, None)
    hits = [
        Neighbour("sch_100", "itself", 1.0),
        Neighbour("sch_101", "newer", 0.9),
        Neighbour("sch_9", "older, far", 0.2),
        Neighbour("sch_42", "older, near", 0.8),
        Neighbour("sch_41", "older, as near", 0.8),
        Neighbour("odd", "an id of another form", 0.95),
    ]
    assert [h.id for h in older_neighbours("sch_100", hits)] == ["sch_41", "sch_42", "sch_9"]
    # numbers, not text: sch_100 is newer than sch_99 though it sorts before it
    assert [h.id for h in older_neighbours("sch_99", [Neighbour("sch_100", "x", 0.9)])] == []
    many = [Neighbour(f"sch_{i}", "x", i / 100) for i in range(1, 30)]
    assert [h.id for h in older_neighbours("sch_50", many)] == [
        f"sch_{i}" for i in range(29, 29 - NEIGHBOURS, -1)
    ]
    assert older_neighbours("imported", many) == []


def test_a_run_reports_its_counts() -> None:
    start = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    run = MaintenanceRun("mnt_1", start, "host", "alice", "0.1.0", 90.0, linked_duplicates=2)
    run.finished_at, run.status = start + timedelta(seconds=3.5), "completed"
    shown = run.as_dict()
    assert shown["started_at"] == "2026-03-01T09:30:00Z" and shown["seconds"] == 3.5
    assert (shown["status"], shown["linked_duplicates"], shown["scope"]) == ("completed", 2, None)
    assert set(run.counts()) == {
        "memories_checked", "linked_duplicates", "linked_updates", "associations_decayed", "learned_cleared",
        "lessons_judged", "lessons_travelling",
    }  # fmt: skip


def test_the_co_use_half_life_is_part_of_the_ranking_policy() -> None:
    assert Settings().co_use_half_life_days == DEFAULT_POLICY.association_half_life_days
    assert policy_for(DEFAULT_POLICY.candidate_k, "full", Settings().co_use_half_life_days) is DEFAULT_POLICY
    slower = policy_for(DEFAULT_POLICY.candidate_k, "full", 180.0)
    assert slower.association_half_life_days == 180.0 and slower.version == f"{DEFAULT_POLICY.version}-hl180"
    assert policy_for(30, "walk", 0.0).version == f"{DEFAULT_POLICY.version}-walk-k30-hl0"
    env = {"SLOWAVE_MAINTENANCE_INTERVAL": "0", "SLOWAVE_CO_USE_HALF_LIFE_DAYS": "30"}
    assert (Settings.from_env(env).maintenance_interval, Settings.from_env(env).co_use_half_life_days) == (
        0,
        30,
    )
    with pytest.raises(ValueError):
        Settings.from_env({"SLOWAVE_CO_USE_HALF_LIFE_DAYS": "-1"})


class Stop(Exception):
    """Ends the server's loop after the sleeps a test wants to see."""


async def test_the_server_runs_a_pass_when_due_and_survives_failures(monkeypatch: pytest.MonkeyPatch) -> None:
    due = iter([0.0, 0.0, 0.0, 1200.0])
    outcomes: list[Any] = [RuntimeError("database restarting"), LeaseHeld("other", None), "ran"]
    sleeps: list[float] = []
    passes: list[str] = []

    async def seconds_until_due(db: Any, interval: float, now: Any = None) -> float:
        return next(due)

    async def run_pass(app: Any, **_: Any) -> MaintenanceRun:
        outcome = outcomes.pop(0)
        passes.append(str(outcome))
        if isinstance(outcome, Exception):
            raise outcome
        start = datetime.now(UTC)
        return MaintenanceRun("mnt_x", start, "h", "server", "v", 90.0, status="completed", finished_at=start)

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 5:
            raise Stop

    monkeypatch.setattr(maintenance, "seconds_until_due", seconds_until_due)
    monkeypatch.setattr(maintenance, "run_pass", run_pass)
    with pytest.raises(Stop):
        await maintenance.keep_current(SimpleNamespace(db=None), 3600.0, first_delay=60.0, sleep=sleep)  # type: ignore[arg-type]
    assert passes == ["database restarting", "another maintenance pass is running (other)", "ran"]
    # the first delay; an interval after a failure; a lease's length while another pass runs; an
    # interval after a pass; then what the records say is left until the next one is due
    assert sleeps == [60.0, 3600.0, maintenance.LEASE_SECONDS, 3600.0, 1200.0]
