"""The command lines `slowave-graph service install` writes into its units, run exactly as written
with the environment file it writes (no user service manager runs on these machines): the backup
line keeps the newest copies, the server line serves /health."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import httpx2
import pytest

from slowave_graph.clients.spec import command_prefix
from slowave_graph.neo4j_local.manager import free_port
from slowave_graph.operator import service
from tests.support.neo4j import Neo4jTarget
from tests.unit.test_service import environment, exec_argv

pytestmark = pytest.mark.neo4j


def written(planned: service.Plan, name: str) -> str:
    return next(u.path for u in planned.files if u.path.name == name).read_text()


def exec_start(text: str) -> list[str]:
    [line] = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    return exec_argv(line.removeprefix("ExecStart="))


def test_the_units_command_lines_back_up_with_rotation_and_serve(neo4j: Neo4jTarget, tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    port = free_port()
    env = {**neo4j.env(), "SLOWAVE_HTTP_PORT": str(port), "SLOWAVE_DATA_DIR": str(tmp_path / "data")}
    planned = service.plan("Linux", tmp_path / "home", command_prefix(), env, backups, keep=2)
    service.write(planned.files)
    unit_env = environment(written(planned, "service.env"))
    assert unit_env == env

    # two earlier backups (a whole-database backup of the suite's store takes a while: one real run)
    backups.mkdir()
    older = ["slowave-graph-20250101T031700Z.jsonl", "slowave-graph-20250102T031700Z.jsonl"]
    for name in older:
        (backups / name).write_text("{}\n")
    backup = exec_start(written(planned, "slowave-graph-backup.service"))
    done = subprocess.run(backup, env=unit_env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    made = json.loads(done.stdout)
    assert made["checksum"] and made["removed"] == [str(backups / older[0])]
    kept = sorted(p.name for p in backups.iterdir())
    assert kept == [older[1], Path(made["file"]).name], kept

    serve = exec_start(written(planned, "slowave-graph.service"))
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(serve, env=unit_env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()[-3000:]
            time.sleep(0.3)
    finally:
        server.terminate()
        assert server.wait(timeout=90) == 0  # SIGTERM (what systemd sends) stops it cleanly
        log.close()
