"""Sharing one managed Neo4j between several slowave-graph processes.

MCP clients often spawn one stdio server per conversation; they all use the same data directory
and so the same Neo4j. Each process holds a lease (a file named after its pid) while it runs. A
Neo4j that a server process started on its own is stopped when the last lease is released; one
started with ``slowave-graph neo4j start`` keeps running until ``slowave-graph neo4j stop``.
All decisions are taken under an exclusive file lock on the data directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.manager import ManagedNeo4j, pid_alive


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
            state, started = self.neo4j.start()
            if started:
                self._auto_marker.write_text(json.dumps({"pid": state.pid}))
            self.lease_dir.mkdir(parents=True, exist_ok=True)
            self._lease_file.write_text("")
            return state.uri, "neo4j", self.neo4j.password()

    def start_kept(self) -> tuple[dict[str, object], bool]:
        """`slowave-graph neo4j start`: a server that keeps running until `neo4j stop`."""
        with self._locked():
            _, started = self.neo4j.start()
            self._auto_marker.unlink(missing_ok=True)
            return self.neo4j.status(), started

    def stop(self) -> bool:
        """`slowave-graph neo4j stop`: stop it whoever started it."""
        with self._locked():
            self._auto_marker.unlink(missing_ok=True)
            return self.neo4j.stop()

    def release(self) -> None:
        """Drop this process's lease; stop an auto-started Neo4j nobody else uses."""
        with self._locked():
            self._lease_file.unlink(missing_ok=True)
            state = self.neo4j.running()
            if state is None or self.live_leases():
                return
            try:
                auto = json.loads(self._auto_marker.read_text()).get("pid") == state.pid
            except (OSError, ValueError):
                auto = False
            if auto:
                self.neo4j.stop()
                self._auto_marker.unlink(missing_ok=True)
