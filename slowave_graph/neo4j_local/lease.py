"""Sharing one managed Neo4j between several slowave-graph processes.

MCP clients often spawn one stdio server per conversation; they all use the same data directory
and so the same Neo4j. Each process holds a lease (a file named after its pid) while it runs. A
Neo4j that a server process started on its own is stopped ``neo4j_linger`` seconds after the last
lease is released, unless a new lease comes first: the next conversation then finds it ready, with
its query plans cached and its JIT warm, instead of paying a start and a cold first lifecycle. The
wait is a small detached process (``linger.py``) that outlives the server; a marker file names it,
and a new lease or ``neo4j stop`` cancels it. One started with ``slowave-graph neo4j start`` keeps
running until ``slowave-graph neo4j stop``. All decisions are taken under an exclusive file lock on
the data directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import ManagedNeo4j, pid_alive

log = logging.getLogger(__name__)


class ManagedLease:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.neo4j = ManagedNeo4j(settings)
        self.lease_dir = self.neo4j.instance_dir / "leases"
        self._lease_file = self.lease_dir / str(os.getpid())

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.neo4j.instance_dir.mkdir(parents=True, exist_ok=True)
        with open(self.neo4j.instance_dir / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @property
    def _auto_marker(self) -> Path:
        return self.neo4j.instance_dir / "auto-started"

    @property
    def _linger_marker(self) -> Path:
        return self.neo4j.instance_dir / "lingering.json"

    def live_leases(self) -> list[int]:
        pids = []
        for path in self.lease_dir.glob("*") if self.lease_dir.is_dir() else []:
            if path.name.isdigit() and pid_alive(int(path.name)):
                pids.append(int(path.name))
            else:
                path.unlink(missing_ok=True)  # left behind by a killed process
        return pids

    def acquire(self) -> tuple[str, str, str]:
        """Start (or join) the managed Neo4j; returns (uri, user, password)."""
        with self._locked():
            self._cancel_linger()
            state, started = self.neo4j.start()
            if started:
                self._auto_marker.write_text(json.dumps({"pid": state.pid}))
            self.lease_dir.mkdir(parents=True, exist_ok=True)
            self._lease_file.write_text("")
            return state.uri, "neo4j", self.neo4j.password()

    def start_kept(self) -> tuple[dict[str, object], bool]:
        """`slowave-graph neo4j start`: a server that keeps running until `neo4j stop`."""
        with self._locked():
            self._cancel_linger()
            _, started = self.neo4j.start()
            self._auto_marker.unlink(missing_ok=True)
            return self.neo4j.status(), started

    def stop(self) -> bool:
        """`slowave-graph neo4j stop`: stop it whoever started it."""
        with self._locked():
            self._cancel_linger()
            self._auto_marker.unlink(missing_ok=True)
            return self.neo4j.stop()

    def release(self) -> None:
        """Drop this process's lease; an auto-started Neo4j nobody else uses stops after the linger."""
        with self._locked():
            self._lease_file.unlink(missing_ok=True)
            if not self._auto_started_and_unused():
                return
            if self.settings.neo4j_linger > 0:
                try:
                    self._linger(self.settings.neo4j_linger)
                    return
                except OSError as exc:  # no process to wait: better stopped than left for ever
                    log.warning("cannot start the linger of the managed Neo4j (%s); stopping it now", exc)
            self._stop_auto_started()

    def reap(self, reaper_pid: int) -> bool:
        """The lingering process's last step: stop the Neo4j when that process is still the one the
        marker names (no lease, ``neo4j start`` or ``neo4j stop`` came since). Returns whether it did."""
        with self._locked():
            if self._lingering_pid() != reaper_pid:
                return False
            self._linger_marker.unlink(missing_ok=True)
            if not self._auto_started_and_unused():
                return False
            self._stop_auto_started()
            return True

    def status(self) -> dict[str, object]:
        """``neo4j status``: the server's, plus when a lingering one will stop (ISO 8601, UTC)."""
        until = self.lingering_until()
        info = self.neo4j.status()
        if info["running"]:
            info["stops_at"] = None if until is None else _iso(until)
        return info

    def lingering_until(self) -> float | None:
        """When a lingering Neo4j will be stopped (Unix time), if it lingers."""
        try:
            marker = json.loads(self._linger_marker.read_text())
        except (OSError, ValueError):
            return None
        return float(marker["until"]) if self._lingering_pid() is not None else None

    def _auto_started_and_unused(self) -> bool:
        state = self.neo4j.running()
        if state is None or self.live_leases():
            return False
        try:
            return bool(json.loads(self._auto_marker.read_text()).get("pid") == state.pid)
        except (OSError, ValueError):
            return False

    def _stop_auto_started(self) -> None:
        self.neo4j.stop()
        self._auto_marker.unlink(missing_ok=True)

    def _linger(self, seconds: int) -> None:
        self._cancel_linger()
        until = time.time() + seconds
        settings = self.settings
        argv = [sys.executable, "-m", "slowave_graph.neo4j_local.linger", str(settings.data_dir),
                str(settings.cache_dir), settings.neo4j_version, str(until)]  # fmt: skip
        log = str(self.neo4j.instance_dir / "linger.log")
        # posix_spawn, not Popen: no child object left to warn at exit that it still runs. Never the
        # server's stdio: on stdio transport stdout is the client's JSON-RPC pipe, and a process
        # holding it open would keep the client waiting for its end (other descriptors are not
        # inheritable in Python). Its own session: outlives this process, no terminal signals.
        pid = os.posix_spawn(
            sys.executable,
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                (os.POSIX_SPAWN_OPEN, 2, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
            ],
            setsid=True,
        )
        self._linger_marker.write_text(json.dumps({"pid": pid, "until": until}))

    def _lingering_pid(self) -> int | None:
        """The pid of the lingering process the marker names, while it runs."""
        try:
            pid = int(json.loads(self._linger_marker.read_text())["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return pid if pid_alive(pid) and _is_reaper(pid) else None

    def _cancel_linger(self) -> None:
        pid = self._lingering_pid()
        self._linger_marker.unlink(missing_ok=True)
        if pid is not None and pid != os.getpid():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


def _iso(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


def _is_reaper(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"slowave_graph.neo4j_local.linger" in cmdline
