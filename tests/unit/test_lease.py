"""Leases and the linger of an auto-started managed Neo4j, against a stand-in process (a sleeping
Python whose command line names the launcher class), so no Neo4j is started here. The lingering
process is the real one (``python -m slowave_graph.neo4j_local.linger``)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.lease import ManagedLease, _is_reaper
from slowave_graph.neo4j_local.manager import LAUNCHER_CLASS, RunningState, pid_alive


@pytest.fixture
def stand_in() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", LAUNCHER_CLASS])
    yield proc
    proc.kill()
    proc.wait()


def lease_on(tmp_path: Path, proc: subprocess.Popen[bytes], linger: int, auto: bool = True) -> ManagedLease:
    """A lease of this process on an instance whose 'Neo4j' is ``proc`` (auto-started or kept)."""
    settings = Settings.from_env(
        {}, data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", neo4j_linger=linger
    )
    lease = ManagedLease(settings)
    lease.neo4j.instance_dir.mkdir(parents=True)
    state = RunningState(
        pid=proc.pid, bolt_port=7699, version="2026.09.0", java="", started_at=0, ready_seconds=0
    )
    lease.neo4j.state_file.write_text(json.dumps(asdict(state)))
    if auto:
        (lease.neo4j.instance_dir / "auto-started").write_text(json.dumps({"pid": proc.pid}))
    lease.acquire()  # finds the stand-in running: joins it
    return lease


def exited(proc: subprocess.Popen[bytes], seconds: float = 15) -> bool:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def gone(pid: int, seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not pid_alive(pid)


def reaper_pid(lease: ManagedLease) -> int:
    pid = int(json.loads((lease.neo4j.instance_dir / "lingering.json").read_text())["pid"])
    deadline = time.monotonic() + 15
    while not _is_reaper(pid) and time.monotonic() < deadline:  # until its exec is visible
        time.sleep(0.02)
    return pid


def test_without_linger_the_last_release_stops_it(tmp_path: Path, stand_in: subprocess.Popen[bytes]) -> None:
    lease = lease_on(tmp_path, stand_in, linger=0)
    lease.release()
    assert exited(stand_in, 5)
    assert not (lease.neo4j.instance_dir / "lingering.json").exists()
    assert lease.status()["running"] is False


def test_the_lingering_process_stops_it_when_the_time_is_up(
    tmp_path: Path, stand_in: subprocess.Popen[bytes]
) -> None:
    lease = lease_on(tmp_path, stand_in, linger=2)
    lease.release()
    reaper = reaper_pid(lease)
    status = lease.status()
    assert status["running"] is True and isinstance(status["stops_at"], str)
    assert stand_in.poll() is None  # still there during the linger
    assert exited(stand_in, 20) and gone(reaper)
    assert not (lease.neo4j.instance_dir / "lingering.json").exists()
    assert "linger over: stopped" in (lease.neo4j.instance_dir / "linger.log").read_text()


def test_a_new_lease_cancels_the_linger_and_stop_cancels_the_next(
    tmp_path: Path, stand_in: subprocess.Popen[bytes]
) -> None:
    lease = lease_on(tmp_path, stand_in, linger=300)
    lease.release()
    first = reaper_pid(lease)
    lease.acquire()  # the next conversation
    assert gone(first) and stand_in.poll() is None
    assert lease.status()["stops_at"] is None  # in use
    lease.release()
    second = reaper_pid(lease)
    assert second != first and lease.lingering_until() is not None
    assert lease.stop() is True  # `slowave-graph neo4j stop`
    assert gone(second) and exited(stand_in, 5)


def test_a_stale_lingering_process_finds_it_in_use_and_leaves_it(
    tmp_path: Path, stand_in: subprocess.Popen[bytes]
) -> None:
    lease = lease_on(tmp_path, stand_in, linger=300)
    lease.release()
    reaper = reaper_pid(lease)
    assert lease.reap(reaper + 1) is False  # not the process the marker names
    lease.acquire()
    assert lease.reap(reaper) is False  # marker gone: a lease came in the meantime
    assert stand_in.poll() is None


def test_a_neo4j_started_with_neo4j_start_neither_lingers_nor_stops(
    tmp_path: Path, stand_in: subprocess.Popen[bytes]
) -> None:
    lease = lease_on(tmp_path, stand_in, linger=300, auto=False)
    lease.release()
    assert not (lease.neo4j.instance_dir / "lingering.json").exists()
    assert lease.status()["stops_at"] is None and stand_in.poll() is None


def test_when_the_lingering_process_cannot_start_it_stops_at_once(
    tmp_path: Path, stand_in: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = lease_on(tmp_path, stand_in, linger=300)

    def refuse(*args: object, **kwargs: object) -> int:
        raise OSError("no more processes")

    monkeypatch.setattr("os.posix_spawn", refuse)
    lease.release()
    assert exited(stand_in, 5)
    assert not (lease.neo4j.instance_dir / "lingering.json").exists()


SLOW_TO_STOP = "import signal, sys, time\nsignal.signal(signal.SIGTERM, lambda *_: (time.sleep(2), sys.exit(0)))\ntime.sleep(120)"


def test_a_neo4j_shutting_down_is_not_joined_but_waited_for(tmp_path: Path) -> None:
    """A stop whose process is killed mid-wait (MCP clients kill a stdio server 2 s after closing
    it) leaves Neo4j shutting down: the next start must wait for it, not join it."""
    slow = subprocess.Popen([sys.executable, "-c", SLOW_TO_STOP, LAUNCHER_CLASS])
    try:
        time.sleep(0.5)  # its SIGTERM handler is installed
        neo4j = lease_on(tmp_path, slow, linger=0).neo4j
        stopping = threading.Thread(target=neo4j.stop)
        stopping.start()
        deadline = time.monotonic() + 5
        while not json.loads(neo4j.state_file.read_text()).get("stopping") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert neo4j.running() is None  # not offered to a new lease while it shuts down
        neo4j._await_shutdown()  # what start() does first
        assert slow.poll() is not None
        stopping.join(10)
    finally:
        slow.kill()
        slow.wait()
