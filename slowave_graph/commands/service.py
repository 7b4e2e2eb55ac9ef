"""`slowave-graph service install|status|uninstall`: the HTTP server as a user service started at
login, and a daily backup that keeps the newest SLOWAVE_BACKUP_KEEP (operator/service.py)."""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.operator import service


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: Common) -> None:
    parser = sub.add_parser(
        "service",
        help="run the server in the background across reboots, with a daily backup (user services)",
        description="install writes user-level units (systemd on Linux, launchd on macOS) for the HTTP "
        "server and a daily backup, with the environment of this shell's settings, and starts them; "
        "status shows them; uninstall stops and removes them and keeps the data and the backups.",
    )
    actions = parser.add_subparsers(dest="service_action", metavar="ACTION", required=True)
    install = actions.add_parser("install", help="write, enable and start the units")
    install.add_argument(
        "--backup-dir", help="where the daily backup goes (default <SLOWAVE_DATA_DIR>/backups)"
    )
    install.add_argument(
        "--dry-run", action="store_true", help="print the units and commands; change nothing"
    )
    install.add_argument("--no-start", action="store_true", help="write the units, start nothing")
    actions.add_parser("status", help="the units and their state")
    actions.add_parser("uninstall", help="stop and remove the units (the memory and backups stay)")
    for child in actions.choices.values():
        common(child)
        child.set_defaults(handler=run)


def service_plan(settings: Settings, backup_dir: Path | None = None) -> tuple[service.Plan, list[str]]:
    """The units for this machine and this shell's settings, and the secret values they hold."""
    from slowave_graph.clients.spec import command_prefix, settings_env

    env, secrets = settings_env(settings)
    held = [s.value for s in secrets if s.value is not None]
    env.update({s.var: s.value for s in secrets if s.value is not None})
    key = settings.embedding_api_key_env
    for var in ("PATH", "JAVA_HOME", key):
        if var and os.environ.get(var):
            env[var] = os.environ[var]
    if key and os.environ.get(key):
        held.append(os.environ[key])
    where = (backup_dir or settings.data_dir / "backups").expanduser().absolute()
    planned = service.plan(platform.system(), Path.home(), command_prefix(), env, where, settings.backup_keep)
    return planned, held


def run(args: argparse.Namespace, settings: Settings) -> int:
    backup_dir = getattr(args, "backup_dir", None)
    planned, held = service_plan(settings, Path(backup_dir) if backup_dir else None)
    if args.service_action == "status":
        return _status(planned)
    if args.service_action == "uninstall":
        return _uninstall(planned)
    if args.dry_run:
        from slowave_graph.clients.redact import redact

        for unit in planned.files:
            print(f"--- {unit.path} (mode {unit.mode:o})\n{redact(unit.text, held, patterns=False)}")
        for command in planned.start:
            print("would run: " + " ".join(command))
        print("\n".join(planned.notes))
        return 0
    if not planned.files:
        print("\n".join(planned.notes), file=sys.stderr)
        return 1
    service.write(planned.files)
    for unit in planned.files:
        print(f"wrote {unit.path}")
    if not args.no_start:
        failures = service.run_all(planned.start, service.default_run)
        if failures:
            print("\n".join(failures), file=sys.stderr)
            print("the units are written; start them by hand once the above is fixed", file=sys.stderr)
            return 1
        print("started: the server now and at every login, the backup daily")
    print("\n".join(planned.notes))
    return 0


def _status(planned: service.Plan) -> int:
    if not any(f.path.exists() for f in planned.files):
        print("not installed (slowave-graph service install)")
        return 1
    for unit in planned.files:
        print(f"{unit.path}: {'present' if unit.path.exists() else 'missing'}")
    return 1 if service.run_all(planned.status, _on_terminal, check=False) else 0


def _uninstall(planned: service.Plan) -> int:
    failures = service.run_all(planned.stop, service.default_run, check=False)
    for path in service.remove(planned.files):
        print(f"removed {path}")
    if planned.manager == "systemd":
        service.run_all([["systemctl", "--user", "daemon-reload"]], service.default_run, check=False)
    for failure in failures:
        print(f"note: {failure}", file=sys.stderr)
    print("the memory and its backups are kept")
    return 0


def _on_terminal(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """The manager's own status output, straight to the terminal."""
    try:
        done = subprocess.run(list(command), check=False, timeout=60)
    except FileNotFoundError as exc:
        return subprocess.CompletedProcess(list(command), 127, "", str(exc))
    return subprocess.CompletedProcess(list(command), done.returncode, "", "")
