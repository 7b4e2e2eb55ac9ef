"""The demo dataset and its schedule (pure), and the `demo` command line."""

from __future__ import annotations

import pytest

from slowave_graph.cli import build_parser
from slowave_graph.commands import demo as demo_command
from slowave_graph_lab.demo.data import CLAIMS, EVENTS, ONBOARDING, REPLACEMENTS, ROUTINE
from slowave_graph_lab.demo.seed import MIN_TASKS, DemoScopeInvalid, check_scope, schedule

TASKS = (*ONBOARDING, *ROUTINE, *EVENTS)


def test_every_claim_a_task_names_exists_and_texts_are_unique() -> None:
    named = {k for t in TASKS for k in (*t.uses, *t.harms, *t.remembers, *t.retires, *t.retires.values())}
    assert named <= set(CLAIMS)
    assert len({c.content for c in CLAIMS.values()}) == len(CLAIMS)
    # every claim is learned by some task; replacements only by the event that retires the old one
    learned = {k for t in TASKS for k in (*t.remembers, *t.retires.values())}
    assert learned == set(CLAIMS)
    assert not REPLACEMENTS & {k for t in ONBOARDING for k in t.remembers}


def test_schedule_is_a_function_of_the_seed() -> None:
    names = [s.task.name for s in schedule(42, 30)]
    assert names == [s.task.name for s in schedule(42, 30)]
    assert [s.text for s in schedule(42, 30)] == [s.text for s in schedule(42, 30)]
    assert names != [s.task.name for s in schedule(7, 30)]


@pytest.mark.parametrize("tasks", [MIN_TASKS, 12, 14, 20, 30, 40])
def test_schedule_tells_the_story_in_order(tasks: int) -> None:
    steps = schedule(42, tasks)
    names = [s.task.name for s in steps]
    assert len(steps) == tasks and [s.number for s in steps] == list(range(1, tasks + 1))
    assert set(names[: len(ONBOARDING)]) == {t.name for t in ONBOARDING}
    events = [n for n in names if n in {e.name for e in EVENTS}]
    assert events == [e.name for e in EVENTS]  # each once, in the project's order
    if tasks >= 14:  # misled twice before the root cause is found, helped once after
        root = names.index("refund_root_cause")
        assert names[:root].count("refunds") == 2 and names[root:].count("refunds") == 1


def test_too_few_tasks_and_bad_scopes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        schedule(42, MIN_TASKS - 1)
    assert check_scope("demo:harbor") == "demo:harbor"
    with pytest.raises(DemoScopeInvalid, match="kind:id"):
        check_scope("harbor")


@pytest.mark.parametrize(
    ("argv", "handler"),
    [
        (["demo"], demo_command.run),
        (["demo", "--url", "http://h:1/mcp", "--scope", "a:b"], demo_command.run),
        (["demo", "run", "--scope", "a:b"], demo_command.run),
        (["demo", "seed"], demo_command.seed),
        (["demo", "seed", "--scope", "demo:x", "--tasks", "12", "--seed", "7", "--force"], demo_command.seed),
    ],
)
def test_demo_command_line(argv: list[str], handler: object) -> None:
    args = build_parser().parse_args(argv)
    assert args.handler is handler
    if "--scope" in argv:
        assert args.scope == argv[argv.index("--scope") + 1]
    if "--url" in argv:
        assert args.url == "http://h:1/mcp"
    if "--force" in argv:
        assert (args.tasks, args.seed, args.force) == (12, 7, True)


def test_demo_seed_rejects_too_few_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["demo", "seed", "--tasks", "3"])
    assert "at least" in capsys.readouterr().err
