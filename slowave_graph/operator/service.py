"""`slowave-graph service`: the HTTP server as the user's own background service, started at login
and restarted on failure, and a daily backup that keeps the newest ``SLOWAVE_BACKUP_KEEP``.

Linux: systemd user units (``~/.config/systemd/user``: ``slowave-graph.service``,
``slowave-graph-backup.service`` and its ``.timer``), their environment in
``~/.config/slowave-graph/service.env`` (mode 0600: it may hold the server's token). macOS: two
launchd agents (``~/Library/LaunchAgents/io.github.slowave-graph*.plist``). Other systems get the
command lines to run with their own scheduler. Nothing here touches the memory: uninstalling
stops and removes the units and keeps the data and the backups.

The units run what the current shell would: this installation's command (make serve's launcher
when it runs this installation, so a dependency update does not break the unit), with every
setting that differs from its default, ``PATH`` (for Java and Maven) and ``JAVA_HOME``, and the
embedding endpoint's key variable when one is set.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

NAME = "slowave-graph"
LABEL = "io.github.slowave-graph"
BACKUP_HOUR, BACKUP_MINUTE = 3, 17  # launchd's daily backup; systemd's timer spreads it itself

Run = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


@dataclass(frozen=True)
class UnitFile:
    path: Path
    text: str
    mode: int = 0o644


@dataclass(frozen=True)
class Plan:
    """What installing writes and runs, and how to look at it and take it away again."""

    manager: str  # "systemd", "launchd" or "none"
    files: list[UnitFile]
    start: list[list[str]] = field(default_factory=list)
    stop: list[list[str]] = field(default_factory=list)
    status: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan(
    system: str, home: Path, command: Sequence[str], env: dict[str, str], backup_dir: Path, keep: int
) -> Plan:
    """The units for ``system`` (``platform.system()``): ``command`` runs this installation
    (``command + ["serve", …]``), ``env`` is the environment it needs."""
    serve = [*command, "serve", "--transport", "http"]
    backup = [*command, "backup", "--dir", str(backup_dir), "--keep", str(keep)]
    if system == "Linux":
        return _systemd(home, serve, backup, env)
    if system == "Darwin":
        return _launchd(home, serve, backup, env)
    return Plan(
        "none",
        [],
        notes=[
            f"no user service manager this command knows on {system}: run `{' '.join(serve)}` at login "
            f"and `{' '.join(backup)}` daily with your own scheduler (Windows: Task Scheduler)"
        ],
    )


def _systemd(home: Path, serve: list[str], backup: list[str], env: dict[str, str]) -> Plan:
    units = home / ".config" / "systemd" / "user"
    env_file = home / ".config" / NAME / "service.env"
    server = f"""[Unit]
Description=slowave-graph: long-term memory for AI agents (MCP over HTTP)
After=network-online.target

[Service]
Type=simple
EnvironmentFile={env_file}
ExecStart={exec_line(serve)}
Restart=on-failure
RestartSec=5
TimeoutStopSec=90

[Install]
WantedBy=default.target
"""
    backup_unit = f"""[Unit]
Description=slowave-graph: back up the memory, keeping the newest copies

[Service]
Type=oneshot
EnvironmentFile={env_file}
ExecStart={exec_line(backup)}
"""
    timer = """[Unit]
Description=slowave-graph: daily backup of the memory

[Timer]
OnCalendar=daily
Persistent=true
RandomizedDelaySec=900

[Install]
WantedBy=timers.target
"""
    user = ["systemctl", "--user"]
    return Plan(
        "systemd",
        [
            UnitFile(env_file, environment_file(env), 0o600),
            UnitFile(units / f"{NAME}.service", server),
            UnitFile(units / f"{NAME}-backup.service", backup_unit),
            UnitFile(units / f"{NAME}-backup.timer", timer),
        ],
        start=[
            [*user, "daemon-reload"],
            [*user, "enable", "--now", f"{NAME}.service", f"{NAME}-backup.timer"],
        ],
        stop=[[*user, "disable", "--now", f"{NAME}.service", f"{NAME}-backup.timer"]],
        status=[[*user, "status", "--no-pager", f"{NAME}.service", f"{NAME}-backup.timer"]],
        notes=[
            "user services stop at logout unless lingering is on: `loginctl enable-linger` keeps the "
            "server running without a session; logs: `journalctl --user -u slowave-graph`"
        ],
    )


def _launchd(home: Path, serve: list[str], backup: list[str], env: dict[str, str]) -> Plan:
    agents = home / "Library" / "LaunchAgents"
    logs = home / "Library" / "Logs" / NAME
    uid = os.getuid() if hasattr(os, "getuid") else 0
    server = {
        "Label": LABEL,
        "ProgramArguments": serve,
        "EnvironmentVariables": env,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(logs / "server.log"),
        "StandardErrorPath": str(logs / "server.log"),
    }
    backup_agent = {
        "Label": f"{LABEL}.backup",
        "ProgramArguments": backup,
        "EnvironmentVariables": env,
        "StartCalendarInterval": {"Hour": BACKUP_HOUR, "Minute": BACKUP_MINUTE},
        "StandardOutPath": str(logs / "backup.log"),
        "StandardErrorPath": str(logs / "backup.log"),
    }
    paths = [agents / f"{LABEL}.plist", agents / f"{LABEL}.backup.plist"]
    domain = f"gui/{uid}"
    return Plan(
        "launchd",
        [
            UnitFile(paths[0], plistlib.dumps(server).decode(), 0o600),
            UnitFile(paths[1], plistlib.dumps(backup_agent).decode(), 0o600),
        ],
        start=[["launchctl", "bootstrap", domain, str(p)] for p in paths],
        stop=[["launchctl", "bootout", f"{domain}/{label}"] for label in (LABEL, f"{LABEL}.backup")],
        status=[["launchctl", "print", f"{domain}/{label}"] for label in (LABEL, f"{LABEL}.backup")],
        notes=[f"logs: {logs}"],
    )


def exec_line(argv: Sequence[str]) -> str:
    """A command line as systemd's ExecStart reads it: each word in double quotes when it needs
    them (with backslash escapes); ``%`` and ``$`` doubled, since systemd reads them as a specifier
    and a variable."""
    words = []
    for word in argv:
        escaped = word.replace("%", "%%").replace("$", "$$")
        if not escaped or any(c in escaped for c in " \t\"\\'$;"):
            escaped = '"' + escaped.replace("\\", "\\\\").replace('"', '\\"') + '"'
        words.append(escaped)
    return " ".join(words)


def environment_file(env: dict[str, str]) -> str:
    """``KEY="value"`` lines as systemd's EnvironmentFile reads them."""
    lines = ["# written by `slowave-graph service install`: the server's environment"]
    for key, value in sorted(env.items()):
        quoted = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'{key}="{quoted}"')
    return "\n".join(lines) + "\n"


def write(files: Sequence[UnitFile]) -> None:
    for unit in files:
        unit.path.parent.mkdir(parents=True, exist_ok=True)
        partial = unit.path.with_name(unit.path.name + ".partial")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, unit.mode)
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(unit.text)
        os.chmod(partial, unit.mode)
        os.replace(partial, unit.path)


def run_all(commands: Sequence[Sequence[str]], run: Run, check: bool = True) -> list[str]:
    """Each command in turn; the output of the ones that failed (all of them run when ``check``
    is False, else the first failure stops)."""
    failures = []
    for command in commands:
        done = run(command)
        if done.returncode != 0:
            failures.append(f"`{' '.join(command)}` exited {done.returncode}: {(done.stderr or '').strip()}")
            if check:
                break
    return failures


def remove(files: Sequence[UnitFile]) -> list[Path]:
    gone = []
    for unit in files:
        if unit.path.exists():
            unit.path.unlink()
            gone.append(unit.path)
    return gone


def default_run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, timeout=60, check=False)
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(list(command), 127, "", str(exc))
