"""GroupCommit (graph/group_commit.py): who writes alone, who shares a commit, and what each
caller gets back when a shared commit fails."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

import pytest

from slowave_graph.graph.group_commit import GroupCommit


class Final(RuntimeError):
    """Stands for DatabaseUnavailable: a failure no call can escape by running alone."""


class FakeWriter:
    """``alone`` and ``together`` that record what they were given; ``gate`` holds the first
    write open until the test releases it, so later calls queue behind it."""

    def __init__(self) -> None:
        self.alone_calls: list[str] = []
        self.groups: list[list[str]] = []
        self.gate = asyncio.Event()
        self.bad: set[str] = set()
        self.final = False

    async def alone(self, params: str) -> str:
        self.alone_calls.append(params)
        if len(self.alone_calls) == 1:
            await self.gate.wait()
        if params in self.bad:
            raise ValueError(f"bad {params}")
        return f"done {params}"

    async def together(self, many: list[str]) -> list[str]:
        self.groups.append(list(many))
        await asyncio.sleep(0)
        if self.final:
            raise Final("database unavailable")
        if self.bad.intersection(many):
            raise ValueError("one of them is bad")
        return [f"done {params}" for params in many]

    def group(self, max_group: int = 16) -> GroupCommit[str, str]:
        return GroupCommit(
            self.alone, self.together, lambda exc: isinstance(exc, Final), label="w", max_group=max_group
        )


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def start(group: GroupCommit[str, str], calls: list[tuple[Hashable, str]]) -> list[asyncio.Task[str]]:
    """The first call starts writing alone; the rest arrive while it is in flight."""
    tasks = []
    for key, params in calls:
        tasks.append(asyncio.create_task(group.run(key, params)))
        await settle()
    return tasks


async def test_a_lone_call_writes_alone() -> None:
    writer = FakeWriter()
    writer.gate.set()
    group = writer.group()
    assert await group.run("s1", "a") == "done a"
    assert await group.run("s1", "b") == "done b"
    assert writer.alone_calls == ["a", "b"] and writer.groups == []


async def test_calls_arriving_during_a_write_share_the_next_commit() -> None:
    writer = FakeWriter()
    group = writer.group()
    tasks = await start(group, [("s1", "a"), ("s2", "b"), ("s3", "c"), ("s4", "d")])
    assert writer.groups == []  # nothing starts while the first write is in flight
    writer.gate.set()
    assert await asyncio.gather(*tasks) == ["done a", "done b", "done c", "done d"]
    assert writer.alone_calls == ["a"]
    assert writer.groups == [["b", "c", "d"]]
    assert (group.groups, group.grouped_calls) == (1, 3)


async def test_calls_of_one_key_never_share_a_commit_and_keep_their_order() -> None:
    writer = FakeWriter()
    group = writer.group()
    tasks = await start(group, [("s1", "a"), ("s2", "b1"), ("s2", "b2"), ("s3", "c"), ("s2", "b3")])
    writer.gate.set()
    assert await asyncio.gather(*tasks) == ["done a", "done b1", "done b2", "done c", "done b3"]
    assert writer.groups == [["b1", "c"]]  # b2 then b3 each went alone, in order, after it
    assert writer.alone_calls == ["a", "b2", "b3"]


async def test_a_group_is_at_most_max_group_calls() -> None:
    writer = FakeWriter()
    group = writer.group(max_group=2)
    tasks = await start(group, [(f"s{i}", str(i)) for i in range(6)])
    writer.gate.set()
    await asyncio.gather(*tasks)
    assert writer.groups == [["1", "2"], ["3", "4"]]
    assert writer.alone_calls == ["0", "5"]


async def test_a_failed_group_writes_each_call_alone_so_only_the_bad_one_fails() -> None:
    writer = FakeWriter()
    writer.bad = {"c"}
    group = writer.group()
    tasks = await start(group, [("s1", "a"), ("s2", "b"), ("s3", "c"), ("s4", "d")])
    writer.gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert results[:2] == ["done a", "done b"] and results[3] == "done d"
    assert isinstance(results[2], ValueError) and str(results[2]) == "bad c"
    assert writer.groups == [["b", "c", "d"]]
    assert writer.alone_calls == ["a", "b", "c", "d"]
    assert group.groups == 0


async def test_a_final_failure_reaches_every_call_of_the_group_without_retrying_them() -> None:
    writer = FakeWriter()
    writer.final = True
    group = writer.group()
    tasks = await start(group, [("s1", "a"), ("s2", "b"), ("s3", "c")])
    writer.gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert results[0] == "done a"
    assert all(isinstance(r, Final) for r in results[1:])
    assert writer.alone_calls == ["a"]


async def test_a_call_cancelled_while_queued_is_not_written() -> None:
    writer = FakeWriter()
    group = writer.group()
    tasks = await start(group, [("s1", "a"), ("s2", "b"), ("s3", "c")])
    tasks[1].cancel()
    await settle()
    writer.gate.set()
    assert await tasks[0] == "done a" and await tasks[2] == "done c"
    with pytest.raises(asyncio.CancelledError):
        await tasks[1]
    assert writer.alone_calls == ["a", "c"] and writer.groups == []
