"""`slowave-graph service`: the units it writes for systemd (checked by systemd-analyze) and
launchd (read back as plists), the quoting of their command lines and environment, and what
install and uninstall run and leave behind. The command lines are run for real in
tests/integration/test_service_units.py."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from slowave_graph.operator import service

COMMAND = [sys.executable, "-m", "slowave_graph"]
ENV = {"SLOWAVE_DATA_DIR": "/srv/memory data", "SLOWAVE_AUTH_TOKEN": 'to"k$en%1\\x', "PATH": "/usr/bin:/bin"}


def exec_argv(line: str) -> list[str]:
    """An ExecStart line back into its words (what systemd runs)."""
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(line)]


def environment(text: str) -> dict[str, str]:
    """An EnvironmentFile back into its variables."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key] = shlex.split(value)[0].replace("\\n", "\n")
    return out


def unit_text(planned: service.Plan, name: str) -> str:
    return next(u.text for u in planned.files if u.path.name == name)


def test_systemd_units_run_this_installation_with_its_environment(tmp_path: Path) -> None:
    planned = service.plan("Linux", tmp_path, COMMAND, ENV, tmp_path / "my backups", keep=4)
    names = {u.path.name: u for u in planned.files}
    assert set(names) == {
        "service.env",
        "slowave-graph.service",
        "slowave-graph-backup.service",
        "slowave-graph-backup.timer",
    }
    assert names["service.env"].mode == 0o600  # it may hold the token
    assert environment(names["service.env"].text) == ENV
    server = names["slowave-graph.service"].text
    [line] = [x for x in server.splitlines() if x.startswith("ExecStart=")]
    assert exec_argv(line.removeprefix("ExecStart=")) == [*COMMAND, "serve", "--transport", "http"]
    [line] = [
        x for x in names["slowave-graph-backup.service"].text.splitlines() if x.startswith("ExecStart=")
    ]
    backup = exec_argv(line.removeprefix("ExecStart="))
    assert backup == [*COMMAND, "backup", "--dir", str(tmp_path / "my backups"), "--keep", "4"]
    assert "Restart=on-failure" in server and "OnCalendar=daily" in names["slowave-graph-backup.timer"].text
    assert planned.start[-1][-3:] == ["--now", "slowave-graph.service", "slowave-graph-backup.timer"]


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None, reason="systemd-analyze is a Debian package here"
)
def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    odd = tmp_path / "a dir with 100% $pace"  # quoting: spaces, a specifier, a variable sign
    odd.mkdir()
    planned = service.plan("Linux", tmp_path / "home", COMMAND, ENV, odd, keep=7)
    service.write(planned.files)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    units = [str(u.path) for u in planned.files if u.path.suffix in (".service", ".timer")]
    checked = subprocess.run(
        ["systemd-analyze", "--user", "verify", *units],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        timeout=60,
    )
    assert checked.returncode == 0, checked.stderr
    # and it refuses what is broken (the check can fail)
    broken = Path(units[0]).with_name("broken.service")
    broken.write_text("[Service]\nExecStart=relative/slowave-graph serve\n")
    refused = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(broken)],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        timeout=60,
    )
    assert refused.returncode != 0


def test_launchd_agents_are_plists_with_the_same_commands(tmp_path: Path) -> None:
    planned = service.plan("Darwin", tmp_path, COMMAND, ENV, tmp_path / "b", keep=3)
    server, backup = (plistlib.loads(u.text.encode()) for u in planned.files)
    assert all(u.mode == 0o600 for u in planned.files) and planned.manager == "launchd"
    assert server["ProgramArguments"] == [*COMMAND, "serve", "--transport", "http"]
    assert server["EnvironmentVariables"] == ENV and server["RunAtLoad"] is True
    assert server["KeepAlive"] == {"SuccessfulExit": False}
    assert backup["ProgramArguments"] == [*COMMAND, "backup", "--dir", str(tmp_path / "b"), "--keep", "3"]
    assert backup["StartCalendarInterval"] == {"Hour": 3, "Minute": 17}
    assert planned.start[0][:2] == ["launchctl", "bootstrap"] and planned.stop[0][1] == "bootout"
    other = service.plan("Windows", tmp_path, COMMAND, ENV, tmp_path / "b", keep=3)
    assert other.files == [] and "Task Scheduler" in other.notes[0]


def test_install_writes_and_starts_uninstall_stops_and_keeps_the_data(tmp_path: Path) -> None:
    ran: list[list[str]] = []

    def runner(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        ran.append(list(command))
        return subprocess.CompletedProcess(list(command), 0, "", "")

    backups = tmp_path / "backups"
    backups.mkdir()
    (backups / "slowave-graph-20260101T000000Z.jsonl").write_text("{}\n")
    planned = service.plan("Linux", tmp_path / "home", COMMAND, ENV, backups, keep=7)
    service.write(planned.files)
    assert service.run_all(planned.start, runner) == []
    assert ran == planned.start
    env_file = next(u.path for u in planned.files if u.path.name == "service.env")
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert not list(env_file.parent.glob("*.partial"))

    def failing(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(list(command), 1, "", "Failed to connect to bus")

    failures = service.run_all(planned.start, failing)
    assert len(failures) == 1 and "Failed to connect to bus" in failures[0]  # stops at the first
    assert len(service.run_all(planned.stop, failing, check=False)) == len(planned.stop)

    gone = service.remove(planned.files)
    assert sorted(gone) == sorted(u.path for u in planned.files)
    assert not any(u.path.exists() for u in planned.files)
    assert list(backups.iterdir())  # the backups stay


def test_exec_lines_survive_odd_words() -> None:
    words = ["/opt/my app/bin/slowave-graph", "backup", "--dir", '/b/"q"\\s 50% $HOME;x', ""]
    assert exec_argv(service.exec_line(words)) == words


def test_rotation_keeps_the_newest_backups_and_nothing_else_is_touched(tmp_path: Path) -> None:
    from slowave_graph.operator.backup import rotate

    made = [f"slowave-graph-2026120{d}T030000Z.jsonl" for d in range(1, 6)]
    for name in [*made, "memory.jsonl", "slowave-graph-20261206T030000Z.jsonl.partial"]:
        (tmp_path / name).write_text("{}\n")
    removed = rotate(tmp_path, keep=2)
    assert sorted(p.name for p in removed) == made[:3]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([*made[3:], "memory.jsonl", "slowave-graph-20261206T030000Z.jsonl.partial"])
    assert rotate(tmp_path, keep=0) == [tmp_path / made[3]]  # at least one is always kept
